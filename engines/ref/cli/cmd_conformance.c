/* cmd_conformance.c: the "refengine conformance" subcommand (not implemented yet).
 * It must never exit() itself. */
#include <stdio.h>

#include "cli.h"

int ref_cli_conformance(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "refengine conformance: not implemented yet\n");
    return 2;
}
