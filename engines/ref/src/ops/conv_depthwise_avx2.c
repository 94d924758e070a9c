/* conv_depthwise_avx2.c: the depthwise kernels of conv_depthwise_row.h compiled for AVX2, and an AVX-512F form of the
 * flat kernel. It must never run a kernel the CPU lacks (conv_depthwise.c checks), nor add in another order. */
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
