/* test_ops_gemm.c: Gemm (transposes, alpha/beta, every C broadcast) and MatMul (1-D promotion, batch
 * broadcasting, integer and double types) against naive loops, constant vs run-time operands, 1 vs 2 threads.
 * It must never compare the engine with itself alone: every case has an independent reference. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "op_harness.h"
#include "tensor.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Runs node nd over in[] with several const masks and both thread counts: the first run must match want
 * (float within tol, or exactly when tol < 0), the others must give identical bytes. */
static void check_runs(const char *name, const ref_node *nd, int n_in, const ref_tensor *const *in,
                       const unsigned *masks, int n_masks, int out_rank, const int64_t *out_dims, const void *want,
                       double tol)
{
    ref_error e = {0}, *err = &e;
    ref_tensor first, out;
    size_t nbytes = 0;
    for (int r = 0; r < 2 * n_masks; r++) {
        bool two = r >= n_masks;
        unsigned mask = masks[r % n_masks];
        ref_tensor *o = r ? &out : &first;
        int rc = oh_run(nd, 17, n_in, in, 1, o, mask, two ? 2 : 1, err);
        CHECK_OK(rc, err);
        if (rc) {
            fprintf(stderr, "  case %s, mask %u, %d threads\n", name, mask, two ? 2 : 1);
            continue;
        }
        bool shape_ok = o->rank == out_rank && !memcmp(o->dims, out_dims, sizeof(int64_t) * (size_t)out_rank);
        CHECK(shape_ok);
        if (!shape_ok)
            fprintf(stderr, "  case %s: result rank %d\n", name, o->rank);
        if (r == 0) {
            nbytes = ref_tensor_nbytes(o);
            int bad = 0;
            if (tol < 0) {
                bad = memcmp(o->data, want, nbytes) != 0;
            } else {
                for (int64_t i = 0; i < ref_tensor_numel(o); i++) {
                    float got = ((float *)o->data)[i], w = ((const float *)want)[i];
                    if (!(fabs(got - w) <= tol * (1.0 + fabs(w))) && bad++ < 3)
                        fprintf(stderr, "%s: y[%lld] = %.8g, want %.8g\n", name, (long long)i, got, w);
                }
            }
            CHECK(bad == 0);
            if (bad)
                fprintf(stderr, "  case %s differs from the reference\n", name);
        } else {
            bool same = ref_tensor_nbytes(o) == nbytes && !memcmp(o->data, first.data, nbytes);
            CHECK(same);
            if (!same)
                fprintf(stderr, "%s: run with mask %u on %d threads differs\n", name, mask, two ? 2 : 1);
            oh_free_outputs(1, &out);
        }
    }
    oh_free_outputs(1, &first);
}

/* ---- Gemm ---- */

static void gemm_case(int64_t M, int64_t N, int64_t K, bool ta, bool tb, float alpha, float beta, int c_rank,
                      const int64_t *c_dims)
{
    int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N}, yd[2] = {M, N};
    float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
    int64_t cn = c_rank >= 0 ? ref_dims_prod(c_dims, 0, c_rank) : 0;
    float *cv = malloc(sizeof(float) * (size_t)(cn + 1)), *want = malloc(sizeof(float) * (size_t)(M * N + 1));
    for (int64_t i = 0; i < M * K; i++)
        a[i] = frand();
    for (int64_t i = 0; i < K * N; i++)
        b[i] = frand();
    for (int64_t i = 0; i < cn; i++)
        cv[i] = frand();
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(ta ? a[k * M + i] : a[i * K + k]) * (tb ? b[j * K + k] : b[k * N + j]);
            double cval = 0;
            if (c_rank >= 0) {
                int64_t ci = c_rank == 2 && c_dims[0] != 1 ? i : 0;
                int64_t cj = c_rank >= 1 && c_dims[c_rank - 1] != 1 ? j : 0;
                cval = cv[ci * (c_rank >= 1 ? c_dims[c_rank - 1] : 1) + cj];
            }
            want[i * N + j] = (float)(alpha * s + beta * cval);
        }
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "Gemm", c_rank >= 0 ? 3 : 2, 1);
    if (ta)
        oh_attr_int(m, nd, "transA", 1);
    if (tb)
        oh_attr_int(m, nd, "transB", 1);
    if (alpha != 1.0f)
        oh_attr_float(m, nd, "alpha", alpha);
    if (beta != 1.0f)
        oh_attr_float(m, nd, "beta", beta);
    ref_tensor A = oh_tensor(REF_DT_FLOAT, 2, ad, a), B = oh_tensor(REF_DT_FLOAT, 2, bd, b);
    int64_t no_dims[1] = {1};
    ref_tensor C = oh_tensor(REF_DT_FLOAT, c_rank > 0 ? c_rank : 0, c_rank > 0 ? c_dims : no_dims, cv);
    const ref_tensor *in[3] = {&A, &B, c_rank >= 0 ? &C : NULL};
    const unsigned masks[] = {2 | 4, 0, 1, 1 | 4};
    char name[96];
    snprintf(name, sizeof name, "Gemm %lldx%lldx%lld ta=%d tb=%d C rank %d", (long long)M, (long long)N,
             (long long)K, ta, tb, c_rank);
    check_runs(name, nd, c_rank >= 0 ? 3 : 2, in, masks, 4, 2, yd, want, 2e-5 * (double)(K + 1));
    ref_model_free(m);
    free(a);
    free(b);
    free(cv);
    free(want);
}

static void gemm_tests(void)
{
    int64_t cmn[2] = {37, 29}, cn[1] = {29}, c1n[2] = {1, 29}, cm1[2] = {37, 1}, c1[1] = {1};
    for (int t = 0; t < 4; t++)
        gemm_case(37, 29, 41, t & 1, t & 2, 1.0f, 1.0f, -1, NULL);
    gemm_case(37, 29, 300, true, true, 0.5f, 2.0f, 2, cmn);
    gemm_case(37, 29, 13, false, true, 1.0f, 1.0f, 1, cn);
    gemm_case(37, 29, 13, false, false, -1.0f, 0.25f, 2, c1n);
    gemm_case(37, 29, 13, true, false, 1.0f, 1.0f, 2, cm1);
    gemm_case(37, 29, 13, false, false, 1.0f, 3.0f, 1, c1);
    gemm_case(37, 29, 13, false, false, 1.0f, 0.5f, 0, c1);
    gemm_case(37, 29, 13, false, false, 2.0f, 0.0f, 2, cmn);
    gemm_case(1, 1000, 512, false, true, 1.0f, 1.0f, 1, (int64_t[]){1000});
    gemm_case(130, 70, 260, false, true, 1.0f, 1.0f, 1, (int64_t[]){70});
    gemm_case(150, 120, 300, true, false, 1.0f, 1.0f, 1, (int64_t[]){120}); /* threaded */
    gemm_case(5, 3, 1, false, false, 1.0f, 1.0f, -1, NULL);

    /* hand-computed: [[1,2],[3,4]] x [[5,6],[7,8]] * 2 + [10, 20] */
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, cv[2] = {10, 20}, want[4] = {48, 64, 96, 120};
    int64_t d2[2] = {2, 2}, d1[1] = {2};
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "Gemm", 3, 1);
    oh_attr_float(m, nd, "alpha", 2.0f);
    ref_tensor A = oh_tensor(REF_DT_FLOAT, 2, d2, a), B = oh_tensor(REF_DT_FLOAT, 2, d2, b);
    ref_tensor C = oh_tensor(REF_DT_FLOAT, 1, d1, cv);
    const ref_tensor *in[3] = {&A, &B, &C};
    check_runs("Gemm hand", nd, 3, in, (const unsigned[]){2, 0}, 2, 2, d2, want, -1);

    /* shape errors */
    ref_error e = {0};
    ref_tensor out;
    int64_t d23[2] = {2, 3}, d3[1] = {3};
    ref_tensor B23 = oh_tensor(REF_DT_FLOAT, 2, d23, b), C3 = oh_tensor(REF_DT_FLOAT, 1, d3, cv);
    const ref_tensor *bad_k[3] = {&B23, &B23, NULL}, *bad_c[3] = {&A, &B, &C3};
    CHECK(oh_run(nd, 17, 2, bad_k, 1, &out, 0, 1, &e) == REF_E_SHAPE);
    CHECK(strstr(e.msg, "op(A)") != NULL);
    CHECK(oh_run(nd, 17, 3, bad_c, 1, &out, 0, 1, &e) == REF_E_SHAPE);
    ref_tensor Ai = oh_tensor(REF_DT_INT32, 2, d2, a);
    const ref_tensor *bad_t[3] = {&Ai, &B, NULL};
    CHECK(oh_run(nd, 17, 2, bad_t, 1, &out, 0, 1, &e) == REF_E_UNSUPPORTED);
    ref_model_free(m);
}

/* ---- MatMul ---- */

/* numpy matmul of float a (ra, ad) and b (rb, bd) in double; result dims in yd/yr. */
static float *naive_matmul(int ra, const int64_t *ad, const float *a, int rb, const int64_t *bd, const float *b,
                           int *yr, int64_t *yd)
{
    int64_t M = ra == 1 ? 1 : ad[ra - 2], K = ad[ra - 1], N = rb == 1 ? 1 : bd[rb - 1];
    int ab = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0, br = ab > bb ? ab : bb;
    int64_t bdims[8], nb = 1;
    for (int i = 0; i < br; i++) {
        int64_t da = i - (br - ab) >= 0 ? ad[i - (br - ab)] : 1, db = i - (br - bb) >= 0 ? bd[i - (br - bb)] : 1;
        bdims[i] = da == 1 ? db : da;
        yd[i] = bdims[i];
        nb *= bdims[i];
    }
    *yr = br;
    if (ra > 1)
        yd[(*yr)++] = M;
    if (rb > 1)
        yd[(*yr)++] = N;
    float *y = malloc(sizeof(float) * (size_t)(nb * M * N + 1));
    for (int64_t o = 0; o < nb; o++) {
        int64_t rem = o, aoff = 0, boff = 0, amul = 1, bmul = 1;
        for (int i = br - 1; i >= 0; i--) {
            int64_t idx = rem % bdims[i];
            rem /= bdims[i];
            int64_t da = i - (br - ab) >= 0 ? ad[i - (br - ab)] : 1, db = i - (br - bb) >= 0 ? bd[i - (br - bb)] : 1;
            aoff += (da == 1 ? 0 : idx) * amul;
            boff += (db == 1 ? 0 : idx) * bmul;
            amul *= da;
            bmul *= db;
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)a[aoff * M * K + i * K + k] * b[boff * K * N + k * N + j];
                y[o * M * N + i * N + j] = (float)s;
            }
    }
    return y;
}

static void matmul_case(const char *name, int ra, const int64_t *ad, int rb, const int64_t *bd)
{
    int64_t na = ref_dims_prod(ad, 0, ra), nbv = ref_dims_prod(bd, 0, rb);
    float *a = malloc(sizeof(float) * (size_t)(na + 1)), *b = malloc(sizeof(float) * (size_t)(nbv + 1));
    for (int64_t i = 0; i < na; i++)
        a[i] = frand();
    for (int64_t i = 0; i < nbv; i++)
        b[i] = frand();
    int yr;
    int64_t yd[8];
    float *want = naive_matmul(ra, ad, a, rb, bd, b, &yr, yd);
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "MatMul", 2, 1);
    ref_tensor A = oh_tensor(REF_DT_FLOAT, ra, ad, a), B = oh_tensor(REF_DT_FLOAT, rb, bd, b);
    const ref_tensor *in[2] = {&A, &B};
    check_runs(name, nd, 2, in, (const unsigned[]){2, 0}, 2, yr, yd, want, 2e-5 * (double)(ad[ra - 1] + 1));
    ref_model_free(m);
    free(a);
    free(b);
    free(want);
}

static void matmul_int_tests(void)
{
    /* int32 wraps: 65536 * 65536 = 2^32 -> 0, plus 3*5 */
    int32_t a[4] = {65536, 3, 1, 2}, b[4] = {65536, 7, 5, 11}, want[4] = {15, 65536 * 7 + 33, 65546, 29};
    int64_t d2[2] = {2, 2};
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "MatMul", 2, 1);
    ref_tensor A = oh_tensor(REF_DT_INT32, 2, d2, a), B = oh_tensor(REF_DT_INT32, 2, d2, b);
    const ref_tensor *in[2] = {&A, &B};
    check_runs("MatMul int32", nd, 2, in, (const unsigned[]){0, 2}, 2, 2, d2, want, -1);
    /* int64, batched [2,1,2] x [2,1] -> [2,1,1] */
    int64_t a6[4] = {1, -2, 3000000000LL, 4}, b6[2] = {5, 6}, w6[2] = {1 * 5 - 2 * 6, 15000000000LL + 24};
    int64_t da[3] = {2, 1, 2}, db[2] = {2, 1}, dy[3] = {2, 1, 1};
    ref_tensor A6 = oh_tensor(REF_DT_INT64, 3, da, a6), B6 = oh_tensor(REF_DT_INT64, 2, db, b6);
    const ref_tensor *in6[2] = {&A6, &B6};
    check_runs("MatMul int64", nd, 2, in6, (const unsigned[]){0}, 1, 3, dy, w6, -1);
    /* double vector . vector -> scalar */
    double av[3] = {1.5, 2, -1}, bv[3] = {2, 0.25, 4}, wv[1] = {-0.5};
    int64_t d3[1] = {3};
    ref_tensor AD = oh_tensor(REF_DT_DOUBLE, 1, d3, av), BD = oh_tensor(REF_DT_DOUBLE, 1, d3, bv);
    const ref_tensor *ind[2] = {&AD, &BD};
    check_runs("MatMul double dot", nd, 2, ind, (const unsigned[]){0}, 1, 0, d3, wv, -1);
    /* errors: K mismatch, batch mismatch, mixed and unsupported types */
    ref_error e = {0};
    ref_tensor out;
    int64_t k3[2] = {3, 2}, b23[3] = {2, 3, 2}, b33[3] = {3, 2, 2};
    ref_tensor K3 = oh_tensor(REF_DT_INT32, 2, k3, a), X23 = oh_tensor(REF_DT_INT64, 3, b23, a6);
    ref_tensor X33 = oh_tensor(REF_DT_INT64, 3, b33, a6), H = oh_tensor(REF_DT_FLOAT16, 2, d2, a);
    const ref_tensor *e1[2] = {&A, &K3}, *e2[2] = {&X23, &X33}, *e3[2] = {&A, &A6}, *e4[2] = {&H, &H};
    CHECK(oh_run(nd, 17, 2, e1, 1, &out, 0, 1, &e) == REF_E_SHAPE);
    CHECK(oh_run(nd, 17, 2, e2, 1, &out, 0, 1, &e) == REF_E_SHAPE);
    CHECK(strstr(e.msg, "broadcast") != NULL);
    CHECK(oh_run(nd, 17, 2, e3, 1, &out, 0, 1, &e) == REF_E_SHAPE);
    CHECK(oh_run(nd, 17, 2, e4, 1, &out, 0, 1, &e) == REF_E_UNSUPPORTED);
    ref_model_free(m);
}

static void matmul_tests(void)
{
    matmul_case("2d", 2, (int64_t[]){13, 17}, 2, (int64_t[]){17, 19});
    matmul_case("vec x mat", 1, (int64_t[]){17}, 2, (int64_t[]){17, 19});
    matmul_case("mat x vec", 2, (int64_t[]){13, 17}, 1, (int64_t[]){17});
    matmul_case("vec x vec", 1, (int64_t[]){300}, 1, (int64_t[]){300});
    matmul_case("vec x batch", 1, (int64_t[]){5}, 3, (int64_t[]){3, 5, 4});
    matmul_case("batch x vec", 3, (int64_t[]){3, 4, 5}, 1, (int64_t[]){5});
    matmul_case("3d x 3d", 3, (int64_t[]){4, 7, 9}, 3, (int64_t[]){4, 9, 6});
    matmul_case("3d x 2d flatten", 3, (int64_t[]){3, 50, 70}, 2, (int64_t[]){70, 33});
    matmul_case("broadcast 4d x 3d", 4, (int64_t[]){2, 1, 5, 8}, 3, (int64_t[]){3, 8, 6});
    matmul_case("broadcast b over a", 2, (int64_t[]){6, 8}, 4, (int64_t[]){2, 3, 8, 5});
    matmul_case("broadcast 1s", 4, (int64_t[]){1, 3, 5, 8}, 4, (int64_t[]){2, 1, 8, 6});
    matmul_case("big batch small", 3, (int64_t[]){16, 20, 24}, 3, (int64_t[]){16, 24, 28});
    /* large enough to be split across threads: over the batch, within one product, flattened */
    matmul_case("threaded batch", 3, (int64_t[]){16, 64, 96}, 3, (int64_t[]){16, 96, 80});
    matmul_case("threaded 2d", 2, (int64_t[]){160, 400}, 2, (int64_t[]){400, 90});
    matmul_case("linear batch", 3, (int64_t[]){2, 96, 256}, 2, (int64_t[]){256, 100});
    matmul_case("gemv", 2, (int64_t[]){1, 1100}, 2, (int64_t[]){1100, 4000});
    matmul_case("empty batch", 3, (int64_t[]){0, 3, 4}, 2, (int64_t[]){4, 5});
    matmul_case("k zero", 2, (int64_t[]){3, 0}, 2, (int64_t[]){0, 5});
}

int main(void)
{
    gemm_tests();
    matmul_tests();
    matmul_int_tests();
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
