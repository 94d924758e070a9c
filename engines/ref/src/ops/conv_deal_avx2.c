/* conv_deal_avx2.c: a row's even-indexed floats dealt out, 32 input floats by two loads and one permute (AVX-512F),
 * for the stride-2 phase planes. It must never read past the 2n-1 floats it is given, nor run without AVX-512F. */
#include <immintrin.h>

#include "conv_ops.h"

__attribute__((target("avx512f,avx2,fma"))) void ref_conv_deal2(const float *src, int64_t n, float *dst)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    int64_t have = 2 * n - 1; /* src[0 .. 2n-2] */
    for (int64_t i = 0; i < n; i += 16) {
        int64_t left = have - 2 * i; /* input floats from src + 2i on */
        __mmask16 mlo = left >= 16 ? 0xFFFF : (__mmask16)((1u << left) - 1);
        __mmask16 mhi = left >= 32 ? 0xFFFF : left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0;
        __mmask16 mout = n - i >= 16 ? 0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        uintptr_t p = (uintptr_t)(src + 2 * i); /* an integer: the high half may lie past the row, masked off */
        __m512 lo = _mm512_maskz_loadu_ps(mlo, (const void *)p);
        __m512 hi = _mm512_maskz_loadu_ps(mhi, (const void *)(p + 64));
        _mm512_mask_storeu_ps(dst + i, mout, _mm512_permutex2var_ps(lo, even, hi));
    }
}
