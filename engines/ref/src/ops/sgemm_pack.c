/* sgemm_pack.c: copies op(A) into MR-row panels and op(B) into NR-column panels, k-major, per K block.
 * It must never read outside the matrix: edge panels are padded with zeros written here, not read. */
#include <string.h>

#include "sgemm.h"

#define MR REF_SGEMM_MR
#define NR REF_SGEMM_NR

int64_t ref_sgemm_kc(int64_t K)
{
    if (K <= REF_SGEMM_KC)
        return K > 0 ? K : 1;
    /* Balanced blocks: K=300 gives 150+150 rather than 256+44, which would waste the second pass. */
    int64_t blocks = (K + REF_SGEMM_KC - 1) / REF_SGEMM_KC;
    return (K + blocks - 1) / blocks;
}

size_t ref_sgemm_packed_a_floats(int64_t M, int64_t K)
{
    return (size_t)((M + MR - 1) / MR * MR) * (size_t)K;
}

size_t ref_sgemm_packed_b_floats(int64_t K, int64_t N)
{
    return (size_t)((N + NR - 1) / NR * NR) * (size_t)K;
}

/* One MR-row panel of op(A): dst[k*MR + r] = op(A)[r][k], rows >= mr zero. */
static void pack_a_panel(const float *src, int64_t ld, bool trans, int64_t mr, int64_t kc, float *dst)
{
    if (trans) {
        /* op(A)[r][k] = src[k*ld + r]: each k is a contiguous run of mr floats. */
        for (int64_t k = 0; k < kc; k++) {
            const float *s = src + k * ld;
            float *d = dst + k * MR;
            int64_t r = 0;
            for (; r < mr; r++)
                d[r] = s[r];
            for (; r < MR; r++)
                d[r] = 0.0f;
        }
        return;
    }
    if (mr == MR) {
        const float *s0 = src, *s1 = src + ld, *s2 = src + 2 * ld;
        const float *s3 = src + 3 * ld, *s4 = src + 4 * ld, *s5 = src + 5 * ld;
        for (int64_t k = 0; k < kc; k++) {
            float *d = dst + k * MR;
            d[0] = s0[k];
            d[1] = s1[k];
            d[2] = s2[k];
            d[3] = s3[k];
            d[4] = s4[k];
            d[5] = s5[k];
        }
        return;
    }
    for (int64_t k = 0; k < kc; k++) {
        float *d = dst + k * MR;
        int64_t r = 0;
        for (; r < mr; r++)
            d[r] = src[r * ld + k];
        for (; r < MR; r++)
            d[r] = 0.0f;
    }
}

void ref_sgemm_pack_a_block(const float *src, int64_t ld, bool trans, int64_t mc, int64_t kc, float *dst)
{
    for (int64_t i = 0; i < mc; i += MR) {
        int64_t mr = mc - i < MR ? mc - i : MR;
        const float *s = trans ? src + i : src + i * ld;
        pack_a_panel(s, ld, trans, mr, kc, dst + i * kc);
    }
}

/* One NR-column panel of op(B): dst[k*NR + j] = op(B)[k][j], columns >= nr zero. */
static void pack_b_panel(const float *src, int64_t ld, bool trans, int64_t nr, int64_t kc, float *dst)
{
    if (!trans) {
        for (int64_t k = 0; k < kc; k++) {
            const float *s = src + k * ld;
            float *d = dst + k * NR;
            if (nr == NR) {
                memcpy(d, s, sizeof(float) * NR);
            } else {
                memcpy(d, s, sizeof(float) * (size_t)nr);
                memset(d + nr, 0, sizeof(float) * (size_t)(NR - nr));
            }
        }
        return;
    }
    /* op(B)[k][j] = src[j*ld + k]: walk each stored row once, scattering with stride NR. */
    for (int64_t j = 0; j < nr; j++) {
        const float *s = src + j * ld;
        for (int64_t k = 0; k < kc; k++)
            dst[k * NR + j] = s[k];
    }
    for (int64_t j = nr; j < NR; j++)
        for (int64_t k = 0; k < kc; k++)
            dst[k * NR + j] = 0.0f;
}

void ref_sgemm_pack_b_block(const float *src, int64_t ld, bool trans, int64_t kc, int64_t nc, float *dst)
{
    for (int64_t j = 0; j < nc; j += NR) {
        int64_t nr = nc - j < NR ? nc - j : NR;
        const float *s = trans ? src + j * ld : src + j;
        pack_b_panel(s, ld, trans, nr, kc, dst + j * kc);
    }
}

/* Whole-matrix layout: K block starting at pc holds all panels, at dst + pc*Mp (Mp = M padded to MR);
 * panel p of that block at + p*MR*kc. The driver indexes pre-packed operands the same way. */
void ref_sgemm_pack_a(int64_t M, int64_t K, const ref_sgemm_operand *A, float *dst)
{
    int64_t kcb = ref_sgemm_kc(K), Mp = (M + MR - 1) / MR * MR;
    for (int64_t pc = 0; pc < K; pc += kcb) {
        int64_t kc = K - pc < kcb ? K - pc : kcb;
        const float *s = A->trans ? A->data + pc * A->ld : A->data + pc;
        ref_sgemm_pack_a_block(s, A->ld, A->trans, M, kc, dst + pc * Mp);
    }
}

void ref_sgemm_pack_b(int64_t K, int64_t N, const ref_sgemm_operand *B, float *dst)
{
    int64_t kcb = ref_sgemm_kc(K), Np = (N + NR - 1) / NR * NR;
    for (int64_t pc = 0; pc < K; pc += kcb) {
        int64_t kc = K - pc < kcb ? K - pc : kcb;
        const float *s = B->trans ? B->data + pc : B->data + pc * B->ld;
        ref_sgemm_pack_b_block(s, B->ld, B->trans, kc, N, dst + pc * Np);
    }
}
