/* fused_ms.c: the fusions ONNX Runtime saves into models it optimized (com.microsoft): FusedConv and FusedGemm (Conv
 * or Gemm, FusedConv's optional Z added, then an activation: Relu, Clip, LeakyRelu, Sigmoid, Tanh, HardSigmoid) run
 * the default-domain Conv and Gemm kernels, Relu and Clip clamped as each tile is written; FusedMatMul (alpha, transA,
 * transB over broadcast batch dims) runs ref_sgemm per matrix pair. Float only (float16 graphs reach them as float).
 * It must never allocate at run time, and refuses an activation or transBatch it does not compute, by name. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "sgemm.h"

typedef enum { ACT_NONE, ACT_CLAMP, ACT_LEAKY, ACT_SIGMOID, ACT_TANH, ACT_HARDSIG } act_kind;

typedef struct {
    act_kind kind;
    float a, b; /* clamp bounds, LeakyRelu's alpha, HardSigmoid's alpha and beta */
} fused_act;

/* The activation of node n: FusedConv's activation_params, FusedGemm's activation_alpha/beta (leaky_relu_alpha). */
static int act_of(ref_op_ctx *c, bool gemm, fused_act *f)
{
    const char *name = ref_attr_str_or(c->node, "activation", "");
    const float *p = NULL;
    size_t np = gemm ? 0 : ref_attr_floats(c->node, "activation_params", &p);
    float p0 = np > 0 ? p[0] : NAN, p1 = np > 1 ? p[1] : NAN;
    if (gemm) {
        p0 = ref_attr_float_or(c->node, "activation_alpha", NAN);
        p1 = ref_attr_float_or(c->node, "activation_beta", NAN);
        if (!strcmp(name, "LeakyRelu") && isnan(p0))
            p0 = ref_attr_float_or(c->node, "leaky_relu_alpha", NAN);
    }
    memset(f, 0, sizeof *f);
    if (!name[0])
        f->kind = ACT_NONE;
    else if (!strcmp(name, "Relu"))
        *f = (fused_act){ACT_CLAMP, 0.0f, INFINITY};
    else if (!strcmp(name, "Clip"))
        *f = (fused_act){ACT_CLAMP, isnan(p0) ? -INFINITY : p0, isnan(p1) ? INFINITY : p1};
    else if (!strcmp(name, "LeakyRelu"))
        *f = (fused_act){ACT_LEAKY, isnan(p0) ? 0.01f : p0, 0};
    else if (!strcmp(name, "Sigmoid"))
        f->kind = ACT_SIGMOID;
    else if (!strcmp(name, "Tanh"))
        f->kind = ACT_TANH;
    else if (!strcmp(name, "HardSigmoid"))
        *f = (fused_act){ACT_HARDSIG, isnan(p0) ? 0.2f : p0, isnan(p1) ? 0.5f : p1};
    else
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: activation '%s' (Relu, Clip, LeakyRelu, Sigmoid, Tanh, "
                        "HardSigmoid)", c->node->op_type, name);
    return REF_OK;
}

static void act_apply(const fused_act *f, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float x = y[i];
        switch (f->kind) {
        case ACT_LEAKY: y[i] = x < 0 ? f->a * x : x; break;
        case ACT_SIGMOID: y[i] = 1.0f / (1.0f + expf(-x)); break;
        case ACT_TANH: y[i] = tanhf(x); break;
        case ACT_HARDSIG: {
            float v = f->a * x + f->b;
            y[i] = v < 0 ? 0.0f : v > 1 ? 1.0f : v;
            break;
        }
        default: break;
        }
    }
}

/* The default-domain kernel a fusion runs, seen through a context with its own inputs only (n_base of them). */
static const ref_op *base_op(const char *name) { return ref_op_find("", name); }

static ref_op_ctx base_ctx(const ref_op_ctx *c, int n_base)
{
    ref_op_ctx b = *c;
    if (b.n_in > n_base)
        b.n_in = n_base;
    return b;
}

#define FUSED_WRAP(ident, NAME, N_BASE)                                                                          \
    static int ident##_infer(ref_op_ctx *c)                                                                      \
    {                                                                                                            \
        fused_act f;                                                                                             \
        int rc = act_of(c, N_BASE == 3 && !strcmp(NAME, "Gemm"), &f);                                           \
        ref_op_ctx b = base_ctx(c, N_BASE);                                                                      \
        return rc ? rc : base_op(NAME)->infer(&b);                                                               \
    }                                                                                                            \
    static int ident##_prepare(ref_op_ctx *c, void **state)                                                      \
    {                                                                                                            \
        ref_op_ctx b = base_ctx(c, N_BASE);                                                                      \
        return base_op(NAME)->prepare(&b, state);                                                                \
    }                                                                                                            \
    static size_t ident##_prepare_scratch(const ref_op_ctx *c)                                                   \
    {                                                                                                            \
        ref_op_ctx b = base_ctx(c, N_BASE);                                                                      \
        return base_op(NAME)->prepare_scratch_bytes(&b);                                                         \
    }                                                                                                            \
    static void ident##_state_free(void *s) { base_op(NAME)->state_free(s); }                                    \
    static size_t ident##_state_bytes(const void *s) { return base_op(NAME)->state_bytes(s); }                   \
    static size_t ident##_scratch(const ref_op_ctx *c)                                                           \
    {                                                                                                            \
        ref_op_ctx b = base_ctx(c, N_BASE);                                                                      \
        return base_op(NAME)->scratch_bytes(&b);                                                                 \
    }

FUSED_WRAP(fconv, "Conv", 3)
FUSED_WRAP(fgemm, "Gemm", 3)

/* Conv or Gemm, then FusedConv's Z (input 3, Y's shape) added, then the activation; a clamp with no Z rides in the
 * kernel's tile epilogue. */
static int fused_run(ref_op_ctx *c, const char *name, bool gemm)
{
    fused_act f;
    int rc = act_of(c, gemm, &f);
    if (rc)
        return rc;
    const ref_tensor *z = !gemm && c->n_in > 3 ? c->in[3] : NULL;
    ref_tensor *y = c->out[0];
    int64_t n = ref_tensor_numel(y);
    if (z && (z->dtype != REF_DT_FLOAT || ref_tensor_numel(z) != n))
        return ref_fail(c->err, REF_E_SHAPE, "FusedConv: input 3 (Z) must be float and Y's shape");
    ref_op_ctx b = base_ctx(c, 3);
    if (f.kind == ACT_CLAMP && !z && !gemm) {
        b.act = true;
        b.act_lo = f.a;
        b.act_hi = f.b;
    }
    if ((rc = base_op(name)->run(&b)))
        return rc;
    float *yd = y->data;
    if (z)
        for (int64_t i = 0; i < n; i++)
            yd[i] += ((const float *)z->data)[i];
    if (f.kind == ACT_CLAMP && (z || gemm))
        ref_sgemm_clamp(yd, n, f.a, f.b);
    else
        act_apply(&f, yd, n);
    return REF_OK;
}

static int fconv_run(ref_op_ctx *c) { return fused_run(c, "Conv", false); }
static int fgemm_run(ref_op_ctx *c) { return fused_run(c, "Gemm", true); }

/* ---- FusedMatMul: Y = alpha op(A) op(B), A [.., M, K] (transA: [.., K, M]), B [.., K, N] (transB: [.., N, K]) -- */

typedef struct {
    int64_t M, N, K, dims[REF_MAX_RANK], sa[REF_MAX_RANK], sb[REF_MAX_RANK];
    int rank; /* batch dims */
    bool ta, tb;
} fmm_geom;

static int fmm_geom_of(ref_op_ctx *c, fmm_geom *g)
{
    const ref_tensor *a = c->n_in > 0 ? c->in[0] : NULL, *b = c->n_in > 1 ? c->in[1] : NULL;
    if (!a || !b || a->dtype != REF_DT_FLOAT || b->dtype != REF_DT_FLOAT || a->rank < 2 || b->rank < 2)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "FusedMatMul: A and B must be float of rank >= 2");
    if (ref_attr_int_or(c->node, "transBatchA", 0) || ref_attr_int_or(c->node, "transBatchB", 0))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "FusedMatMul: transBatchA/transBatchB are not supported");
    g->ta = ref_attr_int_or(c->node, "transA", 0) != 0, g->tb = ref_attr_int_or(c->node, "transB", 0) != 0;
    int64_t am = a->dims[a->rank - 2], an = a->dims[a->rank - 1], bm = b->dims[b->rank - 2], bn = b->dims[b->rank - 1];
    g->M = g->ta ? an : am, g->K = g->ta ? am : an, g->N = g->tb ? bm : bn;
    if ((g->tb ? bn : bm) != g->K)
        return ref_fail(c->err, REF_E_SHAPE, "FusedMatMul: inner dims %lld and %lld differ", (long long)g->K,
                        (long long)(g->tb ? bn : bm));
    ref_tensor ab = *a, bb = *b, yb = {0};
    ab.rank -= 2, bb.rank -= 2;
    const ref_tensor *both[2] = {&ab, &bb};
    int rc = ref_broadcast_shape(2, both, &yb, c->err);
    if (rc)
        return rc;
    g->rank = yb.rank;
    memcpy(g->dims, yb.dims, sizeof g->dims);
    ref_broadcast_strides(&ab, &yb, g->sa);
    ref_broadcast_strides(&bb, &yb, g->sb);
    return REF_OK;
}

static int fmm_infer(ref_op_ctx *c)
{
    fmm_geom g;
    int rc = fmm_geom_of(c, &g);
    if (rc)
        return rc;
    int64_t dims[REF_MAX_RANK];
    memcpy(dims, g.dims, sizeof(int64_t) * (size_t)g.rank);
    dims[g.rank] = g.M, dims[g.rank + 1] = g.N;
    c->out[0]->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(c->out[0], g.rank + 2, dims);
    return REF_OK;
}

static size_t fmm_scratch(const ref_op_ctx *c)
{
    fmm_geom g;
    ref_error quiet = {0};
    ref_op_ctx q = *c;
    q.err = &quiet;
    return fmm_geom_of(&q, &g) ? 0 : ref_sgemm_scratch_bytes(g.M, g.N, g.K, false, false, c->n_threads);
}

static int fmm_run(ref_op_ctx *c)
{
    fmm_geom g;
    int rc = fmm_geom_of(c, &g);
    if (rc)
        return rc;
    float alpha = ref_attr_float_or(c->node, "alpha", 1.0f);
    int64_t batches = ref_dims_prod(g.dims, 0, g.rank);
    for (int64_t t = 0; t < batches; t++) {
        int64_t oa, ob;
        ref_broadcast_offsets2(g.dims, g.rank, g.sa, g.sb, t, &oa, &ob);
        ref_sgemm_operand A = {.data = (const float *)c->in[0]->data + oa * g.M * g.K, .ld = g.ta ? g.M : g.K,
                               .trans = g.ta};
        ref_sgemm_operand B = {.data = (const float *)c->in[1]->data + ob * g.K * g.N, .ld = g.tb ? g.K : g.N,
                               .trans = g.tb};
        if ((rc = ref_sgemm(c->pool, g.M, g.N, g.K, alpha, &A, &B, 0.0f, (float *)c->out[0]->data + t * g.M * g.N, g.N,
                            c->scratch, c->scratch_bytes, c->err)))
            return rc;
    }
    return REF_OK;
}

const ref_op ref_ops_fused_ms[] = {
    {.name = "FusedConv", .infer = fconv_infer, .prepare = fconv_prepare, .prepare_scratch_bytes = fconv_prepare_scratch,
     .state_free = fconv_state_free, .state_bytes = fconv_state_bytes, .scratch_bytes = fconv_scratch, .run = fconv_run},
    {.name = "FusedGemm", .infer = fgemm_infer, .prepare = fgemm_prepare, .prepare_scratch_bytes = fgemm_prepare_scratch,
     .state_free = fgemm_state_free, .state_bytes = fgemm_state_bytes, .scratch_bytes = fgemm_scratch, .run = fgemm_run},
    {.name = "FusedMatMul", .infer = fmm_infer, .scratch_bytes = fmm_scratch, .run = fmm_run},
    {.name = NULL},
};
