/* half_convert.c: bulk float16 conversions: F16C (vcvtph2ps / vcvtps2ph, round to nearest even) eight at a time
 * when the CPU has it, the bit-exact scalar conversions of cast_half.h otherwise and for tails. It must never
 * let MXCSR's rounding mode choose the rounding (the F16C store names round-to-nearest explicitly), nor assume
 * float16 sources are 2-byte aligned: mapped weights start wherever the file put them (onnx/read.c). */
#include <stdatomic.h>
#include <string.h>

#include "cast_half.h"
#include "half_convert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define REF_HAVE_F16C_PATH 1
#endif

static atomic_bool force_portable;

void ref_half_force_portable(bool on) { atomic_store(&force_portable, on); }

bool ref_half_fast(void)
{
#ifdef REF_HAVE_F16C_PATH
    return !atomic_load(&force_portable) && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#else
    return false;
#endif
}

#ifdef REF_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) static int64_t h2f_f16c(const unsigned char *src, float *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * i))));
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t f2h_f16c(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t round_f16c(float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
    return i;
}
#endif

void ref_half_to_float_n(const void *src, float *dst, int64_t n)
{
    const unsigned char *s = src;
    int64_t i = 0;
#ifdef REF_HAVE_F16C_PATH
    if (ref_half_fast())
        i = h2f_f16c(s, dst, n);
#endif
    for (; i < n; i++) {
        uint16_t h; /* a 2-byte memcpy is one plain load, at any alignment and without UB */
        memcpy(&h, s + 2 * i, sizeof h);
        dst[i] = ref_f16_to_f32(h);
    }
}

void ref_float_to_half_n(const float *src, uint16_t *dst, int64_t n)
{
    int64_t i = 0;
#ifdef REF_HAVE_F16C_PATH
    if (ref_half_fast())
        i = f2h_f16c(src, dst, n);
#endif
    for (; i < n; i++)
        dst[i] = ref_f32_to_f16(src[i]);
}

void ref_float_round_half_n(float *x, int64_t n)
{
    int64_t i = 0;
#ifdef REF_HAVE_F16C_PATH
    if (ref_half_fast())
        i = round_f16c(x, n);
#endif
    for (; i < n; i++)
        x[i] = ref_f16_to_f32(ref_f32_to_f16(x[i]));
}
