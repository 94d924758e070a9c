/* cell_filter.h: KEY=VALUE,... specs matched on a cell's axes: --filter (run, compare) and the scenario's expect:.
 * It must never match part of a value: threads=1 is not threads=12. */
#ifndef MLK_CELL_FILTER_H
#define MLK_CELL_FILTER_H

#include <stdbool.h>

#include "status.h"

/* Check spec ("threads=1,allocator=jemalloc"): every item KEY=VALUE with a non-empty key. MLK_E_USAGE naming what
 * ("--filter") and the item. NULL is an empty filter (every cell). */
int mlk_filter_check(const char *spec, const char *what, mlk_error *err);
/* Whether a cell's label ("threads=2 allocator=jemalloc", its axes as k=v k=v) passes spec: for every key named,
 * one of the values given for it is the cell's (values of one key are alternatives, keys must all hold). A key the
 * cell does not have fails. NULL or "" passes everything. */
bool mlk_filter_match(const char *spec, const char *label);

#endif
