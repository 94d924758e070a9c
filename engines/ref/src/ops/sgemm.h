/* sgemm.h: single-precision GEMM, C = alpha*op(A)*op(B) + beta*C on row-major matrices, with Goto/BLIS
 * blocking and operands given plain or pre-packed. It must never allocate: packing buffers are the caller's scratch. */
#ifndef REF_SGEMM_H
#define REF_SGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../pool.h"
#include "refengine.h"

/* Micro-tile and cache blocks. The packed layouts below depend on MR, NR and the K blocking, which
 * depend on nothing but K, so a buffer packed at compile time fits every later run. */
#define REF_SGEMM_MR 6
#define REF_SGEMM_NR 16
#define REF_SGEMM_KC 256  /* upper bound of a K block; blocks are balanced (ref_sgemm_kc) */
#define REF_SGEMM_MC 144  /* rows of A kept in L2; a multiple of MR */
#define REF_SGEMM_NC 2048 /* columns of B per packed block; a multiple of NR */

/* One operand as the driver sees it. A plain one is op(X) with X stored row-major with row stride ld
 * (X is the transpose of op(X) when trans). A packed one is a buffer from ref_sgemm_pack_a/_b for exactly
 * the M (or N) and K of the call; ld and trans are then ignored. */
typedef struct ref_sgemm_operand {
    const float *data;
    int64_t ld;
    bool trans;
    bool packed;
} ref_sgemm_operand;

/* K block length used for a reduction of length K (a function of K alone). */
int64_t ref_sgemm_kc(int64_t K);

/* Floats of a packed op(A) (M x K) or op(B) (K x N): edges are padded to whole MR/NR panels. */
size_t ref_sgemm_packed_a_floats(int64_t M, int64_t K);
size_t ref_sgemm_packed_b_floats(int64_t K, int64_t N);

/* Pack op(A) (M x K) or op(B) (K x N), given as a plain operand, into dst (room for the floats above).
 * Padding is written as zeros, so the packed bytes are a pure function of the matrix. */
void ref_sgemm_pack_a(int64_t M, int64_t K, const ref_sgemm_operand *A, float *dst);
void ref_sgemm_pack_b(int64_t K, int64_t N, const ref_sgemm_operand *B, float *dst);

/* Scratch the driver needs for these sizes when run on n_threads threads (packing buffers of the
 * operands that are not pre-packed). Give ref_sgemm at least this many bytes, 64-byte aligned. */
size_t ref_sgemm_scratch_bytes(int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed, int n_threads);

/* C[M x N] (row stride ldc) = alpha*op(A)*op(B) + beta*C. beta == 0 never reads C (NaNs there vanish).
 * Work is split over whole panels of C on pool's threads (NULL: serial on the caller, which is what a
 * task already running inside ref_parallel_for must pass); every element is reduced over K in the same
 * order whatever the split, so results are bit-identical for any thread count. Fails with REF_E_INVALID
 * when scratch is smaller than ref_sgemm_scratch_bytes (for the pool's thread count) or sizes are negative. */
int ref_sgemm(ref_pool *pool, int64_t M, int64_t N, int64_t K, float alpha, const ref_sgemm_operand *A,
              const ref_sgemm_operand *B, float beta, float *C, int64_t ldc, void *scratch,
              size_t scratch_bytes, ref_error *err);

/* What ref_sgemm_ex does to each C tile while it is in cache: add bias[row] (with alpha 1 and beta 0, the same bits
 * as seeding C with the bias and beta 1), then clamp to [lo, hi] as Clip does (NaN kept). */
typedef struct ref_sgemm_epilogue {
    const float *bias; /* one per row of C, or NULL */
    bool clamp;
    float lo, hi;
} ref_sgemm_epilogue;

/* y[0..n) clamped to [lo, hi] as Clip does (max then min, a NaN kept): the epilogue's clamp, for callers that clamp
 * outside a GEMM too (a depthwise convolution's fused activation). */
void ref_sgemm_clamp(float *y, int64_t n, float lo, float hi);

/* ref_sgemm with an epilogue (NULL: none). */
int ref_sgemm_ex(ref_pool *pool, int64_t M, int64_t N, int64_t K, float alpha, const ref_sgemm_operand *A,
                 const ref_sgemm_operand *B, float beta, float *C, int64_t ldc, void *scratch, size_t scratch_bytes,
                 const ref_sgemm_epilogue *ep, ref_error *err);

/* Name of the micro-kernel the next call will use ("avx512f 6x32", "avx2-fma 6x16" or "portable 6x16"). */
const char *ref_sgemm_kernel_name(void);
/* Tests and benchmarks: force the portable micro-kernel even when AVX2+FMA is available. Process-wide. */
void ref_sgemm_force_portable(bool on);
/* Tests and benchmarks: use AVX2+FMA at most, even when AVX-512F is available. Process-wide. */
void ref_sgemm_limit_avx2(bool on);

/* B read in place through a tap table: B[k][j] = x[offs[k] + j] for j < N, e.g. a stride-1 convolution's columns
 * straight from its (padded) input, no im2col copy. Only the AVX-512 kernel has this form: ref_sgemm_taps_available
 * says whether the next call may be made (false under ref_sgemm_force_portable or ref_sgemm_limit_avx2). */
bool ref_sgemm_taps_available(void);
/* Rows [m0, m1) of C (C points at row 0, row stride ldc) = A*B with the epilogue, serially; ap is the whole packed A
 * (ref_sgemm_pack_a of M rows and K), m0 a multiple of REF_SGEMM_MR. The K blocks, and so every element's bits, are
 * those of ref_sgemm_ex with beta 0 over the same A and B packed. */
void ref_sgemm_taps(const float *ap, int64_t M, int64_t m0, int64_t m1, int64_t K, const float *x,
                    const int32_t *offs, int64_t N, float *C, int64_t ldc, const ref_sgemm_epilogue *ep);

/* ---- internal to the sgemm files ---- */

/* Full MR x NR tile: c = alpha*sum_k a[k*MR+i]*b[k*NR+j] + beta*c, with beta == 0 not reading c. */
typedef void (*ref_sgemm_kernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                    float alpha, float beta);
void ref_sgemm_kernel_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                           float beta);
void ref_sgemm_kernel_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                             float beta);
/* Two adjacent tiles: columns 0..15 from panel b0, 16..31 from panel b1 (c's row stride ldc). Then, in registers
 * before the store, bias[r] added to row r (bias NULL: none) and a clamp to [clamp->lo, clamp->hi] (clamp NULL: none),
 * with the operations and so the bits of the epilogue pass (ref_sgemm_epilogue, declared above). Only rows < mr (1..6)
 * and columns < ncol (17..32) are stored: the panels' zero padding makes the rest harmless to compute. */
typedef void (*ref_sgemm_kernel2_fn)(int64_t kc, const float *a, const float *b0, const float *b1, float *c,
                                     int64_t ldc, float alpha, float beta, const float *bias,
                                     const struct ref_sgemm_epilogue *clamp, int64_t mr, int64_t ncol);
void ref_sgemm_kernel2_avx512(int64_t kc, const float *a, const float *b0, const float *b1, float *c, int64_t ldc,
                              float alpha, float beta, const float *bias, const struct ref_sgemm_epilogue *clamp,
                              int64_t mr, int64_t ncol);
/* The tap-table form (ref_sgemm_taps): ncol (1..32) columns and mr (1..6) rows stored; first: the first K block
 * (C written, bias added), clamp: the last (NULL otherwise). */
void ref_sgemm_kernel_taps_avx512(int64_t kc, const float *a, const float *x, const int32_t *offs, int64_t ncol,
                                  float *c, int64_t ldc, int64_t mr, bool first, const float *bias,
                                  const struct ref_sgemm_epilogue *clamp);
/* The same, 64 columns wide (ncol 33..64). */
void ref_sgemm_kernel_taps4_avx512(int64_t kc, const float *a, const float *x, const int32_t *offs, int64_t ncol,
                                   float *c, int64_t ldc, int64_t mr, bool first, const float *bias,
                                   const struct ref_sgemm_epilogue *clamp);
/* Four adjacent tiles, panels b, b + panel, b + 2*panel, b + 3*panel (panel = NR*kc floats), as kernel2 (ncol
 * 49..64). */
typedef void (*ref_sgemm_kernel4_fn)(int64_t kc, const float *a, const float *b, int64_t panel, float *c, int64_t ldc,
                                     float alpha, float beta, const float *bias,
                                     const struct ref_sgemm_epilogue *clamp, int64_t mr, int64_t ncol);
void ref_sgemm_kernel4_avx512(int64_t kc, const float *a, const float *b, int64_t panel, float *c, int64_t ldc,
                              float alpha, float beta, const float *bias, const struct ref_sgemm_epilogue *clamp,
                              int64_t mr, int64_t ncol);
/* One-row form for products whose whole M is 1: row 0 of the packed A panel times the B panel, 16 wide. */
typedef void (*ref_sgemm_kernel1_fn)(int64_t kc, const float *a, const float *b, float *c, float alpha, float beta);
void ref_sgemm_kernel1_avx2(int64_t kc, const float *a, const float *b, float *c, float alpha, float beta);

/* Pack one block: rows [0,mc) x k [0,kc) of op(A) starting at src into MR panels; k [0,kc) x cols
 * [0,nc) of op(B) into NR panels. src already points at the block's first element. */
void ref_sgemm_pack_a_block(const float *src, int64_t ld, bool trans, int64_t mc, int64_t kc, float *dst);
void ref_sgemm_pack_b_block(const float *src, int64_t ld, bool trans, int64_t kc, int64_t nc, float *dst);

#endif
