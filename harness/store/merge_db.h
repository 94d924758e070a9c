/* merge_db.h: merging one memleak db into another (memleak-run merge): runs by uuid, cells by (run uuid, idx),
 * everything hanging off them re-numbered. It must never write to an input db, nor leave a transaction open. */
#ifndef MLK_MERGE_DB_H
#define MLK_MERGE_DB_H

#include <stdint.h>

#include "status.h"
#include "store.h"

/* What one merge added to the output db. */
typedef struct mlk_merge_counts {
    int64_t runs_new;       /* runs whose uuid was not there yet */
    int64_t runs_joined;    /* runs already there (shards of one batch, or the same db merged again) */
    int64_t cells_new;      /* cells whose (run uuid, idx) was absent */
    int64_t cells_replaced; /* cells present but less finished than the input's (see mlk_merge_db) */
    int64_t samples, metrics, step_stats;
    int64_t tool_rows; /* leaks, heap_peaks, heap_peak_sites and tool_frames of tool cells */
    int64_t baselines, comparisons, findings, change_points;
} mlk_merge_counts;

/* Turn on URI file names process-wide (for a read-only ATTACH); call before the first SQLite use. Harmless when
 * SQLite is already initialized. Without URIs (neither this nor SQLite's USE_URI build option, which Debian sets)
 * mlk_merge_db falls back to a plain ATTACH: it still only reads, but SQLite may fold a leftover -wal into the file. */
void mlk_merge_setup(void);

/* Check that path is a memleak db this build can merge: readable, SQLite, a schema_version table, a version
 * no newer than DB_SCHEMA_VERSION. Opens it read-only and closes it. Fails with a message naming path:
 * MLK_E_IO (cannot open), MLK_E_PARSE (not SQLite, not a memleak db, wrong schema version). */
int mlk_merge_check(const char *path, mlk_error *err);

/* Merge the db at path (checked with mlk_merge_check first) into out, in one IMMEDIATE transaction: all of it
 * or nothing. Rules, chosen so that merging is idempotent and the order of inputs does not change the rows:
 *  - a run matches by uuid; a new one is inserted, a known one keeps its id and takes the smallest value of each
 *    column where shards differ (argv, host, commit...), the earliest started_at and the latest finished_at.
 *    The same uuid with a different scenario_text fails (MLK_E_PARSE): a --run-key reused for another batch.
 *  - a cell matches by (run uuid, idx); an absent one is copied with its samples, metrics, step_stats and tool
 *    findings (leaks, heap_peaks, heap_peak_sites, tool_frames); a
 *    present one is replaced in place (same id) only when the input's is further on: finished beats pending or
 *    running, then a later finished_at, then more samples. Equal ones are left alone.
 *  - the run's status: done when every cell of its scenario's matrix is there and finished; otherwise the worst
 *    of the statuses seen (failed > interrupted > running), a shard's done counting as running.
 *  - baselines match by (run_uuid, branch, pinned_at), comparisons by (run uuid, created_at, baseline),
 *    findings by their key within a comparison, change points by their primary key; absent ones are copied.
 * c (may be NULL) receives what was added. Errors name path. */
int mlk_merge_db(db_store *out, const char *path, mlk_merge_counts *c, mlk_error *err);

/* The status a merged run ends with (the rule above), exposed for tests. prior: the output's status before the
 * merge, or NULL for a new run; incoming: the input's; n_cells, n_unfinished: the run's cells in the output after
 * the merge; expected: the cells of its scenario's matrix, or -1 when unknown (then done needs every status done). */
const char *mlk_merge_run_status(const char *prior, const char *incoming, int64_t n_cells, int64_t n_unfinished,
                                 int64_t expected);

#endif
