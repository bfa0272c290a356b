/* cli/cmd_record.c: `memwatch record` (placeholder until the module lands). */
#include "cli.h"

#include <stdio.h>

int mw_cmd_record(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memwatch: 'record' is not built into this version yet\n");
    return 2;
}
