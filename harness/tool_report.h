/* tool_report.h: a tool cell after its worker ended: its tool's output read, stored and judged, and the findings
 * written for the final table and the HTML report. It must never judge a tool cell by RSS or the heap series:
 * memcheck and lsan cells leak when the engine lost bytes definitely, and massif judges nothing. */
#ifndef MLK_TOOL_REPORT_H
#define MLK_TOOL_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"
#include "store.h"
#include "tool.h"

struct sqlite3;

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

/* The findings of cell_id as an HTML fragment (a table of leak records with their stacks, or the heap peak and
 * its sites), every db string escaped; *out is malloc'd, or NULL when the cell has none (or the db predates the
 * tool tables). MLK_E_DB, MLK_E_NOMEM. */
int mlk_tool_html(struct sqlite3 *db, int64_t cell_id, char **out, mlk_error *err);

/* "fn (file.c:12)", "fn (in libx.so)" or "??? (in libx.so)": file and object by their base names. */
void mlk_tool_frame_str(const mlk_frame *f, char *out, size_t len);

#endif
