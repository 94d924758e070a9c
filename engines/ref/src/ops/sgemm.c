/* sgemm.c: the blocked SGEMM driver (KC x MC x NC loops over packed panels), its thread split over
 * whole panels of C, the kernel dispatch and the portable micro-kernel.
 * It must never allocate and never let the K reduction order depend on the thread count. */
#include <stdatomic.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "../alloc.h"
#include "../status.h"
#include "sgemm.h"

#define MR REF_SGEMM_MR
#define NR REF_SGEMM_NR
#define MC REF_SGEMM_MC
#define NC REF_SGEMM_NC

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t round_up64(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* ---- micro-kernels ------------------------------------------------------------------------------ */

/* Same contract as the AVX2 kernel; plain loops over a fixed 16-wide row that gcc vectorizes for SSE. */
static void kernel_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                            float beta)
{
    float acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++) {
        const float *bk = b + k * NR;
        for (int r = 0; r < MR; r++) {
            float av = a[k * MR + r];
            for (int j = 0; j < NR; j++)
                acc[r][j] += av * bk[j];
        }
    }
    for (int r = 0; r < MR; r++) {
        float *cr = c + r * ldc;
        if (beta == 0.0f)
            for (int j = 0; j < NR; j++)
                cr[j] = alpha * acc[r][j];
        else if (beta == 1.0f)
            for (int j = 0; j < NR; j++)
                cr[j] = alpha * acc[r][j] + cr[j];
        else
            for (int j = 0; j < NR; j++)
                cr[j] = alpha * acc[r][j] + beta * cr[j];
    }
}

static atomic_int force_portable, limit_avx2;

void ref_sgemm_force_portable(bool on) { atomic_store(&force_portable, on ? 1 : 0); }
void ref_sgemm_limit_avx2(bool on) { atomic_store(&limit_avx2, on ? 1 : 0); }

static bool have_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static bool have_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && have_avx2();
}

static ref_sgemm_kernel_fn pick_kernel(void)
{
    if (atomic_load(&force_portable))
        return kernel_portable;
    if (!atomic_load(&limit_avx2) && have_avx512())
        return ref_sgemm_kernel_avx512;
    return have_avx2() ? ref_sgemm_kernel_avx2 : kernel_portable;
}

bool ref_sgemm_taps_available(void) { return pick_kernel() == ref_sgemm_kernel_avx512; }

const char *ref_sgemm_kernel_name(void)
{
    ref_sgemm_kernel_fn k = pick_kernel();
    return k == kernel_portable ? "portable 6x16" : k == ref_sgemm_kernel_avx2 ? "avx2-fma 6x16" : "avx512f 6x32";
}

/* ---- blocked driver ----------------------------------------------------------------------------- */

typedef struct gemm_job {
    int64_t M, N, K, kcb, Mp, Np;
    float alpha, beta;
    const ref_sgemm_operand *A, *B;
    float *C;
    int64_t ldc;
    char *scratch;
    size_t slice_bytes, a_bytes; /* per-thread slice: A buffer, then B buffer */
    ref_sgemm_kernel_fn kern;
    ref_sgemm_kernel2_fn kern2; /* two adjacent full tiles at once, when the kernel set has that form */
    ref_sgemm_kernel4_fn kern4; /* four, likewise */
    ref_sgemm_kernel1_fn kern1; /* set when M == 1 and the kernel set has a one-row form */
    const ref_sgemm_epilogue *ep;
    bool split_n;
} gemm_job;

/* The epilogue on one tile just written (rows row.. of C): the bias after the first K block, the clamp after the
 * last, so every element gets the same operations whatever the blocking and the thread split. */
static void epilogue(const gemm_job *j, float *c, int64_t mr, int64_t nr, int64_t row, bool first, bool last)
{
    const ref_sgemm_epilogue *ep = j->ep;
    if (!ep || (!(first && ep->bias) && !(last && ep->clamp)))
        return;
    for (int64_t r = 0; r < mr; r++) {
        float *cr = c + r * j->ldc;
        int64_t x = 0;
        if (first && ep->bias) {
            float b = ep->bias[row + r];
#if defined(__SSE__)
            for (__m128 vb = _mm_set1_ps(b); x + 4 <= nr; x += 4)
                _mm_storeu_ps(cr + x, _mm_add_ps(_mm_loadu_ps(cr + x), vb));
#endif
            for (; x < nr; x++)
                cr[x] += b;
        }
        if (last && ep->clamp)
            ref_sgemm_clamp(cr, nr, ep->lo, ep->hi);
    }
}

void ref_sgemm_clamp(float *y, int64_t n, float lo, float hi)
{
    int64_t i = 0;
#if defined(__SSE__)
    /* maxps(lo, x) is "lo > x ? lo : x" and minps(hi, t) "hi < t ? hi : t": Clip's order, a NaN kept */
    for (__m128 vlo = _mm_set1_ps(lo), vhi = _mm_set1_ps(hi); i + 4 <= n; i += 4)
        _mm_storeu_ps(y + i, _mm_min_ps(vhi, _mm_max_ps(vlo, _mm_loadu_ps(y + i))));
#endif
    for (; i < n; i++) {
        float t = y[i] < lo ? lo : y[i];
        y[i] = t > hi ? hi : t;
    }
}

/* An edge tile goes through the same full kernel on a copy, so its arithmetic (and so its bits)
 * is the very same as an interior tile's. */
static void edge_tile(ref_sgemm_kernel_fn kern, int64_t kc, const float *a, const float *b, float *c,
                      int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta)
{
    float tmp[MR * NR] __attribute__((aligned(64)));
    memset(tmp, 0, sizeof tmp);
    if (beta != 0.0f)
        for (int64_t r = 0; r < mr; r++)
            memcpy(tmp + r * NR, c + r * ldc, sizeof(float) * (size_t)nr);
    kern(kc, a, b, tmp, NR, alpha, beta);
    for (int64_t r = 0; r < mr; r++)
        memcpy(c + r * ldc, tmp + r * NR, sizeof(float) * (size_t)nr);
}

/* M == 1: the one-row kernel, through a 16-wide copy when the panel is narrower. */
static void row_tile(ref_sgemm_kernel1_fn kern1, int64_t kc, const float *a, const float *b, float *c, int64_t nr,
                     float alpha, float beta)
{
    if (nr == NR) {
        kern1(kc, a, b, c, alpha, beta);
        return;
    }
    float tmp[NR] __attribute__((aligned(64)));
    memset(tmp, 0, sizeof tmp);
    if (beta != 0.0f)
        memcpy(tmp, c, sizeof(float) * (size_t)nr);
    kern1(kc, a, b, tmp, alpha, beta);
    memcpy(c, tmp, sizeof(float) * (size_t)nr);
}

static void macro_kernel(const gemm_job *j, int64_t mc, int64_t nc, int64_t kc, const float *ap,
                         const float *bp, float *c, float beta, int64_t row0, bool first, bool last)
{
    int64_t jr = 0;
    const ref_sgemm_epilogue *ep = j->ep;
    const ref_sgemm_epilogue *clamp = last && ep && ep->clamp ? ep : NULL;
    /* Quads of panels while four are left (the last maybe partial: the kernel stores only its columns and rows, so an
     * edge tile needs no copy and gets the epilogue in registers too), */
    for (; j->kern4 && jr + 3 * NR < nc; jr += 4 * NR) {
        const float *b = bp + jr * kc;
        int64_t ncol = min64(4 * NR, nc - jr);
        for (int64_t ir = 0; ir < mc; ir += MR)
            j->kern4(kc, ap + ir * kc, b, NR * kc, c + ir * j->ldc + jr, j->ldc, j->alpha, beta,
                     first && ep && ep->bias ? ep->bias + row0 + ir : NULL, clamp, min64(MR, mc - ir), ncol);
    }
    /* then pairs likewise, where the kernel set has the two-panel form; a last lone panel after. */
    for (; j->kern2 && jr + NR < nc; jr += 2 * NR) {
        const float *b = bp + jr * kc;
        int64_t ncol = min64(2 * NR, nc - jr);
        for (int64_t ir = 0; ir < mc; ir += MR)
            j->kern2(kc, ap + ir * kc, b, b + NR * kc, c + ir * j->ldc + jr, j->ldc, j->alpha, beta,
                     first && ep && ep->bias ? ep->bias + row0 + ir : NULL, clamp, min64(MR, mc - ir), ncol);
    }
    for (; jr < nc; jr += NR) {
        int64_t nr = min64(NR, nc - jr);
        const float *b = bp + jr * kc;
        for (int64_t ir = 0; ir < mc; ir += MR) {
            int64_t mr = min64(MR, mc - ir);
            float *cc = c + ir * j->ldc + jr;
            if (mr == MR && nr == NR)
                j->kern(kc, ap + ir * kc, b, cc, j->ldc, j->alpha, beta);
            else if (j->kern1)
                row_tile(j->kern1, kc, ap + ir * kc, b, cc, nr, j->alpha, beta);
            else
                edge_tile(j->kern, kc, ap + ir * kc, b, cc, j->ldc, mr, nr, j->alpha, beta);
            epilogue(j, cc, mr, nr, row0 + ir, first, last);
        }
    }
}

/* Rows [m0,m1) x cols [n0,n1) of C, serially; m0 and n0 sit on panel boundaries. */
static void gemm_block(const gemm_job *j, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float *abuf,
                       float *bbuf)
{
    const ref_sgemm_operand *A = j->A, *B = j->B;
    for (int64_t jc = n0; jc < n1; jc += NC) {
        int64_t nc = min64(NC, n1 - jc);
        for (int64_t pc = 0; pc < j->K; pc += j->kcb) {
            int64_t kc = min64(j->kcb, j->K - pc);
            float beta = pc == 0 ? j->beta : 1.0f;
            const float *bp = bbuf;
            if (B->packed)
                bp = B->data + pc * j->Np + jc * kc;
            else
                ref_sgemm_pack_b_block(B->trans ? B->data + jc * B->ld + pc : B->data + pc * B->ld + jc,
                                       B->ld, B->trans, kc, nc, bbuf);
            for (int64_t ic = m0; ic < m1; ic += MC) {
                int64_t mc = min64(MC, m1 - ic);
                const float *ap = abuf;
                if (A->packed)
                    ap = A->data + pc * j->Mp + ic * kc;
                else
                    ref_sgemm_pack_a_block(A->trans ? A->data + pc * A->ld + ic : A->data + ic * A->ld + pc,
                                           A->ld, A->trans, mc, kc, abuf);
                macro_kernel(j, mc, nc, kc, ap, bp, j->C + ic * j->ldc + jc, beta, ic, pc == 0, pc + kc >= j->K);
            }
        }
    }
}

static void gemm_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const gemm_job *j = arg;
    char *slice = j->scratch ? j->scratch + (size_t)tid * j->slice_bytes : NULL; /* none for an empty product */
    float *abuf = (float *)slice, *bbuf = slice ? (float *)(slice + j->a_bytes) : NULL;
    if (j->split_n)
        gemm_block(j, 0, j->M, begin * NR, min64(end * NR, j->N), abuf, bbuf);
    else
        gemm_block(j, begin * MR, min64(end * MR, j->M), 0, j->N, abuf, bbuf);
}

static void slice_sizes(int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed, size_t *a_bytes,
                        size_t *b_bytes)
{
    int64_t kcb = ref_sgemm_kc(K);
    size_t a = (size_t)(min64(MC, round_up64(M, MR)) * kcb) * sizeof(float);
    size_t b = (size_t)(min64(NC, round_up64(N, NR)) * kcb) * sizeof(float);
    *a_bytes = a_packed ? 0 : ref_align_up(a, REF_ALIGN);
    *b_bytes = b_packed ? 0 : ref_align_up(b, REF_ALIGN);
}

size_t ref_sgemm_scratch_bytes(int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed, int n_threads)
{
    if (M <= 0 || N <= 0 || K <= 0)
        return 0;
    size_t a, b;
    slice_sizes(M, N, K, a_packed, b_packed, &a, &b);
    return (a + b) * (size_t)(n_threads < 1 ? 1 : n_threads);
}

/* Split over the operand that is packed at run time, so no thread repeats another's packing, unless
 * that leaves too few panels to share. */
static bool choose_split_n(int64_t M, int64_t N, bool a_packed, bool b_packed, int threads)
{
    int64_t pm = (M + MR - 1) / MR, pn = (N + NR - 1) / NR;
    bool split_n = a_packed != b_packed ? a_packed : pn >= pm;
    int64_t mine = split_n ? pn : pm, other = split_n ? pm : pn;
    if (mine < 2 * threads && other > mine)
        split_n = !split_n;
    return split_n;
}

static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t jn = 0; jn < N; jn++)
            C[i * ldc + jn] = beta == 0.0f ? 0.0f : beta * C[i * ldc + jn];
}

int ref_sgemm(ref_pool *pool, int64_t M, int64_t N, int64_t K, float alpha, const ref_sgemm_operand *A,
              const ref_sgemm_operand *B, float beta, float *C, int64_t ldc, void *scratch,
              size_t scratch_bytes, ref_error *err)
{
    return ref_sgemm_ex(pool, M, N, K, alpha, A, B, beta, C, ldc, scratch, scratch_bytes, NULL, err);
}

int ref_sgemm_ex(ref_pool *pool, int64_t M, int64_t N, int64_t K, float alpha, const ref_sgemm_operand *A,
                 const ref_sgemm_operand *B, float beta, float *C, int64_t ldc, void *scratch, size_t scratch_bytes,
                 const ref_sgemm_epilogue *ep, ref_error *err)
{
    if (M < 0 || N < 0 || K < 0 || ldc < N)
        return ref_fail(err, REF_E_INVALID, "sgemm: bad sizes M=%lld N=%lld K=%lld ldc=%lld", (long long)M,
                        (long long)N, (long long)K, (long long)ldc);
    if (M == 0 || N == 0)
        return REF_OK;
    if ((!A->packed && A->ld < (A->trans ? M : K)) || (!B->packed && B->ld < (B->trans ? K : N)))
        return ref_fail(err, REF_E_INVALID, "sgemm: leading dimension too small (lda=%lld ldb=%lld)",
                        (long long)A->ld, (long long)B->ld);
    if (K == 0) {
        scale_c(M, N, beta, C, ldc);
        gemm_job e = {.ldc = ldc, .ep = ep};
        epilogue(&e, C, M, N, 0, true, true);
        return REF_OK;
    }
    int threads = ref_pool_threads(pool);
    size_t need = ref_sgemm_scratch_bytes(M, N, K, A->packed, B->packed, threads);
    if (scratch_bytes < need || (need && !scratch))
        return ref_fail(err, REF_E_INVALID, "sgemm %lldx%lldx%lld: scratch of %zu bytes, %zu needed",
                        (long long)M, (long long)N, (long long)K, scratch_bytes, need);
    gemm_job j = {.M = M, .N = N, .K = K, .kcb = ref_sgemm_kc(K), .Mp = round_up64(M, MR),
                  .Np = round_up64(N, NR), .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C, .ldc = ldc,
                  .scratch = scratch, .kern = pick_kernel(), .ep = ep};
    if (M == 1 && (j.kern == ref_sgemm_kernel_avx2 || j.kern == ref_sgemm_kernel_avx512))
        j.kern1 = ref_sgemm_kernel1_avx2;
    else if (j.kern == ref_sgemm_kernel_avx512) {
        j.kern2 = ref_sgemm_kernel2_avx512;
        j.kern4 = ref_sgemm_kernel4_avx512;
    }
    size_t b_bytes;
    slice_sizes(M, N, K, A->packed, B->packed, &j.a_bytes, &b_bytes);
    j.slice_bytes = j.a_bytes + b_bytes;
    double flops = 2.0 * (double)M * (double)N * (double)K;
    if (threads < 2 || flops < 2 * REF_POOL_SHARE_FLOPS) {
        j.split_n = false;
        gemm_task(&j, 0, (M + MR - 1) / MR, 0);
        return REF_OK;
    }
    j.split_n = choose_split_n(M, N, A->packed, B->packed, threads);
    int64_t panels = j.split_n ? (N + NR - 1) / NR : (M + MR - 1) / MR;
    double panel_flops = 2.0 * (double)K * (double)(j.split_n ? M * NR : N * MR);
    int64_t grain = (int64_t)(REF_POOL_SHARE_FLOPS / panel_flops) + 1;
    ref_parallel_for(pool, panels, grain, gemm_task, &j);
    return REF_OK;
}
