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
    MLK_VERDICT_INCONCLUSIVE, /* iterations: auto reached its bound with a series undecided (sequential.h) */
    MLK_VERDICT_COUNT
} mlk_verdict;

/* "pass", "leak", "plateau", "crashed", "timeout", "oom", "error", "inconclusive"; "unknown" for anything else. */
const char *mlk_verdict_name(mlk_verdict v);

typedef struct mlk_detect_opts {
    double floor_per_iter; /* magnitude floor, in the series' unit per iteration (e.g. bytes); >= 0 */
    double alpha;          /* significance of the trend test, in (0, 1); default 0.01 */
    double late_fraction;  /* the trailing part judged for a leak and for the plateau, in (0, 1]; default 0.5 */
    double quantum;        /* the series' resolution (4096 for RSS in bytes, 1 for heap bytes); >= 0 */
    /* Appended: iterations each sample stands for (a long run's series is kept as block means, stream.h); slopes
     * are reported and floors applied per iteration whatever it is. <= 0 reads as 1. */
    double stride;
} mlk_detect_opts;

/* Defaults for everything but floor_per_iter and quantum (which it sets to 1024 and 1). */
void mlk_detect_opts_init(mlk_detect_opts *o);

/* Figures that were not computed (too few samples, or the OpenVINO rule, which computes no slope) are NAN. */
typedef struct mlk_detect_result {
    mlk_verdict verdict;  /* PASS, LEAK or PLATEAU */
    double slope;         /* Theil-Sen slope over the whole series, per iteration */
    double late_slope;    /* Theil-Sen slope over the late part */
    double mk_z, mk_p;    /* Mann-Kendall statistic and one-sided p-value (increasing) on the late part,
                             isolated spikes left out (see mk_used) */
    double growth;        /* median of the late part minus median of the first samples (OpenVINO: last
                             judged window mean minus the reference) */
    int n;
    char detail[256];     /* one sentence a reviewer can read: why this verdict */
    /* Appended: the persistence check (Theil-Sen of the first and second halves of the late part). */
    double late_head_slope, late_tail_slope;
    /* Appended: the noise of the late part, a robust standard deviation (1.4826 * MAD) of its residuals
     * around the late Theil-Sen line. */
    double noise;
    int mk_used;          /* samples of the late part the Mann-Kendall test used (spikes left out) */
    /* Appended: OpenVINO's rule (zero / NAN for mlk_detect_leak). */
    double ov_ref, ov_bound; /* the last reference (a window mean) and the bound above it */
    int ov_outliers;         /* outlier windows in the last pass */
    int ov_retakes;          /* references re-taken (0..3) */
    int ov_windows;          /* windows judged in the last pass, the reference window included */
} mlk_detect_result;

/* Judge series[0..n) (every sample finite; series may be NULL only when n == 0). With n < 8 the verdict is
 * PASS with "too few samples" in detail. LEAK needs, on the late part: Theil-Sen slope >= floor, Mann-Kendall
 * p <= alpha (isolated spikes left out), a fitted rise of more than 2 quanta and of at least 4 noise
 * deviations, and growth in both of its halves without a sharp slow-down (detect.c explains each test).
 * PLATEAU: not a leak, but the late median is above the early median by max(2 quanta, floor * n / 4,
 * 3 noise deviations) or more. Scratch: a few arrays of n doubles, freed before returning.
 * Returns 0, or -1 when arguments are invalid (NULL, n < 0, a non-finite sample, options out of range) or
 * memory runs out; *out is untouched on failure. */
int mlk_detect_leak(const double *series, int n, const mlk_detect_opts *o, mlk_detect_result *out);

/* OpenVINO's memleaks rule (see shared FACTS), on one series (they judge VmRSS and VmHWM alike: call it once
 * per series). Windows are blocks of 5 samples (iterations 1-5, 6-10, ...); the window ending at iteration 30
 * (or the last full one, when the series is shorter: detail says so) gives the reference, bound = ref *
 * rel_bound (<= 0 means 0.10; 0.02 in their threaded test). A pass judges n/5 windows, the reference's
 * included, where n = series length - 30 (their iteration count). A window whose mean exceeds ref + bound is
 * an outlier (growth only). When a pass has more than 5 outliers, the next window re-takes the reference and
 * starts a new pass, up to 3 times; a re-taken pass runs to the end of the series. LEAK when the last pass
 * has more than 5 outliers, else PASS. Note: with n = 30 a pass judges 5 windows after the reference, so it
 * can never fail (as in OpenVINO's own loop).
 * Returns 0, or -1 when arguments are invalid (NULL, n < 0, a non-finite sample or rel_bound). */
int mlk_detect_openvino(const double *series, int n, double rel_bound, mlk_detect_result *out);

/* Building blocks, exposed for tests and for the history module. Both return 0 or -1 (NULL, n < 2, a
 * non-finite or absurd (|y| > 1e300) sample, no memory); the out-parameters are untouched on failure.
 * mlk_theil_sen: median of the pairwise slopes (y[j]-y[i])/(j-i), j > i, exact up to n = 2000 (about
 * 2e6 pairs); above that, every k-th pair in row-major order (deterministic), k chosen to keep ~2e6 pairs.
 * O(n) memory, O(pairs) time per pass and a few passes.
 * mlk_mann_kendall: S with the tie-corrected variance and continuity correction, normal approximation;
 * p_increasing is the one-sided p-value of an increasing trend. O(n log n) time, O(n) memory. */
int mlk_theil_sen(const double *y, int n, double *slope);
int mlk_mann_kendall(const double *y, int n, double *z, double *p_increasing);

#endif
