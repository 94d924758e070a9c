/* db_stops.h: how long a cell of `iterations: auto` ran and why it stopped (issue 23), in cell_stops. It must never
 * decide anything: run/ and judge/ do; this only keeps what they found. */
#ifndef MLK_DB_STOPS_H
#define MLK_DB_STOPS_H

#include <stdint.h>

#include "status.h"
#include "store.h"

/* cell_id measured iterations and stopped for reason ("decided", "max" or "budget") after points decision points;
 * undecided: the series still undecided, comma-separated (NULL or "" for none). Replaces an earlier row. MLK_E_DB. */
int db_cell_stop_store(db_store *db, int64_t cell_id, int iterations, const char *reason, int points,
                       const char *undecided, mlk_error *err);

#endif
