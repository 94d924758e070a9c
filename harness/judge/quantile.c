/* quantile.c: quantiles by sorting and interpolating (quantile.h). It must never allocate nor read outside v. */
#include <math.h>
#include <stdlib.h>

#include "quantile.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double mlk_quantile(double *v, int n, double q)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int lo = (int)pos;
    /* v[lo] + d * frac rather than a weighted mean: equal neighbours give exactly their value, and the midpoint
     * of two large values cannot overflow. */
    return lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (pos - lo) : v[lo];
}

double mlk_median(double *v, int n) { return mlk_quantile(v, n, 0.5); }
