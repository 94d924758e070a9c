/* cmd_filter.h: --filter KEY=VALUE,...: which cells a run or a comparison covers, matched on the cell's axes.
 * It must never match part of a value: threads=1 is not threads=12. */
#ifndef MLK_CMD_FILTER_H
#define MLK_CMD_FILTER_H

#include <stdbool.h>

#include "status.h"

/* Check spec ("threads=1,allocator=jemalloc"): every item KEY=VALUE with a non-empty key. MLK_E_USAGE naming the
 * item. NULL is an empty filter (every cell). */
int mlk_filter_check(const char *spec, mlk_error *err);
/* Whether a cell's label ("threads=2 allocator=jemalloc", its axes as k=v k=v) passes spec: for every key named,
 * one of the values given for it is the cell's (values of one key are alternatives, keys must all hold). A key the
 * cell does not have fails. NULL or "" passes everything. */
bool mlk_filter_match(const char *spec, const char *label);

#endif
