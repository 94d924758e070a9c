/* elementwise.c: operator family "elementwise": the binary arithmetic ops (Add, Sub, Mul, Div, Mod, Pow),
 * the variadic ones (Max, Min, Sum, Mean), and the table listing them with the comparison, logic and
 * select ops of elementwise_compare.c. It must never allocate at run time. */
#include "elementwise_ops.h"

static const char *dt_name(const ref_tensor *t) { return ref_dtype_name(t->dtype); }

/* Float, double, the integer types and (computed in float) the half types, when op has them. */
static int arith_dtype_ok(ref_ew_arith op, int dt)
{
    if (ref_ew_is_half(dt))
        return ref_ew_arith_fn(op, REF_DT_FLOAT) != NULL;
    return ref_ew_arith_fn(op, dt) != NULL;
}

static ref_ew_row_fn arith_fn(ref_ew_arith op, int dt)
{
    return ref_ew_arith_fn(op, ref_ew_is_half(dt) ? REF_DT_FLOAT : dt);
}

static int want_two_inputs(ref_op_ctx *c)
{
    if (c->n_in != 2 || !c->in[0] || !c->in[1])
        return ref_fail(c->err, REF_E_INVALID, "%s takes exactly 2 inputs, got %d", c->node->op_type, c->n_in);
    return REF_OK;
}

static int same_types(ref_op_ctx *c, int n)
{
    for (int k = 1; k < n; k++)
        if (c->in[k]->dtype != c->in[0]->dtype)
            return ref_fail(c->err, REF_E_SHAPE, "input %d is %s but input 0 is %s", k, dt_name(c->in[k]),
                            dt_name(c->in[0]));
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Binary: Add, Sub, Mul, Div, Mod.
 * ---------------------------------------------------------------------------------------------- */

static ref_ew_arith binary_kind(const ref_op_ctx *c)
{
    const char *t = c->node->op_type;
    switch (t[0]) {
    case 'A': return REF_EW_ADD;
    case 'S': return REF_EW_SUB;
    case 'D': return REF_EW_DIV;
    case 'M':
        if (t[1] == 'u')
            return REF_EW_MUL;
        return ref_attr_int_or(c->node, "fmod", 0) ? REF_EW_FMOD : REF_EW_MOD;
    default: return REF_EW_N_ARITH;
    }
}

static int binary_infer(ref_op_ctx *c)
{
    int rc = want_two_inputs(c);
    if (rc || (rc = same_types(c, 2)))
        return rc;
    ref_ew_arith op = binary_kind(c);
    int dt = c->in[0]->dtype;
    if (!arith_dtype_ok(op, dt))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s does not support type %s", c->node->op_type,
                        ref_dtype_name(dt));
    if (op == REF_EW_MOD || op == REF_EW_FMOD) {
        int64_t fmod = ref_attr_int_or(c->node, "fmod", 0);
        if (fmod != 0 && fmod != 1)
            return ref_fail(c->err, REF_E_INVALID, "Mod: fmod must be 0 or 1, got %lld", (long long)fmod);
    }
    ref_tensor b_view;
    c->out[0]->dtype = dt;
    return ref_ew_binary_shape(c, &b_view, c->out[0]);
}

static int binary_run(ref_op_ctx *c)
{
    ref_tensor b_view, shape;
    int rc = ref_ew_binary_shape(c, &b_view, &shape);
    if (rc)
        return rc;
    const ref_tensor *ins[2] = {c->in[0], &b_view};
    ref_ew_apply(c, c->out[0], 2, ins, arith_fn(binary_kind(c), c->out[0]->dtype), NULL);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Pow: the exponent may have its own type; the output has the base's.
 * ---------------------------------------------------------------------------------------------- */

static int pow_types(ref_op_ctx *c, ref_ew_row_fn *fn)
{
    int bt = c->in[0]->dtype, et = c->in[1]->dtype;
    int half_base = ref_ew_is_half(bt), half_exp = ref_ew_is_half(et);
    if (half_exp && !half_base)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Pow: a %s exponent needs a half base, not %s",
                        ref_dtype_name(et), ref_dtype_name(bt));
    *fn = ref_ew_pow_fn(half_base ? REF_DT_FLOAT : bt, half_exp ? REF_DT_FLOAT : et);
    if (!*fn)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Pow does not support base type %s with exponent type %s",
                        ref_dtype_name(bt), ref_dtype_name(et));
    return REF_OK;
}

static int pow_infer(ref_op_ctx *c)
{
    ref_ew_row_fn fn;
    int rc = want_two_inputs(c);
    if (rc || (rc = pow_types(c, &fn)))
        return rc;
    ref_tensor b_view;
    c->out[0]->dtype = c->in[0]->dtype;
    return ref_ew_binary_shape(c, &b_view, c->out[0]);
}

static int pow_run(ref_op_ctx *c)
{
    ref_ew_row_fn fn;
    ref_tensor b_view, shape;
    int rc = pow_types(c, &fn);
    if (rc || (rc = ref_ew_binary_shape(c, &b_view, &shape)))
        return rc;
    /* the generic kernels read the exponent's dtype from arg; a half exponent arrives as float */
    int et = ref_ew_is_half(b_view.dtype) ? REF_DT_FLOAT : b_view.dtype;
    const ref_tensor *ins[2] = {c->in[0], &b_view};
    ref_ew_apply(c, c->out[0], 2, ins, fn, &et);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Variadic: Max, Min, Sum, Mean fold their inputs left to right into the output.
 * ---------------------------------------------------------------------------------------------- */

static ref_ew_arith variadic_kind(const ref_op_ctx *c)
{
    const char *t = c->node->op_type;
    if (t[0] == 'S' || t[1] == 'e') /* Sum, Mean */
        return REF_EW_ADD;
    return t[1] == 'a' ? REF_EW_MAX : REF_EW_MIN;
}

static int is_mean(const ref_op_ctx *c) { return c->node->op_type[1] == 'e'; }

static int variadic_infer(ref_op_ctx *c)
{
    if (c->n_in < 1)
        return ref_fail(c->err, REF_E_INVALID, "%s needs at least one input", c->node->op_type);
    if (c->n_in > 64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s with %d inputs (at most 64)", c->node->op_type, c->n_in);
    for (int k = 0; k < c->n_in; k++)
        if (!c->in[k])
            return ref_fail(c->err, REF_E_INVALID, "%s: input %d is missing", c->node->op_type, k);
    int rc = same_types(c, c->n_in);
    if (rc)
        return rc;
    int dt = c->in[0]->dtype;
    /* Sum and Mean are float-only in ONNX; Max and Min take every numeric type */
    int ok = arith_dtype_ok(variadic_kind(c), dt) &&
             (variadic_kind(c) != REF_EW_ADD || dt == REF_DT_FLOAT || dt == REF_DT_DOUBLE || ref_ew_is_half(dt));
    if (!ok)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s does not support type %s", c->node->op_type,
                        ref_dtype_name(dt));
    c->out[0]->dtype = dt;
    return ref_broadcast_shape(c->n_in, c->in, c->out[0], c->err);
}

typedef struct variadic_task {
    ref_op_ctx *c;
    ref_ew_row_fn fn;
} variadic_task;

/* One half adapter or plain kernel call per pass over [begin, end): pass 1 combines inputs 0 and 1, every
 * later pass folds the next input into the output, and Mean divides at the end. */
static void variadic_range(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const variadic_task *t = arg;
    ref_op_ctx *c = t->c;
    ref_tensor *out = c->out[0];
    ref_ew_half h;
    const int half = ref_ew_is_half(out->dtype);
    ref_ew_half_init(&h, out->dtype, t->fn, NULL, 2, 1, 2);
    ref_ew_row_fn fn = half ? ref_ew_half_row : t->fn;
    const void *fn_arg = half ? (const void *)&h : NULL;
    ref_ew_iter it;
    if (c->n_in == 1) {
        ref_ew_iter_init(&it, out, 1, c->in);
        ref_ew_iter_range(&it, begin, end, ref_ew_copy_fn(ref_dtype_size(out->dtype)), NULL);
    }
    for (int k = 1; k < c->n_in; k++) {
        const ref_tensor *ins[2] = {k == 1 ? c->in[0] : out, c->in[k]};
        ref_ew_iter_init(&it, out, 2, ins);
        ref_ew_iter_range(&it, begin, end, fn, fn_arg);
    }
    if (is_mean(c) && c->n_in > 1) {
        float nf = (float)c->n_in;
        double nd = (double)c->n_in;
        int dt = out->dtype == REF_DT_DOUBLE ? REF_DT_DOUBLE : REF_DT_FLOAT;
        ref_ew_row_fn div = ref_ew_arith_fn(REF_EW_DIV, dt);
        size_t sz = ref_dtype_size(out->dtype);
        const void *ins[2] = {(char *)out->data + (size_t)begin * sz, dt == REF_DT_DOUBLE ? (const void *)&nd
                                                                                           : (const void *)&nf};
        const int steps[2] = {1, 0};
        ref_ew_half hd;
        ref_ew_half_init(&hd, out->dtype, div, NULL, 2, 1, 2);
        hd.in_half = 1u; /* the divisor is a plain float */
        hd.in_size[1] = sizeof(float);
        if (half)
            ref_ew_half_row(&hd, (char *)out->data + (size_t)begin * sz, ins, steps, end - begin);
        else
            div(NULL, (char *)out->data + (size_t)begin * sz, ins, steps, end - begin);
    }
}

static int variadic_run(ref_op_ctx *c)
{
    variadic_task t = {c, arith_fn(variadic_kind(c), c->out[0]->dtype)};
    ref_ew_parallel(c->pool, ref_tensor_numel(c->out[0]), variadic_range, &t);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The family table.
 * ---------------------------------------------------------------------------------------------- */

#define BINARY(op) {.name = op, .infer = binary_infer, .run = binary_run}
#define VARIADIC(op) {.name = op, .infer = variadic_infer, .run = variadic_run}

const ref_op ref_ops_elementwise[] = {
    BINARY("Add"),
    BINARY("Sub"),
    BINARY("Mul"),
    BINARY("Div"),
    BINARY("Mod"),
    {.name = "Pow", .infer = pow_infer, .run = pow_run},
    VARIADIC("Max"),
    VARIADIC("Min"),
    VARIADIC("Sum"),
    VARIADIC("Mean"),
    {.name = "Equal", .infer = ref_ew_compare_infer, .run = ref_ew_equal_run},
    {.name = "Less", .infer = ref_ew_compare_infer, .run = ref_ew_less_run},
    {.name = "Greater", .infer = ref_ew_compare_infer, .run = ref_ew_greater_run},
    {.name = "LessOrEqual", .infer = ref_ew_compare_infer, .run = ref_ew_less_equal_run},
    {.name = "GreaterOrEqual", .infer = ref_ew_compare_infer, .run = ref_ew_greater_equal_run},
    {.name = "And", .infer = ref_ew_logic_infer, .run = ref_ew_and_run},
    {.name = "Or", .infer = ref_ew_logic_infer, .run = ref_ew_or_run},
    {.name = "Xor", .infer = ref_ew_logic_infer, .run = ref_ew_xor_run},
    {.name = "Not", .infer = ref_ew_not_infer, .run = ref_ew_not_run},
    {.name = "Where", .infer = ref_ew_where_infer, .run = ref_ew_where_run},
    {.name = "BitShift", .infer = ref_ew_bitshift_infer, .run = ref_ew_bitshift_run},
    {.name = NULL},
};
