/* cmd_util.h: what the cross-run subcommands (compare, history, baseline) share: usage errors, and the store's side
 * of them (db_compare.h: an existing db, a run's scenario, baselines, comparisons). It must never create a db. */
#ifndef MLK_CMD_UTIL_H
#define MLK_CMD_UTIL_H

#include "db_compare.h"

/* Print "memleak-run CMD: msg" to stderr and return -1 (parsers return it for exit 2). */
int mlk_cmd_usage(const char *cmd, const char *msg);

#endif
