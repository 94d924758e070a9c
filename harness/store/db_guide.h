/* db_guide.h: what the guide report (issue 21: OpenVINO's memory-optimization guide, measured) reads from the store for
 * one run: the scenario text it ran, and per cell its step figures, its memory right after every compile and its infer
 * latencies. It must never write to the db, nor hand back a figure that was not measured as 0 (NaN instead). */
#ifndef MLK_DB_GUIDE_H
#define MLK_DB_GUIDE_H

#include <stdint.h>

#include "db_report.h"
#include "status.h"
#include "store.h"

/* One step_stats row of a cell (the measured iterations). */
typedef struct db_guide_step {
    char step[32];
    double peak_kib;          /* max of the step's own VmHWM */
    double heap_peak_bytes;   /* the highest live heap within the step (requested, touched or not); NaN without shim */
    double mapped_peak_bytes; /* the most mapped through mmap within it; NaN without the shim */
    double wall_ms_median;
    double rise_kib;          /* the most its own VmHWM rose above VmRSS just before it: what the step itself needed */
} db_guide_step;

/* The samples right after one compile_model step (warmup and measured iterations). */
typedef struct db_guide_compile {
    int iteration;
    bool measured;
    double rss_kib, anon_kib, file_kib; /* VmRSS, RssAnon, RssFile; NaN when not read */
} db_guide_compile;

/* One infer step of a measured iteration, in the order they ran. */
typedef struct db_guide_infer {
    int iteration;
    bool first;               /* the first infer of its iteration (after that iteration's compile, if any) */
    double wall_ms;
} db_guide_infer;

typedef struct db_guide_cell {
    int64_t id;
    int idx;
    char *engine, *model, *allocator, *allocator_active, *status, *detail, *error; /* NULL when NULL */
    db_guide_step *steps;     /* in the order the steps first ran */
    int n_steps;
    db_guide_compile *compiles; /* by iteration */
    int n_compiles;
    db_guide_infer *infers;
    int n_infers;
    db_report_iter *iters;    /* end of every iteration (db_report_memory): what the judge reads */
    int n_iters;
} db_guide_cell;

typedef struct db_guide_run {
    int64_t id;
    char *scenario_name, *scenario_text, *status, *commit; /* NULL when NULL */
    db_guide_cell *cells;     /* by idx */
    int n_cells;
} db_guide_run;

/* Load run_id into a new db_guide_run (*out, freed with db_guide_free; every string and array its own). A cell
 * stored thinned (sample_resolution) gives the iterations that were kept. MLK_E_NOTFOUND when there is no such
 * run, MLK_E_DB, MLK_E_NOMEM; *out is untouched on failure. */
int db_guide_load(db_store *db, int64_t run_id, db_guide_run **out, mlk_error *err);
void db_guide_free(db_guide_run *r);

#endif
