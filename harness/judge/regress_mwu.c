/* regress_mwu.c: the two-sided Mann-Whitney U test that `compare` runs over two runs' latency samples.
 * It must never hold more than one copy of the samples as scratch, nor read outside x[0..nx) and y[0..ny). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "regress.h"

/* The exact null distribution is used up to this many samples on each side (then C(16,8) = 12870
 * orderings at most, counted in int64 without overflow); above it the normal approximation is within a
 * few 1e-3 of exact, which no verdict depends on. */
#define MWU_EXACT_MAX 8
#define MWU_EXACT_DEG (MWU_EXACT_MAX * MWU_EXACT_MAX + MWU_EXACT_MAX + 1)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------------------------------------
 * Ranking
 *
 * x and y are sorted separately and merged, so a sample's group is known from which run it came from
 * and no (value, group) pairs need storing. Each run of equal values, across both groups, takes the
 * average of the ranks it spans; sum(t^3 - t) over those runs is the variance's tie correction.
 * ---------------------------------------------------------------------------------------------- */

typedef struct mwu_ranks {
    double r_x;      /* sum of x's ranks (1-based, ties averaged) */
    double tie_term; /* sum over tie groups of t^3 - t */
} mwu_ranks;

/* xs[0..nx) and ys[0..ny) sorted ascending. */
static mwu_ranks rank_sorted(const double *xs, int64_t nx, const double *ys, int64_t ny)
{
    mwu_ranks r = {0, 0};
    int64_t i = 0, j = 0, below = 0; /* below: samples already ranked */
    while (i < nx || j < ny) {
        double v = i < nx && (j >= ny || xs[i] <= ys[j]) ? xs[i] : ys[j];
        int64_t cx = 0, cy = 0;
        while (i < nx && xs[i] == v)
            i++, cx++;
        while (j < ny && ys[j] == v)
            j++, cy++;
        double t = (double)(cx + cy);
        r.r_x += (double)cx * ((double)below + (t + 1) / 2);
        r.tie_term += t * t * t - t;
        below += cx + cy;
    }
    return r;
}

/* ------------------------------------------------------------------------------------------------
 * Exact null distribution
 *
 * Without ties, the number of orderings of m x's and n y's with U = k is the coefficient of q^k in the
 * Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). Each factor is applied
 * in place: multiplying by (1 - q^a) subtracts a shifted copy (high to low), dividing by (1 - q^i)
 * adds one (low to high). After factor i the series is [n+i choose i]_q, a polynomial of degree i*n,
 * so the division is exact and the coefficients above it stay 0.
 * ---------------------------------------------------------------------------------------------- */

/* P(U >= k) under the null, for m, n <= MWU_EXACT_MAX. */
static double exact_sf(int m, int n, int64_t k)
{
    int64_t c[MWU_EXACT_DEG] = {1};
    for (int i = 1; i <= m; i++) {
        for (int d = MWU_EXACT_DEG - 1; d >= n + i; d--)
            c[d] -= c[d - n - i];
        for (int d = i; d < MWU_EXACT_DEG; d++)
            c[d] += c[d - i];
    }
    int64_t tail = 0, total = 0;
    for (int d = 0; d <= m * n; d++) {
        total += c[d];
        if (d >= k)
            tail += c[d];
    }
    return (double)tail / (double)total;
}

/* ------------------------------------------------------------------------------------------------
 * The test
 * ---------------------------------------------------------------------------------------------- */

/* Two-sided p for U_x = u_x out of nx*ny; ties as counted by rank_sorted. */
static double mwu_p(double u_x, int64_t nx, int64_t ny, double tie_term)
{
    double nxy = (double)nx * (double)ny, u_hi = fmax(u_x, nxy - u_x), p;
    if (tie_term == 0 && nx <= MWU_EXACT_MAX && ny <= MWU_EXACT_MAX) {
        p = 2 * exact_sf((int)nx, (int)ny, (int64_t)u_hi);
    } else {
        double n = (double)(nx + ny);
        /* n >= 2 here; tie_term = n^3 - n (every value equal) gives a zero variance: no evidence. */
        double var = nxy / 12 * ((n + 1) - tie_term / (n * (n - 1)));
        if (!(var > 0))
            return 1;
        double z = (u_hi - nxy / 2 - 0.5) / sqrt(var);
        p = erfc(z / M_SQRT2); /* 2 * upper tail of N(0,1) */
    }
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

int mlk_mann_whitney(const double *x, int nx, const double *y, int ny, double *u, double *p)
{
    if (!x || !y || nx <= 0 || ny <= 0)
        return -1;
    for (int i = 0; i < nx; i++)
        if (isnan(x[i]))
            return -1;
    for (int i = 0; i < ny; i++)
        if (isnan(y[i]))
            return -1;
    size_t n = (size_t)nx + (size_t)ny;
    if (n > SIZE_MAX / sizeof(double))
        return -1;
    double *buf = malloc(n * sizeof *buf);
    if (!buf)
        return -1;
    memcpy(buf, x, (size_t)nx * sizeof *buf);
    memcpy(buf + nx, y, (size_t)ny * sizeof *buf);
    qsort(buf, (size_t)nx, sizeof *buf, cmp_double);
    qsort(buf + nx, (size_t)ny, sizeof *buf, cmp_double);
    mwu_ranks r = rank_sorted(buf, nx, buf + nx, ny);
    free(buf);

    double u_x = r.r_x - (double)nx * ((double)nx + 1) / 2;
    double p_val = mwu_p(u_x, nx, ny, r.tie_term);
    if (u)
        *u = u_x;
    if (p)
        *p = p_val;
    return 0;
}
