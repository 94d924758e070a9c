/* cmd_util.c: shared pieces of the cross-run subcommands: db access, stored scenarios, baselines, findings.
 * It must never create a db file: a typo in --db is an error, not a new empty store. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd_util.h"

int mlk_cmd_usage(const char *cmd, const char *msg)
{
    fprintf(stderr, "memleak-run %s: %s\n", cmd, msg);
    return -1;
}

