/* alert.h: from findings to alerts (issue 22): the practical floors a move must clear per metric family, the
 * latency test across runs, and the grouping of findings that share a cause (same cell, same run or commit) into
 * one ranked alert summary; the gate that decides which alerts fail. It must never call a move an alert that is
 * inside its floors or inside the baseline's own run-to-run spread, and never read the db: callers hand it figures. */
#ifndef MLK_ALERT_H
#define MLK_ALERT_H

#include <stdbool.h>
#include <stddef.h>

#include "runs.h"
#include "scenario.h"
#include "status.h"

/* The families of figures, in the order alerts rank them: X(ENUM, "name"). */
#define MLK_FAMILY_LIST(X) X(MEMORY, "memory") X(LATENCY, "latency")
typedef enum {
#define MLK_X_(e, n) MLK_FAM_##e,
    MLK_FAMILY_LIST(MLK_X_)
#undef MLK_X_
        MLK_FAM_COUNT
} mlk_family;
const char *mlk_family_name(int fam); /* "?" out of range */

/* Which alerts fail the exit code and the JUnit cases: memory (default), latency, all, none. */
typedef enum { MLK_GATE_MEMORY, MLK_GATE_LATENCY, MLK_GATE_ALL, MLK_GATE_NONE } mlk_gate;
/* "memory", "latency", "all", "none" -> gate; -1 when unknown. */
int mlk_gate_from_name(const char *name);

/* Default floors per metric, in one table: X(ENUM of names.h's MLK_M_, relative, absolute in the metric's unit).
 * Why each: see alert.c. Latency's come from the scenario (latency_rel, latency_abs_ms). */
#define MLK_FLOOR_LIST(X)                                                                                            \
    X(PEAK, 0.05, 1024.0)                      /* KiB: VmHWM */                                                    \
    X(FINAL_RSS, 0.10, 4096.0)                 /* KiB: what the allocator keeps after free */                      \
    X(FINAL_ANON, 0.10, 4096.0)                /* KiB */                                                           \
    X(FINAL_HEAP, 0.05, 1024.0 * 1024)         /* bytes: live heap, counted exactly */                             \
    X(GROWTH, 0.0, 1024.0)                     /* bytes/iter: leak_bytes_per_iter */                               \
    X(REQ_HEAP, 0.05, 1024.0 * 1024)           /* bytes: requested heap peak, counted exactly */                   \
    X(REQ_MAPPED, 0.10, 16.0 * 1024 * 1024)    /* bytes: requested mappings, the allocator's own chunks included */

/* The practical floors. A figure must move by more than both rel[m] of the baseline and abs[m] (in its unit);
 * growth per iteration by more than abs[GROWTH]; latency by more than latency_rel and latency_abs_ms. Every move
 * must also exceed the baseline runs' own spread (mlk_alert_spread: their noise). Latency needs
 * latency_min_runs baseline runs (one figure per run: a run's back-to-back iterations share the machine's load and
 * are not independent), and its CPU time must move too when measured (load from neighbours moves wall time, not the
 * work done), unless the samples are repetitions (imported benchmarks), where the U test at latency_alpha decides. */
typedef struct mlk_alert_floors {
    double rel[MLK_M_COUNT], abs[MLK_M_COUNT];
    double latency_rel, latency_abs_ms, latency_alpha;
    int latency_min_runs;
} mlk_alert_floors;

/* The table's floors; a scenario that sets thresholds.regression_rel or regression_abs_kib away from their defaults
 * sets that floor for every memory level, leak_bytes_per_iter the growth floor, latency_* the latency floors.
 * s may be NULL for the defaults. */
void mlk_alert_floors_init(mlk_alert_floors *f, const mlk_scenario *s);
/* Override floors from "KEY=VALUE,..." (the command line's --floor): memory_rel and memory_abs (every memory level),
 * METRIC_rel and METRIC_abs for one metric (peak_kib_abs=2MiB, mapped_peak_bytes_rel=20%), growth_bytes,
 * latency_rel, latency_abs_ms, latency_alpha, latency_runs. Sizes take B, KiB, MiB, GiB (bare: KiB for memory_abs
 * and _kib metrics, bytes for _bytes ones); fractions take %. MLK_E_USAGE naming the key or value; f is unchanged
 * on failure. */
int mlk_alert_floors_parse(mlk_alert_floors *f, const char *spec, mlk_error *err);
/* "memory: peak_kib +5% and +1.0 MiB, ...; latency: +10% and +50 µs over >= 3 runs" for headers. */
void mlk_alert_floors_text(const mlk_alert_floors *f, char *out, size_t len);

/* The family of a metric name (compare's and history's: peak_kib, ..., wall_ms, series.NAME). */
mlk_family mlk_metric_family(const char *metric);

#define MLK_ALERT_MAX_RUNS 64 /* baseline runs a spread is taken over; more are ignored */
/* The noise of a baseline's values v[0..n): 3 x 1.4826 x their median absolute deviation (3 sigma for normal
 * noise), 0 for fewer than 2. A minority of runs at another level does not widen it. */
double mlk_alert_spread(const double *v, int n);
/* The verdict of a level or growth figure: cur against base (the baseline's median), with spread its noise
 * (mlk_alert_spread; 0 when unknown). Returns +1 (worse: larger), -1 (better), 0 (inside the floors or the
 * spread), and *effect how many floors the move cleared (0 when inside). series.NAME: always 0. */
int mlk_alert_level(const mlk_alert_floors *f, const char *metric, double cur, double base, double spread,
                    double *effect);
/* The verdict of a level or growth figure cur against the baseline runs' values vals[0..n), newest first: their
 * median (*base) and spread set the floor as mlk_alert_level does; then, when cur lies within the range those runs
 * spanned, it is a finding only if the runs at cur's level are the newest ones in a row (a step that began inside
 * the window: a regression stays one until the median takes it in), not runs scattered among the others (an
 * allocator's two modes: noise). n <= MLK_ALERT_MAX_RUNS. */
int mlk_alert_level_runs(const mlk_alert_floors *f, const char *metric, double cur, const double *vals, int n,
                         double *base, double *effect);
/* The verdict of a level change between two means of runs (history's change points, whose t-test already weighed
 * the noise): the family's floors only (latency: latency_rel and latency_abs_ms). +1, -1 or 0; *effect as above. */
int mlk_alert_step(const mlk_alert_floors *f, const char *metric, double before, double after, double *effect);
/* How many floors a stored move of metric from base to cur cleared (the ranking of findings read back from a db):
 * levels and growth by their floors, latency by latency_rel and latency_abs_ms, series.NAME by the growth floor;
 * at least 1 (it was a finding). */
double mlk_alert_effect(const mlk_alert_floors *f, const char *metric, double cur, double base);
/* The verdict of a median latency cur against the medians of n baseline runs (base_runs, sorted in place): +1
 * slower, -1 faster, 0 when n < latency_min_runs, inside the floors or inside their spread. *effect as above. */
int mlk_alert_latency_runs(const mlk_alert_floors *f, double cur, double *base_runs, int n, double *effect);
/* The same over repetitions: cur_reps[0..nc) against base_reps[0..nb) (both sorted in place), medians compared,
 * a two-sided U test with p < latency_alpha required too (*p gets it, NaN when not run); *median_cur and
 * *median_base get the medians (NaN when fewer than 3 on a side). */
int mlk_alert_latency_reps(const mlk_alert_floors *f, double *cur_reps, int nc, double *base_reps, int nb,
                           double *effect, double *p, double *median_cur, double *median_base);

/* One figure that moved past its floors. Strings are copied in (truncated to fit). */
typedef struct mlk_finding {
    char key[1024];    /* the cell's config key: with where, what findings of one cause share */
    char cell[256];    /* the cell's label, as printed (never cut) */
    char where[160];   /* the run or commit it happened at ("run 12", "commit abc123 (run 6)") */
    char step[32], metric[48];
    char note[160];    /* "recovered at commit def (run 9)", "leaks now, did not in the baseline", or "" */
    int dir;           /* +1 a regression, -1 an improvement */
    double cur, base, rel; /* rel NaN when base is 0 */
    double effect;     /* floors cleared, for ranking */
    double p;          /* the test's p, NaN when none ran */
    long long cell_id; /* the caller's id of the cell (compare's cells.id), 0 when none */
    int ref;           /* the caller's index of what this finding stands for (the report's finding), -1 none */
    bool expected;     /* the scenario expects the cell's verdict (expect:): reported, never failing */
} mlk_finding;

/* A summary of the findings with one cause: same key, where and direction. */
typedef struct mlk_alert {
    int first, n;       /* its findings: v[first .. first + n), largest effect first, memory before latency */
    int dir;            /* +1 regression, -1 improvement */
    mlk_family family;  /* MEMORY when any of its findings is memory */
    double effect;      /* the largest effect of its lead family */
} mlk_alert;

/* Set f's strings (NULL as ""), figures and family-free fields in one call; returns f. */
mlk_finding *mlk_finding_set(mlk_finding *f, const char *key, const char *cell, const char *where,
                             const char *step, const char *metric, int dir, double cur, double base, double effect);

/* Sort v[0..n) so that each alert's findings are contiguous and write the alerts, ranked: regressions before
 * improvements, then memory before latency, then larger effect first; *out is malloc'd (never NULL on success).
 * MLK_E_NOMEM. */
int mlk_alerts_build(mlk_finding *v, int n, mlk_alert **out, int *n_out, mlk_error *err);
/* Whether a fails under gate g: a regression with a finding of a gated family, of a cell not expected to fail. */
bool mlk_alert_fails(const mlk_alert *a, const mlk_finding *v, mlk_gate g);

/* The scenario's budgets (budgets:) that f, a cell's whole iteration, crosses: at most max findings into out, each a
 * regression of the figure against its cap (base = the cap, note "over its budget of ..."), where as given. Other
 * steps and unmeasured figures: none. Returns how many. */
int mlk_budget_findings(const mlk_scenario *s, const mlk_step_figures *f, const char *where, mlk_finding *out,
                        int max);

/* A metric's value as people read it: KiB/MiB/GiB for kib and bytes, µs/ms/s for ms, B/iter for growth, a slope
 * for series; "-" for NaN (not measured), never an exponent. */
void mlk_fmt_metric_value(char *out, size_t len, const char *metric, double v);
/* "+12.5%", "+1.2x" beyond +1000%, "new" when base is 0 and cur is not, "-" for NaN. */
void mlk_fmt_rel(char *out, size_t len, double cur, double base);
/* "infer peak HWM 120.0 MiB -> 181.2 MiB (+51.0%)" plus "; note" when it has one. */
void mlk_finding_text(char *out, size_t len, const mlk_finding *f);
/* "REGRESSION memory: CELL at WHERE: lead finding [+ N more: step metric, ...]" in one line (out of len). */
void mlk_alert_headline(char *out, size_t len, const mlk_alert *a, const mlk_finding *v);

#endif
