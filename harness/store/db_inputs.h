/* db_inputs.h: the input shapes each cell of a run ran with (issue 22), in cell_inputs. It must never compute a shape:
 * cmd/ reads them from the model and the scenario; this only keeps them beside the cell. */
#ifndef MLK_DB_INPUTS_H
#define MLK_DB_INPUTS_H

#include <stdint.h>

#include "status.h"
#include "store.h"

/* Cell idx of run_id ran with shapes ("input: 1x3x224x224; mask: 1x16"): replaces an earlier row; a cell the run does
 * not have is left alone (a --filter'ed or sharded run holds only some). MLK_E_DB. */
int db_cell_inputs_store(db_store *db, int64_t run_id, int idx, const char *shapes, mlk_error *err);

/* Cell idx of run_id's shapes into *out (malloc'd; NULL when none were stored). MLK_E_DB, MLK_E_NOMEM. */
int db_cell_inputs_load(db_store *db, int64_t run_id, int idx, char **out, mlk_error *err);

#endif
