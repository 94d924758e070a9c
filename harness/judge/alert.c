/* alert.c: floors per metric family, the latency test across runs, and findings grouped into ranked alert
 * summaries (alert.h). It must never let a move inside the baseline's own spread through, nor print an exponent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"
#include "fmt.h"
#include "quantile.h"
#include "regress.h"

const char *mlk_family_name(int fam)
{
    static const char *names[] = {
#define MLK_X_(e, n) n,
        MLK_FAMILY_LIST(MLK_X_)
#undef MLK_X_
    };
    return fam >= 0 && fam < MLK_FAM_COUNT ? names[fam] : "?";
}

int mlk_gate_from_name(const char *name)
{
    static const char *names[] = {"memory", "latency", "all", "none"};
    for (int i = 0; name && i < 4; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

/* ---- floors ----
 *
 * Why the table in alert.h holds what it holds (five clean runs of a 16-cell scenario, ref and ORT, glibc and
 * jemalloc, threads 1/2, mmap on/off, ppocr_det at 256x256, on a shared 2-core machine):
 *   peak VmHWM, live heap, requested heap peak: 5% and 1 MiB. They repeat to well under 1% run to run; a real
 *     change in what the engine holds at its peak is larger than both.
 *   final RSS and RssAnon: 10% and 4 MiB. What the allocator keeps after the frees moves with its trim threshold
 *     and with which thread's arena served a request: ORT under glibc ended 2.6 MiB (5.7%) higher in one clean run.
 *     A leak is caught by the growth figure anyway.
 *   requested mapped peak: 10% and 16 MiB. The shim counts every mmap, jemalloc's own extents included: those moved
 *     by 6 MiB (8-13%) between identical runs in three cells. An engine that maps a model or a scratch buffer of its
 *     own moves it by far more (tests/e2e_requested.sh plants 512 MiB).
 *   growth: leak_bytes_per_iter (1 KiB/iter): below it a slope is allocator noise (the judge's own floor).
 */

#define DEFAULT_LATENCY_MIN_RUNS 3

/* The scenario defaults, to tell a threshold a scenario set from one it left out. */
static mlk_scenario scenario_defaults(void)
{
    mlk_scenario d;
    memset(&d, 0, sizeof d);
#define MLK_X_(field, value) d.field = value;
    MLK_SCENARIO_DEFAULTS(MLK_X_)
#undef MLK_X_
    return d;
}

static bool is_bytes(int m)
{
    const char *u = mlk_metric_unit(m);
    return !strcmp(u, "bytes");
}

void mlk_alert_floors_init(mlk_alert_floors *f, const mlk_scenario *s)
{
    mlk_scenario d = scenario_defaults();
    memset(f, 0, sizeof *f);
#define MLK_X_(e, rel_, abs_) f->rel[MLK_M_##e] = rel_, f->abs[MLK_M_##e] = abs_;
    MLK_FLOOR_LIST(MLK_X_)
#undef MLK_X_
    if (!s)
        s = &d;
    for (int m = 0; m < MLK_M_COUNT; m++) {
        if (m == MLK_M_GROWTH || m == MLK_M_WALL)
            continue;
        if (s->regression_rel != d.regression_rel)
            f->rel[m] = s->regression_rel;
        if (s->regression_abs_kib != d.regression_abs_kib)
            f->abs[m] = (double)s->regression_abs_kib * (is_bytes(m) ? 1024 : 1);
    }
    f->abs[MLK_M_GROWTH] = (double)s->leak_bytes_per_iter;
    f->latency_rel = s->latency_rel;
    f->latency_abs_ms = s->latency_abs_ms;
    f->latency_alpha = s->latency_alpha;
    f->latency_min_runs = DEFAULT_LATENCY_MIN_RUNS;
}

/* "1MiB", "512 KiB", "4096" (bare_scale units) -> bytes; -1 when not a size. */
static double parse_bytes(const char *v, double bare_scale)
{
    char *end;
    double x = strtod(v, &end);
    while (*end == ' ')
        end++;
    double scale = !*end                                      ? bare_scale
                   : !strcmp(end, "B")                        ? 1
                   : !strcmp(end, "KiB") || !strcmp(end, "K") ? 1024
                   : !strcmp(end, "MiB") || !strcmp(end, "M") ? 1024.0 * 1024
                   : !strcmp(end, "GiB") || !strcmp(end, "G") ? 1024.0 * 1024 * 1024
                                                              : -1;
    return end == v || scale < 0 || !(x >= 0) || !isfinite(x) ? -1 : x * scale;
}

/* A fraction: "0.05" or "5%"; -1 when not one. */
static double parse_frac(const char *v)
{
    char *end;
    double x = strtod(v, &end);
    if (*end == '%')
        x /= 100, end++;
    return end == v || *end || !(x >= 0) || !isfinite(x) ? -1 : x;
}

/* METRIC_rel or METRIC_abs, or memory_rel/memory_abs for every level (m = -1). */
static int floor_metric(mlk_alert_floors *f, const char *key, const char *v, mlk_error *err)
{
    size_t n = strlen(key);
    if (n < 5 || (strcmp(key + n - 4, "_rel") && strcmp(key + n - 4, "_abs")))
        return 1;
    char name[48];
    snprintf(name, sizeof name, "%.*s", (int)(n - 4 < 47 ? n - 4 : 47), key);
    bool rel = !strcmp(key + n - 4, "_rel"), all = !strcmp(name, "memory");
    int m = all ? -1 : mlk_metric_from_name(name);
    if (!all && (m < 0 || m == MLK_M_WALL))
        return 1;
    for (int i = 0; i < MLK_M_COUNT; i++) {
        if ((all && (i == MLK_M_GROWTH || i == MLK_M_WALL)) || (!all && i != m))
            continue;
        double x = rel ? parse_frac(v) : parse_bytes(v, is_bytes(i) ? 1 : 1024);
        if (x < 0)
            return mlk_fail(err, MLK_E_USAGE, "--floor %s: '%s' is not %s", key, v,
                            rel ? "a fraction (0.05 or 5%)" : "a size (e.g. 1MiB, 512KiB)");
        if (rel)
            f->rel[i] = x;
        else
            f->abs[i] = !strcmp(mlk_metric_unit(i), "kib") ? x / 1024 : x;
    }
    return MLK_OK;
}

/* One KEY=VALUE of --floor into f. */
static int floor_one(mlk_alert_floors *f, const char *key, const char *v, mlk_error *err)
{
    int rc = floor_metric(f, key, v, err);
    if (rc <= 0)
        return rc;
    double x = parse_frac(v);
    if (!strcmp(key, "growth_bytes")) {
        if ((x = parse_bytes(v, 1)) < 0)
            return mlk_fail(err, MLK_E_USAGE, "--floor growth_bytes: '%s' is not a size", v);
        f->abs[MLK_M_GROWTH] = x;
        return MLK_OK;
    }
    double *slot = !strcmp(key, "latency_rel")      ? &f->latency_rel
                   : !strcmp(key, "latency_abs_ms") ? &f->latency_abs_ms
                   : !strcmp(key, "latency_alpha")  ? &f->latency_alpha
                                                    : NULL;
    if (!slot && strcmp(key, "latency_runs"))
        return mlk_fail(err, MLK_E_USAGE,
                        "--floor: unknown key '%s' (expected memory_rel, memory_abs, METRIC_rel, METRIC_abs, "
                        "growth_bytes, latency_rel, latency_abs_ms, latency_alpha, latency_runs; metrics: %s)",
                        key, mlk_metric_names());
    if (x < 0)
        return mlk_fail(err, MLK_E_USAGE, "--floor %s: '%s' is not a number >= 0", key, v);
    if (slot)
        *slot = x;
    else if (x < 1 || x > 50 || x != floor(x))
        return mlk_fail(err, MLK_E_USAGE, "--floor latency_runs: '%s' is not a count of 1 to 50", v);
    else
        f->latency_min_runs = (int)x;
    return MLK_OK;
}

int mlk_alert_floors_parse(mlk_alert_floors *f, const char *spec, mlk_error *err)
{
    mlk_alert_floors t = *f;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return mlk_fail(err, MLK_E_USAGE, "--floor: expected KEY=VALUE, got '%s'", item);
        *eq = '\0';
        int rc = floor_one(&t, item, eq + 1, err);
        if (rc)
            return rc;
    }
    *f = t;
    return MLK_OK;
}

void mlk_alert_floors_text(const mlk_alert_floors *f, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "memory:");
    for (int m = 0; m < MLK_M_COUNT && at < len; m++) {
        if (m == MLK_M_WALL)
            continue;
        char a[40];
        mlk_fmt_metric_value(a, sizeof a, mlk_metric_name(m), f->abs[m]);
        if (m == MLK_M_GROWTH)
            at += (size_t)snprintf(out + at, len - at, " growth %s,", a);
        else
            at += (size_t)snprintf(out + at, len - at, " %s +%g%% and +%s,", mlk_metric_name(m), 100 * f->rel[m], a);
    }
    char lat[40];
    mlk_fmt_metric_value(lat, sizeof lat, "wall_ms", f->latency_abs_ms);
    if (at < len)
        snprintf(out + at, len - at, " latency: +%g%% and +%s over >= %d runs, CPU time too", 100 * f->latency_rel, lat,
                 f->latency_min_runs);
}

mlk_family mlk_metric_family(const char *metric)
{
    return metric && !strcmp(metric, "wall_ms") ? MLK_FAM_LATENCY : MLK_FAM_MEMORY;
}

/* +1/-1/0 for a move of cur from base past floor; *effect the move over the floor. */
static int verdict(double cur, double base, double floor, double *effect)
{
    double d = cur - base;
    *effect = 0;
    if (isnan(d) || fabs(d) <= floor)
        return 0;
    *effect = floor > 0 ? fabs(d) / floor : INFINITY;
    return d > 0 ? 1 : -1;
}

double mlk_alert_spread(const double *v, int n)
{
    double tmp[MLK_ALERT_MAX_RUNS], dev[MLK_ALERT_MAX_RUNS];
    if (n < 2)
        return 0;
    n = n > MLK_ALERT_MAX_RUNS ? MLK_ALERT_MAX_RUNS : n;
    memcpy(tmp, v, sizeof *v * (size_t)n);
    double med = mlk_median(tmp, n);
    for (int i = 0; i < n; i++)
        dev[i] = fabs(v[i] - med);
    /* 1.4826 MAD estimates sigma for normal noise, and a minority of runs at another level (a step inside the
     * window, one odd night) does not widen it: a regression stays one until the baseline takes it in */
    return 3 * 1.4826 * mlk_median(dev, n);
}

int mlk_alert_level(const mlk_alert_floors *f, const char *metric, double cur, double base, double spread,
                    double *effect)
{
    int m = mlk_metric_from_name(metric ? metric : "");
    if (m < 0 || m == MLK_M_WALL) { /* series.NAME: the judge's verdict decides; no level floor */
        *effect = 0;
        return 0;
    }
    /* growth sits near 0 when nothing leaks: its relative floor is 0 */
    double floor = fmax(fmax(f->rel[m] * fabs(base), f->abs[m]), spread);
    return verdict(cur, base, floor, effect);
}

int mlk_alert_step(const mlk_alert_floors *f, const char *metric, double before, double after, double *effect)
{
    if (mlk_metric_family(metric) == MLK_FAM_LATENCY) {
        double floor = fmax(f->latency_rel * fabs(before), f->latency_abs_ms);
        return verdict(after, before, floor, effect);
    }
    return mlk_alert_level(f, metric, after, before, 0, effect);
}

int mlk_alert_level_runs(const mlk_alert_floors *f, const char *metric, double cur, const double *vals, int n,
                         double *base, double *effect)
{
    double tmp[MLK_ALERT_MAX_RUNS], lo = INFINITY, hi = -INFINITY;
    n = n > MLK_ALERT_MAX_RUNS ? MLK_ALERT_MAX_RUNS : n;
    *effect = 0;
    *base = NAN;
    if (n < 1)
        return 0;
    memcpy(tmp, vals, sizeof *vals * (size_t)n);
    for (int i = 0; i < n; i++)
        lo = fmin(lo, vals[i]), hi = fmax(hi, vals[i]);
    *base = mlk_median(tmp, n);
    int dir = mlk_alert_level(f, metric, cur, *base, mlk_alert_spread(vals, n), effect);
    if (!dir || (dir > 0 ? cur > hi : cur < lo))
        return dir;
    /* inside the range: the runs nearer cur than the median must be the newest ones, in a row */
    bool near_run = true;
    for (int i = 0; i < n; i++) {
        bool near = fabs(vals[i] - cur) < fabs(vals[i] - *base);
        if (near && !near_run) {
            *effect = 0;
            return 0; /* a run at cur's level older than one at the median's: two modes, not a step */
        }
        near_run = near_run && near;
    }
    return dir;
}

double mlk_alert_effect(const mlk_alert_floors *f, const char *metric, double cur, double base)
{
    int m = mlk_metric_from_name(metric ? metric : "");
    double d = fabs(cur - base), floor;
    if (m == MLK_M_WALL)
        floor = fmax(f->latency_rel * fabs(base), f->latency_abs_ms);
    else if (m >= 0)
        floor = fmax(f->rel[m] * fabs(base), f->abs[m]);
    else
        floor = f->abs[MLK_M_GROWTH];
    double e = floor > 0 ? d / floor : INFINITY;
    return isnan(e) || e < 1 ? 1 : e;
}

int mlk_alert_latency_runs(const mlk_alert_floors *f, double cur, double *base_runs, int n, double *effect)
{
    *effect = 0;
    if (n < f->latency_min_runs || n < 1 || isnan(cur))
        return 0;
    /* the runs' own spread is what load does to this step on this machine: a move must exceed it too */
    double spread = mlk_alert_spread(base_runs, n);
    double base = mlk_median(base_runs, n);
    double floor = fmax(fmax(f->latency_rel * fabs(base), f->latency_abs_ms), spread);
    return verdict(cur, base, floor, effect);
}

int mlk_alert_latency_reps(const mlk_alert_floors *f, double *cur_reps, int nc, double *base_reps, int nb,
                           double *effect, double *p, double *median_cur, double *median_base)
{
    double u;
    *effect = 0;
    *p = *median_cur = *median_base = NAN;
    if (nc < 3 || nb < 3 || mlk_mann_whitney(cur_reps, nc, base_reps, nb, &u, p))
        return 0;
    double mc = *median_cur = mlk_median(cur_reps, nc), mb = *median_base = mlk_median(base_reps, nb);
    if (!(*p < f->latency_alpha))
        return 0;
    double floor = fmax(f->latency_rel * fabs(mb), f->latency_abs_ms);
    return verdict(mc, mb, floor, effect);
}
