/* rows.c: the portable build of the float Softmax and LayerNormalization rows, and the pick between it and the
 * AVX2 build. It must never contract multiply-adds into FMA (the AVX2 build does not either), so both agree. */
#include <stdatomic.h>

#include "elementwise_kernels.h"
#include "rows.h"
#include "unary_avx2.h"

REF_EW_NO_CONTRACT
REF_EW_VECTORIZE

#include "rows_fastmath.h"

static void softmax_portable(const float *x, float *y, int64_t n) { rows_softmax_body(x, y, n); }

static void layernorm_portable(const float *x, float *y, int64_t n, const float *scale, const float *bias, double eps,
                               double *mean, double *inv_std)
{
    rows_layernorm_body(x, y, n, scale, bias, eps, mean, inv_std);
}

static atomic_int force_portable;
void ref_rows_force_portable(bool on) { atomic_store(&force_portable, on ? 1 : 0); }

static bool use_avx2(void) { return !atomic_load(&force_portable) && ref_unary_have_avx2(); }

ref_rows_softmax_fn ref_rows_softmax(void) { return use_avx2() ? ref_rows_softmax_f32_avx2 : softmax_portable; }

ref_rows_layernorm_fn ref_rows_layernorm(void)
{
    return use_avx2() ? ref_rows_layernorm_f32_avx2 : layernorm_portable;
}
