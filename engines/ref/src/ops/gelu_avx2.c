/* gelu_avx2.c: the GELU-family float kernels (gelu_kernels.h) compiled for AVX2, 8 lanes. It must never run unless
 * ref_unary_have_avx2() said yes, and never contract multiply-adds into FMA (same bits as gelu.c's portable build). */
#include "elementwise_kernels.h"

REF_EW_NO_CONTRACT
REF_EW_VECTORIZE

/* after the pragmas, so the helpers inline into the kernels with the same options */
#include "gelu_kernels.h"

REF_GELU_DEFINE(f32_avx2)
