/* qgemm_avx2.c: the 4 x 16 int32 tile of ref_qgemm with vpmaddwd: each step multiplies sixteen columns' int16
 * pairs by one row's broadcast pair and adds both products into int32. Only called after a runtime AVX2 check;
 * it must never read a column or row outside the ranges it is given. */
#include <immintrin.h>

#include "qgemm.h"

void ref_qgemm_row1x16_avx2(int64_t n0, int64_t n1, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y)
{
    for (int64_t n = n0; n + 16 <= n1; n += 16) {
        __m256i c0 = _mm256_setzero_si256(), c1 = c0, d0 = c0, d1 = c0;
        const int16_t *bp = b + ref_qgemm_b_at(Kp, 0, n);
        int64_t kp = 0;
        for (; kp + 2 <= Kp; kp += 2, bp += 64) { /* two chains, so the adds do not wait on each other */
            __m256i w = _mm256_set1_epi32(a[kp]), v = _mm256_set1_epi32(a[kp + 1]);
            c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)bp), w));
            c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(bp + 16)), w));
            d0 = _mm256_add_epi32(d0, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(bp + 32)), v));
            d1 = _mm256_add_epi32(d1, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(bp + 48)), v));
        }
        if (kp < Kp) {
            __m256i w = _mm256_set1_epi32(a[kp]);
            c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)bp), w));
            c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(bp + 16)), w));
        }
        _mm256_storeu_si256((__m256i *)(y + n), _mm256_add_epi32(c0, d0));
        _mm256_storeu_si256((__m256i *)(y + n + 8), _mm256_add_epi32(c1, d1));
    }
}

void ref_qgemm_tile4x16_avx2(int64_t n0, int64_t n1, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y,
                             int64_t ldy)
{
    for (int64_t n = n0; n + 16 <= n1; n += 16) {
        __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
                c31 = c00;
        const int16_t *bp = b + ref_qgemm_b_at(Kp, 0, n);
        for (int64_t kp = 0; kp < Kp; kp++, bp += 32) {
            __m256i b0 = _mm256_load_si256((const __m256i *)bp), b1 = _mm256_load_si256((const __m256i *)(bp + 16));
            __m256i w = _mm256_set1_epi32(a[kp]);
            c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(b0, w));
            c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(b1, w));
            w = _mm256_set1_epi32(a[Kp + kp]);
            c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(b0, w));
            c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(b1, w));
            w = _mm256_set1_epi32(a[2 * Kp + kp]);
            c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(b0, w));
            c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(b1, w));
            w = _mm256_set1_epi32(a[3 * Kp + kp]);
            c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(b0, w));
            c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(b1, w));
        }
        _mm256_storeu_si256((__m256i *)(y + n), c00);
        _mm256_storeu_si256((__m256i *)(y + n + 8), c01);
        _mm256_storeu_si256((__m256i *)(y + ldy + n), c10);
        _mm256_storeu_si256((__m256i *)(y + ldy + n + 8), c11);
        _mm256_storeu_si256((__m256i *)(y + 2 * ldy + n), c20);
        _mm256_storeu_si256((__m256i *)(y + 2 * ldy + n + 8), c21);
        _mm256_storeu_si256((__m256i *)(y + 3 * ldy + n), c30);
        _mm256_storeu_si256((__m256i *)(y + 3 * ldy + n + 8), c31);
    }
}
