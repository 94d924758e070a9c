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

/* ---- floors ---- */

/* A peak or a final level of a fixed workload is page- and block-quantized and repeats run to run, but allocators
 * (jemalloc's extents, glibc's arenas per thread) move it by a few hundred KiB to a few MiB between identical runs:
 * 1 MiB keeps that out while a 4 KiB/iter leak over 100 iterations (400 KiB of growth) is caught by the growth
 * figure instead. */
#define DEFAULT_LEVEL_ABS_KIB 1024.0
#define DEFAULT_LATENCY_MIN_RUNS 3

void mlk_alert_floors_init(mlk_alert_floors *f, const mlk_scenario *s)
{
    mlk_scenario d = {0};
    if (!s) {
#define MLK_X_(field, value) d.field = value;
        MLK_SCENARIO_DEFAULTS(MLK_X_)
#undef MLK_X_
        s = &d;
    }
    *f = (mlk_alert_floors){.level_rel = s->regression_rel,
                            .level_abs_kib = fmax((double)s->regression_abs_kib, DEFAULT_LEVEL_ABS_KIB),
                            .growth_bytes_per_iter = (double)s->leak_bytes_per_iter,
                            .latency_rel = s->latency_rel,
                            .latency_abs_ms = s->latency_abs_ms,
                            .latency_alpha = s->latency_alpha,
                            .latency_min_runs = DEFAULT_LATENCY_MIN_RUNS};
}

/* "1MiB", "512 KiB", "2048" (KiB) -> KiB; -1 when not a size. */
static double parse_kib(const char *v)
{
    char *end;
    double x = strtod(v, &end);
    while (*end == ' ')
        end++;
    double scale = !*end                                           ? 1
                   : !strcmp(end, "KiB") || !strcmp(end, "K")      ? 1
                   : !strcmp(end, "MiB") || !strcmp(end, "M")      ? 1024
                   : !strcmp(end, "GiB") || !strcmp(end, "G")      ? 1024.0 * 1024
                   : !strcmp(end, "B")                             ? 1.0 / 1024
                                                                   : -1;
    return end == v || scale < 0 || !(x >= 0) ? -1 : x * scale;
}

/* One KEY=VALUE of --floor into f. */
static int floor_one(mlk_alert_floors *f, const char *k, size_t klen, const char *v, mlk_error *err)
{
    char key[32];
    snprintf(key, sizeof key, "%.*s", (int)(klen < 31 ? klen : 31), k);
    char *end;
    double x = strtod(v, &end);
    bool pct = *end == '%';
    if (pct)
        x /= 100, end++;
    bool num = end != v && !*end && x >= 0 && isfinite(x);
    if (!strcmp(key, "memory_abs") || !strcmp(key, "memory_abs_kib")) {
        double kib = parse_kib(v);
        if (kib < 0)
            return mlk_fail(err, MLK_E_USAGE, "--floor %s: '%s' is not a size (e.g. 1MiB, 512KiB)", key, v);
        f->level_abs_kib = kib;
        return MLK_OK;
    }
    double *slot = !strcmp(key, "memory_rel")       ? &f->level_rel
                   : !strcmp(key, "growth_bytes")   ? &f->growth_bytes_per_iter
                   : !strcmp(key, "latency_rel")    ? &f->latency_rel
                   : !strcmp(key, "latency_abs_ms") ? &f->latency_abs_ms
                   : !strcmp(key, "latency_alpha")  ? &f->latency_alpha
                                                    : NULL;
    if (!slot && strcmp(key, "latency_runs"))
        return mlk_fail(err, MLK_E_USAGE,
                        "--floor: unknown key '%s' (expected memory_rel, memory_abs, growth_bytes, latency_rel, "
                        "latency_abs_ms, latency_alpha, latency_runs)",
                        key);
    if (!num)
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
        int rc = floor_one(&t, item, (size_t)(eq - item), eq + 1, err);
        if (rc)
            return rc;
    }
    *f = t;
    return MLK_OK;
}

void mlk_alert_floors_text(const mlk_alert_floors *f, char *out, size_t len)
{
    char abs[32], growth[32], lat[32];
    mlk_fmt_bytes(abs, sizeof abs, f->level_abs_kib * 1024, false);
    mlk_fmt_bytes(growth, sizeof growth, f->growth_bytes_per_iter, false);
    mlk_fmt_metric_value(lat, sizeof lat, "wall_ms", f->latency_abs_ms);
    snprintf(out, len, "memory: +%g%% and +%s (growth +%s/iter); latency: +%g%% and +%s over >= %d runs",
             100 * f->level_rel, abs, growth, 100 * f->latency_rel, lat, f->latency_min_runs);
}

mlk_family mlk_metric_family(const char *metric)
{
    return metric && !strcmp(metric, "wall_ms") ? MLK_FAM_LATENCY : MLK_FAM_MEMORY;
}

/* The absolute floor of a metric in its unit. */
static double abs_floor(const mlk_alert_floors *f, const char *metric)
{
    size_t n = metric ? strlen(metric) : 0;
    if (!strcmp(metric ? metric : "", "growth"))
        return f->growth_bytes_per_iter;
    if (n > 6 && !strcmp(metric + n - 6, "_bytes"))
        return f->level_abs_kib * 1024;
    return f->level_abs_kib;
}

/* +1/-1/0 for a move of cur from base past floor and outside lo..hi; *effect the move over the floor. */
static int verdict(double cur, double base, double lo, double hi, double floor, double *effect)
{
    double d = cur - base;
    *effect = 0;
    if (isnan(d) || fabs(d) <= floor || (d > 0 ? cur <= hi : cur >= lo))
        return 0;
    *effect = floor > 0 ? fabs(d) / floor : INFINITY;
    return d > 0 ? 1 : -1;
}

int mlk_alert_level(const mlk_alert_floors *f, const char *metric, double cur, double base, double lo, double hi,
                    double *effect)
{
    bool growth = metric && !strcmp(metric, "growth");
    /* growth sits near 0 when nothing leaks: a relative floor means nothing there */
    double floor = growth ? f->growth_bytes_per_iter : fmax(f->level_rel * fabs(base), abs_floor(f, metric));
    return verdict(cur, base, lo, hi, floor, effect);
}

int mlk_alert_step(const mlk_alert_floors *f, const char *metric, double before, double after, double *effect)
{
    if (mlk_metric_family(metric) == MLK_FAM_LATENCY) {
        double floor = fmax(f->latency_rel * fabs(before), f->latency_abs_ms);
        return verdict(after, before, before, before, floor, effect);
    }
    return mlk_alert_level(f, metric, after, before, before, before, effect);
}

int mlk_alert_latency_runs(const mlk_alert_floors *f, double cur, double *base_runs, int n, double *effect)
{
    *effect = 0;
    if (n < f->latency_min_runs || n < 1 || isnan(cur))
        return 0;
    double lo = base_runs[0], hi = base_runs[0];
    for (int i = 1; i < n; i++)
        lo = fmin(lo, base_runs[i]), hi = fmax(hi, base_runs[i]);
    double base = mlk_median(base_runs, n);
    /* the runs' own spread is what load does to this step on this machine: a move must exceed it too */
    double floor = fmax(fmax(f->latency_rel * fabs(base), f->latency_abs_ms), hi - lo);
    return verdict(cur, base, lo, hi, floor, effect);
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
    return verdict(mc, mb, mb, mb, floor, effect);
}
