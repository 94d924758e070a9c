/* regress.h: statistics for comparing runs: the Mann-Whitney U test for latency samples, and change-point
 * detection over a config's series of runs (a windowed t-test in the style of Mozilla's Perfherder).
 * It must never allocate more than O(n) scratch per call, nor read outside the arrays it is given. */
#ifndef MLK_REGRESS_H
#define MLK_REGRESS_H

/* Two-sided Mann-Whitney U test of x[0..nx) against y[0..ny): *u is U for x, *p the two-sided p-value (normal
 * approximation with tie correction and continuity correction; exact enumeration when nx, ny <= 8 and no ties).
 * Returns 0, or -1 when nx or ny is 0 or memory runs out. */
int mlk_mann_whitney(const double *x, int nx, const double *y, int ny, double *u, double *p);

typedef struct mlk_cp_opts {
    int back_window;     /* runs before a candidate point; default 5 (Perfherder uses 12 with a longer history) */
    int fore_window;     /* runs from the candidate on; default 3 */
    double t_threshold;  /* default 7, Perfherder's */
    double min_rel;      /* the means must differ by at least this fraction; default 0.02 */
    double min_abs;      /* ... and by at least this much in the series' unit; default 0 */
} mlk_cp_opts;

void mlk_cp_opts_init(mlk_cp_opts *o);

typedef struct mlk_change_point {
    int index;           /* first element of the new level */
    double before, after; /* means of the two windows */
    double t;            /* Welch t statistic */
} mlk_change_point;

/* Change points in y[0..n), in order, at most max written into out; returns how many, or -1 on bad arguments.
 * A persistent step is reported once, at its first element: candidates are local maxima of t over the fore
 * window. A single outlier is not a change: it moves only one element of either window, so its t stays small
 * against the window's own spread, and a fore window must hold at least 2 elements. */
int mlk_change_points(const double *y, int n, const mlk_cp_opts *o, mlk_change_point *out, int max);

#endif
