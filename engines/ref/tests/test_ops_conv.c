/* test_ops_conv.c: Conv and ConvTranspose against naive direct loops written here (1-D/2-D/3-D, groups,
 * dilations, strides, every auto_pad, depthwise, 1x1), pre-packed vs run-time packed and 1 vs 2 threads.
 * It must never compare the engine with itself alone: every case has an independent reference. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "ops/conv_ops.h"
#include "ops/sgemm.h"
#include "op_harness.h"
#include "tensor.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

typedef struct cv_case {
    const char *name;
    int nsp;
    int64_t n, cin, cout, group;
    int64_t in[3], k[3], stride[3], dil[3];
    int64_t pads[6];      /* explicit pads the naive reference uses: begins then ends */
    const char *auto_pad; /* given to the op instead of pads when non-NULL */
    bool bias;
    int64_t opad[3];      /* ConvTranspose output_padding */
    int64_t oshape[3];    /* ConvTranspose output_shape attribute when oshape[0] > 0 */
} cv_case;

/* ---- naive references over lifted 3-D geometry (index d of 3 for spatial dim i of nsp) ---- */

typedef struct lifted {
    int64_t in[3], k[3], s[3], d[3], lo[3], out[3];
} lifted;

static void lift(const cv_case *t, bool transpose, lifted *L)
{
    for (int d = 0; d < 3; d++) {
        L->in[d] = L->k[d] = L->s[d] = L->d[d] = L->out[d] = 1;
        L->lo[d] = 0;
    }
    for (int i = 0; i < t->nsp; i++) {
        int d = 3 - t->nsp + i;
        L->in[d] = t->in[i];
        L->k[d] = t->k[i];
        L->s[d] = t->stride[i] ? t->stride[i] : 1;
        L->d[d] = t->dil[i] ? t->dil[i] : 1;
        L->lo[d] = t->pads[i];
        int64_t span = (L->k[d] - 1) * L->d[d] + 1, hi = t->pads[i + t->nsp];
        L->out[d] = transpose ? (L->in[d] - 1) * L->s[d] + t->opad[i] + span - L->lo[d] - hi
                              : (L->in[d] + L->lo[d] + hi - span) / L->s[d] + 1;
    }
}

static int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

static void naive_conv(const cv_case *t, const lifted *L, const float *x, const float *w, const float *b,
                       float *y)
{
    int64_t cig = t->cin / t->group, cog = t->cout / t->group, isz = prod3(L->in), osz = prod3(L->out);
    int64_t ksz = prod3(L->k);
    for (int64_t n = 0; n < t->n; n++)
        for (int64_t m = 0; m < t->cout; m++)
            for (int64_t o = 0; o < osz; o++) {
                int64_t oc[3] = {o / (L->out[1] * L->out[2]), o / L->out[2] % L->out[1], o % L->out[2]};
                double acc = b ? b[m] : 0.0;
                for (int64_t ci = 0; ci < cig; ci++)
                    for (int64_t kq = 0; kq < ksz; kq++) {
                        int64_t kc[3] = {kq / (L->k[1] * L->k[2]), kq / L->k[2] % L->k[1], kq % L->k[2]};
                        int64_t ic[3];
                        bool inside = true;
                        for (int d = 0; d < 3; d++) {
                            ic[d] = oc[d] * L->s[d] - L->lo[d] + kc[d] * L->d[d];
                            inside = inside && ic[d] >= 0 && ic[d] < L->in[d];
                        }
                        if (!inside)
                            continue;
                        int64_t c = (m / cog) * cig + ci;
                        acc += (double)x[(n * t->cin + c) * isz + (ic[0] * L->in[1] + ic[1]) * L->in[2] + ic[2]] *
                               w[(m * cig + ci) * ksz + kq];
                    }
                y[(n * t->cout + m) * osz + o] = (float)acc;
            }
}

static void naive_convt(const cv_case *t, const lifted *L, const float *x, const float *w, const float *b,
                        float *y)
{
    int64_t cig = t->cin / t->group, cog = t->cout / t->group, isz = prod3(L->in), osz = prod3(L->out);
    int64_t ksz = prod3(L->k);
    double *acc = calloc((size_t)(t->n * t->cout * osz), sizeof(double));
    for (int64_t n = 0; n < t->n; n++)
        for (int64_t c = 0; c < t->cin; c++)
            for (int64_t i = 0; i < isz; i++) {
                int64_t ic[3] = {i / (L->in[1] * L->in[2]), i / L->in[2] % L->in[1], i % L->in[2]};
                for (int64_t mg = 0; mg < cog; mg++)
                    for (int64_t kq = 0; kq < ksz; kq++) {
                        int64_t kc[3] = {kq / (L->k[1] * L->k[2]), kq / L->k[2] % L->k[1], kq % L->k[2]};
                        int64_t oc[3];
                        bool inside = true;
                        for (int d = 0; d < 3; d++) {
                            oc[d] = ic[d] * L->s[d] - L->lo[d] + kc[d] * L->d[d];
                            inside = inside && oc[d] >= 0 && oc[d] < L->out[d];
                        }
                        if (!inside)
                            continue;
                        int64_t m = (c / cig) * cog + mg;
                        acc[(n * t->cout + m) * osz + (oc[0] * L->out[1] + oc[1]) * L->out[2] + oc[2]] +=
                            (double)x[(n * t->cin + c) * isz + i] * w[(c * cog + mg) * ksz + kq];
                    }
            }
    for (int64_t n = 0; n < t->n; n++)
        for (int64_t m = 0; m < t->cout; m++)
            for (int64_t o = 0; o < osz; o++)
                y[(n * t->cout + m) * osz + o] = (float)(acc[(n * t->cout + m) * osz + o] + (b ? b[m] : 0.0));
    free(acc);
}

/* ---- running the op ---- */

static ref_node *make_node(ref_model *m, const cv_case *t, bool transpose)
{
    ref_node *nd = oh_node(m, transpose ? "ConvTranspose" : "Conv", t->bias ? 3 : 2, 1);
    int64_t ones[3] = {1, 1, 1};
    oh_attr_ints(m, nd, "kernel_shape", (size_t)t->nsp, t->k);
    oh_attr_ints(m, nd, "strides", (size_t)t->nsp, t->stride[0] ? t->stride : ones);
    oh_attr_ints(m, nd, "dilations", (size_t)t->nsp, t->dil[0] ? t->dil : ones);
    if (t->group != 1)
        oh_attr_int(m, nd, "group", t->group);
    if (t->auto_pad)
        oh_attr_str(m, nd, "auto_pad", t->auto_pad);
    else if (!t->oshape[0])
        oh_attr_ints(m, nd, "pads", 2 * (size_t)t->nsp, t->pads);
    if (transpose && (t->opad[0] || t->opad[1] || t->opad[2]))
        oh_attr_ints(m, nd, "output_padding", (size_t)t->nsp, t->opad);
    if (t->oshape[0])
        oh_attr_ints(m, nd, "output_shape", (size_t)t->nsp, t->oshape);
    return nd;
}

static void run_case(const cv_case *t, bool transpose)
{
    lifted L;
    lift(t, transpose, &L);
    int64_t xd[5] = {t->n, t->cin}, wd[5], yd[5] = {t->n, t->cout}, bd[1] = {t->cout};
    wd[0] = transpose ? t->cin : t->cout;
    wd[1] = transpose ? t->cout / t->group : t->cin / t->group;
    for (int i = 0; i < t->nsp; i++) {
        xd[2 + i] = t->in[i];
        wd[2 + i] = t->k[i];
        yd[2 + i] = L.out[3 - t->nsp + i];
    }
    int rank = t->nsp + 2;
    size_t xn = (size_t)(t->n * t->cin * prod3(L.in)), wn = (size_t)(wd[0] * wd[1] * prod3(L.k));
    size_t yn = (size_t)(t->n * t->cout * prod3(L.out));
    float *x = malloc(xn * 4), *w = malloc(wn * 4), *b = malloc((size_t)t->cout * 4), *want = malloc(yn * 4);
    for (size_t i = 0; i < xn; i++)
        x[i] = frand();
    for (size_t i = 0; i < wn; i++)
        w[i] = frand();
    for (int64_t i = 0; i < t->cout; i++)
        b[i] = frand();
    (transpose ? naive_convt : naive_conv)(t, &L, x, w, t->bias ? b : NULL, want);

    ref_model *m = ref_model_new();
    ref_node *nd = make_node(m, t, transpose);
    ref_tensor X = oh_tensor(REF_DT_FLOAT, rank, xd, x), W = oh_tensor(REF_DT_FLOAT, rank, wd, w);
    ref_tensor B = oh_tensor(REF_DT_FLOAT, 1, bd, b);
    const ref_tensor *in[3] = {&X, &W, t->bias ? &B : NULL};
    ref_tensor ref_out, out;
    ref_error e = {0}, *err = &e;
    /* run 4 uses the portable kernels: near the reference, and the very same bits for depthwise convs
     * (their two builds add in the same order); run 5 takes im2col where the direct path would apply (the same bits) */
    const struct { unsigned mask; int threads; } runs[] = {{6, 1}, {0, 1}, {6, 2}, {0, 2}, {6, 1}, {6, 2}};
    bool dw = !transpose && t->group > 1 && t->group == t->cin && wd[1] == 1 && t->k[t->nsp - 1] <= 32;
    for (size_t r = 0; r < 6; r++) {
        ref_conv_force_portable(r == 4);
        ref_sgemm_force_portable(r == 4);
        ref_conv_force_im2col(r == 5);
        int rc = oh_run(nd, 17, t->bias ? 3 : 2, in, 1, r ? &out : &ref_out, runs[r].mask, runs[r].threads, err);
        CHECK_OK(rc, err);
        if (rc) {
            fprintf(stderr, "  case %s%s\n", transpose ? "T " : "", t->name);
            continue;
        }
        ref_tensor *o = r ? &out : &ref_out;
        CHECK(o->rank == rank && !memcmp(o->dims, yd, sizeof(int64_t) * (size_t)rank));
        if (r == 0) {
            int bad = 0;
            for (size_t i = 0; i < yn; i++)
                if (!(fabsf(((float *)o->data)[i] - want[i]) <= 1e-4f + 1e-4f * fabsf(want[i])) && bad++ < 3)
                    fprintf(stderr, "%s%s: y[%zu] = %g, want %g\n", transpose ? "T " : "", t->name, i,
                            ((float *)o->data)[i], want[i]);
            CHECK(bad == 0);
        } else if (r == 4 && !dw) {
            int bad = 0;
            for (size_t i = 0; i < yn; i++)
                bad += !(fabsf(((float *)o->data)[i] - want[i]) <= 1e-4f + 1e-4f * fabsf(want[i]));
            CHECK(bad == 0);
            if (bad)
                fprintf(stderr, "%s%s: portable kernels differ from the reference\n", transpose ? "T " : "", t->name);
            oh_free_outputs(1, &out);
        } else {
            bool same = !memcmp(out.data, ref_out.data, yn * 4);
            CHECK(same);
            if (!same)
                fprintf(stderr, "%s%s: run %zu differs from the first\n", transpose ? "T " : "", t->name, r);
            oh_free_outputs(1, &out);
        }
    }
    ref_conv_force_portable(false);
    ref_sgemm_force_portable(false);
    ref_conv_force_im2col(false);
    oh_free_outputs(1, &ref_out);
    ref_model_free(m);
    free(x);
    free(w);
    free(b);
    free(want);
}

static const cv_case conv_cases[] = {
    {"2d basic pad1", 2, 1, 1, 1, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, false, {0}, {0}},
    {"1d stride dil bias", 1, 2, 3, 4, 1, {11}, {3}, {2}, {2}, {1, 2}, NULL, true, {0}, {0}},
    {"1d k1", 1, 1, 5, 7, 1, {13}, {1}, {1}, {1}, {0, 0}, NULL, true, {0}, {0}},
    {"2d groups", 2, 1, 4, 6, 2, {7, 9}, {3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, NULL, true, {0}, {0}},
    {"2d batch", 2, 3, 3, 5, 1, {8, 6}, {2, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}, NULL, false, {0}, {0}},
    {"3d", 3, 1, 2, 3, 1, {5, 6, 4}, {2, 3, 2}, {1, 2, 1}, {1, 1, 1}, {1, 0, 1, 0, 1, 1}, NULL, true, {0}, {0}},
    {"3d groups dil", 3, 2, 6, 9, 3, {6, 5, 7}, {2, 2, 3}, {2, 1, 2}, {2, 1, 1}, {0, 1, 1, 1, 0, 2}, NULL, true, {0}, {0}},
    {"same_upper", 2, 1, 3, 4, 1, {5, 6}, {3, 4}, {2, 1}, {1, 1}, {1, 1, 1, 2}, "SAME_UPPER", true, {0}, {0}},
    {"same_lower", 2, 1, 3, 4, 1, {5, 6}, {3, 4}, {2, 1}, {1, 1}, {1, 2, 1, 1}, "SAME_LOWER", true, {0}, {0}},
    {"valid", 2, 1, 3, 4, 1, {7, 6}, {3, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "VALID", false, {0}, {0}},
    {"same 1d dil", 1, 1, 2, 2, 1, {9}, {3}, {1}, {3}, {3, 3}, "SAME_UPPER", false, {0}, {0}},
    {"depthwise 3x3", 2, 1, 8, 8, 8, {10, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise mult2 s2", 2, 2, 4, 8, 4, {9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise dil asym", 2, 1, 3, 3, 3, {8, 8}, {3, 2}, {1, 3}, {2, 1}, {2, 0, 1, 1}, NULL, false, {0}, {0}},
    {"depthwise threaded", 2, 1, 32, 32, 32, {64, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0},
     {0}},
    {"depthwise flat dil pads", 2, 1, 4, 8, 4, {9, 13}, {3, 2}, {1, 1}, {2, 1}, {2, 0, 1, 3}, NULL, true, {0}, {0}},
    {"depthwise tiny plane", 2, 2, 3, 3, 3, {2, 2}, {2, 2}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, true, {0}, {0}},
    {"depthwise rows s(1,2)", 2, 1, 2, 2, 2, {5, 90}, {3, 3}, {1, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise flat s3", 2, 1, 3, 3, 3, {20, 40}, {3, 3}, {3, 3}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise flat s2 dil2", 2, 1, 2, 4, 2, {17, 45}, {3, 3}, {2, 2}, {2, 2}, {2, 1, 2, 3}, NULL, true, {0}, {0}},
    {"depthwise 1d", 1, 1, 5, 5, 5, {20}, {5}, {1}, {1}, {2, 2}, NULL, true, {0}, {0}},
    {"depthwise 3d", 3, 1, 4, 4, 4, {4, 5, 6}, {3, 3, 3}, {1, 1, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise wide s2 (vector path)", 2, 1, 3, 3, 3, {9, 81}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0},
     {0}},
    {"depthwise wide s3 dil2", 2, 1, 2, 4, 2, {7, 120}, {3, 5}, {1, 3}, {1, 2}, {1, 4, 1, 3}, NULL, true, {0},
     {0}},
    /* stride 1 with output rows as wide as the input's: read in place (small planes, rows reached past both ends) */
    {"depthwise same 7x7 mult2", 2, 2, 4, 8, 4, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise same rows apart", 2, 1, 3, 3, 3, {6, 9}, {3, 3}, {1, 1}, {2, 1}, {3, 2, 0, 0}, NULL, true, {0}, {0}},
    {"depthwise same 5x5 wide", 2, 1, 2, 2, 2, {3, 70}, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, false, {0}, {0}},
    /* stride 2 on even-sided planes, output rows half as wide: read from the input's four phase planes */
    {"depthwise phases s2 14x14", 2, 1, 4, 4, 4, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"depthwise phases s2 pads 0 1", 2, 2, 3, 6, 3, {8, 36}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}, NULL, true, {0},
     {0}},
    {"depthwise phases s2 5x3 dil", 2, 1, 2, 2, 2, {12, 40}, {5, 3}, {2, 2}, {2, 1}, {4, 1, 4, 1}, NULL, false, {0},
     {0}},
    {"depthwise wide 1d (GEMM path)", 1, 1, 2, 2, 2, {40}, {35}, {1}, {1}, {3, 3}, NULL, true, {0}, {0}},
    /* the direct path over wide phase rows: tiles whose vectors run across a row end, a wide dilated reach, 1-D */
    {"direct wide rows 3x3", 2, 1, 4, 13, 1, {9, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"direct wide rows s2", 2, 2, 3, 8, 1, {11, 37}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 1}, NULL, true, {0}, {0}},
    {"direct wide rows 3x7 dil", 2, 1, 2, 7, 1, {6, 40}, {3, 7}, {1, 1}, {1, 2}, {1, 6, 1, 6}, NULL, false, {0}, {0}},
    {"direct wide rows 1d", 1, 1, 3, 5, 1, {50}, {5}, {1}, {1}, {2, 2}, NULL, true, {0}, {0}},
    {"1x1", 2, 1, 16, 24, 1, {9, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, true, {0}, {0}},
    {"1x1 groups batch", 2, 2, 8, 12, 4, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, false, {0}, {0}},
    {"1x1 stride2", 2, 1, 6, 5, 1, {9, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, NULL, true, {0}, {0}},
    {"1x1 padded", 2, 1, 3, 4, 1, {4, 4}, {1, 1}, {1, 1}, {1, 1}, {1, 0, 0, 1}, NULL, true, {0}, {0}},
    {"many tiles", 2, 1, 64, 40, 1, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"big k blocks", 2, 1, 70, 13, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {0, 1, 1, 0}, NULL, true, {0}, {0}},
    /* stride 1, not 1x1: the direct path (a padded slab per tile) where the CPU has it */
    {"direct two tiles", 2, 1, 8, 7, 1, {150, 150}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"direct 3d dil pads", 3, 1, 3, 8, 1, {5, 7, 9}, {2, 3, 2}, {1, 1, 1}, {2, 1, 3}, {1, 0, 2, 0, 1, 1}, NULL, true,
     {0}, {0}},
    {"direct groups batch dil", 2, 2, 6, 14, 2, {11, 13}, {3, 3}, {1, 1}, {2, 2}, {2, 1, 0, 2}, NULL, true, {0}, {0}},
    {"direct 1d wide kernel", 1, 1, 3, 5, 1, {70}, {9}, {1}, {1}, {4, 0}, NULL, true, {0}, {0}},
    {"direct deep k", 2, 1, 300, 20, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    /* output rows 64 or 128 wide: a GEMM per output row straight into y (whole-row tiles, stride phases, dilation) */
    {"direct rows 64 wide", 2, 2, 5, 13, 1, {7, 64}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"direct rows s2 dil", 2, 1, 6, 9, 1, {12, 255}, {3, 3}, {2, 2}, {2, 2}, {2, 2, 1, 2}, NULL, false, {0}, {0}},
    {"direct rows many tiles", 2, 1, 40, 20, 1, {40, 128}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0},
     {0}},
    {"direct rows 3d", 3, 1, 3, 7, 1, {3, 4, 64}, {2, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1, 1, 1, 1}, NULL, true,
     {0}, {0}},
    {"kernel larger than padded", 2, 1, 2, 3, 1, {3, 3}, {3, 3}, {3, 3}, {1, 1}, {0, 0, 0, 0}, NULL, true, {0}, {0}},
};

static const cv_case convt_cases[] = {
    {"2d s2 pads opad", 2, 1, 3, 4, 1, {4, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 1}, NULL, true, {1, 0}, {0}},
    {"1d dil", 1, 2, 2, 3, 1, {6}, {3}, {1}, {2}, {0, 1}, NULL, false, {0}, {0}},
    {"3d", 3, 1, 2, 3, 1, {3, 4, 3}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, NULL, true, {0}, {0}},
    {"2d groups", 2, 2, 4, 6, 2, {5, 4}, {2, 3}, {1, 2}, {1, 1}, {0, 0, 1, 1}, NULL, true, {0}, {0}},
    /* output_shape [10, 8] from in 3x3, k 3, strides (3, 2): natural 9x7, total padding -1 -> the extra
     * row and column go at the end (as in ONNX's test_convtranspose_output_shape) */
    {"output_shape", 2, 1, 1, 2, 1, {3, 3}, {3, 3}, {3, 2}, {1, 1}, {0, 0, -1, -1}, NULL, false, {0, 0},
     {10, 8}},
    {"output_shape shrink", 2, 1, 2, 2, 1, {3, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 0, 1}, NULL, true, {0, 0},
     {6, 7}},
    /* SAME_UPPER: output = in*stride = 6; total padding 1 goes to the end */
    {"same_upper", 2, 1, 1, 2, 1, {3, 3}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 1, 1}, "SAME_UPPER", false, {0}, {0}},
    {"same_lower", 2, 1, 1, 2, 1, {3, 3}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 0, 0}, "SAME_LOWER", true, {0}, {0}},
    {"bigger", 2, 1, 32, 16, 1, {12, 12}, {4, 4}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
    {"threaded", 2, 1, 64, 32, 1, {24, 24}, {4, 4}, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, true, {0}, {0}},
};

/* Hand-computed: 5x5 ramp 0..24 with a 3x3 box filter and pad 1; ConvTranspose of a 3x3 ramp, ones. */
static void hand_values(void)
{
    float x[25], w[9], y[25], xt[9], wt[18], yt[50];
    for (int i = 0; i < 25; i++)
        x[i] = (float)i;
    for (int i = 0; i < 9; i++)
        w[i] = 1.0f, xt[i] = (float)i;
    for (int i = 0; i < 18; i++)
        wt[i] = 1.0f;
    int64_t xd[4] = {1, 1, 5, 5}, wd[4] = {1, 1, 3, 3}, pads[4] = {1, 1, 1, 1};
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, "Conv", 2, 1);
    oh_attr_ints(m, nd, "pads", 4, pads);
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 4, xd, x), W = oh_tensor(REF_DT_FLOAT, 4, wd, w), out;
    const ref_tensor *in[2] = {&X, &W};
    ref_error e = {0}, *err = &e;
    CHECK_OK(oh_run(nd, 11, 2, in, 1, &out, 2, 1, err), err);
    memcpy(y, out.data, sizeof y);
    oh_free_outputs(1, &out);
    CHECK(y[0] == 12.0f && y[6] == 54.0f && y[24] == 84.0f);
    ref_node *nt = oh_node(m, "ConvTranspose", 2, 1);
    int64_t xtd[4] = {1, 1, 3, 3}, wtd[4] = {1, 2, 3, 3};
    ref_tensor XT = oh_tensor(REF_DT_FLOAT, 4, xtd, xt), WT = oh_tensor(REF_DT_FLOAT, 4, wtd, wt);
    const ref_tensor *int_[2] = {&XT, &WT};
    CHECK_OK(oh_run(nt, 11, 2, int_, 1, &out, 2, 1, err), err);
    CHECK(out.dims[1] == 2 && out.dims[2] == 5 && out.dims[3] == 5);
    memcpy(yt, out.data, sizeof yt);
    oh_free_outputs(1, &out);
    CHECK(yt[0] == 0.0f && yt[6] == 8.0f && yt[12] == 36.0f && yt[25 + 12] == 36.0f && yt[24] == 8.0f);
    ref_model_free(m);
}

static int infer_status(const char *op, int rank_x, const int64_t *xd, const int64_t *wd, int dtype,
                        const char *attr, const char *sval, int64_t ival, char *msg)
{
    ref_model *m = ref_model_new();
    ref_node *nd = oh_node(m, op, 2, 1);
    if (attr && sval)
        oh_attr_str(m, nd, attr, sval);
    else if (attr)
        oh_attr_int(m, nd, attr, ival);
    float buf[4096] = {0};
    ref_tensor X = oh_tensor(dtype, rank_x, xd, buf), W = oh_tensor(dtype, rank_x, wd, buf), out;
    const ref_tensor *in[2] = {&X, &W};
    ref_error e = {0};
    int rc = oh_run(nd, 17, 2, in, 1, &out, 2, 1, &e);
    strcpy(msg, e.msg);
    oh_free_outputs(1, &out);
    ref_model_free(m);
    return rc;
}

static void errors(void)
{
    char msg[512];
    int64_t x[6] = {1, 3, 5, 5, 2, 2}, w[6] = {4, 3, 3, 3, 1, 1}, w2[6] = {4, 2, 3, 3, 1, 1};
    CHECK(infer_status("Conv", 4, x, w2, REF_DT_FLOAT, NULL, NULL, 0, msg) == REF_E_SHAPE);
    CHECK(strstr(msg, "channels") != NULL);
    CHECK(infer_status("Conv", 4, x, w, REF_DT_FLOAT, "auto_pad", "SAME", 0, msg) == REF_E_UNSUPPORTED);
    CHECK(infer_status("Conv", 4, x, w, REF_DT_INT32, NULL, NULL, 0, msg) == REF_E_UNSUPPORTED);
    CHECK(infer_status("Conv", 6, x, w, REF_DT_FLOAT, NULL, NULL, 0, msg) == REF_E_UNSUPPORTED);
    CHECK(infer_status("Conv", 4, x, w, REF_DT_FLOAT, "group", NULL, 2, msg) == REF_E_SHAPE);
    int64_t big[4] = {4, 3, 7, 7};
    CHECK(infer_status("Conv", 4, x, big, REF_DT_FLOAT, NULL, NULL, 0, msg) == REF_E_SHAPE);
    CHECK(strstr(msg, "no output") != NULL);
    int64_t wt[4] = {2, 3, 3, 3};
    CHECK(infer_status("ConvTranspose", 4, x, wt, REF_DT_FLOAT, NULL, NULL, 0, msg) == REF_E_SHAPE);
}

int main(void)
{
    hand_values();
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++)
        run_case(&conv_cases[i], false);
    for (size_t i = 0; i < sizeof convt_cases / sizeof convt_cases[0]; i++)
        run_case(&convt_cases[i], true);
    errors();
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
