/* regress_cp.c: change-point detection over one config's series of nightly runs (a windowed Welch t-test
 * in the style of Mozilla's Perfherder), for `history`. It must never allocate, nor read outside y[0..n). */
#include <math.h>

#include "regress.h"

/* ================================================================================================
 * Change points across nightly runs (copied into the README)
 *
 * Method. For each run i, the runs before it (at most back_window, at least 2) are compared with the runs
 * from i on (fore_window of them; at the very end of the series at least 2) by Welch's t:
 *
 *     t(i) = |mean(after) - mean(before)| / sqrt(var(before)/n_before + var(after)/n_after)
 *
 * with sample variances (n - 1). Identical windows give t = 0; a zero denominator with different means
 * (quantized figures that repeat exactly night after night, then step) gives t = +inf. Run i is a change
 * point when
 *   1. t(i) >= t_threshold,
 *   2. |mean(after) - mean(before)| >= max(min_rel * |mean(before)|, min_abs), and
 *   3. t(i) is the largest t within fore_window - 1 runs either side (ties go to the earlier run).
 * Rule 3 is what reports a step once, at its first run: one run later the before-window already holds a
 * run of the new level, which inflates its variance and shrinks the difference, so t falls steeply on
 * both sides of the true step. With an 8% step, +-0.3% uniform noise and the default windows, t is about 60
 * at the step (1st percentile 39) and about 2 one run before it and 4 one run after.
 *
 * What it does not report, by construction:
 *   - A single bad night. One outlier of size d in a window of k otherwise equal runs moves that window's
 *     mean by d/k and gives it a standard error of exactly d/k, so its t is at most about 1, whatever d
 *     is. Two bad nights in a fore window of 3 give t of about 2. A threshold of 7 is far above both.
 *   - A step whose new level has only one run yet (the last run of the series): it cannot be told from a
 *     bad night. It is reported the next night, at its first run, once 2 runs of the new level exist.
 *     A point found in the last fore_window - 1 runs is therefore provisional: it rests on 2 nights, and
 *     if the next night is back at the old level it disappears (two bad nights in three give t = 2).
 *     Once the fore window is full a point stays where it is as nights are added.
 *   - A step at the second run: the before-window needs 2 runs, so the first two runs are the baseline.
 *   - A steady drift. t is scale-free on a straight line: with back_window 5 and fore_window 3 a noiseless
 *     ramp gives t = 4 / sqrt(1/2 + 1/3) = 4.38 at most, whatever its slope, so a drift is not a step.
 *     Noise can push t over 7 by chance (1% of 10-run series at +0.5%/run with +-0.3% noise, t alone),
 *     but then the 3-night mean is only 2% above the 5 before, where min_rel stops it; on steeper ramps
 *     the noise matters less and t stays near 4.4. With the defaults 0 of 1000 such series are flagged
 *     at 0.25, 0.5, 1 or 2% per run. Drift is `compare`'s business (against a fixed baseline) or a trend
 *     test's, not this one's.
 *   - Two steps closer than fore_window runs: only the one with the larger t is reported.
 *
 * Parameters (mlk_cp_opts_init) and why they suit nightly memory figures:
 *   back_window 5  Perfherder uses 12 over dense per-push data. Nightly runs are sparse: 5 nights give a
 *                  stable enough mean and variance while letting a series of 10 runs be analysed, and keep
 *                  an older step out of the window of a newer one after 5 nights.
 *   fore_window 3  the new level must persist for 3 nights (2 at the end of the series) before it is
 *                  trusted; also the width within which a step is reported once.
 *   t_threshold 7  Perfherder's. With windows this short Welch's t has only 1 to 6 degrees of freedom,
 *                  so a t-test alone flags pure noise now and then: with min_rel = 0, +-0.5% uniform
 *                  noise shows a change in 2.9% of 10-run series and 5.4% of 30-run ones (1000 seeds,
 *                  tests/test_regress.c). That is why rule 2 exists.
 *   min_rel 0.02   peak VmHWM, final RSS and heap bytes of a fixed workload repeat to well under 1% run to
 *                  run (often exactly: they are page- and block-quantized), so a 2% move in the mean of
 *                  3 nights is never noise, and +-0.5% noise gives 0 false changes in 1000 series.
 *   min_abs 0      set it, in the series' unit, for series that hover near 0, where a relative floor
 *                  means nothing: growth per iteration in bytes (e.g. the detector's own floor), or heap
 *                  bytes of an engine that frees everything.
 * Latency (median per step) is noisier run to run (CPU frequency, neighbours, cache state: several %), so
 * latency series use min_rel 0.10 (mlk_cp_opts_init_latency): a 10% slowdown sustained for 3 nights is
 * worth a finding, a 5% wobble is not. The t threshold stays 7: the noise is in the spread it measures.
 * ================================================================================================ */

/* Samples beyond this are refused: differences and squared deviations must stay finite. */
#define CP_MAX_ABS 1e150

void mlk_cp_opts_init(mlk_cp_opts *o)
{
    if (!o)
        return;
    o->back_window = 5;
    o->fore_window = 3;
    o->t_threshold = 7;
    o->min_rel = 0.02;
    o->min_abs = 0;
}

void mlk_cp_opts_init_latency(mlk_cp_opts *o)
{
    mlk_cp_opts_init(o);
    if (o)
        o->min_rel = MLK_CP_LATENCY_MIN_REL;
}

static int opts_ok(const mlk_cp_opts *o)
{
    return o->back_window >= 2 && o->fore_window >= 2 && o->t_threshold >= 0 && o->min_rel >= 0 &&
           o->min_abs >= 0; /* each comparison is also false for NaN */
}

/* Mean and sample variance of y[lo..hi), hi - lo >= 2; two passes, so large levels with small noise
 * (a 1 GB HWM moving by kilobytes) keep their precision. */
static void window_stats(const double *y, int lo, int hi, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (int k = lo; k < hi; k++)
        s += y[k];
    double m = s / (hi - lo);
    for (int k = lo; k < hi; k++)
        ss += (y[k] - m) * (y[k] - m);
    *mean = m;
    *var = ss / (hi - lo - 1);
}

typedef struct cp_eval {
    double t, before, after;
} cp_eval;

/* t at run i, or 0 (with e->t = -1) when i has too few runs on either side to be a candidate. */
static int cp_at(const double *y, int n, const mlk_cp_opts *o, int i, cp_eval *e)
{
    int nb = i < o->back_window ? i : o->back_window;
    int nf = n - i < o->fore_window ? n - i : o->fore_window;
    e->t = -1;
    if (i < 0 || nb < 2 || nf < 2)
        return 0;
    double vb, va;
    window_stats(y, i - nb, i, &e->before, &vb);
    window_stats(y, i, i + nf, &e->after, &va);
    double diff = fabs(e->after - e->before), se = sqrt(vb / nb + va / nf);
    e->t = se > 0 ? diff / se : diff > 0 ? INFINITY : 0;
    return 1;
}

/* Rule 3: no run within fore_window - 1 either side has a larger t (or an equal one earlier). */
static int is_local_max(const double *y, int n, const mlk_cp_opts *o, int i, double t)
{
    for (int j = i - o->fore_window + 1; j < i + o->fore_window; j++) {
        cp_eval e;
        if (j == i || !cp_at(y, n, o, j, &e))
            continue;
        if (j < i ? e.t >= t : e.t > t)
            return 0;
    }
    return 1;
}

int mlk_change_points(const double *y, int n, const mlk_cp_opts *o, mlk_change_point *out, int max)
{
    mlk_cp_opts defaults;
    if (!o) {
        mlk_cp_opts_init(&defaults);
        o = &defaults;
    }
    if (n < 0 || (n > 0 && !y) || max < 0 || (max > 0 && !out) || !opts_ok(o))
        return -1;
    for (int i = 0; i < n; i++)
        if (!(fabs(y[i]) <= CP_MAX_ABS)) /* also false for NaN */
            return -1;

    int found = 0;
    for (int i = 2; i + 2 <= n && found < max; i++) {
        cp_eval e;
        if (!cp_at(y, n, o, i, &e) || !(e.t >= o->t_threshold))
            continue;
        double floor = fmax(o->min_rel * fabs(e.before), o->min_abs);
        if (!(fabs(e.after - e.before) >= floor) || !is_local_max(y, n, o, i, e.t))
            continue;
        out[found++] = (mlk_change_point){.index = i, .before = e.before, .after = e.after, .t = e.t};
    }
    return found;
}
