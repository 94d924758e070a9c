/* cmd_merge.c: placeholder for the "merge" subcommand until its implementation lands.
 * It must never exit() itself. */
#include <stdio.h>

#include "commands.h"

int mlk_cmd_merge(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "memleak-run merge: not implemented yet\n");
    return 3;
}
