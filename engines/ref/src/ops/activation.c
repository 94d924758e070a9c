/* activation.c: operator family "activation": the pointwise activations with float attributes (Relu,
 * LeakyRelu, Elu, Selu, Sigmoid, Tanh, HardSigmoid, HardSwish, Softplus, Softsign, Celu, ThresholdedRelu,
 * Shrink, Mish) and the table that also lists Clip and PRelu (activation_clip.c). It must never allocate at
 * run time, and never evaluate exp where it could overflow when a stable form exists. */
#include <math.h>

#include "activation_ops.h"
#include "elementwise_kernels.h"
#include "unary_avx2.h"

REF_EW_VECTORIZE

/* after the pragma, so these inline helpers get the same options as the kernels and inline into them */
#include "unary_fastmath.h"

typedef struct act_params {
    float alpha, beta, gamma;
} act_params;

/* ------------------------------------------------------------------------------------------------
 * Kernels, for float (F = f: expf, ...) and double (F empty: exp, ...). NaN inputs stay NaN.
 * ---------------------------------------------------------------------------------------------- */

#define DEF_ACT(name, T, S, F, EXPR)                                  \
    static void name##_##S(REF_EW_ROW_ARGS)                           \
    {                                                                 \
        const act_params *p = arg;                                    \
        const T alpha = (T)p->alpha, beta = (T)p->beta;               \
        const T gamma = (T)p->gamma;                                  \
        (void)alpha, (void)beta, (void)gamma;                         \
        REF_EW_UN_BODY(T, T, EXPR)                                    \
    }

/* float runs the vectorizable forms of unary_fastmath.h (a few ulps); double runs libm. The double sigmoid
 * takes exp(x) / (1 + exp(x)) for negative x, so small results keep their full precision. */
#define EXPM1_f32(x) ref_fexpm1(x)
#define EXPM1_f64(x) expm1(x)
#define TANH_f32(x) ref_ftanh(x)
#define TANH_f64(x) tanh(x)
#define SIGMOID_f32(x) ref_fsigmoid(x)
#define SIGMOID_f64(x) ((x) >= 0 ? 1 / (1 + exp(-(x))) : exp(x) / (1 + exp(x)))
/* log(1 + exp(x)) without overflow: x + log1p(exp(-x)) for positive x. */
#define SOFTPLUS(T, F, x) ((x) > 0 ? (x) + log1p##F(exp##F(-(x))) : log1p##F(exp##F(x)))
#define HARDSIG(T, t) ((t) < 0 ? (T)0 : (t) > 1 ? (T)1 : (t))

#define DEF_ACTS(T, S, F)                                                                                  \
    DEF_ACT(relu, T, S, F, x < 0 ? (T)0 : x)                                                               \
    DEF_ACT(leaky, T, S, F, x < 0 ? alpha * x : x)                                                         \
    DEF_ACT(elu, T, S, F, x < 0 ? alpha * EXPM1_##S(x) : x)                                                \
    DEF_ACT(selu, T, S, F, x <= 0 ? gamma * alpha * EXPM1_##S(x) : gamma * x)                              \
    DEF_ACT(sigmoid, T, S, F, SIGMOID_##S(x))                                                              \
    DEF_ACT(tanh, T, S, F, TANH_##S(x))                                                                    \
    DEF_ACT(hardsig, T, S, F, HARDSIG(T, alpha * x + beta))                                                \
    DEF_ACT(hardswish, T, S, F, x * HARDSIG(T, x / (T)6 + (T)0.5))                                         \
    DEF_ACT(softplus, T, S, F, SOFTPLUS(T, F, x))                                                          \
    DEF_ACT(softsign, T, S, F, x / ((T)1 + fabs##F(x)))                                                    \
    DEF_ACT(celu, T, S, F, x > 0 ? x : alpha * EXPM1_##S(x / alpha))                                       \
    DEF_ACT(thresh, T, S, F, x > alpha ? x : (T)0)                                                         \
    DEF_ACT(shrink, T, S, F, x < -beta ? x + alpha : x > beta ? x - alpha : (T)0)                          \
    DEF_ACT(mish, T, S, F, x * tanh##F(SOFTPLUS(T, F, x)))

DEF_ACTS(float, f32, f)
DEF_ACTS(double, f64, )

/* Relu also takes signed integers (opset 14). */
#define DEF_RELU_INT(OP, T, S, W, DT) \
    static void relu_##S(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(T, T, x < 0 ? (T)0 : x) }
REF_EW_SINTS(DEF_RELU_INT, _)

#define FLOAT_TAB(name) {[REF_DT_FLOAT] = name##_f32, [REF_DT_DOUBLE] = name##_f64}

/* ------------------------------------------------------------------------------------------------
 * Operators: attributes become act_params (alpha, beta, gamma by position, per op).
 * ---------------------------------------------------------------------------------------------- */

typedef struct act_desc {
    ref_ew_row_fn tab[REF_EW_NDT];
    const char *a_name, *b_name, *g_name; /* attribute read into alpha, beta, gamma, or NULL */
    float a_dflt, b_dflt, g_dflt;
} act_desc;

static ref_ew_row_fn act_fn(const act_desc *d, int dt)
{
    if (ref_ew_is_half(dt))
        dt = REF_DT_FLOAT;
    return (dt >= 0 && dt < REF_EW_NDT) ? d->tab[dt] : NULL;
}

static int act_infer(ref_op_ctx *c, const act_desc *d)
{
    if (c->n_in != 1 || !c->in[0])
        return ref_fail(c->err, REF_E_INVALID, "%s takes exactly 1 input, got %d", c->node->op_type, c->n_in);
    const ref_tensor *x = c->in[0];
    if (!act_fn(d, x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s does not support type %s", c->node->op_type,
                        ref_dtype_name(x->dtype));
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    return REF_OK;
}

static int act_run(ref_op_ctx *c, const act_desc *d)
{
    act_params p = {d->a_dflt, d->b_dflt, d->g_dflt};
    if (d->a_name)
        p.alpha = ref_attr_float_or(c->node, d->a_name, d->a_dflt);
    if (d->b_name)
        p.beta = ref_attr_float_or(c->node, d->b_name, d->b_dflt);
    if (d->g_name)
        p.gamma = ref_attr_float_or(c->node, d->g_name, d->g_dflt);
    ref_ew_row_fn fn = act_fn(d, c->in[0]->dtype);
    if (ref_unary_have_avx2() && (fn == sigmoid_f32 || fn == tanh_f32)) /* same bits, 8 lanes */
        fn = fn == sigmoid_f32 ? ref_unary_sigmoid_f32_avx2 : ref_unary_tanh_f32_avx2;
    ref_ew_apply(c, c->out[0], 1, c->in, fn, &p);
    return REF_OK;
}

#define ACT_OP(ident, ...)                                                              \
    static const act_desc ident##_desc = {__VA_ARGS__};                                 \
    static int ident##_infer(ref_op_ctx *c) { return act_infer(c, &ident##_desc); }     \
    static int ident##_run(ref_op_ctx *c) { return act_run(c, &ident##_desc); }

ACT_OP(relu, {[REF_DT_FLOAT] = relu_f32, [REF_DT_DOUBLE] = relu_f64, REF_EW_SINTS(REF_EW_TAB, relu)}, NULL, NULL, NULL, 0, 0, 0)
ACT_OP(leaky, FLOAT_TAB(leaky), "alpha", NULL, NULL, 0.01f, 0, 0)
ACT_OP(elu, FLOAT_TAB(elu), "alpha", NULL, NULL, 1.0f, 0, 0)
ACT_OP(selu, FLOAT_TAB(selu), "alpha", NULL, "gamma", 1.67326319217681884765625f, 0, 1.05070102214813232421875f)
ACT_OP(sigmoid, FLOAT_TAB(sigmoid), NULL, NULL, NULL, 0, 0, 0)
ACT_OP(tanh, FLOAT_TAB(tanh), NULL, NULL, NULL, 0, 0, 0)
ACT_OP(hardsig, FLOAT_TAB(hardsig), "alpha", "beta", NULL, 0.2f, 0.5f, 0)
ACT_OP(hardswish, FLOAT_TAB(hardswish), NULL, NULL, NULL, 0, 0, 0)
ACT_OP(softplus, FLOAT_TAB(softplus), NULL, NULL, NULL, 0, 0, 0)
ACT_OP(softsign, FLOAT_TAB(softsign), NULL, NULL, NULL, 0, 0, 0)
ACT_OP(celu, FLOAT_TAB(celu), "alpha", NULL, NULL, 1.0f, 0, 0)
ACT_OP(thresh, FLOAT_TAB(thresh), "alpha", NULL, NULL, 1.0f, 0, 0)
/* Shrink: alpha carries bias, beta carries lambd */
ACT_OP(shrink, FLOAT_TAB(shrink), "bias", "lambd", NULL, 0.0f, 0.5f, 0)
ACT_OP(mish, FLOAT_TAB(mish), NULL, NULL, NULL, 0, 0, 0)

#define ENTRY(op, ident) {.name = op, .infer = ident##_infer, .run = ident##_run}

const ref_op ref_ops_activation[] = {
    ENTRY("Relu", relu),
    ENTRY("LeakyRelu", leaky),
    ENTRY("Elu", elu),
    ENTRY("Selu", selu),
    ENTRY("Sigmoid", sigmoid),
    ENTRY("Tanh", tanh),
    ENTRY("HardSigmoid", hardsig),
    ENTRY("HardSwish", hardswish),
    ENTRY("Softplus", softplus),
    ENTRY("Softsign", softsign),
    ENTRY("Celu", celu),
    ENTRY("ThresholdedRelu", thresh),
    ENTRY("Shrink", shrink),
    ENTRY("Mish", mish),
    {.name = "Clip", .infer = ref_act_clip_infer, .run = ref_act_clip_run},
    {.name = "PRelu", .infer = ref_act_prelu_infer, .run = ref_act_prelu_run},
    {.name = NULL},
};
