/* qgemm.h: the integer GEMM under the quantized operators: int16 operands (8-bit values less their zero points),
 * products summed in pairs into int32, as vpmaddwd does. It must never give a result that depends on the path or
 * the thread count: every sum is exact (|a|, |b| <= 255, so a pair is at most 130050 and K up to 2^14 pairs fits). */
#ifndef REF_QGEMM_H
#define REF_QGEMM_H

#include <stdint.h>

#include "../pool.h"

/* y[m * ldy + n] = sum over kp < Kp of a[m * Kp + kp] . b[(kp * N + n) * 2 .. +2], for m < M, n < N, where a holds
 * two int16 per int32 (k = 2kp low half, 2kp+1 high half) and b the same two k for each n side by side.
 * Runs over the pool's threads. */
void ref_qgemm(int64_t M, int64_t N, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y, int64_t ldy,
               ref_pool *pool);

/* The largest K (in pairs) whose sums cannot overflow int32. */
#define REF_QGEMM_MAX_KP 16384

/* Two int16 in one int32 as a's rows hold them: a0 (even k) low, a1 (odd k) high. */
static inline int32_t ref_qgemm_pair(int a0, int a1)
{
    return (int32_t)((uint32_t)(uint16_t)(int16_t)a0 | (uint32_t)(uint16_t)(int16_t)a1 << 16);
}

/* The AVX2 tile (qgemm_avx2.c): rows [0, 4) x columns [n0, n0 + 16k) of the product, all in range. */
void ref_qgemm_tile4x16_avx2(int64_t n0, int64_t n1, int64_t N, int64_t Kp, const int32_t *a, const int16_t *b,
                             int32_t *y, int64_t ldy);

/* One row, columns [n0, n0 + 32k) (rows left over from the 4-row tiles, M = 1 products). */
void ref_qgemm_row1x32_avx2(int64_t n0, int64_t n1, int64_t N, int64_t Kp, const int32_t *a, const int16_t *b,
                            int32_t *y);

#endif
