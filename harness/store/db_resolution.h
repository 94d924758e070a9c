/* db_resolution.h: the store side of a long cell's bounded resolution: dropping the samples (and their engine
 * figures) of iterations the run stage chose not to keep, and recording what was kept. It must never choose. */
#ifndef MLK_DB_RESOLUTION_H
#define MLK_DB_RESOLUTION_H

#include <stdint.h>

#include "status.h"
#include "store.h"

/* Delete the samples and metrics of cell_id whose seq lies in any [ranges[i][0], ranges[i][1]], in one transaction.
 * MLK_E_DB. */
int db_samples_drop(db_store *db, int64_t cell_id, const int64_t (*ranges)[2], int n, mlk_error *err);

/* The cell's row of sample_resolution (db/schema.sql says what each figure means). MLK_E_DB. */
int db_resolution_store(db_store *db, int64_t cell_id, int64_t head_iters, int64_t stride, int64_t tail_from,
                        int64_t iterations, mlk_error *err);

#endif
