/* unary_avx2.h: AVX2 builds of the float transcendental kernels (exp, erf, tanh, sigmoid, expm1-based
 * activations), picked at run time by ref_unary_upgrade. They must never be called on a CPU without AVX2,
 * and give bit-identical results to the portable kernels (same operations, no contraction into FMA). */
#ifndef REF_UNARY_AVX2_H
#define REF_UNARY_AVX2_H

#include "elementwise_broadcast.h"

void ref_unary_exp_f32_avx2(const void *arg, void *out, const void *const *in, const int *step, int64_t n);
void ref_unary_erf_f32_avx2(const void *arg, void *out, const void *const *in, const int *step, int64_t n);
void ref_unary_tanh_f32_avx2(const void *arg, void *out, const void *const *in, const int *step, int64_t n);
void ref_unary_sigmoid_f32_avx2(const void *arg, void *out, const void *const *in, const int *step, int64_t n);

/* True when this CPU runs the kernels above. */
int ref_unary_have_avx2(void);

#endif
