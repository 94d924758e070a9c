/* cmd_plan.c: the "refengine plan" subcommand (not implemented yet).
 * It must never exit() itself. */
#include <stdio.h>

#include "cli.h"

int ref_cli_plan(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "refengine plan: not implemented yet\n");
    return 2;
}
