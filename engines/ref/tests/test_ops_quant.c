/* test_ops_quant.c: ConvInteger, QLinearConv and MatMulInteger through the integer GEMMs, against direct sums
 * written here (uint8 and int8, per-channel zero points, groups, strides, padding, dilation, odd K, a column chunk
 * boundary, 1x1 convs read in place, B zero point per column or one), weights packed per run at 1 thread and at
 * prepare at 2 threads (the VNNI GEMM where the CPU has one); Quantize/DequantizeLinear and DynamicQuantizeLinear
 * against their formulas. It must never compare a kernel with itself. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"
#include "ops/quant.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static int rnd(int lo, int hi)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (int)(rng % (uint64_t)(hi - lo + 1));
}

typedef struct {
    int64_t n, cin, cout, group, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
    bool xs8, ws8, per_channel;
} qcase;

static int ld(const void *p, bool s, int64_t i) { return s ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i]; }

static void run_conv(const qcase *t, bool qlinear)
{
    int64_t oh = (t->h + 2 * t->ph - t->dh * (t->kh - 1) - 1) / t->sh + 1;
    int64_t ow = (t->w + 2 * t->pw - t->dw * (t->kw - 1) - 1) / t->sw + 1;
    int64_t cin_g = t->cin / t->group, cout_g = t->cout / t->group;
    int64_t xd[] = {t->n, t->cin, t->h, t->w}, wd[] = {t->cout, cin_g, t->kh, t->kw}, zd[] = {t->cout};
    int64_t nx = t->n * t->cin * t->h * t->w, nw = t->cout * cin_g * t->kh * t->kw, ny = t->n * t->cout * oh * ow;
    uint8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), wz[64], xz;
    int32_t *bias = malloc((size_t)t->cout * 4);
    float wsc[64];
    for (int64_t i = 0; i < nx; i++)
        x[i] = (uint8_t)rnd(0, 255);
    for (int64_t i = 0; i < nw; i++)
        w[i] = (uint8_t)rnd(0, 255);
    xz = (uint8_t)rnd(0, 255);
    for (int64_t c = 0; c < t->cout; c++) {
        wz[c] = t->per_channel ? (uint8_t)rnd(0, 255) : wz[0];
        if (!t->per_channel && c == 0)
            wz[0] = (uint8_t)rnd(0, 255);
        bias[c] = rnd(-5000, 5000);
        wsc[c] = t->per_channel ? 0.001f * (float)rnd(1, 9) : 0.003f;
    }
    int xt = t->xs8 ? REF_DT_INT8 : REF_DT_UINT8, wt = t->ws8 ? REF_DT_INT8 : REF_DT_UINT8;
    float xscale = 0.02f, yscale = 0.7f;
    uint8_t yz = 100;
    ref_tensor tx = oh_tensor(xt, 4, xd, x), tw = oh_tensor(wt, 4, wd, w), txz = oh_tensor(xt, 0, NULL, &xz);
    ref_tensor twz = oh_tensor(wt, t->per_channel ? 1 : 0, zd, wz), tb = oh_tensor(REF_DT_INT32, 1, zd, bias);
    ref_tensor txs = oh_tensor(REF_DT_FLOAT, 0, NULL, &xscale), tws = oh_tensor(REF_DT_FLOAT, t->per_channel, zd, wsc);
    ref_tensor tys = oh_tensor(REF_DT_FLOAT, 0, NULL, &yscale), tyz = oh_tensor(REF_DT_UINT8, 0, NULL, &yz);
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, qlinear ? "QLinearConv" : "ConvInteger", qlinear ? 9 : 4, 1);
    oh_attr_ints(m, nd, "strides", 2, (const int64_t[]){t->sh, t->sw});
    oh_attr_ints(m, nd, "pads", 4, (const int64_t[]){t->ph, t->pw, t->ph, t->pw});
    oh_attr_ints(m, nd, "dilations", 2, (const int64_t[]){t->dh, t->dw});
    oh_attr_int(m, nd, "group", t->group);
    const ref_tensor *ci[] = {&tx, &tw, &txz, &twz};
    const ref_tensor *qi[] = {&tx, &txs, &txz, &tw, &tws, &twz, &tys, &tyz, &tb};
    ref_tensor out[2];
    ref_error err = {0};
    for (int r = 0; r < 2; r++) {
        /* run 1: W and its zero point constant (packed at prepare), 2 threads */
        unsigned mask = r ? (qlinear ? 1u << 3 | 1u << 5 : 1u << 1 | 1u << 3) : 0;
        CHECK_OK(oh_run(nd, 13, qlinear ? 9 : 4, qlinear ? qi : ci, 1, &out[r], mask, 1 + r, &err), &err);
    }
    int bad = 0, diff_threads = 0;
    for (int64_t b = 0; b < t->n && out[0].data && out[1].data; b++)
        for (int64_t co = 0; co < t->cout; co++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t xo = 0; xo < ow; xo++) {
                    int64_t g = co / cout_g, acc = 0;
                    for (int64_t c = 0; c < cin_g; c++)
                        for (int64_t ky = 0; ky < t->kh; ky++)
                            for (int64_t kx = 0; kx < t->kw; kx++) {
                                int64_t iy = y * t->sh - t->ph + ky * t->dh, ix = xo * t->sw - t->pw + kx * t->dw;
                                if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w)
                                    continue;
                                int xv = ld(x, t->xs8, ((b * t->cin + g * cin_g + c) * t->h + iy) * t->w + ix);
                                int wv = ld(w, t->ws8, ((co * cin_g + c) * t->kh + ky) * t->kw + kx);
                                acc += (int64_t)(xv - ld(&xz, t->xs8, 0)) * (wv - ld(&wz[co], t->ws8, 0));
                            }
                    int64_t at = ((b * t->cout + co) * oh + y) * ow + xo;
                    if (!qlinear) {
                        bad += ((const int32_t *)out[0].data)[at] != acc;
                    } else {
                        double mult = (double)xscale * (double)wsc[t->per_channel ? co : 0] / (double)yscale;
                        int64_t want = ref_quant_saturate((double)(acc + bias[co]) * mult + yz, REF_DT_UINT8);
                        bad += ((const uint8_t *)out[0].data)[at] != want;
                    }
                }
    if (out[0].data && out[1].data)
        diff_threads = memcmp(out[0].data, out[1].data, ref_tensor_nbytes(&out[0])) != 0;
    CHECK(out[0].dims[2] == oh && out[0].dims[3] == ow && ref_tensor_numel(&out[0]) == ny);
    CHECK(bad == 0);
    CHECK(diff_threads == 0);
    oh_free_outputs(1, &out[0]);
    oh_free_outputs(1, &out[1]);
    ref_model_free(m);
    free(x), free(w), free(bias);
}

/* bz_per_col: B's zero point per column (the epilogue's second term on VNNI), else one value. */
static void test_matmul_integer(int64_t M, int64_t K, int64_t N, bool as8, bool bs8, bool bz_per_col)
{
    int64_t ad[] = {M, K}, bd[] = {K, N}, nd_[] = {N};
    uint8_t *a = malloc((size_t)(M * K)), *b = malloc((size_t)(K * N)), az = (uint8_t)rnd(0, 255), bz[512];
    for (int64_t i = 0; i < M * K; i++)
        a[i] = (uint8_t)rnd(0, 255);
    for (int64_t i = 0; i < K * N; i++)
        b[i] = (uint8_t)rnd(0, 255);
    for (int64_t i = 0; i < N; i++)
        bz[i] = (uint8_t)rnd(0, 255);
    int at = as8 ? REF_DT_INT8 : REF_DT_UINT8, bt = bs8 ? REF_DT_INT8 : REF_DT_UINT8;
    ref_tensor ta = oh_tensor(at, 2, ad, a), tb = oh_tensor(bt, 2, bd, b), taz = oh_tensor(at, 0, NULL, &az);
    ref_tensor tbz = bz_per_col ? oh_tensor(bt, 1, nd_, bz) : oh_tensor(bt, 0, NULL, bz);
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "MatMulInteger", 4, 1);
    const ref_tensor *in[] = {&ta, &tb, &taz, &tbz};
    ref_tensor out[2];
    ref_error err = {0};
    for (int r = 0; r < 2; r++)
        CHECK_OK(oh_run(nd, 13, 4, in, 1, &out[r], r ? 1u << 1 | 1u << 3 : 0, 1 + r, &err), &err); /* B packed */
    int bad = 0;
    for (int64_t i = 0; i < M && out[0].data; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (int64_t)(ld(a, as8, i * K + k) - ld(&az, as8, 0)) *
                       (ld(b, bs8, k * N + j) - ld(&bz[bz_per_col ? j : 0], bs8, 0));
            bad += ((const int32_t *)out[0].data)[i * N + j] != acc;
        }
    CHECK(bad == 0);
    CHECK(out[0].data && out[1].data && !memcmp(out[0].data, out[1].data, ref_tensor_nbytes(&out[0])));
    oh_free_outputs(1, &out[0]);
    oh_free_outputs(1, &out[1]);
    ref_model_free(m);
    free(a), free(b);
}

/* DynamicQuantizeLinear over n floats (several chunks when n is large) at 1 and 2 threads against the spec's formula
 * written here: scale = (max(x, 0) - min(x, 0)) / 255, zero point and values rounded half to even. */
static void test_dynamic_quantize(int64_t n, float lo, float hi)
{
    int64_t d[] = {n};
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * (float)rnd(0, 1 << 20) / (float)(1 << 20);
    x[n / 3] = -0.0f;
    ref_tensor tx = oh_tensor(REF_DT_FLOAT, 1, d, x);
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "DynamicQuantizeLinear", 1, 3);
    const ref_tensor *in[] = {&tx};
    float mn = 0, mx = 0;
    for (int64_t i = 0; i < n; i++)
        mn = x[i] < mn ? x[i] : mn, mx = x[i] > mx ? x[i] : mx;
    float scale = (mx - mn) / 255.0f, zf = scale != 0 ? rintf(-mn / scale) : 0;
    uint8_t zp = (uint8_t)(zf < 0 ? 0 : zf > 255 ? 255 : zf);
    for (int threads = 1; threads <= 2; threads++) {
        ref_tensor out[3];
        ref_error err = {0};
        CHECK_OK(oh_run(nd, 13, 1, in, 3, out, 0, threads, &err), &err);
        int64_t bad = 0;
        for (int64_t i = 0; i < n && out[0].data; i++) {
            float q = scale != 0 ? rintf(x[i] / scale) + zp : zp;
            bad += ((const uint8_t *)out[0].data)[i] != (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
        }
        CHECK(bad == 0);
        CHECK(out[1].data && *(const float *)out[1].data == scale);
        CHECK(out[2].data && *(const uint8_t *)out[2].data == zp);
        oh_free_outputs(3, out);
    }
    ref_model_free(m);
    free(x);
}

/* QuantizeLinear then DequantizeLinear of a [2, C, inner] float tensor, per tensor (C = 0) or per channel on axis 1,
 * int8 or uint8, on threads threads, against the formulas in double written here; values include exact ties
 * (k + 0.5 steps). A large inner crosses the kernels' chunks inside a channel. */
static void test_qdq(int64_t C, bool s8, int64_t inner, int threads)
{
    int64_t ch = C ? C : 3, n = 2 * ch * inner, d[] = {2, ch, inner}, sd[] = {C};
    float *x = malloc((size_t)n * sizeof *x), sc[8];
    uint8_t zp[8];
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)rnd(-800, 800) * 0.25f;
    for (int k = 0; k < 8; k++)
        sc[k] = 0.5f * (float)(k + 1), zp[k] = (uint8_t)(s8 ? rnd(-20, 20) : rnd(0, 255));
    int zt = s8 ? REF_DT_INT8 : REF_DT_UINT8;
    ref_tensor tx = oh_tensor(REF_DT_FLOAT, 3, d, x), ts = oh_tensor(REF_DT_FLOAT, C ? 1 : 0, sd, sc);
    ref_tensor tz = oh_tensor(zt, C ? 1 : 0, sd, zp);
    ref_model *m = ref_model_new();
    ref_node *q = oh_node(m, "QuantizeLinear", 3, 1), *dq = oh_node(m, "DequantizeLinear", 3, 1);
    const ref_tensor *qin[] = {&tx, &ts, &tz};
    ref_tensor yq, yd;
    ref_error err = {0};
    CHECK_OK(oh_run(q, 13, 3, qin, 1, &yq, 0, threads, &err), &err);
    const ref_tensor *din[] = {&yq, &ts, &tz};
    CHECK_OK(oh_run(dq, 13, 3, din, 1, &yd, 0, threads, &err), &err);
    int64_t bad_q = 0, bad_d = 0;
    for (int64_t i = 0; i < n && yq.data && yd.data; i++) {
        int64_t a = C ? i / inner % C : 0;
        int z = s8 ? (int8_t)zp[a] : zp[a];
        double r = rint((double)(x[i] / sc[a])) + z, lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
        int want = (int)(r < lo ? lo : r > hi ? hi : r);
        int got = s8 ? ((const int8_t *)yq.data)[i] : ((const uint8_t *)yq.data)[i];
        bad_q += got != want;
        bad_d += ((const float *)yd.data)[i] != (float)((double)(got - z) * sc[a]);
    }
    CHECK(bad_q == 0);
    CHECK(bad_d == 0);
    oh_free_outputs(1, &yq);
    oh_free_outputs(1, &yd);
    ref_model_free(m);
    free(x);
}

int main(void)
{
    static const qcase cases[] = {
        {1, 3, 8, 1, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, false, false, false},   /* odd K (27) */
        {2, 8, 12, 2, 10, 10, 3, 3, 2, 2, 1, 1, 1, 1, false, true, true},   /* groups, stride 2, int8 w */
        {1, 6, 6, 6, 9, 9, 3, 3, 1, 1, 2, 2, 2, 2, true, true, true},       /* depthwise, dilation, int8 x */
        {1, 16, 20, 1, 7, 5, 1, 1, 1, 1, 0, 0, 1, 1, false, false, true},   /* 1x1, rows not a multiple of 4 */
        {1, 64, 32, 1, 70, 70, 3, 3, 1, 1, 1, 1, 1, 1, false, true, false}, /* columns past one chunk (K 576) */
        {2, 24, 20, 1, 12, 12, 1, 1, 1, 1, 0, 0, 1, 1, false, false, true}, /* 1x1 read in place, whole panels */
        {1, 9, 10, 1, 10, 15, 1, 1, 1, 1, 0, 0, 1, 1, false, true, false}, /* 1x1 in place, a partial last panel */
        {1, 5, 18, 1, 9, 8, 3, 3, 2, 1, 1, 1, 1, 1, true, false, true},    /* int8 x, padding, narrow: offset table */
        {1, 4, 16, 1, 6, 40, 3, 3, 1, 1, 1, 1, 1, 1, true, true, false},   /* int8 x, wide rows, columns built first */
        {1, 4, 8, 1, 6, 40, 3, 3, 1, 2, 1, 2, 1, 1, true, false, true},    /* int8 x, wide rows, stride 2, fused */
        {1, 3, 6, 1, 11, 12, 3, 3, 1, 1, 2, 2, 2, 2, false, false, true},  /* dilation 2 from padded planes */
        {1, 3, 6, 1, 11, 70, 3, 3, 2, 1, 2, 3, 2, 3, false, true, false},  /* dilation, wide rows */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_conv(&cases[i], false);
        run_conv(&cases[i], true);
    }
    for (int per_col = 0; per_col < 2; per_col++) {
        test_matmul_integer(5, 33, 40, false, true, per_col);
        test_matmul_integer(64, 256, 300, false, false, per_col);
        test_matmul_integer(1, 7, 3, true, true, per_col);
        test_matmul_integer(9, 130, 17, true, false, per_col);
    }
    for (int s8 = 0; s8 < 2; s8++) {
        test_qdq(0, s8, 37, 1);
        test_qdq(5, s8, 37, 1);
        test_qdq(0, s8, 40000, 2);
        test_qdq(3, s8, 40000, 2);
    }
    test_dynamic_quantize(7, -1.0f, 3.0f);
    test_dynamic_quantize(100003, -2.5f, 0.75f); /* chunks, a tail past the vector loop */
    test_dynamic_quantize(40000, 0.5f, 9.0f);    /* all positive: min is the 0 the range includes */
    return check_summary();
}
