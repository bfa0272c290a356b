/* cli/cmd_prefetch.c: `memwatch prefetch` (placeholder until the module lands). */
#include "cli.h"

#include <stdio.h>

int mw_cmd_prefetch(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memwatch: 'prefetch' is not built into this version yet\n");
    return 2;
}
