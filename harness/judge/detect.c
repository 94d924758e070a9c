/* detect.c: per-cell leak verdicts (pass, leak, plateau) from a memory series, and OpenVINO's memleaks
 * rule reproduced for comparison. It must never read outside the series, nor allocate more than O(n).
 *
 * The memleak rule (mlk_detect_leak), and why each part is there:
 *   A leak is growth that never stops; allocator retention (glibc growing to a stable point, tcmalloc and
 *   mimalloc caches) grows early and then stops; noise goes both ways. So only the late part is judged:
 *   the trailing late_fraction of the series (default half; at least 8 samples). LEAK needs all of:
 *   1. size: the late Theil-Sen slope >= floor_per_iter. Theil-Sen (median of pairwise slopes) ignores up
 *      to ~29% of wild samples, so allocator jitter and page-cache hiccups do not move it.
 *   2. significance: Mann-Kendall on the late part rejects "no trend" at alpha (default 0.01). It is rank
 *      based and tie-corrected (RSS is quantized, so ties abound). Isolated spikes (a sample more than
 *      max(3 noise, 2 quanta) off the median of its 5 neighbours, residuals taken around the late line)
 *      are left out first: a spike decides every pair it is in and drowns a small trend in a rank test.
 *   3. resolution: the fitted rise over the late part, slope * (m - 1), exceeds 2 quanta, so one or two
 *      RSS page steps are never a leak on their own; and it is at least 4 noise deviations (1.4826 * MAD
 *      of the residuals around the late line), so a wander of the noise is not one either.
 *   4. persistence: the two halves of the late part both grow (Theil-Sen >= floor/2, > 0, and a rise of
 *      a quantum or more), and the second half grows at least half as fast as the first. A single jump of
 *      any size lands in one half and leaves the other flat (the Theil-Sen slope of a half holding one
 *      step is zero unless the step sits at its very centre); an approach to a plateau (exponential,
 *      glibc's top growing in shrinking steps) slows down between the halves. A leak keeps its pace.
 *      A staircase (a late part that never drops by half a quantum or more: exact heap bytes of a block grown
 *      by realloc through an allocator's size classes rise in class-sized steps every few iterations) is
 *      judged by each half's net rise (median of its last 3 samples minus median of its first 3) instead: the
 *      Theil-Sen slope of a half holding one or two steps is zero, although the steps keep coming.
 *   Not a leak but the median of the late part stands above the median of the first tenth (at least 5
 *   samples) by max(2 quanta, floor * n / 4, 3 noise deviations) or more: PLATEAU (growth that stopped,
 *   or slow growth under the floor that still adds up to a quarter of the run's floor budget). Else PASS.
 * The constants were tuned on synthetic series (harness/tests/test_detect.c), 100-sample runs unless
 * said otherwise: no false LEAK in 1000 seeds of each flat noise model (RSS: +-3 pages, AR(1) wander,
 * rare +64-page spikes, 16 pages held for 1-5 samples; heap: +-4096 B jitter, 30% cache blocks, 200 B
 * gaussian), none in 8217 single steps of 1 to 2560 pages at every position; 64 B/iter on heap bytes
 * and 4 KiB/iter on RSS flagged in every seed; exponential approaches up to a time constant of ~n/3
 * and glibc-like sawtooths that stop as late as 80% of the run are PLATEAU. Known weak spots: runs
 * under 50 samples with floor 1 KiB on RSS (1-4% false leaks under AR(1) noise), and a leak whose
 * late part carries bumps as large as its own rise per half (the persistence test then reads a step). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "quantile.h"

#define DETECT_MIN_SAMPLES 8
#define PERSIST_FRACTION 0.5 /* each half of the late part grows at >= this share of the floor */
#define SLOWDOWN_RATIO 0.5   /* the second half grows at >= this share of the first half's pace */
#define RISE_QUANTA 2.0      /* the late part rises by more than this many quanta */
#define RISE_NOISE 4.0       /* ... and by at least this many noise deviations */
#define PLATEAU_NOISE 3.0    /* a plateau's growth is at least this many noise deviations */
#define SPIKE_NOISE 3.0      /* a spike stands this many noise deviations off its neighbours... */
#define SPIKE_QUANTA 2.0     /* ... and more than this many quanta */
#define EARLY_MIN 5          /* the early median takes n/10 samples, at least this many */

/* OpenVINO's constants (stress_tests memleaks): window size, warm-up, outliers tolerated, retakes. */
#define OV_WINDOW 5
#define OV_WARMUP 30
#define OV_MAX_OUTLIERS 5
#define OV_MAX_RETAKES 3
#define OV_DEFAULT_BOUND 0.10

const char *mlk_verdict_name(mlk_verdict v)
{
    switch (v) {
    case MLK_VERDICT_PASS:
        return "pass";
    case MLK_VERDICT_LEAK:
        return "leak";
    case MLK_VERDICT_PLATEAU:
        return "plateau";
    case MLK_VERDICT_CRASHED:
        return "crashed";
    case MLK_VERDICT_TIMEOUT:
        return "timeout";
    case MLK_VERDICT_OOM:
        return "oom";
    case MLK_VERDICT_ERROR:
        return "error";
    case MLK_VERDICT_INCONCLUSIVE:
        return "inconclusive";
    case MLK_VERDICT_COUNT:
        break;
    }
    return "unknown";
}

void mlk_detect_opts_init(mlk_detect_opts *o)
{
    if (!o)
        return;
    o->floor_per_iter = 1024;
    o->alpha = 0.01;
    o->late_fraction = 0.5;
    o->quantum = 1;
    o->stride = 1;
}

static int all_finite(const double *y, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return 0;
    return 1;
}

static void result_init(mlk_detect_result *r, int n)
{
    memset(r, 0, sizeof *r);
    r->verdict = MLK_VERDICT_PASS;
    r->slope = r->late_slope = r->mk_z = r->mk_p = r->growth = NAN;
    r->late_head_slope = r->late_tail_slope = r->noise = NAN;
    r->ov_ref = r->ov_bound = NAN;
    r->n = n;
}

/* Median of y[0..n), n >= 1, through scratch (n doubles): y itself stays in order. */
static double median_of(const double *y, int n, double *scratch)
{
    memcpy(scratch, y, sizeof *y * (size_t)n);
    return mlk_median(scratch, n);
}

static int opts_ok(const mlk_detect_opts *o)
{
    return isfinite(o->floor_per_iter) && o->floor_per_iter >= 0 && o->alpha > 0 && o->alpha < 1 &&
           o->late_fraction > 0 && o->late_fraction <= 1 && isfinite(o->quantum) && o->quantum >= 0;
}

/* Median of the up-to-5 values v[lo..hi]. */
static double median5(const double *v, int lo, int hi)
{
    double w[5];
    int k = 0;
    for (int i = lo; i <= hi; i++)
        w[k++] = v[i];
    return mlk_median(w, k);
}

/* Copy to out the samples of late[0..m) that are not isolated spikes, and return how many: a sample whose
 * residual (res) is more than thr from the median residual of its 5-neighbourhood is left out. A spike
 * (an allocator cache held for one or two samples) decides every pair it is in, which drowns a small
 * trend in a rank test; dropping spikes symmetrically does not bias the test under "no trend". */
static int despike(const double *late, const double *res, int m, double thr, double *out)
{
    int k = 0;
    for (int i = 0; i < m; i++) {
        int lo = i - 2 < 0 ? 0 : i - 2, hi = i + 2 >= m ? m - 1 : i + 2;
        if (fabs(res[i] - median5(res, lo, hi)) <= thr)
            out[k++] = late[i];
    }
    return k;
}

/* True when no sample lies below the highest one before it by drop or more: a staircase, not a noisy series. */
static bool never_drops(const double *y, int n, double drop)
{
    double top = y[0];
    for (int i = 1; i < n; i++) {
        if (y[i] < top - drop || (drop <= 0 && y[i] < top))
            return false;
        top = fmax(top, y[i]);
    }
    return true;
}

/* A half's rise per iteration from the medians of its first and last 3 samples (one spike cannot make it). */
static double net_rise(const double *y, int n, double *scratch)
{
    if (n < 6)
        return 0;
    double a = median_of(y, 3, scratch), b = median_of(y + n - 3, 3, scratch);
    return (b - a) / (n - 3);
}

/* The statistics of the late part; 0 or -1 (no memory). */
static int late_stats(const double *y, int n, int m, double quantum, mlk_detect_result *r)
{
    const double *late = y + (n - m);
    int h = m / 2;
    if (mlk_theil_sen(y, n, &r->slope) || mlk_theil_sen(late, m, &r->late_slope) ||
        mlk_theil_sen(late, h, &r->late_head_slope) || mlk_theil_sen(late + h, m - h, &r->late_tail_slope))
        return -1;
    double *scratch = malloc(sizeof *scratch * (size_t)m * 3);
    if (!scratch)
        return -1;
    double *res = scratch + m, *kept = scratch + 2 * m;
    int k0 = n / 10 < EARLY_MIN ? EARLY_MIN : n / 10;
    double early = median_of(y, k0 < m ? k0 : m, scratch);
    r->growth = median_of(late, m, scratch) - early;

    /* the noise: a robust deviation of the residuals around the late line */
    for (int i = 0; i < m; i++)
        res[i] = late[i] - r->late_slope * i;
    double mid = median_of(res, m, scratch);
    for (int i = 0; i < m; i++)
        kept[i] = fabs(res[i] - mid);
    r->noise = 1.4826 * median_of(kept, m, scratch);

    int nk = despike(late, res, m, fmax(SPIKE_NOISE * r->noise, SPIKE_QUANTA * quantum), kept);
    if (nk < DETECT_MIN_SAMPLES) { /* a series that is all spikes has none: test it whole */
        memcpy(kept, late, sizeof *kept * (size_t)m);
        nk = m;
    }
    r->mk_used = nk;
    int rc = mlk_mann_kendall(kept, nk, &r->mk_z, &r->mk_p);
    if (!rc && never_drops(late, m, quantum / 2)) {
        r->late_head_slope = fmax(r->late_head_slope, net_rise(late, h, scratch));
        r->late_tail_slope = fmax(r->late_tail_slope, net_rise(late + h, m - h, scratch));
    }
    free(scratch);
    return rc;
}

/* v in bytes, for people: "4096 B", "20.0 KiB", "1.57 MiB". Returns buf. */
static const char *fmt_bytes(char buf[32], double v)
{
    double a = fabs(v);
    if (a >= 1048576.0)
        snprintf(buf, 32, "%.2f MiB", v / 1048576.0);
    else if (a >= 10 * 1024.0)
        snprintf(buf, 32, "%.1f KiB", v / 1024.0);
    else
        snprintf(buf, 32, "%.4g B", v);
    return buf;
}

static double stride_of(const mlk_detect_opts *o) { return o->stride > 1 ? o->stride : 1.0; }

/* Why the late part is not a leak, or "" when it is: the first test that failed, in rule order. */
static int leak_reason(const mlk_detect_result *r, const mlk_detect_opts *o, int m, char *buf, size_t len)
{
    double st = stride_of(o);
    double fl = o->floor_per_iter, q = o->quantum, rise = r->late_slope * (m - 1) * st;
    double head = r->late_head_slope, tail = r->late_tail_slope;
    double half_min = fmax(PERSIST_FRACTION * fl, q / ((m / 2 - 1) * st));
    char a[32], b[32], c[32];
    buf[0] = '\0';
    if (!(r->late_slope >= fl))
        snprintf(buf, len, "late slope %s/iter < floor %s", fmt_bytes(a, r->late_slope), fmt_bytes(b, fl));
    else if (!(r->mk_p <= o->alpha))
        snprintf(buf, len, "late slope %s/iter >= floor %s but Mann-Kendall p=%.2g > alpha %.2g",
                 fmt_bytes(a, r->late_slope), fmt_bytes(b, fl), r->mk_p, o->alpha);
    else if (!(rise > RISE_QUANTA * q))
        snprintf(buf, len, "late rise %s is within %.0f quanta of %s", fmt_bytes(a, rise), RISE_QUANTA,
                 fmt_bytes(b, q));
    else if (!(rise >= RISE_NOISE * r->noise))
        snprintf(buf, len, "late rise %s is within %.0f times the noise (%s)", fmt_bytes(a, rise), RISE_NOISE,
                 fmt_bytes(b, r->noise));
    else if (!(head >= half_min && tail >= half_min && head > 0 && tail > 0))
        snprintf(buf, len, "late growth sits in one half only (%s then %s/iter, need %s in both): a step",
                 fmt_bytes(a, head), fmt_bytes(b, tail), fmt_bytes(c, half_min));
    else if (!(tail >= SLOWDOWN_RATIO * head))
        snprintf(buf, len, "late growth slows down (%s then %s/iter)", fmt_bytes(a, head), fmt_bytes(b, tail));
    return buf[0] != '\0';
}

int mlk_detect_leak(const double *series, int n, const mlk_detect_opts *o, mlk_detect_result *out)
{
    if (!o || !out || n < 0 || (n > 0 && !series) || !opts_ok(o) || !all_finite(series, n))
        return -1;
    mlk_detect_result r;
    result_init(&r, n);
    if (n < DETECT_MIN_SAMPLES) {
        snprintf(r.detail, sizeof r.detail, "too few samples (%d, need %d) to judge: pass", n,
                 DETECT_MIN_SAMPLES);
        *out = r;
        return 0;
    }
    int m = (int)ceil(o->late_fraction * n);
    if (m < DETECT_MIN_SAMPLES)
        m = DETECT_MIN_SAMPLES;
    if (m > n)
        m = n;
    if (late_stats(series, n, m, o->quantum, &r) != 0)
        return -1;
    /* Slopes so far are per sample; a sample of a long run's series is the mean of stride iterations. */
    double st = stride_of(o);
    r.slope /= st;
    r.late_slope /= st;
    r.late_head_slope /= st;
    r.late_tail_slope /= st;

    char why[192], a[32], b[32], c[32], d[32];
    double plateau_min =
        fmax(fmax(RISE_QUANTA * o->quantum, o->floor_per_iter * n * st / 4.0), PLATEAU_NOISE * r.noise);
    if (!leak_reason(&r, o, m, why, sizeof why)) {
        r.verdict = MLK_VERDICT_LEAK;
        snprintf(r.detail, sizeof r.detail,
                 "late slope %s/iter >= floor %s, Mann-Kendall p=%.2g, growing in both halves of the last %d "
                 "samples (%s, %s/iter): leak",
                 fmt_bytes(a, r.late_slope), fmt_bytes(b, o->floor_per_iter), r.mk_p, m,
                 fmt_bytes(c, r.late_head_slope), fmt_bytes(d, r.late_tail_slope));
    } else {
        r.verdict = r.growth >= plateau_min ? MLK_VERDICT_PLATEAU : MLK_VERDICT_PASS;
        snprintf(r.detail, sizeof r.detail, "%s; grew %s since the start (%s %s): %s", why,
                 fmt_bytes(a, r.growth), r.verdict == MLK_VERDICT_PLATEAU ? ">=" : "<",
                 fmt_bytes(b, plateau_min), mlk_verdict_name(r.verdict));
    }
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * OpenVINO's rule, offline: their loop samples as it goes and can run longer after a retake; here the
 * series is fixed, so a re-taken pass is cut at the end of the series and detail says so.
 * ---------------------------------------------------------------------------------------------- */

static double window_mean(const double *y, int w)
{
    double s = 0;
    for (int i = 0; i < OV_WINDOW; i++)
        s += y[w * OV_WINDOW + i];
    return s / OV_WINDOW;
}

/* Start a pass at window w: its mean is the reference, and (as in their loop) the window is judged too,
 * which only trips on a negative bound. */
static void ov_take_reference(const double *y, int w, double rb, int per_pass, mlk_detect_result *r, int *remaining)
{
    r->ov_ref = window_mean(y, w);
    r->ov_bound = r->ov_ref * rb;
    r->ov_outliers = 0 > r->ov_bound;
    r->ov_windows = 1;
    *remaining = per_pass - 1;
}

int mlk_detect_openvino(const double *series, int n, double rel_bound, mlk_detect_result *out)
{
    if (!out || n < 0 || (n > 0 && !series) || !isfinite(rel_bound) || !all_finite(series, n))
        return -1;
    mlk_detect_result r;
    result_init(&r, n);
    double rb = rel_bound > 0 ? rel_bound : OV_DEFAULT_BOUND;
    int n_win = n / OV_WINDOW;
    if (n_win == 0) {
        snprintf(r.detail, sizeof r.detail, "OpenVINO rule: %d samples, not one window of %d: pass", n,
                 OV_WINDOW);
        *out = r;
        return 0;
    }
    int ref_w = n >= OV_WARMUP ? OV_WARMUP / OV_WINDOW - 1 : n_win - 1;
    int per_pass = n >= OV_WARMUP ? (n - OV_WARMUP) / OV_WINDOW : 0; /* their measure_count, n / 5 */
    int remaining, w, last_w = ref_w;
    ov_take_reference(series, ref_w, rb, per_pass, &r, &remaining);
    for (w = ref_w + 1; w < n_win; w++) {
        if (r.ov_outliers > OV_MAX_OUTLIERS && r.ov_retakes < OV_MAX_RETAKES) {
            r.ov_retakes++;
            ov_take_reference(series, w, rb, per_pass, &r, &remaining);
            last_w = w;
            continue;
        }
        if (remaining <= 0)
            break;
        remaining--;
        r.ov_windows++;
        last_w = w;
        r.ov_outliers += window_mean(series, w) - r.ov_ref > r.ov_bound;
    }
    r.growth = window_mean(series, last_w) - r.ov_ref;
    r.verdict = r.ov_outliers > OV_MAX_OUTLIERS ? MLK_VERDICT_LEAK : MLK_VERDICT_PASS;

    char note[96] = "", a[32], b[32];
    if (n < OV_WARMUP)
        snprintf(note, sizeof note, " (only %d samples < %d: reference from the last full window)", n, OV_WARMUP);
    else if (per_pass <= 1)
        snprintf(note, sizeof note, " (%d samples leave no window after the reference)", n);
    else if (remaining > 0 && w >= n_win)
        snprintf(note, sizeof note, " (the series ended %d windows before that pass would)", remaining);
    snprintf(r.detail, sizeof r.detail,
             "OpenVINO rule: reference %s at iteration %d, bound +%s (%g%%), %d retake(s); %d of %d windows "
             "above it%s, fail needs > %d: %s",
             fmt_bytes(a, r.ov_ref), (last_w - r.ov_windows + 2) * OV_WINDOW, fmt_bytes(b, r.ov_bound), rb * 100,
             r.ov_retakes, r.ov_outliers, r.ov_windows, note, OV_MAX_OUTLIERS, mlk_verdict_name(r.verdict));
    *out = r;
    return 0;
}
