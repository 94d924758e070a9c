/* unary_avx2.c: the float exp, erf, tanh and sigmoid kernels compiled for AVX2 (8 lanes), from the same
 * unary_fastmath.h code as the portable ones. It must never run unless ref_unary_have_avx2() said yes, and
 * never contract multiply-adds into FMA, which would make results depend on the CPU. */
#include "elementwise_kernels.h"
#include "unary_avx2.h"

REF_EW_NO_CONTRACT
REF_EW_VECTORIZE

/* after the pragmas, so the helpers inline into the kernels with the same options */
#include "unary_fastmath.h"

void ref_unary_exp_f32_avx2(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, ref_fexp(x)) }
void ref_unary_erf_f32_avx2(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, ref_ferf(x)) }
void ref_unary_tanh_f32_avx2(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, ref_ftanh(x)) }
void ref_unary_sigmoid_f32_avx2(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, ref_fsigmoid(x)) }
