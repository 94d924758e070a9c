/* conv_depthwise_inplace_avx2.c: AVX-512F depthwise planes read in place under lane masks, stride 1 from the input,
 * stride 2 from its four phase planes. It must never read a masked-off lane, nor add in another order. */
#include <immintrin.h>

#include "conv_ops.h"

#define AVX512 __attribute__((target("avx512f,avx2,fma")))
#define V 4 /* vectors a block: 64 outputs */

/* Output j (flat over rows of t->w) = bias + sum over taps (kx, ky), kx outer as the flat form's table, of
 * wt[ky*kw + kx] * x[toff[ky*kw + kx] + j], a read whose row (j div w) + dy[ky] leaves [0, h) or whose column
 * (j mod w) + dx[kx] leaves [0, w) being a zero: what the flat form's padded planes hold there, so the same products
 * and the same bits. The lane masks depend on the geometry alone, so they are made once per convolution. */

/* Block b of the mask table: kw column masks, then kh row masks, V each. */
static inline size_t block_masks(const ref_dw_taps *t) { return (size_t)(t->kw + t->kh) * V; }

size_t ref_conv_dw_taps_mask_count(const ref_dw_taps *t) { return (size_t)((t->len + 63) / 64) * block_masks(t); }

/* The rows the taps reach above and below an output's own (dlo <= 0 <= dhi), once per call. */
static void row_reach(const ref_dw_taps *t, int64_t *dlo, int64_t *dhi)
{
    *dlo = *dhi = 0;
    for (int64_t ky = 0; ky < t->kh; ky++) {
        *dlo = t->dy[ky] < *dlo ? t->dy[ky] : *dlo;
        *dhi = t->dy[ky] > *dhi ? t->dy[ky] : *dhi;
    }
}

/* A block needs row masks only near the plane's ends (or as the last, partial one); elsewhere they are all ones. */
static inline bool block_edge(const ref_dw_taps *t, int64_t dlo, int64_t dhi, int64_t j)
{
    return j + dlo * t->w < 0 || j + 64 + dhi * t->w > t->h * t->w || j + 64 > t->len;
}

AVX512 void ref_conv_dw_taps_masks(const ref_dw_taps *t, uint16_t *masks)
{
    int64_t w = t->w, in_len = t->h * w, dlo, dhi;
    row_reach(t, &dlo, &dhi);
    int32_t c0[64];
    for (int l = 0, c = 0; l < 64; l++, c = c + 1 == w ? 0 : c + 1)
        c0[l] = c;
    __m512i col[V], vw = _mm512_set1_epi32((int)w), vstep = _mm512_set1_epi32((int)(64 % w));
    for (int v = 0; v < V; v++)
        col[v] = _mm512_loadu_si512(c0 + 16 * v);
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int64_t j = 0; j < t->len; j += 64, masks += block_masks(t)) {
        for (int64_t kx = 0; kx < t->kw; kx++) {
            int dx = (int)t->dx[kx];
            __m512i lo = _mm512_set1_epi32(-dx), hi = _mm512_set1_epi32((int)w - dx);
            for (int v = 0; v < V; v++)
                masks[kx * V + v] = _mm512_cmpge_epi32_mask(col[v], lo) & _mm512_cmplt_epi32_mask(col[v], hi);
        }
        bool edge = block_edge(t, dlo, dhi, j);
        for (int64_t ky = 0; ky < t->kh; ky++) {
            int64_t dyw = t->dy[ky] * w;
            for (int v = 0; v < V; v++) {
                /* flat index f = j + 16v + lane: valid when f < len and 0 <= f + dyw < in_len */
                __m512i f = _mm512_add_epi32(_mm512_set1_epi32((int)(j + 16 * v)), iota);
                __mmask16 m = _mm512_cmplt_epi32_mask(f, _mm512_set1_epi32((int)t->len));
                m &= _mm512_cmpge_epi32_mask(f, _mm512_set1_epi32((int)-dyw));
                m &= _mm512_cmplt_epi32_mask(f, _mm512_set1_epi32((int)(in_len - dyw)));
                masks[(t->kw + ky) * V + v] = edge ? m : 0xFFFF;
            }
        }
        for (int v = 0; v < V; v++) { /* columns of the next block: + 64 mod w, wrapped once */
            col[v] = _mm512_add_epi32(col[v], vstep);
            col[v] = _mm512_mask_sub_epi32(col[v], _mm512_cmpge_epi32_mask(col[v], vw), col[v], vw);
        }
    }
}

AVX512 static inline __m512 clamp512(__m512 v, const float *clamp)
{
    return clamp ? _mm512_min_ps(_mm512_set1_ps(clamp[1]), _mm512_max_ps(_mm512_set1_ps(clamp[0]), v)) : v;
}

AVX512 void ref_conv_dw_taps_avx512(float *y, const ref_dw_taps *t, const float *x, const int64_t *toff, float bias,
                                    const float *wt, const uint16_t *masks, const float *clamp)
{
    int64_t kh = t->kh, kw = t->kw, len = t->len, dlo, dhi;
    row_reach(t, &dlo, &dhi);
    __m512 vb = _mm512_set1_ps(bias);
    for (int64_t j = 0; j < len; j += 64, masks += block_masks(t)) {
        bool edge = block_edge(t, dlo, dhi, j);
        const uint16_t *rm = masks + kw * V;
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int64_t kx = 0; kx < kw; kx++) {
            /* a column's masks stay in mask registers over its taps (why the order is kx outer) */
            __mmask16 m0 = masks[kx * V], m1 = masks[kx * V + 1], m2 = masks[kx * V + 2], m3 = masks[kx * V + 3];
            for (int64_t ky = 0; ky < kh; ky++) {
                /* an address, never dereferenced outside the masks: an integer, so no pointer leaves x */
                uintptr_t p = (uintptr_t)x + (uintptr_t)(j + toff[ky * kw + kx]) * 4u;
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
            _mm512_storeu_ps(y + j, clamp512(a0, clamp));
            _mm512_storeu_ps(y + j + 16, clamp512(a1, clamp));
            _mm512_storeu_ps(y + j + 32, clamp512(a2, clamp));
            _mm512_storeu_ps(y + j + 48, clamp512(a3, clamp));
        } else {
            __m512 a[V] = {a0, a1, a2, a3};
            for (int v = 0; v < V; v++) {
                int64_t n = len - j - 16 * v;
                __mmask16 m = n >= 16 ? 0xFFFF : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
                _mm512_mask_storeu_ps(y + j + 16 * v, m, clamp512(a[v], clamp));
            }
        }
    }
}

/* Phase planes of an in_h x in_w plane (both even): plane (py, px) at ph + (py*2 + px) * (in_h/2) * (in_w/2) holds
 * x[2r + py][2c + px]. Two loads and two permutes per 32 input columns, even and odd together: ref_conv_deal2 called
 * twice a row made the stride-2 layers of bench_conv 1.2-1.6x slower (loads twice, a call per short row). */
AVX512 void ref_conv_dw_phases2(const float *x, int64_t in_h, int64_t in_w, float *ph)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    int64_t hw = in_w / 2, plane = in_h / 2 * hw;
    for (int64_t r = 0; r < in_h; r++) {
        const float *xr = x + r * in_w;
        float *e = ph + (r & 1) * 2 * plane + (r >> 1) * hw, *o = e + plane;
        for (int64_t c = 0; c < in_w; c += 32) {
            int64_t n = in_w - c; /* input columns left: even, and so are the halves below */
            __mmask16 mlo = n >= 16 ? 0xFFFF : (__mmask16)((1u << n) - 1);
            __mmask16 mhi = n >= 32 ? 0xFFFF : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
            __mmask16 mout = n >= 32 ? 0xFFFF : (__mmask16)((1u << (n / 2)) - 1);
            uintptr_t p = (uintptr_t)(xr + c); /* an integer: the high half may lie past the tensor, masked off */
            __m512 lo = _mm512_maskz_loadu_ps(mlo, (const void *)p);
            __m512 hi = _mm512_maskz_loadu_ps(mhi, (const void *)(p + 64));
            _mm512_mask_storeu_ps(e + c / 2, mout, _mm512_permutex2var_ps(lo, even, hi));
            _mm512_mask_storeu_ps(o + c / 2, mout, _mm512_permutex2var_ps(lo, odd, hi));
        }
    }
}
