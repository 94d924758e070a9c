/* store_tools.h: the tool cells' findings in the db (db/schema.sql: leaks, heap_peaks, heap_peak_sites,
 * tool_frames). It must never leave a cell with half its findings: each store replaces the cell's rows in one
 * transaction. */
#ifndef MLK_STORE_TOOLS_H
#define MLK_STORE_TOOLS_H

#include <stdint.h>

#include "store.h"
#include "tool.h"

/* Remove every finding of cell_id (a cell run again after an interrupted attempt). */
int db_tool_clear(db_store *db, int64_t cell_id, mlk_error *err);

/* Replace cell_id's leak records with r's (tool: "memcheck" or "lsan"), each with all its frames. MLK_E_DB. */
int db_leaks_store(db_store *db, int64_t cell_id, const char *tool, const mlk_leak_report *r, mlk_error *err);

/* Record what tool cell cell_id ran (schema.sql's tool_exec: program, args and env one a line). MLK_E_DB. */
int db_tool_exec_store(db_store *db, int64_t cell_id, const char *program, const char *args, const char *env,
                       mlk_error *err);

/* Replace cell_id's heap peak with p (nothing stored when p->found is false) and its largest max_sites sites. */
int db_heap_peak_store(db_store *db, int64_t cell_id, const mlk_heap_peak *p, int max_sites, mlk_error *err);

#endif
