/* alert_group.c: findings that share a cause collapsed into one alert summary, ranked, and their text (alert.h).
 * It must never drop a finding (every one sits inside exactly one alert) nor print a figure without its unit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"
#include "fmt.h"

mlk_finding *mlk_finding_set(mlk_finding *f, const char *key, const char *cell, const char *where,
                             const char *step, const char *metric, int dir, double cur, double base, double effect)
{
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", key ? key : "");
    snprintf(f->cell, sizeof f->cell, "%s", cell ? cell : "");
    snprintf(f->where, sizeof f->where, "%s", where ? where : "");
    snprintf(f->step, sizeof f->step, "%s", step ? step : "");
    snprintf(f->metric, sizeof f->metric, "%s", metric ? metric : "");
    f->dir = dir;
    f->cur = cur;
    f->base = base;
    f->rel = base != 0 && !isnan(base) ? (cur - base) / fabs(base) : NAN;
    f->effect = effect;
    f->p = NAN;
    f->ref = -1;
    return f;
}

/* ---- grouping ---- */

/* Findings of one cause together (group, direction), memory before latency within it, larger effect first. */
static int by_group(const void *a, const void *b)
{
    const mlk_finding *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (!c)
        c = strcmp(x->where, y->where);
    if (c)
        return c;
    if (x->dir != y->dir)
        return y->dir - x->dir;
    mlk_family fx = mlk_metric_family(x->metric), fy = mlk_metric_family(y->metric);
    if (fx != fy)
        return (int)fx - (int)fy;
    if (x->effect != y->effect)
        return (x->effect < y->effect) - (x->effect > y->effect);
    /* the same move in every step: the whole iteration stands for it */
    int xi = !strcmp(x->step, "iteration"), yi = !strcmp(y->step, "iteration");
    return xi != yi ? yi - xi : strcmp(x->step, y->step);
}

/* Alerts ranked: regressions first, then memory before latency, then larger effect, then group for stability. */
static int by_rank(const mlk_alert *x, const mlk_alert *y, const mlk_finding *v)
{
    if (x->dir != y->dir)
        return y->dir - x->dir;
    if (x->family != y->family)
        return (int)x->family - (int)y->family;
    if (x->effect != y->effect)
        return (x->effect < y->effect) - (x->effect > y->effect);
    int c = strcmp(v[x->first].cell, v[y->first].cell);
    return c ? c : strcmp(v[x->first].where, v[y->first].where);
}

int mlk_alerts_build(mlk_finding *v, int n, mlk_alert **out, int *n_out, mlk_error *err)
{
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, by_group);
    mlk_alert *a = malloc(sizeof *a * (size_t)(n + 1));
    mlk_finding *tmp = n ? malloc(sizeof *tmp * (size_t)n) : NULL;
    if (!a || (n && !tmp)) {
        free(a);
        free(tmp);
        return mlk_fail(err, MLK_E_NOMEM, "out of memory grouping %d findings into alerts", n);
    }
    int k = 0;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && !strcmp(v[j].key, v[i].key) && !strcmp(v[j].where, v[i].where) && v[j].dir == v[i].dir)
            j++;
        /* v[i] leads: memory first, then the largest effect (by_group's order) */
        a[k++] = (mlk_alert){.first = i, .n = j - i, .dir = v[i].dir, .family = mlk_metric_family(v[i].metric),
                             .effect = v[i].effect};
        i = j;
    }
    /* insertion sort of the alerts (few), then the findings laid out in that order */
    for (int i = 1; i < k; i++) {
        mlk_alert t = a[i];
        int j = i;
        for (; j > 0 && by_rank(&t, &a[j - 1], v) < 0; j--)
            a[j] = a[j - 1];
        a[j] = t;
    }
    int at = 0;
    for (int i = 0; i < k; i++) {
        memcpy(tmp + at, v + a[i].first, sizeof *v * (size_t)a[i].n);
        a[i].first = at;
        at += a[i].n;
    }
    if (n)
        memcpy(v, tmp, sizeof *v * (size_t)n);
    free(tmp);
    *out = a;
    *n_out = k;
    return MLK_OK;
}

bool mlk_alert_fails(const mlk_alert *a, const mlk_finding *v, mlk_gate g)
{
    if (a->dir <= 0 || g == MLK_GATE_NONE || v[a->first].expected)
        return false;
    for (int i = a->first; i < a->first + a->n; i++) {
        mlk_family fam = mlk_metric_family(v[i].metric);
        if (g == MLK_GATE_ALL || (g == MLK_GATE_MEMORY && fam == MLK_FAM_MEMORY) ||
            (g == MLK_GATE_LATENCY && fam == MLK_FAM_LATENCY))
            return true;
    }
    return false;
}

/* ---- text ---- */

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* ms as "850 ns", "12.3 µs", "4.56 ms", "1.23 s". */
static void fmt_ms(char *out, size_t len, double ms)
{
    double a = fabs(ms);
    if (a < 1e-3)
        snprintf(out, len, "%.0f ns", ms * 1e6);
    else if (a < 1)
        snprintf(out, len, "%.3g µs", ms * 1e3);
    else if (a < 1000)
        snprintf(out, len, "%.3g ms", ms);
    else
        snprintf(out, len, "%.2f s", ms / 1e3);
}

void mlk_fmt_metric_value(char *out, size_t len, const char *metric, double v)
{
    metric = metric ? metric : "";
    if (isnan(v))
        snprintf(out, len, "-");
    else if (ends_with(metric, "_kib"))
        mlk_fmt_bytes(out, len, v * 1024, false);
    else if (ends_with(metric, "_bytes"))
        mlk_fmt_bytes(out, len, v, false);
    else if (ends_with(metric, "_ms"))
        fmt_ms(out, len, v);
    else if (!strcmp(metric, "growth") || !strncmp(metric, "series.", 7)) {
        char b[40];
        mlk_fmt_bytes(b, sizeof b, v, true);
        snprintf(out, len, "%s/iter", b);
    } else if (fabs(v) < 1e6)
        snprintf(out, len, "%.4g", v);
    else
        snprintf(out, len, "%.0f", v);
}

void mlk_fmt_rel(char *out, size_t len, double cur, double base)
{
    if (isnan(cur) || isnan(base))
        snprintf(out, len, "-");
    else if (base == 0)
        snprintf(out, len, cur == 0 ? "0%%" : "new");
    else {
        double r = (cur - base) / fabs(base);
        if (fabs(r) > 10)
            snprintf(out, len, "%+.1fx", cur / base);
        else
            snprintf(out, len, "%+.1f%%", 100 * r);
    }
}

void mlk_finding_text(char *out, size_t len, const mlk_finding *f)
{
    char cur[40], base[40], rel[24];
    mlk_fmt_metric_value(cur, sizeof cur, f->metric, f->cur);
    mlk_fmt_metric_value(base, sizeof base, f->metric, f->base);
    mlk_fmt_rel(rel, sizeof rel, f->cur, f->base);
    snprintf(out, len, "%s %s %s -> %s (%s)%s%s", f->step, f->metric, base, cur, rel, f->note[0] ? "; " : "",
             f->note);
}

void mlk_alert_headline(char *out, size_t len, const mlk_alert *a, const mlk_finding *v)
{
    const mlk_finding *lead = &v[a->first];
    char what[400];
    mlk_finding_text(what, sizeof what, lead);
    int n = snprintf(out, len, "%s %s: %s%s%s: %s", a->dir > 0 ? "REGRESSION" : "improvement",
                     mlk_family_name(a->family), lead->cell, lead->where[0] ? " at " : "", lead->where, what);
    if (a->n > 1 && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, " (+%d more moved with it)", a->n - 1);
}
