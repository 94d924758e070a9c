/* unary.c: operator family "unary": math functions (Exp, Log, Sqrt, trig and hyperbolic, Erf, rounding),
 * Abs/Neg/Sign/Reciprocal, and the IsNaN/IsInf tests, over float, double, half and (where ONNX has them)
 * integer tensors. It must never allocate at run time, nor negate the most negative integer in signed math. */
#include <math.h>

#include "elementwise_kernels.h"
#include "unary_avx2.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

REF_EW_VECTORIZE

/* after the pragma, so these inline helpers get the same options as the kernels and inline into them */
#include "unary_fastmath.h"

/* ------------------------------------------------------------------------------------------------
 * Kernels.
 * ---------------------------------------------------------------------------------------------- */

/* A float-only function: EF on float, ED on double. */
#define DEF_FLOAT_FN(name, EF, ED)                                                      \
    static void name##_f32(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, EF) } \
    static void name##_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, double, ED) } \
    static const ref_ew_row_fn name##_tab[REF_EW_NDT] = {[REF_DT_FLOAT] = name##_f32, [REF_DT_DOUBLE] = name##_f64};

DEF_FLOAT_FN(exp, ref_fexp(x), exp(x)) /* float: the vectorizable form (unary_fastmath.h) */
DEF_FLOAT_FN(log, logf(x), log(x))
DEF_FLOAT_FN(recip, 1.0f / x, 1.0 / x)
DEF_FLOAT_FN(floor, floorf(x), floor(x))
DEF_FLOAT_FN(ceil, ceilf(x), ceil(x))
DEF_FLOAT_FN(round, rintf(x), rint(x)) /* the default rounding mode ties to even, as ONNX Round does */
DEF_FLOAT_FN(erf, ref_ferf(x), erf(x))
DEF_FLOAT_FN(cos, cosf(x), cos(x))
DEF_FLOAT_FN(sin, sinf(x), sin(x))
DEF_FLOAT_FN(tan, tanf(x), tan(x))
DEF_FLOAT_FN(acos, acosf(x), acos(x))
DEF_FLOAT_FN(asin, asinf(x), asin(x))
DEF_FLOAT_FN(atan, atanf(x), atan(x))
DEF_FLOAT_FN(cosh, coshf(x), cosh(x))
DEF_FLOAT_FN(sinh, sinhf(x), sinh(x))
DEF_FLOAT_FN(acosh, acoshf(x), acosh(x))
DEF_FLOAT_FN(asinh, asinhf(x), asinh(x))
DEF_FLOAT_FN(atanh, atanhf(x), atanh(x))

/* sqrtf keeps its errno path under the vectorize pragma (gcc decides that from the global flags), so the
 * SSE2 square root is spelled out; it is the same correctly rounded operation. */
#define DEF_SQRT(T, S, VT, LOAD, SQRT, STORE, LANES, SQRTF)                                  \
    static void sqrt_##S(REF_EW_ROW_ARGS)                                                   \
    {                                                                                       \
        (void)arg;                                                                          \
        T *o = out;                                                                         \
        const T *a = in[0];                                                                 \
        int64_t i = 0;                                                                      \
        if (!step[0]) {                                                                     \
            const T r = SQRTF(a[0]);                                                        \
            for (; i < n; i++)                                                              \
                o[i] = r;                                                                   \
            return;                                                                         \
        }                                                                                   \
        SQRT_SIMD(VT, LOAD, SQRT, STORE, LANES)                                             \
        for (; i < n; i++)                                                                  \
            o[i] = SQRTF(a[i]);                                                             \
    }
#if defined(__SSE2__)
#define SQRT_SIMD(VT, LOAD, SQRT, STORE, LANES) \
    for (; i + LANES <= n; i += LANES)          \
        STORE(o + i, SQRT(LOAD(a + i)));
#else
#define SQRT_SIMD(VT, LOAD, SQRT, STORE, LANES)
#endif
DEF_SQRT(float, f32, __m128, _mm_loadu_ps, _mm_sqrt_ps, _mm_storeu_ps, 4, sqrtf)
DEF_SQRT(double, f64, __m128d, _mm_loadu_pd, _mm_sqrt_pd, _mm_storeu_pd, 2, sqrt)
static const ref_ew_row_fn sqrt_tab[REF_EW_NDT] = {[REF_DT_FLOAT] = sqrt_f32, [REF_DT_DOUBLE] = sqrt_f64};

#define DEF_ABS_NEG_SIGNED(OP, T, S, W, DT)                                                                \
    static void abs_##S(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(T, T, x < 0 ? (T)(0 - (W)x) : x) }    \
    static void neg_##S(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(T, T, (T)(0 - (W)x)) }                \
    static void sign_##S(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(T, T, x > 0 ? (T)1 : x < 0 ? (T)-1 : (T)0) }
REF_EW_SINTS(DEF_ABS_NEG_SIGNED, _)

#define DEF_ABS_NEG_UNSIGNED(OP, T, S, W, DT)                                          \
    static void abs_##S(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(T, T, x) }         \
    static void sign_##S(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(T, T, x > 0 ? (T)1 : (T)0) }
REF_EW_UINTS(DEF_ABS_NEG_UNSIGNED, _)

/* Floats: fabs and -x are exact sign-bit operations; sign keeps a NaN (and a zero's sign) as numpy does. */
static void abs_f32(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, fabsf(x)) }
static void abs_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, double, fabs(x)) }
static void neg_f32(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, -x) }
static void neg_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, double, -x) }
static void sign_f32(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, float, x > 0 ? 1.0f : x < 0 ? -1.0f : x) }
static void sign_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, double, x > 0 ? 1.0 : x < 0 ? -1.0 : x) }

static const ref_ew_row_fn abs_tab[REF_EW_NDT] = {REF_EW_NUMERIC(REF_EW_TAB, abs)};
static const ref_ew_row_fn neg_tab[REF_EW_NDT] = {REF_EW_SIGNED(REF_EW_TAB, neg)};
static const ref_ew_row_fn sign_tab[REF_EW_NDT] = {REF_EW_NUMERIC(REF_EW_TAB, sign)};

static void isnan_f32(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(float, uint8_t, x != x) }
static void isnan_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, uint8_t, x != x) }
static const ref_ew_row_fn isnan_tab[REF_EW_NDT] = {[REF_DT_FLOAT] = isnan_f32, [REF_DT_DOUBLE] = isnan_f64};

typedef struct isinf_arg {
    int pos, neg;
} isinf_arg;

#define DEF_ISINF(T, S)                                                                               \
    static void isinf_##S(REF_EW_ROW_ARGS)                                                            \
    {                                                                                                 \
        const isinf_arg *p = arg;                                                                     \
        const T inf = (T)INFINITY;                                                                    \
        const int pos = p->pos, neg = p->neg;                                                         \
        REF_EW_UN_BODY(T, uint8_t, (pos && x == inf) || (neg && x == -inf))                          \
    }
DEF_ISINF(float, f32)
DEF_ISINF(double, f64)
static const ref_ew_row_fn isinf_tab[REF_EW_NDT] = {[REF_DT_FLOAT] = isinf_f32, [REF_DT_DOUBLE] = isinf_f64};

/* ------------------------------------------------------------------------------------------------
 * Operators.
 * ---------------------------------------------------------------------------------------------- */

typedef struct un_desc {
    const ref_ew_row_fn *tab; /* by dtype; half types run the float entry */
    int out_bool;
} un_desc;

static ref_ew_row_fn un_fn(const un_desc *d, int dt)
{
    if (ref_ew_is_half(dt))
        dt = REF_DT_FLOAT;
    return (dt >= 0 && dt < REF_EW_NDT) ? d->tab[dt] : NULL;
}

static int un_infer(ref_op_ctx *c, const un_desc *d)
{
    if (c->n_in != 1 || !c->in[0])
        return ref_fail(c->err, REF_E_INVALID, "%s takes exactly 1 input, got %d", c->node->op_type, c->n_in);
    const ref_tensor *x = c->in[0];
    if (!un_fn(d, x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s does not support type %s", c->node->op_type,
                        ref_dtype_name(x->dtype));
    c->out[0]->dtype = d->out_bool ? REF_DT_BOOL : x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    return REF_OK;
}

int ref_unary_have_avx2(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

/* The AVX2 build of a float kernel when the CPU has it; the results are the same bits either way. */
static ref_ew_row_fn upgrade(ref_ew_row_fn fn)
{
    if (!ref_unary_have_avx2())
        return fn;
    if (fn == exp_f32)
        return ref_unary_exp_f32_avx2;
    if (fn == erf_f32)
        return ref_unary_erf_f32_avx2;
    return fn;
}

static int un_run(ref_op_ctx *c, const un_desc *d, const void *arg)
{
    ref_ew_apply(c, c->out[0], 1, c->in, upgrade(un_fn(d, c->in[0]->dtype)), arg);
    return REF_OK;
}

#define UN_OP(ident, TAB, OUT_BOOL)                                                      \
    static const un_desc ident##_desc = {TAB, OUT_BOOL};                                 \
    static int ident##_infer(ref_op_ctx *c) { return un_infer(c, &ident##_desc); }       \
    static int ident##_run(ref_op_ctx *c) { return un_run(c, &ident##_desc, NULL); }

UN_OP(exp, exp_tab, 0)
UN_OP(log, log_tab, 0)
UN_OP(sqrt, sqrt_tab, 0)
UN_OP(recip, recip_tab, 0)
UN_OP(floor, floor_tab, 0)
UN_OP(ceil, ceil_tab, 0)
UN_OP(round, round_tab, 0)
UN_OP(erf, erf_tab, 0)
UN_OP(cos, cos_tab, 0)
UN_OP(sin, sin_tab, 0)
UN_OP(tan, tan_tab, 0)
UN_OP(acos, acos_tab, 0)
UN_OP(asin, asin_tab, 0)
UN_OP(atan, atan_tab, 0)
UN_OP(cosh, cosh_tab, 0)
UN_OP(sinh, sinh_tab, 0)
UN_OP(acosh, acosh_tab, 0)
UN_OP(asinh, asinh_tab, 0)
UN_OP(atanh, atanh_tab, 0)
UN_OP(abs, abs_tab, 0)
UN_OP(neg, neg_tab, 0)
UN_OP(sign, sign_tab, 0)
UN_OP(isnan, isnan_tab, 1)

static const un_desc isinf_desc = {isinf_tab, 1};
static int isinf_infer(ref_op_ctx *c) { return un_infer(c, &isinf_desc); }
static int isinf_run(ref_op_ctx *c)
{
    isinf_arg p = {ref_attr_int_or(c->node, "detect_positive", 1) != 0,
                   ref_attr_int_or(c->node, "detect_negative", 1) != 0};
    return un_run(c, &isinf_desc, &p);
}

#define ENTRY(op, ident) {.name = op, .infer = ident##_infer, .run = ident##_run}

const ref_op ref_ops_unary[] = {
    ENTRY("Exp", exp),     ENTRY("Log", log),     ENTRY("Sqrt", sqrt),   ENTRY("Reciprocal", recip),
    ENTRY("Floor", floor), ENTRY("Ceil", ceil),   ENTRY("Round", round), ENTRY("Erf", erf),
    ENTRY("Cos", cos),     ENTRY("Sin", sin),     ENTRY("Tan", tan),     ENTRY("Acos", acos),
    ENTRY("Asin", asin),   ENTRY("Atan", atan),   ENTRY("Cosh", cosh),   ENTRY("Sinh", sinh),
    ENTRY("Acosh", acosh), ENTRY("Asinh", asinh), ENTRY("Atanh", atanh), ENTRY("Abs", abs),
    ENTRY("Neg", neg),     ENTRY("Sign", sign),   ENTRY("IsNaN", isnan), ENTRY("IsInf", isinf),
    {.name = NULL},
};
