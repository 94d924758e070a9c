/* sgemm_taps.c: the blocked driver for a B read in place through a tap table (ref_sgemm_taps): the K blocks and rows
 * of packed A the packed driver uses, pairs of 16-column panels of B taken straight from x. It must never allocate,
 * never read x outside the taps' N columns, and never order a K reduction other than the packed driver does. */
#include "sgemm.h"

#define MR REF_SGEMM_MR
#define MC REF_SGEMM_MC
#define NP (2 * REF_SGEMM_NR) /* columns per kernel call */

void ref_sgemm_taps(const float *ap, int64_t M, int64_t m0, int64_t m1, int64_t K, const float *x,
                    const int32_t *offs, int64_t N, float *C, int64_t ldc, const ref_sgemm_epilogue *ep)
{
    int64_t kcb = ref_sgemm_kc(K), Mp = (M + MR - 1) / MR * MR;
    for (int64_t pc = 0; pc < K; pc += kcb) {
        int64_t kc = K - pc < kcb ? K - pc : kcb;
        bool first = pc == 0, last = pc + kc >= K;
        const ref_sgemm_epilogue *clamp = last && ep && ep->clamp ? ep : NULL;
        /* A's rows in L2-sized blocks; each pair of B panels (x's lines for these taps) stays in L1 across them */
        for (int64_t ic = m0; ic < m1; ic += MC) {
            int64_t mc = m1 - ic < MC ? m1 - ic : MC;
            const float *ablk = ap + pc * Mp + ic * kc;
            for (int64_t jr = 0; jr < N; jr += 2 * NP) { /* 64 columns a call; 32 or fewer at the end */
                int64_t ncol = N - jr < 2 * NP ? N - jr : 2 * NP;
                for (int64_t ir = 0; ir < mc; ir += MR) {
                    int64_t mr = mc - ir < MR ? mc - ir : MR;
                    const float *bias = first && ep && ep->bias ? ep->bias + ic + ir : NULL;
                    float *c = C + (ic + ir) * ldc + jr;
                    if (ncol > NP)
                        ref_sgemm_kernel_taps4_avx512(kc, ablk + ir * kc, x + jr, offs + pc, ncol, c, ldc, mr, first,
                                                      bias, clamp);
                    else
                        ref_sgemm_kernel_taps_avx512(kc, ablk + ir * kc, x + jr, offs + pc, ncol, c, ldc, mr, first,
                                                     bias, clamp);
                }
            }
        }
    }
}
