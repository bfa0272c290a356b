/* cli/cmd_calibrate.c: `memwatch calibrate` (placeholder until the module lands). */
#include "cli.h"

#include <stdio.h>

int mw_cmd_calibrate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memwatch: 'calibrate' is not built into this version yet\n");
    return 2;
}
