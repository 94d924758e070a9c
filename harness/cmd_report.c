/* cmd_report.c: placeholder for the "report" subcommand until its implementation lands.
 * It must never exit() itself. */
#include <stdio.h>

#include "commands.h"

int mlk_cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memleak-run report: not implemented yet\n");
    return 3;
}
