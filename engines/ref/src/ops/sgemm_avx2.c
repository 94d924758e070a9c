/* sgemm_avx2.c: the x86 SIMD micro-kernels over the 6x16 packed panels: AVX2+FMA (12 ymm accumulators), and AVX-512F
 * (one zmm per row; two B panels at once for 12 chains, or B read in place through a tap table). Each C element is the
 * same FMA chain over k in every kernel, so their results are bit-identical. It must never run a kernel the CPU lacks
 * (sgemm.c checks), nor touch C or B beyond its tile. */
#include <immintrin.h>

#include "sgemm.h"

#if REF_SGEMM_MR != 6 || REF_SGEMM_NR != 16
#error "sgemm_avx2.c is written for a 6x16 tile"
#endif

/* Merge one row of accumulators into C; the three forms keep beta == 0 from reading C. */
static inline void store_row(float *c, __m256 lo, __m256 hi, __m256 va, __m256 vb, int mode)
{
    if (mode == 0) {
        _mm256_storeu_ps(c, _mm256_mul_ps(va, lo));
        _mm256_storeu_ps(c + 8, _mm256_mul_ps(va, hi));
    } else if (mode == 1) {
        _mm256_storeu_ps(c, _mm256_fmadd_ps(va, lo, _mm256_loadu_ps(c)));
        _mm256_storeu_ps(c + 8, _mm256_fmadd_ps(va, hi, _mm256_loadu_ps(c + 8)));
    } else {
        _mm256_storeu_ps(c, _mm256_fmadd_ps(va, lo, _mm256_mul_ps(vb, _mm256_loadu_ps(c))));
        _mm256_storeu_ps(c + 8, _mm256_fmadd_ps(va, hi, _mm256_mul_ps(vb, _mm256_loadu_ps(c + 8))));
    }
}

#define STEP(off)                                                                         \
    do {                                                                                  \
        __m256 b0 = _mm256_loadu_ps(b + (off)*16), b1 = _mm256_loadu_ps(b + (off)*16 + 8); \
        __m256 av = _mm256_broadcast_ss(a + (off)*6 + 0);                                 \
        c00 = _mm256_fmadd_ps(av, b0, c00);                                               \
        c01 = _mm256_fmadd_ps(av, b1, c01);                                               \
        av = _mm256_broadcast_ss(a + (off)*6 + 1);                                        \
        c10 = _mm256_fmadd_ps(av, b0, c10);                                               \
        c11 = _mm256_fmadd_ps(av, b1, c11);                                               \
        av = _mm256_broadcast_ss(a + (off)*6 + 2);                                        \
        c20 = _mm256_fmadd_ps(av, b0, c20);                                               \
        c21 = _mm256_fmadd_ps(av, b1, c21);                                               \
        av = _mm256_broadcast_ss(a + (off)*6 + 3);                                        \
        c30 = _mm256_fmadd_ps(av, b0, c30);                                               \
        c31 = _mm256_fmadd_ps(av, b1, c31);                                               \
        av = _mm256_broadcast_ss(a + (off)*6 + 4);                                        \
        c40 = _mm256_fmadd_ps(av, b0, c40);                                               \
        c41 = _mm256_fmadd_ps(av, b1, c41);                                               \
        av = _mm256_broadcast_ss(a + (off)*6 + 5);                                        \
        c50 = _mm256_fmadd_ps(av, b0, c50);                                               \
        c51 = _mm256_fmadd_ps(av, b1, c51);                                               \
    } while (0)

void ref_sgemm_kernel_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                           float beta)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    /* Pull the C tile toward L1 while the reduction runs; it is written once at the end. */
    for (int r = 0; r < 6; r++) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 15), _MM_HINT_T0);
    }
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        _mm_prefetch((const char *)(b + 64 * 4), _MM_HINT_T0);
        _mm_prefetch((const char *)(b + 64 * 4 + 16), _MM_HINT_T0);
        _mm_prefetch((const char *)(b + 64 * 4 + 32), _MM_HINT_T0);
        _mm_prefetch((const char *)(b + 64 * 4 + 48), _MM_HINT_T0);
        STEP(0);
        STEP(1);
        STEP(2);
        STEP(3);
        a += 24;
        b += 64;
    }
    for (; k < kc; k++) {
        STEP(0);
        a += 6;
        b += 16;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    int mode = beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2;
    store_row(c + 0 * ldc, c00, c01, va, vb, mode);
    store_row(c + 1 * ldc, c10, c11, va, vb, mode);
    store_row(c + 2 * ldc, c20, c21, va, vb, mode);
    store_row(c + 3 * ldc, c30, c31, va, vb, mode);
    store_row(c + 4 * ldc, c40, c41, va, vb, mode);
    store_row(c + 5 * ldc, c50, c51, va, vb, mode);
}

/* One row x 16 (the M == 1 products of batch-1 layers, which the 6-row kernel would run at 1/6 use):
 * k is split four ways (k mod 4) into independent accumulators so the FMA chains overlap; the four
 * partial sums are added as (p0 + p1) + (p2 + p3). */
void ref_sgemm_kernel1_avx2(int64_t kc, const float *a, const float *b, float *c, float alpha, float beta)
{
    __m256 p0l = _mm256_setzero_ps(), p0h = p0l, p1l = p0l, p1h = p0l, p2l = p0l, p2h = p0l, p3l = p0l, p3h = p0l;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        const float *bk = b + k * 16, *ak = a + k * 6;
        __m256 a0 = _mm256_broadcast_ss(ak), a1 = _mm256_broadcast_ss(ak + 6);
        __m256 a2 = _mm256_broadcast_ss(ak + 12), a3 = _mm256_broadcast_ss(ak + 18);
        p0l = _mm256_fmadd_ps(a0, _mm256_loadu_ps(bk), p0l);
        p0h = _mm256_fmadd_ps(a0, _mm256_loadu_ps(bk + 8), p0h);
        p1l = _mm256_fmadd_ps(a1, _mm256_loadu_ps(bk + 16), p1l);
        p1h = _mm256_fmadd_ps(a1, _mm256_loadu_ps(bk + 24), p1h);
        p2l = _mm256_fmadd_ps(a2, _mm256_loadu_ps(bk + 32), p2l);
        p2h = _mm256_fmadd_ps(a2, _mm256_loadu_ps(bk + 40), p2h);
        p3l = _mm256_fmadd_ps(a3, _mm256_loadu_ps(bk + 48), p3l);
        p3h = _mm256_fmadd_ps(a3, _mm256_loadu_ps(bk + 56), p3h);
    }
    for (; k < kc; k++) {
        __m256 av = _mm256_broadcast_ss(a + k * 6);
        p0l = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + k * 16), p0l);
        p0h = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + k * 16 + 8), p0h);
    }
    __m256 lo = _mm256_add_ps(_mm256_add_ps(p0l, p1l), _mm256_add_ps(p2l, p3l));
    __m256 hi = _mm256_add_ps(_mm256_add_ps(p0h, p1h), _mm256_add_ps(p2h, p3h));
    store_row(c, lo, hi, _mm256_set1_ps(alpha), _mm256_set1_ps(beta), beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2);
}

/* ---- AVX-512F: a 6x16 tile is one zmm per row. ---- */

#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* Floats of packed A fetched ahead of the k loop: weights too big for the caches stream from memory once per infer, and
 * a k step (12 cycles at most) is far shorter than a DRAM load, so the hardware's own prefetch fell behind at 2 threads
 * (a 512x4608 layer ran at 3.7 GB/s there). 384 floats: 64 k steps, about 1.5 KiB. */
#define A_AHEAD 384

/* The store of the AVX2 kernel, 16 wide (the same operations per element, so the same bits), then, when given, the
 * epilogue's bias add and clamp on the register (the operations of its pass over memory: vmaxps(lo, x) is
 * "lo > x ? lo : x" and vminps(hi, t) "hi < t ? hi : t", a NaN kept). Only the lanes of m are read and written (the
 * kernels that read B in place end a row part-way through a vector). */
AVX512 static inline void store_row16(float *c, __m512 acc, __m512 va, __m512 vb, int mode, const float *bias,
                                      const ref_sgemm_epilogue *clamp, __mmask16 m)
{
    __m512 v = mode == 0   ? _mm512_mul_ps(va, acc)
               : mode == 1 ? _mm512_fmadd_ps(va, acc, _mm512_maskz_loadu_ps(m, c))
                           : _mm512_fmadd_ps(va, acc, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m, c)));
    if (bias)
        v = _mm512_add_ps(v, _mm512_set1_ps(*bias));
    if (clamp)
        v = _mm512_min_ps(_mm512_set1_ps(clamp->hi), _mm512_max_ps(_mm512_set1_ps(clamp->lo), v));
    _mm512_mask_storeu_ps(c, m, v);
}

/* One k step of a 6-row tile over two (x0, x1) or four (x0..x3) B vectors into the accumulators cRQ (row R, vector Q).
 * Named accumulators, not an array: gcc -O2 keeps an array of vectors in memory (a load and store per FMA). */
#define ROW2_FMA(r, q0, q1)                   \
    do {                                      \
        __m512 av = _mm512_set1_ps(a[r]);     \
        q0 = _mm512_fmadd_ps(av, x0, q0);     \
        q1 = _mm512_fmadd_ps(av, x1, q1);     \
    } while (0)
#define STEP2()                       \
    do {                              \
        ROW2_FMA(0, c00, c01);        \
        ROW2_FMA(1, c10, c11);        \
        ROW2_FMA(2, c20, c21);        \
        ROW2_FMA(3, c30, c31);        \
        ROW2_FMA(4, c40, c41);        \
        ROW2_FMA(5, c50, c51);        \
    } while (0)
#define ROW4_FMA(r, q0, q1, q2, q3)           \
    do {                                      \
        __m512 av = _mm512_set1_ps(a[r]);     \
        q0 = _mm512_fmadd_ps(av, x0, q0);     \
        q1 = _mm512_fmadd_ps(av, x1, q1);     \
        q2 = _mm512_fmadd_ps(av, x2, q2);     \
        q3 = _mm512_fmadd_ps(av, x3, q3);     \
    } while (0)
#define STEP4()                                 \
    do {                                        \
        ROW4_FMA(0, c00, c01, c02, c03);        \
        ROW4_FMA(1, c10, c11, c12, c13);        \
        ROW4_FMA(2, c20, c21, c22, c23);        \
        ROW4_FMA(3, c30, c31, c32, c33);        \
        ROW4_FMA(4, c40, c41, c42, c43);        \
        ROW4_FMA(5, c50, c51, c52, c53);        \
    } while (0)

AVX512 void ref_sgemm_kernel_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                                    float beta)
{
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
    for (int64_t k = 0; k < kc; k++, a += 6, b += 16) {
        __m512 bk = _mm512_loadu_ps(b);
        c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), bk, c0);
        c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), bk, c1);
        c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), bk, c2);
        c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), bk, c3);
        c4 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), bk, c4);
        c5 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), bk, c5);
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    int mode = beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2;
    store_row16(c + 0 * ldc, c0, va, vb, mode, NULL, NULL, 0xFFFF);
    store_row16(c + 1 * ldc, c1, va, vb, mode, NULL, NULL, 0xFFFF);
    store_row16(c + 2 * ldc, c2, va, vb, mode, NULL, NULL, 0xFFFF);
    store_row16(c + 3 * ldc, c3, va, vb, mode, NULL, NULL, 0xFFFF);
    store_row16(c + 4 * ldc, c4, va, vb, mode, NULL, NULL, 0xFFFF);
    store_row16(c + 5 * ldc, c5, va, vb, mode, NULL, NULL, 0xFFFF);
}

/* Two adjacent panels, b0 for columns 0..15 and b1 for 16..31: twelve independent FMA chains, enough to keep two
 * 512-bit FMA pipes busy through their latency (six, one panel's rows, leave them a quarter idle). Only mr rows and
 * ncol columns are stored (an edge tile without a copy: packing pads the panels with zeros, so the rest is computed
 * harmlessly and dropped). */
AVX512 void ref_sgemm_kernel2_avx512(int64_t kc, const float *a, const float *b0, const float *b1, float *c,
                                     int64_t ldc, float alpha, float beta, const float *bias,
                                     const ref_sgemm_epilogue *clamp, int64_t mr, int64_t ncol)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t k = 0; k < kc; k++, a += 6, b0 += 16, b1 += 16) {
        _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
        _mm_prefetch((const char *)(b0 + 16 * 8), _MM_HINT_T0);
        _mm_prefetch((const char *)(b1 + 16 * 8), _MM_HINT_T0);
        __m512 x0 = _mm512_loadu_ps(b0), x1 = _mm512_loadu_ps(b1);
        STEP2();
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    int mode = beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2;
    const __m512 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    const __mmask16 m[2] = {ncol >= 16 ? 0xFFFF : (__mmask16)((1u << ncol) - 1),
                            ncol >= 32 ? 0xFFFF : ncol > 16 ? (__mmask16)((1u << (ncol - 16)) - 1) : 0};
    for (int64_t r = 0; r < mr && r < 6; r++) {
        const float *br = bias ? bias + r : NULL;
        for (int q = 0; q < 2 && m[q]; q++)
            store_row16(c + r * ldc + 16 * q, acc[r][q], va, vb, mode, br, clamp, m[q]);
    }
}

/* B read in place: row k of B is x + offs[k] (a convolution's input at tap k, no im2col copy), ncol (1..32) columns of
 * it, masked so nothing past them is read or written; mr (1..6) rows of C stored. first: C is written, not added to,
 * and bias (when given) is added; clamp (when given) after. The operations per element are kernel2's with alpha 1 and
 * beta 0 on the first K block and 1 after, so the bits are those of the packed path. */
AVX512 void ref_sgemm_kernel_taps_avx512(int64_t kc, const float *a, const float *x, const int32_t *offs, int64_t ncol,
                                         float *c, int64_t ldc, int64_t mr, bool first, const float *bias,
                                         const ref_sgemm_epilogue *clamp)
{
    __mmask16 m0 = ncol >= 16 ? 0xFFFF : (__mmask16)((1u << ncol) - 1);
    __mmask16 m1 = ncol >= 32 ? 0xFFFF : ncol > 16 ? (__mmask16)((1u << (ncol - 16)) - 1) : 0;
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    if (ncol == 32) {
        for (int64_t k = 0; k < kc; k++, a += 6) {
            _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
            const float *p = x + offs[k];
            __m512 x0 = _mm512_loadu_ps(p), x1 = _mm512_loadu_ps(p + 16);
            STEP2();
        }
    } else {
        for (int64_t k = 0; k < kc; k++, a += 6) {
            _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
            const float *p = x + offs[k];
            __m512 x0 = _mm512_maskz_loadu_ps(m0, p), x1 = _mm512_maskz_loadu_ps(m1, p + 16);
            STEP2();
        }
    }
    const __m512 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    __m512 one = _mm512_set1_ps(1.0f);
    for (int64_t r = 0; r < mr; r++) {
        const float *br = bias ? bias + r : NULL;
        store_row16(c + r * ldc, acc[r][0], one, one, first ? 0 : 1, br, clamp, m0);
        if (m1)
            store_row16(c + r * ldc + 16, acc[r][1], one, one, first ? 0 : 1, br, clamp, m1);
    }
}

/* Four panels' width (64 columns) per call: each A broadcast feeds four FMAs instead of two, halving the A stream from
 * L2 per FMA (24 accumulators, four B vectors and a broadcast: 29 of the 32 registers). Same per-element operations as
 * ref_sgemm_kernel_taps_avx512, so the same bits. ncol 33..64. */
AVX512 void ref_sgemm_kernel_taps4_avx512(int64_t kc, const float *a, const float *x, const int32_t *offs,
                                          int64_t ncol, float *c, int64_t ldc, int64_t mr, bool first,
                                          const float *bias, const ref_sgemm_epilogue *clamp)
{
    __mmask16 m2 = ncol >= 48 ? 0xFFFF : (__mmask16)((1u << (ncol - 32)) - 1);
    __mmask16 m3 = ncol >= 64 ? 0xFFFF : ncol > 48 ? (__mmask16)((1u << (ncol - 48)) - 1) : 0;
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    __m512 c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    __m512 c40 = c00, c41 = c00, c42 = c00, c43 = c00, c50 = c00, c51 = c00, c52 = c00, c53 = c00;
    if (ncol == 64) {
        for (int64_t k = 0; k < kc; k++, a += 6) {
            _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
            const float *p = x + offs[k];
            __m512 x0 = _mm512_loadu_ps(p), x1 = _mm512_loadu_ps(p + 16);
            __m512 x2 = _mm512_loadu_ps(p + 32), x3 = _mm512_loadu_ps(p + 48);
            STEP4();
        }
    } else {
        for (int64_t k = 0; k < kc; k++, a += 6) {
            _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
            const float *p = x + offs[k];
            __m512 x0 = _mm512_loadu_ps(p), x1 = _mm512_loadu_ps(p + 16);
            __m512 x2 = _mm512_maskz_loadu_ps(m2, p + 32), x3 = _mm512_maskz_loadu_ps(m3, p + 48);
            STEP4();
        }
    }
    const __m512 acc[6][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23},
                              {c30, c31, c32, c33}, {c40, c41, c42, c43}, {c50, c51, c52, c53}};
    __m512 one = _mm512_set1_ps(1.0f);
    const __mmask16 m[4] = {0xFFFF, 0xFFFF, m2, m3};
    for (int64_t r = 0; r < mr; r++) {
        const float *br = bias ? bias + r : NULL;
        for (int q = 0; q < 4 && m[q]; q++)
            store_row16(c + r * ldc + 16 * q, acc[r][q], one, one, first ? 0 : 1, br, clamp, m[q]);
    }
}

/* Four adjacent packed panels (64 columns): as ref_sgemm_kernel2_avx512 with each A broadcast feeding four FMAs, mr
 * rows and ncol (49..64) columns stored. */
AVX512 void ref_sgemm_kernel4_avx512(int64_t kc, const float *a, const float *b, int64_t panel, float *c, int64_t ldc,
                                     float alpha, float beta, const float *bias, const ref_sgemm_epilogue *clamp,
                                     int64_t mr, int64_t ncol)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    __m512 c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    __m512 c40 = c00, c41 = c00, c42 = c00, c43 = c00, c50 = c00, c51 = c00, c52 = c00, c53 = c00;
    const float *b0 = b, *b1 = b + panel, *b2 = b + 2 * panel, *b3 = b + 3 * panel;
    for (int64_t k = 0; k < kc; k++, a += 6, b0 += 16, b1 += 16, b2 += 16, b3 += 16) {
        _mm_prefetch((const char *)(a + A_AHEAD), _MM_HINT_T0);
        __m512 x0 = _mm512_loadu_ps(b0), x1 = _mm512_loadu_ps(b1), x2 = _mm512_loadu_ps(b2), x3 = _mm512_loadu_ps(b3);
        STEP4();
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    int mode = beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2;
    const __m512 acc[6][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23},
                              {c30, c31, c32, c33}, {c40, c41, c42, c43}, {c50, c51, c52, c53}};
    const __mmask16 m3 = ncol >= 64 ? 0xFFFF : ncol > 48 ? (__mmask16)((1u << (ncol - 48)) - 1) : 0;
    for (int64_t r = 0; r < mr && r < 6; r++) {
        const float *br = bias ? bias + r : NULL;
        for (int q = 0; q < 3; q++)
            store_row16(c + r * ldc + 16 * q, acc[r][q], va, vb, mode, br, clamp, 0xFFFF);
        store_row16(c + r * ldc + 48, acc[r][3], va, vb, mode, br, clamp, m3);
    }
}
