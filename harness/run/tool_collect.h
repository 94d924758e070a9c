/* tool_collect.h: a tool cell after its worker ended: its tool's output read, stored and judged, with the lines for
 * the final table. It must never judge a tool cell by RSS or the heap series: memcheck and lsan cells leak when
 * the engine lost bytes definitely, and massif judges nothing. */
#ifndef MLK_TOOL_COLLECT_H
#define MLK_TOOL_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"
#include "store.h"
#include "tool.h"
#include "tool_exec.h"


typedef struct mlk_tool_result {
    bool have;          /* the tool's report was read (status is then set) */
    char status[16];    /* "leak" or "pass"; "error" when a finished worker's report is cut short */
    char detail[700];   /* one sentence: the findings, or why the report could not be read */
    char table[2048];   /* lines for the final table: the largest leaks or peak sites with their top frames */
} mlk_tool_result;

/* Read tool cell c's report from t's folder, store it for cell_id (replacing earlier rows) and judge it.
 * finished: the worker ran to its end; a killed worker's report is read and stored as far as it goes, and
 * res->status is then only advisory. self_exe is the harness executable (its frames are not the engine's).
 * Returns 0 whether or not the report could be read (res says), or MLK_E_DB when storing failed. */
int mlk_tool_collect(db_store *db, int64_t cell_id, const mlk_plan *p, const mlk_cell *c, const mlk_tool_run *t,
                     const char *self_exe, bool finished, mlk_tool_result *res, mlk_error *err);

#endif
