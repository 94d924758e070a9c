/* gelu.c: the GELU family: ONNX Gelu (opset 20, approximate "none" or "tanh") and ONNX Runtime's com.microsoft
 * Gelu, FastGelu (tanh form, optional bias), BiasGelu (erf form of A + B) and QuickGelu (x sigmoid(alpha x)), which
 * its transformer optimizer writes into published float32, float16 and quantized models. Float (float16 through
 * float) runs gelu_kernels.h, portable or AVX2 with the same bits; double runs libm.
 * It must never allocate at run time, nor accept a bias that would change the output's shape. */
#include <math.h>
#include <string.h>

#include "elementwise_kernels.h"
#include "op.h"
#include "unary_avx2.h"

REF_EW_NO_CONTRACT
REF_EW_VECTORIZE

#include "gelu_kernels.h"

REF_GELU_DEFINE(f32)

static void gelu_erf_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, double, 0.5 * x * (1 + erf(x * M_SQRT1_2))) }
#define GELU_TANH_F64(x) (0.5 * (x) * (1 + tanh(sqrt(2 / M_PI) * ((x) + 0.044715 * (x) * (x) * (x)))))
static void gelu_tanh_f64(REF_EW_ROW_ARGS) { (void)arg; REF_EW_UN_BODY(double, double, GELU_TANH_F64(x)) }
static void gelu_erf_bias_f64(REF_EW_ROW_ARGS)
{
    REF_EW_BIN_BODY(double, double, 0.5 * (x + y) * (1 + erf((x + y) * M_SQRT1_2)))
}
static void gelu_tanh_bias_f64(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(double, double, GELU_TANH_F64(x + y)) }
static void gelu_quick_f64(REF_EW_ROW_ARGS)
{
    const double alpha = *(const float *)arg;
    REF_EW_UN_BODY(double, double, x / (1 + exp(-alpha * x)))
}

typedef enum { FORM_ERF, FORM_TANH, FORM_QUICK } gelu_form;

/* The kernel for form on dtype (float16 and bfloat16 through the float one), bias or not; NULL for other types. */
static ref_ew_row_fn gelu_fn(gelu_form form, bool bias, int dtype)
{
    static const ref_ew_row_fn f32[3][2] = {{ref_gelu_erf_f32, ref_gelu_erf_bias_f32},
                                            {ref_gelu_tanh_f32, ref_gelu_tanh_bias_f32},
                                            {ref_gelu_quick_f32, NULL}};
    static const ref_ew_row_fn avx2[3][2] = {{ref_gelu_erf_f32_avx2, ref_gelu_erf_bias_f32_avx2},
                                             {ref_gelu_tanh_f32_avx2, ref_gelu_tanh_bias_f32_avx2},
                                             {ref_gelu_quick_f32_avx2, NULL}};
    static const ref_ew_row_fn f64[3][2] = {{gelu_erf_f64, gelu_erf_bias_f64},
                                            {gelu_tanh_f64, gelu_tanh_bias_f64},
                                            {gelu_quick_f64, NULL}};
    if (dtype == REF_DT_DOUBLE)
        return f64[form][bias];
    if (dtype == REF_DT_FLOAT || ref_ew_is_half(dtype))
        return ref_unary_have_avx2() ? avx2[form][bias] : f32[form][bias];
    return NULL;
}

/* Y like X; the bias (input 1, when bias_in) of X's dtype, broadcasting into X's trailing dims without growing it. */
static int gelu_check(ref_op_ctx *c, gelu_form form, bool bias_in, bool bias_required)
{
    const ref_tensor *x = c->n_in > 0 ? c->in[0] : NULL;
    const ref_tensor *b = bias_in && c->n_in > 1 ? c->in[1] : NULL;
    const char *op = c->node->op_type;
    if (!x)
        return ref_fail(c->err, REF_E_INVALID, "%s: input 0 is required", op);
    if (bias_required && !b)
        return ref_fail(c->err, REF_E_INVALID, "%s: input 1 (bias) is required", op);
    if (!gelu_fn(form, false, x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input 0 has unsupported type %s (float, float16, double)",
                        op, ref_dtype_name(x->dtype));
    if (b) {
        char s1[96], s2[96];
        if (b->dtype != x->dtype)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input 1 (bias) is %s, input 0 is %s", op,
                            ref_dtype_name(b->dtype), ref_dtype_name(x->dtype));
        bool ok = b->rank <= x->rank;
        for (int k = 1; ok && k <= b->rank; k++)
            ok = b->dims[b->rank - k] == x->dims[x->rank - k] || b->dims[b->rank - k] == 1;
        if (!ok)
            return ref_fail(c->err, REF_E_SHAPE, "%s: bias %s does not broadcast into input %s", op,
                            ref_shape_str(b, s1, sizeof s1), ref_shape_str(x, s2, sizeof s2));
    }
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    return REF_OK;
}

static int gelu_run(ref_op_ctx *c, gelu_form form, bool bias_in)
{
    bool bias = bias_in && c->n_in > 1 && c->in[1];
    float alpha = ref_attr_float_or(c->node, "alpha", 1.702f);
    ref_ew_apply(c, c->out[0], bias ? 2 : 1, c->in, gelu_fn(form, bias, c->in[0]->dtype), &alpha);
    return REF_OK;
}

/* ONNX Gelu: the form by the approximate attribute. */
static int onnx_form(ref_op_ctx *c, gelu_form *form)
{
    const char *a = ref_attr_str_or(c->node, "approximate", "none");
    if (!strcmp(a, "none") || !strcmp(a, "tanh")) {
        *form = a[0] == 't' ? FORM_TANH : FORM_ERF;
        return REF_OK;
    }
    return ref_fail(c->err, REF_E_UNSUPPORTED, "Gelu: approximate '%s' (only 'none' and 'tanh')", a);
}

static int onnx_gelu_infer(ref_op_ctx *c)
{
    gelu_form f;
    int rc = onnx_form(c, &f);
    return rc ? rc : gelu_check(c, f, false, false);
}

static int onnx_gelu_run(ref_op_ctx *c)
{
    gelu_form f;
    int rc = onnx_form(c, &f);
    return rc ? rc : gelu_run(c, f, false);
}

static int ms_gelu_infer(ref_op_ctx *c) { return gelu_check(c, FORM_ERF, false, false); }
static int ms_gelu_run(ref_op_ctx *c) { return gelu_run(c, FORM_ERF, false); }
static int fast_infer(ref_op_ctx *c) { return gelu_check(c, FORM_TANH, true, false); }
static int fast_run(ref_op_ctx *c) { return gelu_run(c, FORM_TANH, true); }
static int bias_infer(ref_op_ctx *c) { return gelu_check(c, FORM_ERF, true, true); }
static int bias_run(ref_op_ctx *c) { return gelu_run(c, FORM_ERF, true); }
static int quick_infer(ref_op_ctx *c) { return gelu_check(c, FORM_QUICK, false, false); }
static int quick_run(ref_op_ctx *c) { return gelu_run(c, FORM_QUICK, false); }

const ref_op ref_ops_gelu[] = {
    {.name = "Gelu", .infer = onnx_gelu_infer, .run = onnx_gelu_run},
    {.name = NULL},
};

const ref_op ref_ops_gelu_ms[] = {
    {.name = "Gelu", .infer = ms_gelu_infer, .run = ms_gelu_run},
    {.name = "FastGelu", .infer = fast_infer, .run = fast_run},
    {.name = "BiasGelu", .infer = bias_infer, .run = bias_run},
    {.name = "QuickGelu", .infer = quick_infer, .run = quick_run},
    {.name = NULL},
};
