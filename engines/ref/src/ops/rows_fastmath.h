/* rows_fastmath.h: float rows of Softmax and LayerNormalization in a fixed order of operations, the one code the
 * portable (rows.c) and AVX2 (rows_avx2.c) builds compile. It must never let the vector width decide a result: sums
 * are kept in ROWS_SLOTS fixed slots (element k in slot k % ROWS_SLOTS) and folded by one fixed tree in every build. */
#ifndef REF_ROWS_FASTMATH_H
#define REF_ROWS_FASTMATH_H

#include <math.h>
#include <stdint.h>

#include "unary_fastmath.h"

#define ROWS_SLOTS 8

static inline double rows_fold(const double *s)
{
    return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

/* Softmax over x[0..n), into y (which may be x): the max first, so exp never overflows; e^(x - max) by ref_fexp, its
 * sum in double. A row holding +inf or only -inf takes max 0 and gives IEEE's answer, as the generic lane does. */
static inline void rows_softmax_body(const float *x, float *y, int64_t n)
{
    float m[ROWS_SLOTS];
    for (int j = 0; j < ROWS_SLOTS; j++)
        m[j] = -INFINITY;
    int64_t k = 0;
    for (; k + ROWS_SLOTS <= n; k += ROWS_SLOTS)
        for (int j = 0; j < ROWS_SLOTS; j++)
            m[j] = x[k + j] > m[j] ? x[k + j] : m[j];
    for (; k < n; k++)
        m[k % ROWS_SLOTS] = x[k] > m[k % ROWS_SLOTS] ? x[k] : m[k % ROWS_SLOTS];
    float mx = m[0];
    for (int j = 1; j < ROWS_SLOTS; j++)
        mx = m[j] > mx ? m[j] : mx;
    if (isinf(mx))
        mx = 0.0f;
    double s[ROWS_SLOTS] = {0};
    for (k = 0; k + ROWS_SLOTS <= n; k += ROWS_SLOTS)
        for (int j = 0; j < ROWS_SLOTS; j++) {
            float e = ref_fexp(x[k + j] - mx);
            y[k + j] = e;
            s[j] += (double)e;
        }
    for (; k < n; k++) {
        float e = ref_fexp(x[k] - mx);
        y[k] = e;
        s[k % ROWS_SLOTS] += (double)e;
    }
    float inv = (float)(1.0 / rows_fold(s));
    for (k = 0; k < n; k++)
        y[k] *= inv;
}

/* LayerNormalization of x[0..n) into y: mean and variance two-pass in double (no E[x^2] - E[x]^2 cancellation), then
 * (x - mean) * inv_std * scale (+ bias) in float. bias may be NULL. */
static inline void rows_layernorm_body(const float *x, float *y, int64_t n, const float *scale, const float *bias,
                                       double eps, double *mean, double *inv_std)
{
    double s[ROWS_SLOTS] = {0};
    int64_t k = 0;
    for (; k + ROWS_SLOTS <= n; k += ROWS_SLOTS)
        for (int j = 0; j < ROWS_SLOTS; j++)
            s[j] += (double)x[k + j];
    for (; k < n; k++)
        s[k % ROWS_SLOTS] += (double)x[k];
    double m = n ? rows_fold(s) / (double)n : 0.0;
    double q[ROWS_SLOTS] = {0};
    for (k = 0; k + ROWS_SLOTS <= n; k += ROWS_SLOTS)
        for (int j = 0; j < ROWS_SLOTS; j++) {
            double d = (double)x[k + j] - m;
            q[j] += d * d;
        }
    for (; k < n; k++) {
        double d = (double)x[k] - m;
        q[k % ROWS_SLOTS] += d * d;
    }
    double iv = 1.0 / sqrt((n ? rows_fold(q) / (double)n : 0.0) + eps);
    float fm = (float)m, fi = (float)iv;
    if (bias)
        for (k = 0; k < n; k++)
            y[k] = (x[k] - fm) * fi * scale[k] + bias[k];
    else
        for (k = 0; k < n; k++)
            y[k] = (x[k] - fm) * fi * scale[k];
    *mean = m;
    *inv_std = iv;
}

#endif
