/* qgemm8_avxvnni.c: ref_qgemm8's tile with AVX-VNNI (256-bit vpdpbusd, for CPUs without AVX-512): up to 4 rows x one
 * 16-column panel. Only called after a runtime CPU check; it must never read a row or store a column outside the
 * ranges it is given (a partial panel goes through a buffer). */
/* The instruction set by pragma, not by a build flag: every target that compiles the engine's sources (the
 * plugin, the LSan worker's copy) gets it, and nothing outside this file assumes AVX-VNNI. */
#pragma GCC target("avx2,fma,avxvnni")
#include <immintrin.h>
#include <string.h>

#include "qgemm8.h"

static inline __attribute__((always_inline)) int32_t ld32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline __attribute__((always_inline)) __m256i dp(__m256i acc, __m256i panel, __m256i w, bool a_u8)
{
    return a_u8 ? _mm256_dpbusd_avx_epi32(acc, w, panel) : _mm256_dpbusd_avx_epi32(acc, panel, w);
}

static inline __attribute__((always_inline)) void tile(const ref_qgemm8_args *g, int64_t m0, int R, bool a_u8,
                                                       int64_t n, int64_t cols)
{
    __m256i acc[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    int64_t Kq = g->Kq;
    const uint8_t *b0 = g->b + ref_qgemm8_b_at(Kq, 0, n), *a = g->a + m0 * Kq * 4;
    for (int64_t kq = 0; kq < Kq; kq++) {
        __m256i p0 = _mm256_loadu_si256((const __m256i *)(b0 + kq * 64));
        __m256i p1 = _mm256_loadu_si256((const __m256i *)(b0 + kq * 64 + 32));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256i w = _mm256_set1_epi32(ld32(a + (r * Kq + kq) * 4));
            acc[r][0] = dp(acc[r][0], p0, w, a_u8);
            acc[r][1] = dp(acc[r][1], p1, w, a_u8);
        }
    }
    const ref_qgemm8_epi *e = g->e;
    for (int r = 0; r < R; r++) {
        int64_t m = m0 + r;
        for (int h = 0; h < 2; h++) {
            __m256i v = acc[r][h];
            if (e && e->row_add)
                v = _mm256_add_epi32(v, _mm256_set1_epi32(e->row_add[m]));
            if (e && e->row_mul && e->col)
                v = _mm256_add_epi32(v, _mm256_mullo_epi32(_mm256_set1_epi32(e->row_mul[m]),
                                                           _mm256_loadu_si256((const __m256i *)(e->col + n + h * 8))));
            if (e && e->row_mul2 && e->col2)
                v = _mm256_add_epi32(v,
                                     _mm256_mullo_epi32(_mm256_set1_epi32(e->row_mul2[m]),
                                                        _mm256_loadu_si256((const __m256i *)(e->col2 + n + h * 8))));
            int32_t *dst = g->y + m * g->ldy + n + h * 8;
            if (cols >= (h + 1) * 8) {
                _mm256_storeu_si256((__m256i *)dst, v);
                continue;
            }
            int32_t tmp[8];
            _mm256_storeu_si256((__m256i *)tmp, v);
            for (int64_t i = 0; i < cols - h * 8; i++)
                dst[i] = tmp[i];
        }
    }
}

#define TILE(R, U)                                                                                    \
    static void tile_##R##_##U(const ref_qgemm8_args *g, int64_t m0, int64_t n, int64_t cols)          \
    {                                                                                                 \
        tile(g, m0, R, U, n, cols);                                                                   \
    }
TILE(4, 0)
TILE(4, 1)
TILE(1, 0)
TILE(1, 1)

void ref_qgemm8_rows_avxvnni(const ref_qgemm8_args *g, int64_t m0, int rows, int64_t n0, int64_t n1)
{
    for (int64_t n = n0; n < n1; n += 16) {
        int64_t cols = n1 - n < 16 ? n1 - n : 16;
        if (rows == 4) {
            (g->a_u8 ? tile_4_1 : tile_4_0)(g, m0, n, cols);
            continue;
        }
        for (int r = 0; r < rows; r++)
            (g->a_u8 ? tile_1_1 : tile_1_0)(g, m0 + r, n, cols);
    }
}
