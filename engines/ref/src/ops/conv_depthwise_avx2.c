/* conv_depthwise_avx2.c: depthwise kernels, conv_depthwise_row.h's for AVX2 and AVX-512F forms (flat rows; stride
 * 1 read in place under masks). It must never run a kernel the CPU lacks, nor add in another order than the flat. */
#include "conv_ops.h"

#define DW_ROW_FN ref_conv_dw_row_avx2
#define DW_FLAT_FN ref_conv_dw_flat_avx2
#define DW_ROW_LINKAGE
#include "conv_depthwise_row.h"

#include <immintrin.h>

/* AVX-512F: the flat kernel 16 wide with the activation applied in registers (no clamp pass): z[i] = bias + sum over
 * taps t (in order, a multiply then an add, as the flat kernel) of w[t] * tp[t][i], then clamped as ref_conv_act does
 * (max with lo, then min with hi) when clamp is given. */
#define AVX512 __attribute__((target("avx512f,avx2,fma")))

AVX512 static inline __m512 dw512_clamp(__m512 v, const float *clamp)
{
    return clamp ? _mm512_min_ps(_mm512_set1_ps(clamp[1]), _mm512_max_ps(_mm512_set1_ps(clamp[0]), v)) : v;
}

/* Over the flat run z[0..len) as the flat kernel, 64 at a time in four independent chains, the last vectors masked. */
AVX512 void ref_conv_dw_flat_avx512(float *z, int64_t len, float bias, const float *const *tp, const float *w,
                                    int ntaps, const float *clamp)
{
    __m512 vb = _mm512_set1_ps(bias);
    int64_t j = 0;
    for (; j + 64 <= len; j += 64) {
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int t = 0; t < ntaps; t++) {
            const float *p = tp[t] + j;
            __m512 wt = _mm512_set1_ps(w[t]);
            a0 = _mm512_add_ps(a0, _mm512_mul_ps(wt, _mm512_loadu_ps(p)));
            a1 = _mm512_add_ps(a1, _mm512_mul_ps(wt, _mm512_loadu_ps(p + 16)));
            a2 = _mm512_add_ps(a2, _mm512_mul_ps(wt, _mm512_loadu_ps(p + 32)));
            a3 = _mm512_add_ps(a3, _mm512_mul_ps(wt, _mm512_loadu_ps(p + 48)));
        }
        _mm512_storeu_ps(z + j, dw512_clamp(a0, clamp));
        _mm512_storeu_ps(z + j + 16, dw512_clamp(a1, clamp));
        _mm512_storeu_ps(z + j + 32, dw512_clamp(a2, clamp));
        _mm512_storeu_ps(z + j + 48, dw512_clamp(a3, clamp));
    }
    if (j < len) { /* the rest, up to four vectors, masked past len */
        __mmask16 m[4];
        for (int v = 0; v < 4; v++) {
            int64_t n = len - j - 16 * v;
            m[v] = n >= 16 ? 0xFFFF : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
        }
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int t = 0; t < ntaps; t++) {
            const float *p = tp[t] + j;
            __m512 wt = _mm512_set1_ps(w[t]);
            a0 = _mm512_add_ps(a0, _mm512_mul_ps(wt, _mm512_maskz_loadu_ps(m[0], p)));
            a1 = _mm512_add_ps(a1, _mm512_mul_ps(wt, _mm512_maskz_loadu_ps(m[1], p + 16)));
            a2 = _mm512_add_ps(a2, _mm512_mul_ps(wt, _mm512_maskz_loadu_ps(m[2], p + 32)));
            a3 = _mm512_add_ps(a3, _mm512_mul_ps(wt, _mm512_maskz_loadu_ps(m[3], p + 48)));
        }
        _mm512_mask_storeu_ps(z + j, m[0], dw512_clamp(a0, clamp));
        _mm512_mask_storeu_ps(z + j + 16, m[1], dw512_clamp(a1, clamp));
        _mm512_mask_storeu_ps(z + j + 32, m[2], dw512_clamp(a2, clamp));
        _mm512_mask_storeu_ps(z + j + 48, m[3], dw512_clamp(a3, clamp));
    }
}

/* ---- AVX-512F, stride 1 with output rows as wide as the input's (w): the plane read in place, no padded copy ----
 * Output j (flat over out rows of w) = bias + sum over taps (kx, ky), kx outer as the flat form's table, of
 * wt[ky*kw + kx] * x[j + dy*w + dx], dy = ky*dil_y - pad_y and dx = kx*dil_x - pad_x, where a read whose column
 * (j mod w) + dx leaves [0, w) or whose row leaves [0, in_h) is a zero: what the flat form's padded planes hold there,
 * so the same products and bits. Masked-off lanes are never read, so no read leaves the plane. The lane masks depend
 * on the geometry alone, so they are made once per convolution (ref_conv_dw_same_masks) for every plane. */

/* Block b (64 outputs, four vectors) of the mask table: kw column masks, then kh row masks, four each. */
static inline size_t same_block_masks(int64_t kh, int64_t kw) { return (size_t)(kw + kh) * 4; }

size_t ref_conv_dw_same_mask_count(int64_t len, int64_t kh, int64_t kw)
{
    return (size_t)((len + 63) / 64) * same_block_masks(kh, kw);
}

/* A block needs row masks only near the plane's ends (or as the last, partial one); elsewhere they are all ones. */
static inline bool same_edge(int64_t j, int64_t len, int64_t in_len, int64_t w, int64_t kh, int64_t dil_y,
                             int64_t pad_y)
{
    return j - pad_y * w < 0 || j + 64 + ((kh - 1) * dil_y - pad_y) * w > in_len || j + 64 > len;
}

AVX512 void ref_conv_dw_same_masks(int64_t len, int64_t in_h, int64_t w, int64_t kh, int64_t kw, int64_t dil_y,
                                   int64_t dil_x, int64_t pad_y, int64_t pad_x, uint16_t *masks)
{
    enum { V = 4 };
    int64_t in_len = in_h * w, step = 64 % w;
    int32_t c0[64];
    for (int l = 0, c = 0; l < 64; l++, c = c + 1 == w ? 0 : c + 1)
        c0[l] = c;
    __m512i col[V], vw = _mm512_set1_epi32((int)w), vstep = _mm512_set1_epi32((int)step);
    for (int v = 0; v < V; v++)
        col[v] = _mm512_loadu_si512(c0 + 16 * v);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int64_t j = 0; j < len; j += 64, masks += same_block_masks(kh, kw)) {
        for (int64_t kx = 0; kx < kw; kx++) {
            int dx = (int)(kx * dil_x - pad_x);
            __m512i lo = _mm512_set1_epi32(-dx), hi = _mm512_set1_epi32((int)w - dx);
            for (int v = 0; v < V; v++)
                masks[kx * V + v] = _mm512_cmpge_epi32_mask(col[v], lo) & _mm512_cmplt_epi32_mask(col[v], hi);
        }
        bool edge = same_edge(j, len, in_len, w, kh, dil_y, pad_y);
        for (int64_t ky = 0; ky < kh; ky++) {
            int64_t dyw = (ky * dil_y - pad_y) * w;
            for (int v = 0; v < V; v++) {
                /* flat index f = j + 16v + lane: valid when f < len and 0 <= f + dyw < in_len */
                __m512i f = _mm512_add_epi32(_mm512_set1_epi32((int)(j + 16 * v)), iota);
                __mmask16 m = _mm512_cmplt_epi32_mask(f, _mm512_set1_epi32((int)len));
                m &= _mm512_cmpge_epi32_mask(f, _mm512_set1_epi32((int)-dyw));
                m &= _mm512_cmplt_epi32_mask(f, _mm512_set1_epi32((int)(in_len - dyw)));
                masks[(kw + ky) * V + v] = edge ? m : 0xFFFF;
            }
        }
        for (int v = 0; v < V; v++) { /* columns of the next block: + 64 mod w, wrapped once */
            col[v] = _mm512_add_epi32(col[v], vstep);
            col[v] = _mm512_mask_sub_epi32(col[v], _mm512_cmpge_epi32_mask(col[v], vw), col[v], vw);
        }
    }
}

AVX512 void ref_conv_dw_same_avx512(float *y, int64_t len, const float *x, int64_t in_h, int64_t w, float bias,
                                    const float *wt, int64_t kh, int64_t kw, int64_t dil_y, int64_t dil_x,
                                    int64_t pad_y, int64_t pad_x, const uint16_t *masks, const float *clamp)
{
    enum { V = 4 };
    int64_t in_len = in_h * w;
    __m512 vb = _mm512_set1_ps(bias);
    for (int64_t j = 0; j < len; j += 64, masks += same_block_masks(kh, kw)) {
        bool edge = same_edge(j, len, in_len, w, kh, dil_y, pad_y);
        const uint16_t *rm = masks + kw * V;
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int64_t kx = 0; kx < kw; kx++) {
            /* a column's masks stay in mask registers over its taps (why the order is kx outer) */
            __mmask16 m0 = masks[kx * V], m1 = masks[kx * V + 1], m2 = masks[kx * V + 2], m3 = masks[kx * V + 3];
            for (int64_t ky = 0; ky < kh; ky++) {
                /* an address, never dereferenced outside the masks: an integer, so no pointer leaves x */
                uintptr_t p = (uintptr_t)x + (uintptr_t)(j + (ky * dil_y - pad_y) * w + kx * dil_x - pad_x) * 4u;
                __m512 wv = _mm512_set1_ps(wt[ky * kw + kx]);
                __mmask16 n0 = m0, n1 = m1, n2 = m2, n3 = m3;
                if (edge) {
                    n0 &= rm[ky * V];
                    n1 &= rm[ky * V + 1];
                    n2 &= rm[ky * V + 2];
                    n3 &= rm[ky * V + 3];
                }
                a0 = _mm512_add_ps(a0, _mm512_mul_ps(wv, _mm512_maskz_loadu_ps(n0, (const void *)p)));
                a1 = _mm512_add_ps(a1, _mm512_mul_ps(wv, _mm512_maskz_loadu_ps(n1, (const void *)(p + 64))));
                a2 = _mm512_add_ps(a2, _mm512_mul_ps(wv, _mm512_maskz_loadu_ps(n2, (const void *)(p + 128))));
                a3 = _mm512_add_ps(a3, _mm512_mul_ps(wv, _mm512_maskz_loadu_ps(n3, (const void *)(p + 192))));
            }
        }
        if (j + 64 <= len) {
            _mm512_storeu_ps(y + j, dw512_clamp(a0, clamp));
            _mm512_storeu_ps(y + j + 16, dw512_clamp(a1, clamp));
            _mm512_storeu_ps(y + j + 32, dw512_clamp(a2, clamp));
            _mm512_storeu_ps(y + j + 48, dw512_clamp(a3, clamp));
        } else {
            __m512 a[V] = {a0, a1, a2, a3};
            for (int v = 0; v < V; v++) {
                int64_t n = len - j - 16 * v;
                __mmask16 m = n >= 16 ? 0xFFFF : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
                _mm512_mask_storeu_ps(y + j + 16 * v, m, dw512_clamp(a[v], clamp));
            }
        }
    }
}
