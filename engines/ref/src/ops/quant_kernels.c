/* quant_kernels.c: float to 8-bit and back with one scale and zero point, AVX2 where the CPU has it, portable
 * otherwise, the same bytes either way. It must never change the formula's rounding: IEEE division, then round half
 * to even, then the zero point (exact: small integers), then saturation. */
#include <immintrin.h>
#include <math.h>

#include "quant_kernels.h"

static void quant_portable(const float *x, int64_t n, float scale, int zp, bool s8, uint8_t *y)
{
    float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f;
    for (int64_t i = 0; i < n; i++) {
        float q = rintf(x[i] / scale) + (float)zp;
        q = q < lo ? lo : q > hi ? hi : q;
        y[i] = s8 ? (uint8_t)(int8_t)q : (uint8_t)q;
    }
}

/* 32 at a time: vdivps, vroundps mode 0 (rintf's half to even), min/max as the compares saturate; the integral floats
 * convert exactly and the packs never saturate further (already in range). The auto-vectorized loop spent most of
 * its time in blends and masks (15% of mobilenetv2-u8). */
__attribute__((target("avx2"))) static void quant_avx2(const float *x, int64_t n, float scale, int zp, bool s8,
                                                       uint8_t *y)
{
    __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps((float)zp);
    __m256 lo = _mm256_set1_ps(s8 ? -128.0f : 0.0f), hi = _mm256_set1_ps(s8 ? 127.0f : 255.0f);
    __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i v[4];
        for (int k = 0; k < 4; k++) {
            __m256 q = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i + 8 * k), s),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            v[k] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, z), lo), hi));
        }
        /* packs work per 128-bit lane: words 0-3 of v0, v1, then 4-7; bytes likewise; the permute restores order */
        __m256i w01 = _mm256_packs_epi32(v[0], v[1]), w23 = _mm256_packs_epi32(v[2], v[3]);
        __m256i b = s8 ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_permutevar8x32_epi32(b, order));
    }
    quant_portable(x + i, n - i, scale, zp, s8, y + i);
}

void ref_quant_f32_8(const float *x, int64_t n, float scale, int zp, bool s8, uint8_t *y)
{
    if (__builtin_cpu_supports("avx2"))
        quant_avx2(x, n, scale, zp, s8, y);
    else
        quant_portable(x, n, scale, zp, s8, y);
}

__attribute__((target_clones("avx2", "default"), optimize("tree-vectorize"))) void
ref_dequant_8_f32(const uint8_t *x, int64_t n, bool s8, int zp, float scale, float *y)
{
    if (s8)
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)((int8_t)x[i] - zp) * scale;
    else
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)(x[i] - zp) * scale;
}

/* One loop per output type, so the avx512f and avx2 clones vectorize the rounding (vrndscalepd, vroundpd) and the
 * clamps (the default clone called rint per value: 84% of a QDQ conv net's time); no FMA contraction, so every clone
 * gives the same bits. */
__attribute__((target_clones("avx512f", "avx2", "default"),
               optimize("tree-vectorize", "fp-contract=off", "no-trapping-math"))) void
ref_requant_i32_8(const int32_t *acc, int64_t n, int64_t bias, double mult, double yz, bool s8, uint8_t *y)
{
    const double b = (double)bias; /* acc + bias is exact in double either way; int32 -> double converts 4 at once */
    if (s8) {
        int8_t *ys = (int8_t *)y;
        for (int64_t i = 0; i < n; i++) {
            double r = rint(((double)acc[i] + b) * mult + yz);
            r = r < -128.0 ? -128.0 : r;
            r = r > 127.0 ? 127.0 : r;
            ys[i] = (int8_t)(int32_t)r;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            double r = rint(((double)acc[i] + b) * mult + yz);
            r = r < 0.0 ? 0.0 : r;
            r = r > 255.0 ? 255.0 : r;
            y[i] = (uint8_t)(int32_t)r;
        }
    }
}

