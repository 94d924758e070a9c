/* runner.h: the parent side of memleak-run: one worker per cell, samples streamed into the db, verdicts, progress,
 * the final table. It must never lose a sample the worker sent before dying: batches are flushed before judging. */
#ifndef MLK_RUNNER_H
#define MLK_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "plan.h"
#include "store.h"

typedef struct mlk_run_opts {
    const char *self_exe;   /* path of memleak-run, exec'd in worker mode */
    const char *heap_shim;  /* libmemleak_heap.so, or NULL when not found */
    const char *commit, *branch; /* NULL: from the environment or git */
    const char *argv_text;  /* the command line, for the run's metadata */
    const char *run_key;    /* the run's uuid: shards of one batch pass the same; NULL: a random one */
    bool progress_tty;      /* redraw one progress line (stdout is a terminal) */
    bool quiet;             /* no progress at all */
    int shard_index, shard_count; /* run only cells with idx % count == index; count 0 = all */
    const bool *only;       /* NULL: every cell (of the shard); else only the cells i with only[i] (--filter) */
} mlk_run_opts;

/* Run every cell of plan p into db. resume_run > 0 continues that run: finished cells are kept, the others run
 * again from scratch. *finding is set when any cell is leak, crashed, timeout, oom or error.
 * *run_id gets the run's id. Returns 0, or an error (db, fork) that stopped the run. */
int mlk_run(const mlk_plan *p, db_store *db, const mlk_run_opts *o, int64_t resume_run, int64_t *run_id,
            bool *finding, mlk_error *err);

/* For --resume (and --dry-run --resume): MLK_E_USAGE, naming the cell and both paths and hashes, when a model of
 * plan p is not the one run_id's stored cells were measured on (replaced, its external data changed, or resolved
 * from another folder); MLK_E_DB. Nothing is written. */
int mlk_run_check_resume(const mlk_plan *p, db_store *db, int64_t run_id, mlk_error *err);

/* Set by the SIGINT/SIGTERM handler: the runner stops the current worker, marks the run interrupted. */
extern volatile sig_atomic_t mlk_run_interrupted;

#endif
