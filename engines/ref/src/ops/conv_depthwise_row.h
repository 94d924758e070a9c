/* conv_depthwise_row.h: depthwise convolution kernels with all taps accumulated in registers, 8 outputs at a
 * time: one output row (any stride), or a whole plane flattened over zero-padded phase planes. Included
 * twice: conv_depthwise.c builds them portable, conv_depthwise_avx2.c for AVX2.
 * It must never read outside the input rows: only the interior, where every tap is in range, is vectorized. */
#include <string.h>

#if !defined(DW_ROW_FN) || !defined(DW_FLAT_FN)
#error "define DW_ROW_FN, DW_FLAT_FN and DW_ROW_LINKAGE before including conv_depthwise_row.h"
#endif

/* Elements of two vectors picked by constant indices: GCC's builtin, or clang's (the fuzz build compiles with clang). */
#ifndef DW_SHUFFLE
#ifdef __clang__
#define DW_SHUFFLE(a, b, mask_type, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define DW_SHUFFLE(a, b, mask_type, ...) __builtin_shuffle(a, b, (mask_type){__VA_ARGS__})
#endif
#endif

typedef float dw_v8 __attribute__((vector_size(32)));
typedef int dw_i8 __attribute__((vector_size(32)));

/* p[0], p[s], ..., p[7s]; stride 2 reads p[0..14] as two overlapping vectors (never p[15], which may lie
 * past the row) and keeps the even elements. */
static inline void dw_gather(const float *p, int64_t s, dw_v8 *out)
{
    if (s == 1) {
        memcpy(out, p, sizeof *out);
    } else if (s == 2) {
        dw_v8 lo, hi;
        memcpy(&lo, p, sizeof lo);
        memcpy(&hi, p + 7, sizeof hi);
        *out = DW_SHUFFLE(lo, hi, dw_i8, 0, 2, 4, 6, 9, 11, 13, 15);
    } else {
        *out = (dw_v8){p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s], p[6 * s], p[7 * s]};
    }
}

/* yrow[ox] = bias + sum over rows r and taps kx (in that order) of wr[r][kx] * xr[r][ox*s + off[kx]], for
 * the ox where the tap is inside [lo[kx], hi[kx]). Every element sees the same order of additions
 * whichever path computes it, so vector and scalar paths (and both builds) agree to the bit. */
DW_ROW_LINKAGE void DW_ROW_FN(float *yrow, float bias, const float *const *xr, const float *const *wr, int n_rows,
                              int64_t kw, const int64_t *off, const int64_t *lo, const int64_t *hi, int64_t s,
                              int64_t out_w)
{
    int64_t xl = 0, xh = out_w;
    for (int64_t kx = 0; kx < kw; kx++) {
        xl = lo[kx] > xl ? lo[kx] : xl;
        xh = hi[kx] < xh ? hi[kx] : xh;
    }
    if (xh < xl)
        xh = xl;
    int64_t ox = xl;
    /* four independent 8-wide accumulators: the tap chain of one is latency-bound, four overlap */
    for (; ox + 32 <= xh; ox += 32) {
        dw_v8 a0 = {bias, bias, bias, bias, bias, bias, bias, bias}, a1 = a0, a2 = a0, a3 = a0;
        for (int r = 0; r < n_rows; r++)
            for (int64_t kx = 0; kx < kw; kx++) {
                const float *p = xr[r] + ox * s + off[kx];
                float w = wr[r][kx];
                dw_v8 x0, x1, x2, x3;
                dw_gather(p, s, &x0);
                dw_gather(p + 8 * s, s, &x1);
                dw_gather(p + 16 * s, s, &x2);
                dw_gather(p + 24 * s, s, &x3);
                a0 += w * x0;
                a1 += w * x1;
                a2 += w * x2;
                a3 += w * x3;
            }
        memcpy(yrow + ox, &a0, sizeof a0);
        memcpy(yrow + ox + 8, &a1, sizeof a1);
        memcpy(yrow + ox + 16, &a2, sizeof a2);
        memcpy(yrow + ox + 24, &a3, sizeof a3);
    }
    for (; ox < xh; ox += 8) {
        /* a short last step moves back to end at xh: it recomputes a few outputs, to the same bits */
        int64_t at = ox + 8 <= xh ? ox : xh - 8;
        if (at < xl)
            break;
        dw_v8 acc = {bias, bias, bias, bias, bias, bias, bias, bias};
        for (int r = 0; r < n_rows; r++)
            for (int64_t kx = 0; kx < kw; kx++) {
                const float *p = xr[r] + at * s + off[kx];
                dw_v8 x;
                dw_gather(p, s, &x);
                acc += wr[r][kx] * x;
            }
        memcpy(yrow + at, &acc, sizeof acc);
    }
    if (ox > xh)
        ox = xh;
    /* both edges (and an interior under 8 wide): scalar, taps checked one by one */
    for (int64_t e = 0; e < out_w; e++) {
        if (e >= xl && e < ox)
            continue;
        float acc = bias;
        for (int r = 0; r < n_rows; r++)
            for (int64_t kx = 0; kx < kw; kx++)
                if (e >= lo[kx] && e < hi[kx])
                    acc += wr[r][kx] * xr[r][e * s + off[kx]];
        yrow[e] = acc;
    }
}

/* z[j] = bias + sum over taps t (in order) of w[t] * tp[t][j], for j in [0, len): a depthwise plane
 * flattened over zero-padded (phase) planes, where every tap is in range, so the whole plane runs 32 (then
 * 8) outputs at a time; a short last step overlaps the one before. */
DW_ROW_LINKAGE void DW_FLAT_FN(float *z, int64_t len, float bias, const float *const *tp, const float *w, int ntaps)
{
    int64_t j = 0;
    for (; j + 32 <= len; j += 32) {
        dw_v8 a0 = {bias, bias, bias, bias, bias, bias, bias, bias}, a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < ntaps; t++) {
            const float *p = tp[t] + j;
            dw_v8 x0, x1, x2, x3;
            memcpy(&x0, p, sizeof x0);
            memcpy(&x1, p + 8, sizeof x1);
            memcpy(&x2, p + 16, sizeof x2);
            memcpy(&x3, p + 24, sizeof x3);
            a0 += w[t] * x0;
            a1 += w[t] * x1;
            a2 += w[t] * x2;
            a3 += w[t] * x3;
        }
        memcpy(z + j, &a0, sizeof a0);
        memcpy(z + j + 8, &a1, sizeof a1);
        memcpy(z + j + 16, &a2, sizeof a2);
        memcpy(z + j + 24, &a3, sizeof a3);
    }
    for (; j < len; j += 8) {
        int64_t at = j + 8 <= len ? j : len - 8;
        if (at < 0)
            break;
        dw_v8 acc = {bias, bias, bias, bias, bias, bias, bias, bias};
        for (int t = 0; t < ntaps; t++) {
            dw_v8 x;
            memcpy(&x, tp[t] + at, sizeof x);
            acc += w[t] * x;
        }
        memcpy(z + at, &acc, sizeof acc);
    }
    for (; j < len; j++) {
        float acc = bias;
        for (int t = 0; t < ntaps; t++)
            acc += w[t] * tp[t][j];
        z[j] = acc;
    }
}
