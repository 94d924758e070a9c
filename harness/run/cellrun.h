/* cellrun.h: one cell's worker process: spawn with argv and environment (allocator preload, tunables, limits),
 * stream its lines, enforce the timeout, and classify how it ended. It must never block past the deadline. */
#ifndef MLK_CELLRUN_H
#define MLK_CELLRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "db_sites.h"
#include "plan.h"
#include "sample.h"
#include "status.h"

typedef enum { MLK_END_DONE = 0, MLK_END_STEP_ERROR, MLK_END_OOM, MLK_END_CRASHED, MLK_END_TIMEOUT,
               MLK_END_INTERRUPTED, MLK_END_OTHER, MLK_END_HUNG } mlk_end;

/* An engine figure sent after a sample (its index in samples). */
typedef struct mlk_engine_metric {
    int sample;
    char name[48];
    int64_t value;
} mlk_engine_metric;

typedef struct mlk_cellrun {
    /* Received and not yet handed to on_batch (the parent keeps no more: its memory must not grow with the run). */
    mlk_sample *samples;
    int n, cap;
    mlk_engine_metric *metrics; /* engine figures not yet handed over, in order */
    int n_metrics, cap_metrics;
    int64_t n_total;          /* samples received in all */
    mlk_sample last;          /* the last of them (n_total > 0) */
    bool lost;                /* a sample or figure could not be kept (the parent ran out of memory) */
    double stalled_s;         /* MLK_END_HUNG: how long the worker had sent nothing */
    char alloc_active[32];    /* from the worker's "A" line */
    char alloc_lib[400];
    bool heap;
    bool done;                /* "D" received */
    char error[700];          /* from an "E" line */
    char error_step[32];
    bool error_oom;
    mlk_end end;
    int signal;               /* when crashed */
    int exit_code;            /* when it exited */
    db_site_report sites;     /* from "W" lines: where memory grew (issue 9); sites.have once the info line came */
    int pause_at;             /* iterations: auto: a "P" line asked for a decision at this many iterations (0: none) */
} mlk_cellrun;

/* Called with the samples and engine metrics received since the last call (a batch), as they arrive; they are
 * dropped after it returns. A metric's sample index counts from the cell's first sample. Non-zero stops the cell. */
typedef int (*mlk_batch_fn)(void *arg, const mlk_sample *s, int n, const mlk_engine_metric *m, int n_metrics);
/* Called about every 250 ms (with each flush of samples to on_batch) with the last iteration seen (-1 before the
 * first). */
typedef void (*mlk_tick_fn)(void *arg, int iteration);
/* iterations: auto (issue 23): the worker measured n iterations and waits; every sample before is handed over. Returns
 * true to stop measuring, false to go on. */
typedef bool (*mlk_decide_fn)(void *arg, int n);

typedef struct mlk_cellrun_opts {
    const char *self_exe, *heap_shim;
    const struct mlk_tool_run *tool; /* tool cells (tool.h): the cell's tool files; NULL for a plain cell */
    mlk_batch_fn on_batch;
    mlk_tick_fn on_tick;
    void *arg;
    mlk_decide_fn on_decide; /* with iterations: auto, for a plain cell; NULL: the worker runs every iteration */
} mlk_cellrun_opts;

/* Run cell c of plan p to its end. r must be zeroed; free it with mlk_cellrun_free. Returns 0 once the worker
 * ended whatever its outcome (see r->end), or an error when it could not be started. */
int mlk_cellrun_exec(const mlk_plan *p, const mlk_cell *c, const mlk_cellrun_opts *o, mlk_cellrun *r,
                     mlk_error *err);
void mlk_cellrun_free(mlk_cellrun *r);
/* The record of tool cell c's environment, as its worker gets it (mlk_tool_env_record; malloc'd, NULL when out of
 * memory). */
char *mlk_cellrun_tool_env(const mlk_plan *p, const mlk_cell *c, const struct mlk_tool_run *t);

/* Whether cell c's worker could be started: its arguments and environment, built as mlk_cellrun_exec builds them
 * (a tool's own options aside), within what execve takes. MLK_E_USAGE naming the cell and the string or total that
 * is too long (E2BIG at run time); MLK_E_NOMEM. */
int mlk_cellrun_check_exec(const mlk_plan *p, const mlk_cell *c, const char *self, const char *heap_shim,
                           mlk_error *err);

/* One "W" line of the worker (worker/sites.h gives the format; line without its newline, modified) into r. Returns
 * 0, or -1 for a malformed line (ignored, as any unknown line). */
int mlk_cellrun_site_line(db_site_report *r, char *line);

struct mlk_table_row;
/* A finished cell's growing sites: stored in the db and listed in its row of the final table. MLK_E_DB. */
int mlk_cellrun_sites_finish(db_store *db, int64_t cell_id, const mlk_cellrun *r, struct mlk_table_row *row,
                             mlk_error *err);

#endif
