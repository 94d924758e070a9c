/* cmd_run.c: the "refengine run" subcommand (not implemented yet).
 * It must never exit() itself. */
#include <stdio.h>

#include "cli.h"

int ref_cli_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "refengine run: not implemented yet\n");
    return 2;
}
