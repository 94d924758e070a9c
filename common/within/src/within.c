/* within.c: the fraction-within statistic shared by refengine conformance and ort_crosscheck.
 * It must never judge: callers decide which outputs are compared this way and what fraction they need. */
#include <math.h>
#include <stdio.h>

#include "mlk_within.h"

void mlk_within_measure(size_t n, mlk_within_pair_fn pair, const void *ctx, double tol, mlk_within *out)
{
    mlk_within w = {.n = n};
    for (size_t i = 0; i < n; i++) {
        double r, g;
        pair(ctx, i, &r, &g);
        if (isfinite(r) && fabs(r) > w.scale)
            w.scale = fabs(r);
    }
    double limit = tol * (w.scale > 0 ? w.scale : 1), sum = 0;
    for (size_t i = 0; i < n; i++) {
        double r, g, d;
        pair(ctx, i, &r, &g);
        if (isnan(r) || isnan(g))
            d = isnan(r) && isnan(g) ? 0 : INFINITY;
        else if (r == g) /* equal infinities too, whose difference is NaN */
            d = 0;
        else
            d = fabs(g - r);
        w.n_in += d <= limit;
        sum += d;
        if (d > w.max)
            w.max = d;
    }
    w.frac = n ? (double)w.n_in / (double)n : 1;
    w.mean = n ? sum / (double)n : 0;
    *out = w;
}

bool mlk_within_ok(const mlk_within *w, double need)
{
    return w->frac >= need;
}

double mlk_within_need(const mlk_within *basis, double k, double floor)
{
    double need = 1 - k * (1 - basis->frac);
    if (need < basis->frac / k)
        need = basis->frac / k;
    if (need < floor)
        need = floor;
    return need > 1 ? 1 : need;
}

void mlk_within_format(const mlk_within *w, double tol, double need, char *buf, size_t len)
{
    snprintf(buf, len, "%.4f of %zu values within %.1g of max|ref| %.4g (need %.4f); mean |diff| %.3g, max %.3g",
             w->frac, w->n, tol, w->scale, need, w->mean, w->max);
}
