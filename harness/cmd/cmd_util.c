/* cmd_util.c: what the cross-run subcommands share in cmd/: their usage errors (the db side is store/db_compare.c).
 * It must never exit: a parser returns -1 and its command exits 2. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd_util.h"
#include "text.h"

int mlk_cmd_usage(const char *cmd, const char *msg)
{
    mlk_fprintf_safe(stderr, "memleak-run %s: %s\n", cmd, msg);
    return -1;
}

