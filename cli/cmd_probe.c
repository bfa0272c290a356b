/* cli/cmd_probe.c: `memwatch probe` (placeholder until the module lands). */
#include "cli.h"

#include <stdio.h>

int mw_cmd_probe(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memwatch: 'probe' is not built into this version yet\n");
    return 2;
}
