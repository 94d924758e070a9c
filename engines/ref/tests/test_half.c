/* test_half.c: float16: the F16C and portable conversions give the same bits for every half and for a million
 * floats; generated float16 models (every family) run as float32, match the float model they were rounded from,
 * and give exactly the bits of that float model with its weights rounded; compiling one fails cleanly wherever an
 * allocation fails; their outputs do not depend on the thread count and bound buffers get the same float16; float16
 * weights at odd file offsets stay mapped and give the bits of aligned copies, and a float16 constant at an odd
 * address that a kernel reads as float16 is aligned first (checked by UBSan). It must never compare
 * against values this file computes with the code under test alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/cast_half.h"
#include "check.h"
#include "compile/compiled.h"
#include "gen/gen.h"
#include "graph_builder.h"
#include "model.h"
#include "ops/half_convert.h"

static void test_conversions(void)
{
    bool fast = ref_half_fast();
    enum { NH = 65536, NF = 1 << 20 };
    uint16_t *h = malloc(NH * sizeof *h), *h2 = malloc(NF * sizeof *h2), *h3 = malloc(NF * sizeof *h3);
    float *f = malloc(NF * sizeof *f), *g = malloc(NF * sizeof *g), *r = malloc(NF * sizeof *r);
    CHECK(h && h2 && h3 && f && g && r);
    if (!h || !h2 || !h3 || !f || !g || !r)
        goto out;
    for (int i = 0; i < NH; i++)
        h[i] = (uint16_t)i;
    ref_half_to_float_n(h, f, NH); /* every half: the fast path against the scalar one, bit for bit */
    int bad = 0;
    for (int i = 0; i < NH; i++)
        bad += ref_f32_bits(f[i]) != ref_f32_bits(ref_f16_to_f32(h[i]));
    CHECK(bad == 0);
    ref_float_to_half_n(f, h2, NH); /* and back: every half survives, NaNs as NaNs */
    bad = 0;
    for (int i = 0; i < NH; i++)
        bad += isnan(f[i]) ? (h2[i] & 0x7c00) != 0x7c00 || !(h2[i] & 0x3ff) : h2[i] != h[i];
    CHECK(bad == 0);
    /* A million float bit patterns (every exponent, ties among them) and the edges of the half range. */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < NF; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint32_t bits = (uint32_t)s;
        if (i % 4 == 1)
            bits &= 0xffffe000u | 0x1000u; /* exactly halfway between two halves */
        f[i] = ref_f32_from_bits(bits);
    }
    static const float edge[] = {65504.0f, 65519.99f, 65520.0f, 6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f,
                                 2.9802326e-08f, -0.0f, INFINITY, -INFINITY};
    memcpy(f, edge, sizeof edge);
    ref_half_force_portable(true);
    ref_float_to_half_n(f, h3, NF);
    memcpy(g, f, NF * sizeof *f);
    ref_float_round_half_n(g, NF);
    ref_half_force_portable(false);
    ref_float_to_half_n(f, h2, NF);
    memcpy(r, f, NF * sizeof *f);
    ref_float_round_half_n(r, NF);
    bad = 0;
    for (int i = 0; i < NF; i++)
        bad += h2[i] != h3[i] || ref_f32_bits(r[i]) != ref_f32_bits(g[i]) ||
               ref_f32_bits(g[i]) != ref_f32_bits(ref_f16_to_f32(h3[i]));
    CHECK(bad == 0);
    CHECK(h3[0] == 0x7bff && h3[1] == 0x7bff && h3[2] == 0x7c00 && h3[3] == 0x0400 && h3[4] == 0x0001);
    CHECK(h3[5] == 0x0000 && h3[6] == 0x0001 && h3[7] == 0x8000 && h3[8] == 0x7c00 && h3[9] == 0xfc00);
    printf("conversions: %s path checked against the portable one\n", fast ? "F16C" : "portable (no F16C here)");
out:
    free(h), free(h2), free(h3), free(f), free(g), free(r);
}

static ref_gen_options small(const char *arch, const char *dtype)
{
    ref_gen_options o;
    ref_gen_options_init(&o);
    o.arch = arch;
    o.dtype = dtype;
    o.image_size = 32;
    o.width_mult = 0.35f;
    o.mlp_hidden = 64;
    o.hidden = 32;
    o.heads = 2;
    o.layers = 2;
    o.seq = 8;
    return o;
}

typedef struct run_out {
    float *y;      /* output 0 as float */
    uint16_t *yh;  /* output 0's float16 bits (float16 model) */
    int64_t n;
    int dtype;
} run_out;

/* Compile m with `threads`, feed every float input the same deterministic values (rounded to float16 first, so
 * both models see the same numbers), run, and copy output 0 out. bind: bind output 0 to a caller buffer. */
static int run_model(ref_model *m, int threads, bool bind, run_out *o)
{
    ref_error err = {0};
    ref_options opts;
    ref_options_init(&opts);
    opts.threads = threads;
    opts.compile_threads = threads; /* 2: two workers widen and pack the weights */
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    void *buf = NULL, *bound = NULL;
    int rc = ref_compile(m, &opts, &c, &err);
    CHECK_OK(rc, &err);
    if (rc || (rc = ref_request_new(c, &r, &err)))
        goto out;
    for (size_t i = 0; i < ref_compiled_n_inputs(c); i++) {
        ref_value_desc d;
        CHECK(ref_compiled_input(c, i, &d) == 0);
        int64_t n = ref_tensor_numel(&d.shape);
        free(buf);
        buf = calloc((size_t)n + 1, 4);
        for (int64_t j = 0; j < n; j++) {
            float v = ref_f16_to_f32(ref_f32_to_f16((float)sin((double)j * 0.37) * 0.9f));
            if (d.shape.dtype == REF_DT_FLOAT16)
                ((uint16_t *)buf)[j] = ref_f32_to_f16(v);
            else if (d.shape.dtype == REF_DT_FLOAT)
                ((float *)buf)[j] = v;
        }
        ref_tensor t = d.shape;
        t.data = buf;
        if ((rc = ref_request_set_input(r, i, &t, &err)))
            goto out;
    }
    ref_value_desc od;
    CHECK(ref_compiled_output(c, 0, &od) == 0);
    size_t nb = (size_t)ref_tensor_numel(&od.shape) * ref_dtype_size(od.shape.dtype);
    if (bind && (!(bound = malloc(nb + 1)) || (rc = ref_request_bind_output(r, 0, bound, nb, &err))))
        goto out;
    ref_tensor y;
    if ((rc = ref_infer(r, &err)) || (rc = ref_request_output(r, 0, &y, &err)))
        goto out;
    CHECK(y.dtype == od.shape.dtype);
    CHECK(!bind || y.data == bound);
    o->n = ref_tensor_numel(&y);
    o->dtype = y.dtype;
    o->y = malloc((size_t)o->n * sizeof *o->y + 1);
    o->yh = malloc((size_t)o->n * 2 + 1);
    for (int64_t j = 0; j < o->n; j++) {
        o->yh[j] = y.dtype == REF_DT_FLOAT16 ? ((const uint16_t *)y.data)[j] : 0;
        o->y[j] = y.dtype == REF_DT_FLOAT16 ? ref_f16_to_f32(o->yh[j]) : ((const float *)y.data)[j];
    }
out:
    CHECK_OK(rc, &err);
    free(buf);
    ref_request_free(r);
    free(bound);
    ref_compiled_free(c);
    return rc;
}

/* The float model's weights rounded to float16 precision in place (float32 storage): what the float16 model's
 * weights widen to. */
static void round_weights(ref_model *m)
{
    for (size_t i = 0; i < m->graph.n_inits; i++)
        if (m->graph.inits[i].t.dtype == REF_DT_FLOAT)
            ref_float_round_half_n((float *)m->graph.inits[i].t.data, ref_tensor_numel(&m->graph.inits[i].t));
}

/* A float16 model whose graph outputs say float: it still runs as float32, and hands out its float32 results
 * unrounded, so they can be compared bit for bit. */
static void float_outputs(ref_model *m)
{
    for (size_t i = 0; i < m->graph.n_outputs; i++)
        if (m->graph.outputs[i].elem_type == REF_DT_FLOAT16)
            m->graph.outputs[i].elem_type = REF_DT_FLOAT;
}

static void test_family(const char *arch)
{
    ref_error err = {0};
    ref_model *mf = NULL, *mh = NULL, *mr = NULL, *mo = NULL;
    ref_gen_options of = small(arch, NULL), oh = small(arch, "float16");
    CHECK_OK(ref_gen_build(&of, &mf, NULL, &err), &err);
    CHECK_OK(ref_gen_build(&oh, &mh, NULL, &err), &err);
    CHECK_OK(ref_gen_build(&of, &mr, NULL, &err), &err);
    CHECK_OK(ref_gen_build(&oh, &mo, NULL, &err), &err);
    run_out f = {0}, h1 = {0}, h2 = {0}, hb = {0}, r = {0}, o = {0};
    if (!mf || !mh || !mr || !mo)
        goto out;
    round_weights(mr);
    float_outputs(mo);
    if (run_model(mf, 1, false, &f) || run_model(mh, 1, false, &h1) || run_model(mh, 2, false, &h2) ||
        run_model(mh, 1, true, &hb) || run_model(mr, 1, false, &r) || run_model(mo, 1, false, &o))
        goto out;
    /* Conv and Gemm weights widen one layer at a time while packing (compile/half.c), the rest at once: either
     * way the same float32 values as the rounded float model, so the same float32 output bits. */
    CHECK(r.n == o.n && o.dtype == REF_DT_FLOAT);
    int64_t differ = 0;
    for (int64_t j = 0; j < r.n && r.n == o.n; j++)
        differ += memcmp(&r.y[j], &o.y[j], sizeof r.y[j]) != 0;
    printf("%s: %lld of %lld float32 outputs differ from the rounded-weight float model's\n", arch,
           (long long)differ, (long long)r.n);
    CHECK(differ == 0);
    CHECK(f.dtype == REF_DT_FLOAT && h1.dtype == REF_DT_FLOAT16 && f.n == h1.n && h1.n == h2.n && h1.n == hb.n);
    double max_abs = 0, max_diff = 0;
    for (int64_t j = 0; j < f.n; j++) {
        max_abs = fmax(max_abs, fabs(f.y[j]));
        max_diff = fmax(max_diff, fabs((double)f.y[j] - h1.y[j]));
    }
    /* Weights rounded to 11 significant bits move a layer's output by a few 1e-4 relative; a dozen layers stay
     * within 2% of the output's scale, and a broken layer is far outside it. */
    printf("%s: %lld outputs, max |float| %.4g, max |float - float16| %.4g\n", arch, (long long)f.n, max_abs,
           max_diff);
    CHECK(max_abs > 0);
    CHECK(max_diff <= 0.02 * fmax(max_abs, 1e-3));
    CHECK(!memcmp(h1.yh, h2.yh, (size_t)h1.n * 2)); /* 2 threads: the same bits */
    CHECK(!memcmp(h1.yh, hb.yh, (size_t)h1.n * 2)); /* a bound output gets the same float16 */
out:
    free(f.y), free(f.yh), free(h1.y), free(h1.yh), free(h2.y), free(h2.yh), free(hb.y), free(hb.yh);
    free(r.y), free(r.yh), free(o.y), free(o.yh);
    ref_model_unref(mf);
    ref_model_unref(mh);
    ref_model_unref(mr);
    ref_model_unref(mo);
}

/* SQLite-style: fail the k-th allocation for k = 0, 1, ... until compile succeeds, on a float16 model whose Conv
 * and Gemm weights are widened while packing (and by folding, and after it for the depthwise ones): every
 * failure is a clean REF_E_NOMEM and leaves no live bytes behind. */
static void test_oom_loop(const char *arch, int compile_threads)
{
    ref_error err = {0};
    ref_model *m = NULL;
    ref_gen_options o = small(arch, "float16");
    CHECK_OK(ref_gen_build(&o, &m, NULL, &err), &err);
    if (!m)
        return;
    ref_options opts;
    ref_options_init(&opts);
    opts.compile_threads = compile_threads;
    int failures = 0, succeeded = 0;
    for (int64_t k = 0; k < 20000 && !succeeded; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_compiled *c = NULL;
        ref_alloc_fail_after(k, 0);
        int rc = ref_compile(m, &opts, &c, &err);
        ref_alloc_fail_after(-1, 0);
        if (rc) {
            failures++;
            if (rc != REF_E_NOMEM)
                CHECK_OK(rc, &err);
        } else {
            succeeded = 1;
            CHECK(ref_compiled_packed_bytes(c) > 0);
        }
        ref_compiled_free(c);
        ref_alloc_get_stats(&s1);
        CHECK(s1.live_bytes == s0.live_bytes);
    }
    printf("%s, %d compile threads: %d allocation failures refused cleanly before compile succeeded\n", arch,
           compile_threads, failures);
    CHECK(succeeded);
    CHECK(failures > 10);
    ref_model_unref(m);
}

enum { CAST_C = 32, CAST_LAYERS = 8, CAST_HW = 8, CAST_N = CAST_C * CAST_HW * CAST_HW, CAST_W = CAST_C * CAST_C * 9 };

/* Weights stored float16 (half) or float32 (the same values widened), each Cast to float in the graph as
 * mixed-precision exports do: B into an Add, a float16 Constant k into a Mul, then CAST_LAYERS Convs, each W_i
 * through its own Cast (Convs last, so that nothing folds into them). */
static ref_model *cast_model(bool half)
{
    int64_t xd[] = {1, CAST_C, CAST_HW, CAST_HW}, wd[] = {CAST_C, CAST_C, 3, 3}, bd[] = {1, CAST_C, 1, 1};
    int64_t one[] = {1}, pads[] = {1, 1, 1, 1};
    static float w[CAST_W];
    static uint16_t wh[CAST_W];
    float b[CAST_C], k = 0.75f;
    uint16_t bh[CAST_C], kh = ref_f32_to_f16(k);
    for (int i = 0; i < CAST_C; i++)
        b[i] = ref_f16_to_f32(bh[i] = ref_f32_to_f16((float)i * 0.03f - 0.4f));
    int dt = half ? REF_DT_FLOAT16 : REF_DT_FLOAT;
    ref_tensor kt = oh_tensor(dt, 1, one, half ? (void *)&kh : (void *)&k);
    ref_model *m = gb_model(13);
    /* Attributes go on right after each node: adding the next one may move the node array. */
    ref_node *n = NULL;
    bool ok = m && !gb_input(m, "x", REF_DT_FLOAT, 4, xd, NULL) &&
              !gb_init(m, "B", dt, 4, bd, half ? (void *)bh : (void *)b) && (n = gb_node(m, "Cast", "B", "Bf"));
    if (ok)
        oh_attr_int(m, n, "to", REF_DT_FLOAT);
    if (ok && (ok = (n = gb_node(m, "Constant", "", "k")) != NULL))
        oh_attr_tensor(m, n, "value", &kt);
    if (ok && (ok = (n = gb_node(m, "Cast", "k", "kf")) != NULL))
        oh_attr_int(m, n, "to", REF_DT_FLOAT);
    ok = ok && gb_node(m, "Add", "x,Bf", "z") && gb_node(m, "Mul", "z,kf", "y0");
    for (int l = 0; l < CAST_LAYERS && ok; l++) {
        /* scaled by 1/sqrt(fan-in) so eight layers keep the values near 1 */
        for (int i = 0; i < CAST_W; i++)
            w[i] = ref_f16_to_f32(wh[i] = ref_f32_to_f16((float)sin(i * 0.7 + l) / 17.0f));
        char wn[16], wf[16], cin[40], cout[16];
        snprintf(wn, sizeof wn, "W%d", l);
        snprintf(wf, sizeof wf, "Wf%d", l);
        snprintf(cin, sizeof cin, "y%d,%s", l, wf);
        snprintf(cout, sizeof cout, "y%d", l + 1);
        if (l == CAST_LAYERS - 1)
            snprintf(cout, sizeof cout, "out");
        ok = !gb_init(m, wn, dt, 4, wd, half ? (void *)wh : (void *)w) && (n = gb_node(m, "Cast", wn, wf));
        if (ok)
            oh_attr_int(m, n, "to", REF_DT_FLOAT);
        if (ok && (ok = (n = gb_node(m, "Conv", cin, cout)) != NULL))
            oh_attr_ints(m, n, "pads", 4, pads);
    }
    if (!ok || gb_output(m, "out", REF_DT_FLOAT)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

static const ref_value *value_named(const ref_compiled *c, const char *name)
{
    for (int v = 0; v < c->n_vals; v++)
        if (!strcmp(c->vals[v].name, name))
            return &c->vals[v];
    return NULL;
}

/* The compiled float16 cast model: every W_i's float16 bytes went straight into the packed panels, B was widened
 * once. */
static void check_cast_compiled(const ref_compiled *c)
{
    for (int l = 0; l < CAST_LAYERS; l++) {
        char wn[16], wf[16];
        snprintf(wn, sizeof wn, "W%d", l);
        snprintf(wf, sizeof wf, "Wf%d", l);
        const ref_value *W = value_named(c, wn), *Wf = value_named(c, wf);
        /* no float32 copy left of either: the Cast folded onto W's bytes, packing widened and freed them */
        CHECK(W && Wf && Wf->kind == REF_VAL_CONST && !Wf->t.data && !Wf->owned && !W->t.data && !W->owned);
    }
    const ref_value *B = value_named(c, "B"), *Bf = value_named(c, "Bf");
    /* B, read by an Add, is widened once: the Cast's output owns the only float32 copy */
    CHECK(B && Bf && Bf->owned && Bf->t.data == Bf->owned && !B->t.data && !B->owned);
}

/* Compile and run m on fixed x; y gets the CAST_N outputs, *peak the most bytes compile had allocated at once
 * (beyond what was live before), *packed its pre-packed bytes. */
static int run_cast(ref_model *m, float *y, bool half, int64_t *peak, size_t *packed)
{
    ref_error err = {0};
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    static float x[CAST_N];
    for (int i = 0; i < CAST_N; i++)
        x[i] = (float)cos(i * 0.3);
    int64_t xd[] = {1, CAST_C, CAST_HW, CAST_HW};
    ref_tensor t = oh_tensor(REF_DT_FLOAT, 4, xd, x), out;
    ref_alloc_stats s0, s1;
    ref_alloc_get_stats(&s0);
    ref_alloc_reset_peak();
    int rc = ref_compile(m, NULL, &c, &err);
    ref_alloc_get_stats(&s1);
    *peak = s1.peak_bytes - s0.live_bytes;
    *packed = ref_compiled_packed_bytes(c);
    if (!rc && half)
        check_cast_compiled(c);
    if (!rc)
        rc = oh_request_infer(c, &t, &r, &err);
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err))) {
        CHECK(out.dtype == REF_DT_FLOAT && ref_tensor_numel(&out) == CAST_N);
        memcpy(y, out.data, sizeof(float) * CAST_N);
    }
    CHECK_OK(rc, &err);
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

static void test_weight_casts(void)
{
    ref_model *mh = cast_model(true), *mf = cast_model(false);
    static float yh[CAST_N], yf[CAST_N];
    int64_t peak_h = 0, peak_f = 0;
    size_t packed_h = 0, packed_f = 0;
    CHECK(mh && mf);
    if (mh && mf && !run_cast(mh, yh, true, &peak_h, &packed_h) && !run_cast(mf, yf, false, &peak_f, &packed_f)) {
        CHECK(!memcmp(yh, yf, sizeof yh)); /* the float16 weights widened to the very values the float model has */
        /* Compile's own allocations at their peak: the packed panels, and a layer or two in flight (a widened
         * weight, the packing scratch), no more than for the float32 weights. Widening every weight first (and
         * the Casts copying them again) held all CAST_LAYERS float32 weights on top of that: 602116 bytes. */
        int64_t layer = (int64_t)sizeof(float) * CAST_W;
        printf("weight casts: compile peak %lld bytes (float16) and %lld (float32 weights); packed %zu; one layer "
               "%lld\n", (long long)peak_h, (long long)peak_f, packed_h, (long long)layer);
        CHECK(packed_h == packed_f && packed_h > 0);
        CHECK(peak_h <= peak_f + layer);
        CHECK(peak_h <= (int64_t)packed_h + 4 * layer);
        CHECK(yh[0] == yh[0] && fabsf(yh[0]) < 1e3f);
    }
    ref_model_free(mh);
    ref_model_free(mf);
}

/* ------------------------------------------------------------------------------------------------
 * float16 weights at odd file offsets: mapped where they are, read unaligned
 * ---------------------------------------------------------------------------------------------- */

enum { ODD_C = 16, ODD_HW = 8, ODD_CO = 8, ODD_N = ODD_CO * 4 * ODD_HW * ODD_HW };

/* x (float16) -> Conv 3x3 (Wc) -> ConvTranspose 2x2 stride 2, 2 groups (Wt) -> out (float16), both weights float16
 * initializers read only by their node, so both are widened one layer at a time while packing. pad lengthens
 * each initializer's name: it moves where the writer puts its bytes in the file. */
static ref_model *odd_model(int pad_c, int pad_t, char *wc, char *wt)
{
    int64_t xd[] = {1, ODD_C, ODD_HW, ODD_HW}, cd[] = {ODD_C, ODD_C, 3, 3}, td[] = {ODD_C, ODD_CO / 2, 2, 2};
    int64_t pads[] = {1, 1, 1, 1}, strides[] = {2, 2};
    static uint16_t hc[ODD_C * ODD_C * 9], ht[ODD_C * ODD_CO / 2 * 4];
    for (size_t i = 0; i < sizeof hc / sizeof hc[0]; i++)
        hc[i] = ref_f32_to_f16((float)sin(i * 0.37) / 12.0f);
    for (size_t i = 0; i < sizeof ht / sizeof ht[0]; i++)
        ht[i] = ref_f32_to_f16((float)cos(i * 0.53) / 4.0f);
    snprintf(wc, 8, "Wc%.*s", pad_c, "xxx");
    snprintf(wt, 8, "Wt%.*s", pad_t, "xxx");
    char cin[16], tin[16];
    snprintf(cin, sizeof cin, "x,%s", wc);
    snprintf(tin, sizeof tin, "y,%s", wt);
    ref_model *m = gb_model(13);
    ref_node *n = NULL;
    bool ok = m && !gb_input(m, "x", REF_DT_FLOAT16, 4, xd, NULL) && !gb_init(m, wc, REF_DT_FLOAT16, 4, cd, hc) &&
              !gb_init(m, wt, REF_DT_FLOAT16, 4, td, ht) && (n = gb_node(m, "Conv", cin, "y"));
    if (ok)
        oh_attr_ints(m, n, "pads", 4, pads);
    if (ok && (ok = (n = gb_node(m, "ConvTranspose", tin, "out")) != NULL)) {
        oh_attr_ints(m, n, "strides", 2, strides);
        oh_attr_int(m, n, "group", 2);
    }
    if (!ok || gb_output(m, "out", REF_DT_FLOAT16)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* Compile m and run it on fixed float16 x: yh gets the ODD_N float16 outputs. With packed, both weights must be
 * gone once compiled (packing widened and released them, ConvTranspose's too). */
static int run_odd(ref_model *m, const char *wc, const char *wt, uint16_t *yh)
{
    ref_error err = {0};
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    static uint16_t x[ODD_C * ODD_HW * ODD_HW];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = ref_f32_to_f16((float)cos(i * 0.11));
    int64_t xd[] = {1, ODD_C, ODD_HW, ODD_HW};
    ref_tensor t = oh_tensor(REF_DT_FLOAT16, 4, xd, x), out;
    int rc = ref_compile(m, NULL, &c, &err);
    if (!rc) {
        const ref_value *C = value_named(c, wc), *T = value_named(c, wt);
        CHECK(C && T && !C->t.data && !C->owned && !T->t.data && !T->owned && ref_compiled_packed_bytes(c) > 0);
    }
    if (!rc)
        rc = oh_request_infer(c, &t, &r, &err);
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err))) {
        CHECK(out.dtype == REF_DT_FLOAT16 && ref_tensor_numel(&out) == ODD_N);
        memcpy(yh, out.data, sizeof(uint16_t) * ODD_N);
    }
    CHECK_OK(rc, &err);
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

/* Written to a file whose float16 initializers start at odd offsets, read with mmap on: both stay in the mapping
 * (no heap copy), and the outputs are the bits of the same file read with mmap off (element-aligned heap copies),
 * on the F16C path and the portable one. Under UBSan this also checks that no reader loads them misaligned. */
static void test_odd_offsets(void)
{
    char dir[] = "/tmp/test_half.XXXXXX", path[64], wc[8], wt[8];
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    snprintf(path, sizeof path, "%s/odd.onnx", dir);
    ref_error err = {0};
    ref_model *mo = NULL, *ma = NULL;
    bool odd = false;
    for (int pad = 0; pad < 4 && !odd; pad++) { /* the one name length or two that put both at odd offsets */
        ref_model *m = odd_model(pad & 1, pad >> 1, wc, wt);
        CHECK(m != NULL);
        if (!m)
            break;
        CHECK_OK(ref_onnx_write(m, path, false, &err), &err);
        ref_model_free(m);
        ref_options on;
        ref_options_init(&on);
        on.mmap = 1;
        ref_model_free(mo);
        mo = NULL;
        CHECK_OK(ref_model_read(path, &on, &mo, &err), &err);
        const ref_initializer *c = mo ? ref_model_find_init(mo, wc) : NULL;
        const ref_initializer *t = mo ? ref_model_find_init(mo, wt) : NULL;
        odd = c && t && ((uintptr_t)c->t.data & 1) && ((uintptr_t)t->t.data & 1);
        if (odd)
            CHECK(c->storage == REF_STORAGE_MAPPED && t->storage == REF_STORAGE_MAPPED);
    }
    CHECK(odd);
    ref_options off;
    ref_options_init(&off);
    off.mmap = 0;
    CHECK_OK(ref_model_read(path, &off, &ma, &err), &err);
    static uint16_t y_odd[ODD_N], y_al[ODD_N], y_port[ODD_N], y_port_al[ODD_N];
    if (odd && ma) {
        const ref_initializer *c = ref_model_find_init(ma, wc);
        CHECK(c && c->storage == REF_STORAGE_HEAP && (uintptr_t)c->t.data % 64 == 0);
        bool ran = !run_odd(mo, wc, wt, y_odd) && !run_odd(ma, wc, wt, y_al);
        ref_half_force_portable(true);
        ran = ran && !run_odd(mo, wc, wt, y_port) && !run_odd(ma, wc, wt, y_port_al);
        ref_half_force_portable(false);
        int64_t nonzero = 0;
        for (int i = 0; i < ODD_N; i++)
            nonzero += (y_al[i] & 0x7fff) != 0;
        printf("odd offsets: %s and %s mapped at odd addresses; %lld of %d outputs nonzero\n", wc, wt,
               (long long)nonzero, ODD_N);
        CHECK(ran && nonzero > ODD_N / 2);
        CHECK(!memcmp(y_odd, y_al, sizeof y_al) && !memcmp(y_port, y_al, sizeof y_al));
        CHECK(!memcmp(y_port_al, y_al, sizeof y_al));
    }
    ref_model_free(mo);
    ref_model_free(ma);
    remove(path);
    rmdir(dir);
}

enum { SUB_N = 40 };

/* y = If(cond) then x + Cast<float>(h) else x, with h a float16 initializer of the then-branch: the graph has no
 * float16 of its own, so neither it nor its branch runs as float32 and the Cast kernel reads h as float16. h's
 * bytes start at an odd address, as onnx/read.c leaves float16 bytes a file puts at an odd offset (the writer has
 * no subgraphs, hence no file here). */
static ref_model *sub_model(void)
{
    ref_model *m = gb_model(13);
    int64_t d[] = {SUB_N};
    ref_graph *tg = m ? ref_model_new_subgraph(m) : NULL, *eg = m ? ref_model_new_subgraph(m) : NULL;
    bool ok = tg && eg && !gb_input(m, "cond", REF_DT_BOOL, 0, NULL, NULL) &&
              !gb_input(m, "x", REF_DT_FLOAT, 1, d, NULL);
    ref_initializer *in = ok ? ref_graph_push_init(tg) : NULL;
    unsigned char *bytes = in ? ref_model_heap_alloc(m, SUB_N * sizeof(uint16_t) + 1) : NULL;
    if (in && (ok = bytes != NULL)) {
        in->name = gb_str(m, "h");
        in->t = oh_tensor(REF_DT_FLOAT16, 1, d, bytes + 1);
        in->nbytes = SUB_N * sizeof(uint16_t);
        in->storage = REF_STORAGE_HEAP;
        ok = in->name != NULL;
        for (int i = 0; ok && i < SUB_N; i++) { /* i/4 - 3: exact in float16, so the expected sums are plain floats */
            uint16_t h = ref_f32_to_f16((float)i * 0.25f - 3.0f);
            memcpy(bytes + 1 + 2 * i, &h, sizeof h);
        }
    }
    ref_node *n = ok && in ? gb_node_in(m, tg, "Cast", "h", "hf") : NULL;
    if (n)
        oh_attr_int(m, n, "to", REF_DT_FLOAT);
    ok = n && gb_node_in(m, tg, "Add", "x,hf", "t_out") && !GB_VALUE(m, tg, outputs, "t_out", REF_DT_FLOAT, -1, NULL) &&
         gb_node_in(m, eg, "Identity", "x", "e_out") && !GB_VALUE(m, eg, outputs, "e_out", REF_DT_FLOAT, -1, NULL);
    n = ok ? gb_node(m, "If", "cond", "y") : NULL;
    if (n) {
        oh_attr(m, n, "then_branch", REF_ATTR_GRAPH)->g = tg;
        oh_attr(m, n, "else_branch", REF_ATTR_GRAPH)->g = eg;
    }
    if (!n || gb_output(m, "y", REF_DT_FLOAT)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* A float16 constant a kernel reads as float16 gets an aligned copy at compile (compile/half.c's
 * align_half_consts), for that graph alone; the sums are exact. Under UBSan, a misaligned load in the Cast kernel
 * fails here. */
static void test_odd_subgraph_const(void)
{
    ref_error err = {0};
    ref_model *m = sub_model();
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    CHECK(m != NULL);
    static float x[SUB_N], y[SUB_N];
    for (int i = 0; i < SUB_N; i++)
        x[i] = (float)i * 0.5f;
    bool cond = true;
    int64_t d[] = {SUB_N};
    ref_tensor tc = oh_tensor(REF_DT_BOOL, 0, NULL, &cond), tx = oh_tensor(REF_DT_FLOAT, 1, d, x), out;
    int rc = m ? ref_compile(m, NULL, &c, &err) : REF_E_NOMEM;
    if (!rc && !(rc = ref_request_new(c, &r, &err)) && !(rc = ref_request_set_input(r, 0, &tc, &err)) &&
        !(rc = ref_request_set_input(r, 1, &tx, &err)) && !(rc = ref_infer(r, &err)) &&
        !(rc = ref_request_output(r, 0, &out, &err))) {
        CHECK(out.dtype == REF_DT_FLOAT && ref_tensor_numel(&out) == SUB_N);
        memcpy(y, out.data, sizeof y);
        int bad = 0;
        for (int i = 0; i < SUB_N; i++)
            bad += y[i] != x[i] + ((float)i * 0.25f - 3.0f);
        CHECK(bad == 0);
    }
    CHECK_OK(rc, &err);
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

int main(void)
{
    test_conversions();
    test_weight_casts();
    test_odd_offsets();
    test_odd_subgraph_const();
    test_oom_loop("mlp", 1);
    test_oom_loop("mobilenetv2", 2);
    static const char *const archs[] = {"mlp", "mobilenetv2", "resnet18", "transformer"};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        test_family(archs[i]);
    return check_summary();
}
