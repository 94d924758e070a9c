/* rows_avx2.c: the float Softmax and LayerNormalization rows of rows_fastmath.h compiled for AVX2 (8 lanes).
 * It must never run unless ref_unary_have_avx2() said yes, and never contract multiply-adds into FMA, which would
 * make results depend on the CPU. */
#include "elementwise_kernels.h"
#include "rows.h"

REF_EW_NO_CONTRACT
REF_EW_VECTORIZE

/* after the pragmas, so the helpers inline into the kernels with the same options */
#include "rows_fastmath.h"

void ref_rows_softmax_f32_avx2(const float *x, float *y, int64_t n) { rows_softmax_body(x, y, n); }

void ref_rows_layernorm_f32_avx2(const float *x, float *y, int64_t n, const float *scale, const float *bias,
                                 double eps, double *mean, double *inv_std)
{
    rows_layernorm_body(x, y, n, scale, bias, eps, mean, inv_std);
}
