/* cmd_gen.c: the "refengine gen" subcommand (not implemented yet).
 * It must never exit() itself. */
#include <stdio.h>

#include "cli.h"

int ref_cli_gen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "refengine gen: not implemented yet\n");
    return 2;
}
