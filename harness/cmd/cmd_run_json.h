/* cmd_run_json.h: memleak-run --json FILE: the run just stored, as one JSON document (db/run.schema.json).
 * It must never write a figure that was not measured as a number: those are null. */
#ifndef MLK_CMD_RUN_JSON_H
#define MLK_CMD_RUN_JSON_H

#include <stdint.h>

#include "status.h"
#include "store.h"

/* Write run_id of db (its cells' verdicts, series and steps' figures) and exit_code, the status memleak-run exits
 * with, to path; extra (NULL for none) is appended as further members (",\"repetitions\":[...]").
 * MLK_E_DB, MLK_E_NOMEM, MLK_E_IO (the file is removed). */
int mlk_run_json_write(db_store *db, int64_t run_id, int exit_code, const char *extra, const char *path,
                       mlk_error *err);

#endif
