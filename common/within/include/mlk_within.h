/* mlk_within.h: the statistical comparison for outputs too ill-conditioned to compare element by element: the
 * fraction of values within tol * max|ref|, with the mean and max difference. It must never count a NaN as within
 * unless both sides are NaN, and never allocate. */
#ifndef MLK_WITHIN_H
#define MLK_WITHIN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mlk_within {
    size_t n, n_in; /* values compared, values within */
    double scale;   /* max|ref| over the finite values (0 when all are 0) */
    double frac;    /* n_in / n (1 when n is 0) */
    double mean, max; /* |got - ref|; INFINITY when one side is NaN and the other is not */
} mlk_within;

/* Value i of the reference and of the result being judged, as doubles. */
typedef void (*mlk_within_pair_fn)(const void *ctx, size_t i, double *ref, double *got);

/* Measure n pairs against tol * scale (tol itself when the scale is 0): two passes, the first for the scale. */
void mlk_within_measure(size_t n, mlk_within_pair_fn pair, const void *ctx, double tol, mlk_within *out);

/* The verdict: at least the fraction need of the values within. */
bool mlk_within_ok(const mlk_within *w, double need);

/* The fraction a result must reach when the tolerance comes from a basis (the same statistic measured between two
 * runs of the reference itself, e.g. on a nudged input), within a factor k of the basis both ways: at least the
 * basis's share within divided by k, at most k times its share outside (the stricter of the two), and never less
 * than floor. At most 1. */
double mlk_within_need(const mlk_within *basis, double k, double floor);

/* One line: "0.9990 of 1000 values within 1e-03 of max|ref| 2.5 (need 0.9900); mean |diff| 1e-05, max 0.3". */
void mlk_within_format(const mlk_within *w, double tol, double need, char *buf, size_t len);

#endif
