/* test_half.c: float16: the F16C and portable conversions give the same bits for every half and for a million
 * floats; generated float16 models (every family) run as float32, match the float model they were rounded from,
 * and give exactly the bits of that float model with its weights rounded; compiling one fails cleanly wherever an
 * allocation fails;
 * their outputs do not depend on the thread count and bound buffers get the same float16. It must never compare
 * against values this file computes with the code under test alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast_half.h"
#include "check.h"
#include "gen/gen.h"
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

int main(void)
{
    test_conversions();
    test_oom_loop("mlp", 1);
    test_oom_loop("mobilenetv2", 2);
    static const char *const archs[] = {"mlp", "mobilenetv2", "resnet18", "transformer"};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        test_family(archs[i]);
    return check_summary();
}
