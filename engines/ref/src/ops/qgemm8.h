/* qgemm8.h: the 8-bit integer GEMM for CPUs with VNNI (vpdpbusd: u8 x s8 summed in groups of 4 into int32):
 * operands stay 8-bit, one unsigned and one signed, zero points folded into row and column terms. It must never give
 * a sum that depends on the path or the thread count: every product and sum is exact (mod 2^32, and the final value
 * fits, see REF_QGEMM_MAX_KP), so the AVX-512, AVX-VNNI and portable kernels agree bit for bit with ref_qgemm. */
#ifndef REF_QGEMM8_H
#define REF_QGEMM8_H

#include <stdbool.h>
#include <stdint.h>

#include "../pool.h"

/* b's layout: columns in panels of 16, a panel Kq groups of 16 columns x 4 bytes (k = 4kq .. 4kq+3 side by side),
 * 64 bytes a group, so a tile streams one panel front to back. Element (k, n) is at ref_qgemm8_b_at(Kq, k, n). The
 * last panel's columns past N and the rows past K are zeros the caller writes (so they add nothing). */
static inline int64_t ref_qgemm8_b_at(int64_t Kq, int64_t k, int64_t n)
{
    return ((n >> 4) * Kq + (k >> 2)) * 64 + (n & 15) * 4 + (k & 3);
}
/* Bytes of b for Kq groups by N columns. */
static inline int64_t ref_qgemm8_b_bytes(int64_t Kq, int64_t N) { return (N + 15) / 16 * 16 * Kq * 4; }

/* What is added to each sum: y[m][n] = dot + row_add[m] + row_mul[m] * col[n] + row_mul2[m] * col2[n], in int32
 * arithmetic mod 2^32 (the zero-point terms of sum (a - za)(b - zb) = dot - zb.rowsum(a) - za.colsum(b) + K.za.zb;
 * the second product for zero points per column). Row arrays hold M values, column arrays N rounded up to 16 (the
 * padding is read, never stored); a NULL array adds nothing. */
typedef struct {
    const int32_t *row_add, *row_mul, *col, *row_mul2, *col2;
} ref_qgemm8_epi;

/* The kernels, best first, with their names; REF_QGEMM8_PORTABLE runs anywhere. */
#define REF_QGEMM8_PATHS(X) X(AVX512, "avx512") X(AVXVNNI, "avxvnni") X(PORTABLE, "portable")
#define REF_QGEMM8_ENUM(id, name) REF_QGEMM8_##id,
typedef enum { REF_QGEMM8_PATHS(REF_QGEMM8_ENUM) } ref_qgemm8_path;
#undef REF_QGEMM8_ENUM

/* The fastest path this CPU runs; REF_QGEMM8_PORTABLE when it has no VNNI (then ref_qgemm, vpmaddwd, serves: an
 * exact vpdpbusd done with AVX2's vpmaddwd on split bytes, even with the weights split at compile, measured at most
 * 5% faster on resnet18-u8, 33.1-35.1 vs 34.6-35.7 ms, not worth a layout per path). The
 * environment variable MLK_REF_QGEMM8 names a slower one this CPU also runs (a path's name above), to measure paths
 * against each other on one machine; "portable" sends the operators to ref_qgemm, the int16 vpmaddwd GEMM. An
 * unknown or unsupported name is ignored. Read once. */
ref_qgemm8_path ref_qgemm8_best(void);
/* Whether this CPU has a VNNI path: the quantized operators pack for ref_qgemm8 when it does, for ref_qgemm if not. */
bool ref_qgemm8_fast(void);
/* Whether path runs on this CPU. */
bool ref_qgemm8_path_ok(ref_qgemm8_path path);

/* y[m * ldy + n] = sum over k < 4 Kq of a[m][k] * b[k][n] (+ e's terms), m < M, n < N. a holds M rows of 4 Kq bytes;
 * a_u8: a is uint8 and b int8, else a is int8 and b uint8. Runs over the pool's threads on the best path. Never
 * allocates. */
void ref_qgemm8(int64_t M, int64_t N, int64_t Kq, const uint8_t *a, const uint8_t *b, bool a_u8,
                const ref_qgemm8_epi *e, int32_t *y, int64_t ldy, ref_pool *pool);
/* The same on a given path (tests compare them); the path must be one ref_qgemm8_path_ok accepts. */
void ref_qgemm8_on(ref_qgemm8_path path, int64_t M, int64_t N, int64_t Kq, const uint8_t *a, const uint8_t *b,
                   bool a_u8, const ref_qgemm8_epi *e, int32_t *y, int64_t ldy, ref_pool *pool);

/* col[i] = sum over the panel's 4 Kq rows of its uint8 column i, i < 16: the column sums the zero-point term needs. */
void ref_qgemm8_colsums_u8(const uint8_t *panel, int64_t Kq, int32_t col[16]);

/* The kernels' unit (qgemm8_avx512vnni.c, qgemm8_avxvnni.c): rows [m0, m0 + rows) of a (rows <= 8 for AVX-512,
 * <= 4 for AVX-VNNI) x columns [n0, n1) of b, n0 a multiple of 16, n1 <= N; the last panel's columns past n1 are
 * computed but never stored. */
typedef struct {
    int64_t Kq, ldy;
    const uint8_t *a, *b;
    const ref_qgemm8_epi *e;
    int32_t *y;
    bool a_u8;
} ref_qgemm8_args;

/* Rows [m0, m1) x columns [n0, n1) of g on path, on the calling thread (a task that builds its own panels). */
void ref_qgemm8_block(ref_qgemm8_path path, const ref_qgemm8_args *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

void ref_qgemm8_rows_avx512(const ref_qgemm8_args *g, int64_t m0, int rows, int64_t n0, int64_t n1);
void ref_qgemm8_rows_avxvnni(const ref_qgemm8_args *g, int64_t m0, int rows, int64_t n0, int64_t n1);
void ref_qgemm8_colsums_avx512(const uint8_t *panel, int64_t Kq, int32_t col[16]);

#endif
