/* detect.h: leak verdicts from a per-iteration memory series: a robust trend test (Theil-Sen slope,
 * Mann-Kendall) with a magnitude floor and a plateau check, and OpenVINO's memleaks rule for comparison.
 * It must never allocate more than O(n) scratch per call, nor read outside the series it is given. */
#ifndef MLK_DETECT_H
#define MLK_DETECT_H

#include <stddef.h>

typedef enum mlk_verdict {
    MLK_VERDICT_PASS = 0,
    MLK_VERDICT_LEAK,
    MLK_VERDICT_PLATEAU,
    MLK_VERDICT_CRASHED,
    MLK_VERDICT_TIMEOUT,
    MLK_VERDICT_OOM,
    MLK_VERDICT_ERROR,
    MLK_VERDICT_COUNT
} mlk_verdict;

/* "pass", "leak", "plateau", "crashed", "timeout", "oom", "error". */
const char *mlk_verdict_name(mlk_verdict v);

typedef struct mlk_detect_opts {
    double floor_per_iter; /* magnitude floor, in the series' unit per iteration (e.g. bytes) */
    double alpha;          /* significance of the trend test; default 0.01 */
    double late_fraction;  /* the trailing part judged for a leak and for the plateau; default 0.5 */
    double quantum;        /* the series' resolution (4096 for RSS in bytes, 1 for heap bytes) */
} mlk_detect_opts;

/* Defaults for everything but floor_per_iter and quantum. */
void mlk_detect_opts_init(mlk_detect_opts *o);

typedef struct mlk_detect_result {
    mlk_verdict verdict;  /* PASS, LEAK or PLATEAU */
    double slope;         /* Theil-Sen slope over the whole series, per iteration */
    double late_slope;    /* Theil-Sen slope over the late part */
    double mk_z, mk_p;    /* Mann-Kendall statistic and one-sided p-value (increasing) on the late part */
    double growth;        /* median of the late part minus median of the first samples */
    int n;
    char detail[256];     /* one sentence a reviewer can read: why this verdict */
} mlk_detect_result;

/* Judge series[0..n). Needs n >= 8 for a verdict other than PASS with "too few samples".
 * Returns 0, or -1 when arguments are invalid (NULL, n < 0). */
int mlk_detect_leak(const double *series, int n, const mlk_detect_opts *o, mlk_detect_result *out);

/* OpenVINO's memleaks rule (see shared FACTS): reference = mean of the 5 samples up to iteration 30 (or the
 * last 5 available), bound = ref * rel_bound (0.10), windows of 5 samples; a window mean above ref + bound is
 * an outlier; more than 5 outliers retakes the reference at the current window, up to 3 retakes; the
 * final pass fails with more than 5 outliers. LEAK on failure, else PASS. */
int mlk_detect_openvino(const double *series, int n, double rel_bound, mlk_detect_result *out);

/* Building blocks, exposed for tests and for the history module. Both return 0 or -1 (n < 2, no memory). */
int mlk_theil_sen(const double *y, int n, double *slope);
int mlk_mann_kendall(const double *y, int n, double *z, double *p_increasing);

#endif
