/* qgemm.h: the integer GEMM under the quantized operators: int16 operands (8-bit values less their zero points),
 * products summed in pairs into int32, as vpmaddwd does. It must never give a result that depends on the path or
 * the thread count: every sum is exact (|a|, |b| <= 255, so a pair is at most 130050 and K up to 2^14 pairs fits). */
#ifndef REF_QGEMM_H
#define REF_QGEMM_H

#include <stdint.h>

#include "../pool.h"

/* b's layout: columns in panels of 16, a panel Kp rows of 16 int16 pairs (k = 2kp, 2kp+1 side by side), so a tile
 * streams one panel front to back. Element (k, n) is at ref_qgemm_b_at(Kp, k / 2, n) + k % 2; the last panel's
 * columns past N are never read. */
static inline int64_t ref_qgemm_b_at(int64_t Kp, int64_t kp, int64_t n)
{
    return ((n >> 4) * Kp + kp) * 32 + (n & 15) * 2;
}
/* int16 elements of b for Kp pairs by N columns. */
static inline int64_t ref_qgemm_b_elems(int64_t Kp, int64_t N) { return (N + 15) / 16 * 16 * Kp * 2; }

/* y[m * ldy + n] = sum over kp < Kp of a[m * Kp + kp] . (b's pair (kp, n)), for m < M, n < N, where a holds two
 * int16 per int32 (k = 2kp low half, 2kp+1 high half). Runs over the pool's threads. */
void ref_qgemm(int64_t M, int64_t N, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y, int64_t ldy,
               ref_pool *pool);

/* The largest K (in pairs) whose sums cannot overflow int32. */
#define REF_QGEMM_MAX_KP 16384

/* Two int16 in one int32 as a's rows hold them: a0 (even k) low, a1 (odd k) high. */
static inline int32_t ref_qgemm_pair(int a0, int a1)
{
    return (int32_t)((uint32_t)(uint16_t)(int16_t)a0 | (uint32_t)(uint16_t)(int16_t)a1 << 16);
}

/* The AVX2 tiles (qgemm_avx2.c): rows [0, 4) (or one row) x whole panels of columns [n0, n1), n0 and n1 multiples
 * of 16, all in range. */
void ref_qgemm_tile4x16_avx2(int64_t n0, int64_t n1, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y,
                             int64_t ldy);

void ref_qgemm_row1x16_avx2(int64_t n0, int64_t n1, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y);

#endif
