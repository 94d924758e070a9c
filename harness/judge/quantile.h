/* quantile.h: the one quantile and median of the harness (step statistics, the detector, compare, gbench import).
 * It must never allocate: it sorts the caller's array in place. */
#ifndef MLK_QUANTILE_H
#define MLK_QUANTILE_H

/* The q-quantile (0 <= q <= 1) of v[0..n) by linear interpolation between the order statistics around
 * q * (n - 1) (R's default type 7, numpy's "linear"). Sorts v in place (ascending). NaN when n <= 0.
 * v must hold no NaN: their order is undefined. */
double mlk_quantile(double *v, int n, double q);

/* mlk_quantile(v, n, 0.5): the middle value, or halfway between the two middle ones. Sorts v in place. */
double mlk_median(double *v, int n);

#endif
