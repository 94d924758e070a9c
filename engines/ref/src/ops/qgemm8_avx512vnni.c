/* qgemm8_avx512vnni.c: ref_qgemm8's tile with AVX-512 VNNI: up to 8 rows x 32 columns of int32 sums, each vpdpbusd
 * adding sixteen columns' 4-byte groups times one row's broadcast group. Only called after a runtime CPU check; it
 * must never read a row or store a column outside the ranges it is given (the last panel's stores are masked). */
/* The instruction set by pragma, not by a build flag: every target that compiles the engine's sources (the
 * plugin, the LSan worker's copy) gets it, and nothing outside this file assumes AVX-512 VNNI. */
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vnni")
#include <immintrin.h>
#include <string.h>

#include "qgemm8.h"

static inline __attribute__((always_inline)) int32_t ld32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4); /* a's rows need not be 4-byte aligned (a tensor's own bytes) */
    return v;
}

/* vpdpbusd takes the unsigned operand first: the panel or the broadcast row, whichever is uint8. */
static inline __attribute__((always_inline)) __m512i dp(__m512i acc, __m512i panel, __m512i w, bool a_u8)
{
    return a_u8 ? _mm512_dpbusd_epi32(acc, w, panel) : _mm512_dpbusd_epi32(acc, panel, w);
}

static inline __attribute__((always_inline)) void put(const ref_qgemm8_args *g, int64_t m, int64_t n, __m512i v,
                                                      __mmask16 k)
{
    const ref_qgemm8_epi *e = g->e;
    if (e && e->row_add)
        v = _mm512_add_epi32(v, _mm512_set1_epi32(e->row_add[m]));
    if (e && e->row_mul && e->col)
        v = _mm512_add_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(e->row_mul[m]), _mm512_loadu_si512(e->col + n)));
    if (e && e->row_mul2 && e->col2)
        v = _mm512_add_epi32(v,
                             _mm512_mullo_epi32(_mm512_set1_epi32(e->row_mul2[m]), _mm512_loadu_si512(e->col2 + n)));
    _mm512_mask_storeu_epi32(g->y + m * g->ldy + n, k, v);
}

/* R rows from m0 x P panels (16 or 32 columns) from n; k0, k1 mask the panels' stores. */
static inline __attribute__((always_inline)) void tile(const ref_qgemm8_args *g, int64_t m0, int R, int P, bool a_u8,
                                                       int64_t n, __mmask16 k0, __mmask16 k1)
{
    __m512i acc[8][2];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    int64_t Kq = g->Kq;
    const uint8_t *b0 = g->b + ref_qgemm8_b_at(Kq, 0, n), *b1 = b0 + Kq * 64, *a = g->a + m0 * Kq * 4;
    for (int64_t kq = 0; kq < Kq; kq++) {
        __m512i p0 = _mm512_loadu_si512(b0 + kq * 64), p1 = P > 1 ? _mm512_loadu_si512(b1 + kq * 64) : p0;
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m512i w = _mm512_set1_epi32(ld32(a + (r * Kq + kq) * 4));
            acc[r][0] = dp(acc[r][0], p0, w, a_u8);
            if (P > 1)
                acc[r][1] = dp(acc[r][1], p1, w, a_u8);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        put(g, m0 + r, n, acc[r][0], k0);
        if (P > 1)
            put(g, m0 + r, n + 16, acc[r][1], k1);
    }
}

typedef void (*tile_fn)(const ref_qgemm8_args *g, int64_t m0, int64_t n, __mmask16 k0, __mmask16 k1);
#define TILE(R, P, U)                                                                                           \
    static void tile_##R##_##P##_##U(const ref_qgemm8_args *g, int64_t m0, int64_t n, __mmask16 k0, __mmask16 k1) \
    {                                                                                                          \
        tile(g, m0, R, P, U, n, k0, k1);                                                                       \
    }
#define TILES(R) TILE(R, 1, 0) TILE(R, 2, 0) TILE(R, 1, 1) TILE(R, 2, 1)
TILES(8)
TILES(4)
TILES(2)
TILES(1)
/* [rows 8, 4, 2, 1][panels - 1][a_u8] */
static const tile_fn tiles[4][2][2] = {
    {{tile_8_1_0, tile_8_1_1}, {tile_8_2_0, tile_8_2_1}},
    {{tile_4_1_0, tile_4_1_1}, {tile_4_2_0, tile_4_2_1}},
    {{tile_2_1_0, tile_2_1_1}, {tile_2_2_0, tile_2_2_1}},
    {{tile_1_1_0, tile_1_1_1}, {tile_1_2_0, tile_1_2_1}},
};

void ref_qgemm8_rows_avx512(const ref_qgemm8_args *g, int64_t m0, int rows, int64_t n0, int64_t n1)
{
    for (int64_t n = n0; n < n1; n += 32) {
        int64_t left = n1 - n;
        __mmask16 k0 = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
        __mmask16 k1 = left >= 32 ? 0xffff : left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0;
        int p = left > 16 ? 1 : 0;
        for (int m = 0; m < rows;) {
            int r = rows - m >= 8 ? 0 : rows - m >= 4 ? 1 : rows - m >= 2 ? 2 : 3;
            tiles[r][p][g->a_u8](g, m0 + m, n, k0, k1);
            m += 8 >> r;
        }
    }
}

void ref_qgemm8_colsums_avx512(const uint8_t *panel, int64_t Kq, int32_t col[16])
{
    __m512i acc = _mm512_setzero_si512(), ones = _mm512_set1_epi8(1);
    for (int64_t kq = 0; kq < Kq; kq++)
        acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(panel + kq * 64), ones);
    _mm512_storeu_si512(col, acc);
}
