/* regress.h: statistics for comparing runs: the Mann-Whitney U test for latency samples, and change-point
 * detection over a config's series of runs (a windowed t-test in the style of Mozilla's Perfherder).
 * It must never allocate more than O(n) scratch per call, nor read outside the arrays it is given. */
#ifndef MLK_REGRESS_H
#define MLK_REGRESS_H

/* Two-sided Mann-Whitney U test of x[0..nx) against y[0..ny): *u is U for x (the number of pairs with x > y,
 * ties counting 1/2; U for y is nx*ny - U), *p the two-sided p-value: the exact null distribution when nx, ny <= 8
 * and no value repeats, else the normal approximation with tie-corrected variance and continuity correction
 * (scipy.stats.mannwhitneyu's 'exact' and 'asymptotic' with use_continuity=True). All values equal: p = 1.
 * u and p may be NULL. O((nx+ny) log(nx+ny)) time, one copy of the samples as scratch.
 * Returns 0, or -1 (u and p untouched) when x or y is NULL, nx or ny <= 0, a value is NaN, or memory runs out. */
int mlk_mann_whitney(const double *x, int nx, const double *y, int ny, double *u, double *p);

typedef struct mlk_cp_opts {
    int back_window;     /* runs before a candidate point; default 5 (Perfherder uses 12 with a longer history) */
    int fore_window;     /* runs from the candidate on; default 3 */
    double t_threshold;  /* default 7, Perfherder's */
    double min_rel;      /* the means must differ by at least this fraction; default 0.02 */
    double min_abs;      /* ... and by at least this much in the series' unit; default 0 */
} mlk_cp_opts;

/* min_rel for latency series: run-to-run latency noise is several %, memory figures' well under 1%. */
#define MLK_CP_LATENCY_MIN_REL 0.10

/* The defaults above, for memory figures (VmHWM, RSS, heap bytes). o may be NULL (no-op). */
void mlk_cp_opts_init(mlk_cp_opts *o);
/* The same with min_rel = MLK_CP_LATENCY_MIN_REL, for median-latency series. */
void mlk_cp_opts_init_latency(mlk_cp_opts *o);

typedef struct mlk_change_point {
    int index;           /* first element of the new level */
    double before, after; /* means of the two windows */
    double t;            /* Welch t statistic */
} mlk_change_point;

/* Change points in y[0..n) (one value per run, oldest first), in order of index, at most max written into out;
 * returns how many were written (max = n/2 + 1 is always enough), 0 when n < 4, or -1 on bad arguments: y or
 * out NULL where needed, n or max < 0, a value NaN, infinite or beyond 1e150, or options out of range
 * (windows < 2, negative threshold or floors). o may be NULL for the defaults. Allocates nothing.
 * A persistent step is reported once, at its first element: candidates are local maxima of t over the fore
 * window. A single outlier is not a change: it moves only one element of either window, so its t stays small
 * against the window's own spread, and a fore window must hold at least 2 elements. The method, its parameters
 * and what it deliberately misses are described in regress_cp.c. */
int mlk_change_points(const double *y, int n, const mlk_cp_opts *o, mlk_change_point *out, int max);

#endif
