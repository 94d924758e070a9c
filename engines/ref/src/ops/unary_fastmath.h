/* unary_fastmath.h: branch-free float exp, expm1, tanh, sigmoid and erf that the compiler can vectorize
 * (libm calls cannot be), accurate to a few float ulps (relative error below 5e-7).
 * They must never turn a NaN into a number, and never overflow to inf or NaN where the true result is finite
 * (results below the smallest normal float flush to 0). */
#ifndef REF_UNARY_FASTMATH_H
#define REF_UNARY_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t ref_fm_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ref_fm_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* e^x: x = n ln2 + r with |r| <= ln2/2 (n by the 1.5*2^23 rounding trick, so no float->int conversion
 * ever sees a NaN), e^r by its Taylor series to r^7 (truncation error < 6e-9), then scaled by 2^n built
 * in the exponent bits, as 2^(n-1) * 2 so n = 128 does not overflow the scale itself. */
static inline float ref_fexp(float x)
{
    const float hi = 88.72283f, lo = -86.5f; /* e^hi is just under FLT_MAX; below lo the result is < 2^-124 */
    const float shift = 12582912.0f;         /* 1.5 * 2^23: adding it rounds to an integer in the low bits */
    const float xc = x > hi ? hi : (x < lo ? lo : x);
    const float t = xc * 1.44269502f + shift;
    const float n = t - shift;
    float r = xc - n * 6.93115234e-01f; /* ln2 split: the high part has 12 bits, so n * hi is exact */
    r = r - n * 3.19461833e-05f;
    float p = 1.98412698e-04f;
    p = p * r + 1.38888889e-03f;
    p = p * r + 8.33333333e-03f;
    p = p * r + 4.16666667e-02f;
    p = p * r + 1.66666667e-01f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    /* the low bits of t hold n; n + 126 is in [1, 254] after the clamp (unsigned math for NaN's sake) */
    const float scale = ref_fm_float((ref_fm_bits(t) - ref_fm_bits(shift) + 126u) << 23);
    const float y = p * scale * 2.0f;
    return x > hi ? INFINITY : (x < lo ? 0.0f : y);
}

/* e^x - 1 without the cancellation near 0: Taylor to x^8 for |x| < ln2/2, e^x - 1 elsewhere. */
static inline float ref_fexpm1(float x)
{
    float p = 2.48015873e-05f;
    p = p * x + 1.98412698e-04f;
    p = p * x + 1.38888889e-03f;
    p = p * x + 8.33333333e-03f;
    p = p * x + 4.16666667e-02f;
    p = p * x + 1.66666667e-01f;
    p = p * x + 0.5f;
    p = p * x * x + x;
    const float e = ref_fexp(x) - 1.0f;
    return fabsf(x) < 0.34657359f ? p : e;
}

/* (e^2|x| - 1) / (e^2|x| + 1) with the sign of x; |x| >= 9 is +-1 in float. */
static inline float ref_ftanh(float x)
{
    float a = fabsf(x);
    a = a > 9.0f ? 9.0f : a;
    const float e = ref_fexpm1(2.0f * a);
    return copysignf(e / (e + 2.0f), x);
}

/* 1 / (1 + e^-x): e^-x overflowing to inf gives exactly 0, so no separate branch for large negatives. */
static inline float ref_fsigmoid(float x) { return 1.0f / (1.0f + ref_fexp(-x)); }

/* erf: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)) to n = 6 below 0.5; above, 1 - e^(-x^2) q(t) with
 * t = 1 / (1 + 0.355|x|) and q a degree-7 least-squares fit (relative error 1.5e-8 on [0.5, 4]).
 * Beyond 4, erf is 1 in float. */
static inline float ref_ferf(float x)
{
    float a = fabsf(x);
    a = a > 4.0f ? 4.0f : a;
    const float z = a * a;
    float s = 1.20553330e-04f;
    s = s * z - 8.54832702e-04f;
    s = s * z + 5.22397762e-03f;
    s = s * z - 2.68661706e-02f;
    s = s * z + 1.12837917e-01f;
    s = s * z - 3.76126389e-01f;
    s = s * z + 1.12837917e+00f;
    s = s * x;
    const float t = 1.0f / (1.0f + 0.355f * a);
    float q = -2.079001814e-01f;
    q = q * t + 7.881469727e-01f;
    q = q * t - 7.453664541e-01f;
    q = q * t + 7.937238216e-01f;
    q = q * t - 9.641231596e-02f;
    q = q * t + 2.790418565e-01f;
    q = q * t + 1.879171431e-01f;
    q = q * t + 8.449972374e-04f;
    const float l = copysignf(1.0f - q * ref_fexp(-z), x);
    return fabsf(x) < 0.5f ? s : l;
}

#endif
