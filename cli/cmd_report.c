/* cli/cmd_report.c: `memwatch report` (placeholder until the module lands). */
#include "cli.h"

#include <stdio.h>

int mw_cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memwatch: 'report' is not built into this version yet\n");
    return 2;
}
