/* runs.h: queries over stored runs for the cross-run commands (compare, history, baseline): finding runs, the
 * figures of a config's step in a run, latency samples, and a config's series across runs.
 * It must never write to the db: these are reads, and compare/history store their own results. */
#ifndef MLK_RUNS_H
#define MLK_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "store.h"

typedef struct mlk_run_info {
    int64_t id;
    char uuid[64], commit[64], branch[128], status[16], started_at[40], scenario[128];
} mlk_run_info;

/* "latest" (the newest run), or a run id. MLK_E_NOTFOUND when there is none. */
int mlk_runs_find(db_store *db, const char *spec, mlk_run_info *out, mlk_error *err);

/* One config's step in one run: its figures (NaN when not measured) and its cell. */
typedef struct mlk_step_figures {
    int64_t cell_id;
    char config_key[1024];
    char label[256];   /* the cell's axes, "threads=2 mmap=on" (the config key when it has none) */
    char step[32];
    double v[MLK_M_COUNT];
    char status[16];   /* the cell's verdict: pass, leak, ... */
} mlk_step_figures;

/* Every (cell, step) of run_id, steps of the measured pipeline plus "iteration". *out is malloc'd. */
int mlk_runs_figures(db_store *db, int64_t run_id, mlk_step_figures **out, int *n, mlk_error *err);

/* Per-iteration latency (wall ms) of step in cell, measured phase. *out is malloc'd. */
int mlk_runs_latency(db_store *db, int64_t cell_id, const char *step, double **out, int *n, mlk_error *err);

/* The runs before `before` (started earlier; any run when before is NULL) of config_key on branch (any branch when
 * NULL) that finished ('done'), newest first, at most max: their ids and the cell id of the config in each. */
int mlk_runs_recent(db_store *db, const char *config_key, const char *branch, const mlk_run_info *before, int max,
                    int64_t *run_ids, int64_t *cell_ids, int *n, mlk_error *err);

/* A config's metric for step across every finished run, oldest first: values, run uuids and commits (malloc'd). */
typedef struct mlk_series {
    int n;
    double *v;
    char (*uuid)[64];
    char (*commit)[64];
    char (*started)[40];
} mlk_series;
int mlk_runs_series(db_store *db, const char *config_key, const char *step, mlk_metric m, mlk_series *out,
                    mlk_error *err);
void mlk_series_free(mlk_series *s);

/* The figure of metric m of config/step in the cell (NaN when absent). */
double mlk_runs_cell_figure(db_store *db, int64_t cell_id, const char *step, mlk_metric m);
/* The median CPU time (ms) of step in the cell (NaN when not measured): compare's check that a slower step did more
 * work, not just waited for the machine. */
double mlk_runs_cell_cpu_ms(db_store *db, int64_t cell_id, const char *step);

#endif
