/* cast_half.h: bit-exact conversions between IEEE half (float16), bfloat16 and float/double.
 * It must never produce a value other than the correctly rounded one (round-to-nearest-even), and never
 * turn a NaN into an infinity or a number. */
#ifndef REF_CAST_HALF_H
#define REF_CAST_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t ref_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ref_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Exact: every half is a float. */
static inline float ref_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) /* a NaN comes out quiet, payload kept, as F16C's vcvtph2ps makes it */
        return ref_f32_from_bits(sign | 0x7f800000u | (mant ? 0x400000u : 0u) | (mant << 13));
    if (exp == 0) {
        /* subnormal: mant * 2^-24, exact in float */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return ref_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* Round the magnitude bits of a value below the smallest normal half (2^-14) to a subnormal half.
 * mant holds the full significand with its implicit bit; the value is mant * 2^-shift * 2^-24. */
static inline uint16_t ref_half_subnormal(uint64_t mant, int shift)
{
    uint64_t m = mant >> shift;
    uint64_t rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (m & 1)))
        m++; /* may carry into 0x400, which is exactly the smallest normal's encoding */
    return (uint16_t)m;
}

static inline uint16_t ref_f32_to_f16(float f)
{
    uint32_t x = ref_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf stays inf; NaN stays a quiet NaN with its top payload bits */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
    if (ax >= 0x477ff000u) /* >= 65520: rounds past the largest half (65504) */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* normal half: rebias the exponent, round 23 -> 10 mantissa bits */
        uint32_t r = ax - ((127u - 15u) << 23);
        r += 0xfffu + ((r >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u) /* <= 2^-25: rounds to zero (the tie goes to the even 0) */
        return sign;
    int e = (int)(ax >> 23);
    return (uint16_t)(sign | ref_half_subnormal((ax & 0x7fffffu) | 0x800000u, 126 - e));
}

/* Directly from double so a double input is rounded once, not twice through float. */
static inline uint16_t ref_f64_to_f16(double d)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax >= 0x7ff0000000000000ull)
        return (uint16_t)(sign | 0x7c00u |
                          (ax > 0x7ff0000000000000ull ? 0x200u | (uint16_t)((ax >> 42) & 0x3ffu) : 0u));
    if (ax >= 0x40effe0000000000ull) /* >= 65520 */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x3f10000000000000ull) { /* >= 2^-14 */
        uint64_t r = ax - ((uint64_t)(1023 - 15) << 52);
        r += ((1ull << 41) - 1) + ((r >> 42) & 1u);
        return (uint16_t)(sign | (uint16_t)(r >> 42));
    }
    if (ax <= 0x3e60000000000000ull) /* <= 2^-25 */
        return sign;
    int e = (int)(ax >> 52);
    return (uint16_t)(sign | ref_half_subnormal((ax & 0xfffffffffffffull) | (1ull << 52), 1051 - e));
}

static inline float ref_bf16_to_f32(uint16_t b) { return ref_f32_from_bits((uint32_t)b << 16); }

/* Round-to-nearest-even, for arithmetic results. */
static inline uint16_t ref_f32_to_bf16(float f)
{
    uint32_t x = ref_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* Truncation, which is what ONNX 1.12's reference (and its backend test data) does for Cast. */
static inline uint16_t ref_f32_to_bf16_trunc(float f)
{
    uint32_t x = ref_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)(x >> 16);
}

#endif
