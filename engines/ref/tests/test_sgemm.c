/* test_sgemm.c: the blocked SGEMM against a naive double-precision triple loop over odd sizes, all
 * transpose combinations, alpha/beta, packed operands, both micro-kernels and 1 vs 2 threads.
 * It must never accept an approximate match where the design promises identical bits. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "ops/sgemm.h"
#include "pool.h"

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

typedef struct mat {
    float *p;
    int64_t rows, cols, ld;
} mat;

/* A stored matrix rows x cols with row stride ld >= cols, random contents (padding too). */
static mat mat_new(int64_t rows, int64_t cols, int64_t extra)
{
    mat m = {.rows = rows, .cols = cols, .ld = cols + extra};
    size_t n = (size_t)(rows * m.ld) + 1;
    m.p = ref_aligned_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        m.p[i] = frand();
    return m;
}

/* op(X)[i][k] for a stored X. */
static double at(const mat *x, bool trans, int64_t i, int64_t k)
{
    return trans ? x->p[k * x->ld + i] : x->p[i * x->ld + k];
}

/* Compares every element with the double reference within a bound scaled by sum |terms|. */
static int compare_ref(int64_t M, int64_t N, int64_t K, float alpha, const mat *A, bool ta, const mat *B,
                       bool tb, float beta, const float *c0, const float *c, int64_t ldc)
{
    int bad = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                double t = at(A, ta, i, k) * at(B, tb, k, j);
                s += t;
                mag += fabs(t);
            }
            double want = alpha * s, got = c[i * ldc + j];
            mag = fabs(alpha) * mag;
            if (beta != 0.0f) {
                want += beta * (double)c0[i * ldc + j];
                mag += fabs(beta * (double)c0[i * ldc + j]);
            }
            double tol = 2e-7 * (double)(K + 4) * mag + 1e-6;
            if (!(fabs(got - want) <= tol)) {
                if (bad++ < 3)
                    fprintf(stderr, "M=%lld N=%lld K=%lld ta=%d tb=%d a=%g b=%g: C[%lld][%lld]=%.9g want %.9g\n",
                            (long long)M, (long long)N, (long long)K, ta, tb, alpha, beta, (long long)i,
                            (long long)j, got, want);
            }
        }
    return bad;
}

typedef struct run_opts {
    bool pack_a, pack_b;
    int threads;
} run_opts;

/* Run one sgemm into c (ldc) from copy c0; returns the status. */
static int run_gemm(ref_pool *pool, int64_t M, int64_t N, int64_t K, float alpha, const mat *A, bool ta,
                    const mat *B, bool tb, float beta, const float *c0, float *c, int64_t ldc, run_opts o)
{
    ref_sgemm_operand a = {.data = A->p, .ld = A->ld, .trans = ta};
    ref_sgemm_operand b = {.data = B->p, .ld = B->ld, .trans = tb};
    float *pa = NULL, *pb = NULL;
    if (o.pack_a) {
        pa = ref_aligned_alloc(ref_sgemm_packed_a_floats(M, K) * sizeof(float) + 4);
        ref_sgemm_pack_a(M, K, &a, pa);
        a = (ref_sgemm_operand){.data = pa, .packed = true};
    }
    if (o.pack_b) {
        pb = ref_aligned_alloc(ref_sgemm_packed_b_floats(K, N) * sizeof(float) + 4);
        ref_sgemm_pack_b(K, N, &b, pb);
        b = (ref_sgemm_operand){.data = pb, .packed = true};
    }
    size_t sb = ref_sgemm_scratch_bytes(M, N, K, o.pack_a, o.pack_b, ref_pool_threads(pool));
    void *scratch = ref_aligned_alloc(sb + 1);
    memcpy(c, c0, sizeof(float) * (size_t)(M * ldc));
    ref_error err = {0};
    int rc = ref_sgemm(pool, M, N, K, alpha, &a, &b, beta, c, ldc, scratch, sb, &err);
    if (rc)
        fprintf(stderr, "sgemm failed: %s\n", err.msg);
    ref_free(scratch);
    ref_free(pa);
    ref_free(pb);
    return rc;
}

/* One case: the plain run matches the reference; packed variants and other thread counts give the
 * identical bits. */
static void one_case(ref_pool *p1, ref_pool *p2, int64_t M, int64_t N, int64_t K, bool ta, bool tb,
                     float alpha, float beta, bool nan_c)
{
    mat A = ta ? mat_new(K, M, 3) : mat_new(M, K, 1);
    mat B = tb ? mat_new(N, K, 0) : mat_new(K, N, 2);
    int64_t ldc = N + (M % 3);
    size_t cn = (size_t)(M * ldc);
    float *c0 = ref_aligned_alloc(cn * sizeof(float) + 4), *c = ref_aligned_alloc(cn * sizeof(float) + 4);
    float *c2 = ref_aligned_alloc(cn * sizeof(float) + 4);
    for (size_t i = 0; i < cn; i++)
        c0[i] = nan_c ? NAN : frand();
    CHECK(run_gemm(p1, M, N, K, alpha, &A, ta, &B, tb, beta, c0, c, ldc, (run_opts){0}) == 0);
    CHECK(compare_ref(M, N, K, alpha, &A, ta, &B, tb, beta, c0, c, ldc) == 0);
    /* padding columns of C between N and ldc must be untouched */
    int pad_ok = 1;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = N; j < ldc; j++)
            if (memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof(float)))
                pad_ok = 0;
    CHECK(pad_ok);
    const run_opts variants[] = {{true, false, 1}, {false, true, 1}, {true, true, 1}, {false, false, 2},
                                 {true, false, 2}, {false, true, 2}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        ref_pool *pool = variants[v].threads == 2 ? p2 : p1;
        CHECK(run_gemm(pool, M, N, K, alpha, &A, ta, &B, tb, beta, c0, c2, ldc, variants[v]) == 0);
        if (memcmp(c, c2, cn * sizeof(float))) {
            CHECK(!"bit-identical across packing and threads");
            fprintf(stderr, "  M=%lld N=%lld K=%lld ta=%d tb=%d variant %zu\n", (long long)M, (long long)N,
                    (long long)K, ta, tb, v);
        } else {
            CHECK(1);
        }
    }
    /* AVX-512 and AVX2 (and two panels at once or one) run the same FMA chain per element: the same bits. */
    ref_sgemm_limit_avx2(true);
    CHECK(run_gemm(p1, M, N, K, alpha, &A, ta, &B, tb, beta, c0, c2, ldc, (run_opts){0}) == 0);
    ref_sgemm_limit_avx2(false);
    if (memcmp(c, c2, cn * sizeof(float))) {
        CHECK(!"bit-identical across AVX-512 and AVX2 kernels");
        fprintf(stderr, "  M=%lld N=%lld K=%lld ta=%d tb=%d\n", (long long)M, (long long)N, (long long)K, ta, tb);
    } else {
        CHECK(1);
    }
    ref_free(A.p);
    ref_free(B.p);
    ref_free(c0);
    ref_free(c);
    ref_free(c2);
}

static void sweep(ref_pool *p1, ref_pool *p2)
{
    const int64_t ms[] = {1, 2, 5, 6, 7, 13, 16, 17, 31, 67};
    const int64_t ks[] = {1, 3, 67};
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ni = 0; ni < sizeof ms / sizeof ms[0]; ni++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                for (int t = 0; t < 4; t++)
                    one_case(p1, p2, ms[mi], ms[(ni + mi) % 10], ks[ki], t & 1, t & 2, 1.0f, 0.0f, false);
    /* several K blocks (balanced and not), M across MC, N across NR edges; the ones over 8 MFLOP are
     * split across the 2-thread pool (by M or by N, depending on which operand is packed) */
    const int64_t big[][3] = {{67, 61, 257}, {150, 33, 600}, {37, 149, 513}, {293, 47, 300},
                              {7, 521, 1000}, {151, 2, 301}, {2, 151, 301}, {1, 1, 2053},
                              {200, 150, 513}, {97, 301, 300}, {1, 4000, 1100}, {301, 7, 2100}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (int t = 0; t < 4; t++)
            one_case(p1, p2, big[i][0], big[i][1], big[i][2], t & 1, t & 2, 1.0f, 0.0f, false);
    /* alpha / beta, and beta == 0 over a C full of NaN */
    one_case(p1, p2, 29, 35, 41, false, false, 0.5f, 1.0f, false);
    one_case(p1, p2, 67, 97, 259, true, false, -1.5f, 0.25f, false);
    one_case(p1, p2, 71, 19, 23, false, true, 2.0f, -1.0f, false);
    one_case(p1, p2, 64, 64, 300, true, true, 0.75f, 0.0f, true);
    one_case(p1, p2, 13, 7, 5, false, false, 1.0f, 0.0f, true);
}

static void edge_cases(ref_pool *p1)
{
    ref_error e = {0}, *err = &e;
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {1, 2, 3, 4};
    ref_sgemm_operand A = {.data = a, .ld = 3}, B = {.data = b, .ld = 2};
    /* K == 0: C = beta*C */
    CHECK_OK(ref_sgemm(p1, 2, 2, 0, 1.0f, &A, &B, 0.5f, c, 2, NULL, 0, err), err);
    CHECK(c[0] == 0.5f && c[3] == 2.0f);
    /* hand-computed 2x3 * 3x2 */
    size_t sb = ref_sgemm_scratch_bytes(2, 2, 3, false, false, 1);
    void *s = ref_aligned_alloc(sb);
    CHECK_OK(ref_sgemm(p1, 2, 2, 3, 1.0f, &A, &B, 0.0f, c, 2, s, sb, err), err);
    CHECK(c[0] == 4 && c[1] == 5 && c[2] == 10 && c[3] == 11);
    /* too little scratch, bad sizes, too small a leading dimension */
    CHECK(ref_sgemm(p1, 2, 2, 3, 1.0f, &A, &B, 0.0f, c, 2, s, sb - 4, err) == REF_E_INVALID);
    CHECK(strstr(err->msg, "scratch") != NULL);
    CHECK(ref_sgemm(p1, -1, 2, 3, 1.0f, &A, &B, 0.0f, c, 2, s, sb, err) == REF_E_INVALID);
    A.ld = 2;
    CHECK(ref_sgemm(p1, 2, 2, 3, 1.0f, &A, &B, 0.0f, c, 2, s, sb, err) == REF_E_INVALID);
    ref_free(s);
    CHECK(ref_sgemm_kc(256) == 256 && ref_sgemm_kc(300) == 150 && ref_sgemm_kc(2304) == 256);
    CHECK(ref_sgemm_packed_a_floats(7, 3) == 36 && ref_sgemm_packed_b_floats(3, 17) == 96);
}

/* The epilogue (bias per row, then a clamp) gives the bits of C seeded with the bias, beta 1, then Clip: over several
 * K blocks, edge tiles, both kernels' widths and a split over two threads. */
static void epilogue_cases(ref_pool *p1, ref_pool *p2)
{
    /* {16, 49, 320} and {160, 117, 40}: a last quad or pair of panels only partly filled, over a short last MR panel */
    const int64_t sizes[][3] = {{13, 70, 600}, {64, 33, 37}, {7, 3, 5}, {67, 301, 300}, {1, 40, 50},
                                {16, 49, 320}, {160, 117, 40}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int t = 0; t < 2; t++) {
            int64_t M = sizes[i][0], N = sizes[i][1], K = sizes[i][2];
            mat A = mat_new(M, K, 0), B = mat_new(K, N, 0);
            float *bias = ref_aligned_alloc(sizeof(float) * (size_t)M + 4);
            float *c1 = ref_aligned_alloc(sizeof(float) * (size_t)(M * N) + 4);
            float *c2 = ref_aligned_alloc(sizeof(float) * (size_t)(M * N) + 4);
            for (int64_t m = 0; m < M; m++)
                bias[m] = frand();
            ref_pool *pool = t ? p2 : p1;
            size_t sb = ref_sgemm_scratch_bytes(M, N, K, false, false, ref_pool_threads(pool));
            void *scratch = ref_aligned_alloc(sb + 1);
            ref_sgemm_operand a = {.data = A.p, .ld = A.ld}, b = {.data = B.p, .ld = B.ld};
            ref_sgemm_epilogue ep = {.bias = bias, .clamp = true, .lo = -0.5f, .hi = 1.0f};
            ref_error err = {0};
            CHECK(ref_sgemm_ex(pool, M, N, K, 1.0f, &a, &b, 0.0f, c1, N, scratch, sb, &ep, &err) == 0);
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++)
                    c2[m * N + n] = bias[m];
            CHECK(ref_sgemm(pool, M, N, K, 1.0f, &a, &b, 1.0f, c2, N, scratch, sb, &err) == 0);
            int clamped = 0;
            for (int64_t x = 0; x < M * N; x++) {
                float v = c2[x] < -0.5f ? -0.5f : c2[x];
                c2[x] = v > 1.0f ? 1.0f : v;
                clamped += c2[x] == -0.5f || c2[x] == 1.0f;
            }
            CHECK(!memcmp(c1, c2, sizeof(float) * (size_t)(M * N)));
            CHECK(clamped > 0);
            ref_free(A.p);
            ref_free(B.p);
            ref_free(bias);
            ref_free(c1);
            ref_free(c2);
            ref_free(scratch);
        }
}

int main(void)
{
    ref_error e = {0}, *err = &e;
    ref_pool *p1 = NULL, *p2 = NULL;
    CHECK_OK(ref_pool_new(1, &p1, err), err);
    CHECK_OK(ref_pool_new(2, &p2, err), err);
    edge_cases(p1);
    printf("kernel: %s\n", ref_sgemm_kernel_name());
    sweep(p1, p2);
    epilogue_cases(p1, p2);
    ref_sgemm_force_portable(true);
    printf("kernel: %s\n", ref_sgemm_kernel_name());
    sweep(p1, p2);
    ref_sgemm_force_portable(false);
    ref_pool_free(p1);
    ref_pool_free(p2);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
