/* elementwise_compare.c: comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual) to bool, the bool
 * logic ops (And, Or, Xor, Not), Where and BitShift, all with numpy broadcasting. It must never allocate at
 * run time, and reads a bool byte as true whenever it is nonzero. */
#include <string.h>

#include "elementwise_kernels.h"
#include "elementwise_ops.h"

REF_EW_VECTORIZE

/* ------------------------------------------------------------------------------------------------
 * Comparisons.
 * ---------------------------------------------------------------------------------------------- */

#define DEF_CMP(OP, T, S, W, DT)                                                                  \
    static void eq_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, uint8_t, x == y) }                   \
    static void lt_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, uint8_t, x < y) }                    \
    static void gt_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, uint8_t, x > y) }                    \
    static void le_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, uint8_t, x <= y) }                   \
    static void ge_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, uint8_t, x >= y) }
REF_EW_NUMERIC(DEF_CMP, _)

static void eq_bool(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(uint8_t, uint8_t, (x != 0) == (y != 0)) }

enum { CMP_EQ, CMP_LT, CMP_GT, CMP_LE, CMP_GE, CMP_N };

static const ref_ew_row_fn cmp_tab[CMP_N][REF_EW_NDT] = {
    [CMP_EQ] = {REF_EW_NUMERIC(REF_EW_TAB, eq)[REF_DT_BOOL] = eq_bool},
    [CMP_LT] = {REF_EW_NUMERIC(REF_EW_TAB, lt)},
    [CMP_GT] = {REF_EW_NUMERIC(REF_EW_TAB, gt)},
    [CMP_LE] = {REF_EW_NUMERIC(REF_EW_TAB, le)},
    [CMP_GE] = {REF_EW_NUMERIC(REF_EW_TAB, ge)},
};

static ref_ew_row_fn cmp_fn(int kind, int dt)
{
    if (ref_ew_is_half(dt))
        dt = REF_DT_FLOAT;
    if (dt < 0 || dt >= REF_EW_NDT)
        return NULL;
    return cmp_tab[kind][dt];
}

static int binary_checks(ref_op_ctx *c)
{
    if (c->n_in != 2 || !c->in[0] || !c->in[1])
        return ref_fail(c->err, REF_E_INVALID, "%s takes exactly 2 inputs, got %d", c->node->op_type, c->n_in);
    if (c->in[0]->dtype != c->in[1]->dtype)
        return ref_fail(c->err, REF_E_SHAPE, "input 1 is %s but input 0 is %s", ref_dtype_name(c->in[1]->dtype),
                        ref_dtype_name(c->in[0]->dtype));
    return REF_OK;
}

static int cmp_kind(const ref_op_ctx *c)
{
    const char *t = c->node->op_type;
    if (t[0] == 'E')
        return CMP_EQ;
    int or_equal = strstr(t, "OrEqual") != NULL;
    if (t[0] == 'L')
        return or_equal ? CMP_LE : CMP_LT;
    return or_equal ? CMP_GE : CMP_GT;
}

int ref_ew_compare_infer(ref_op_ctx *c)
{
    int rc = binary_checks(c);
    if (rc)
        return rc;
    if (!cmp_fn(cmp_kind(c), c->in[0]->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s does not support type %s", c->node->op_type,
                        ref_dtype_name(c->in[0]->dtype));
    ref_tensor b_view;
    c->out[0]->dtype = REF_DT_BOOL;
    return ref_ew_binary_shape(c, &b_view, c->out[0]);
}

static int binary_apply(ref_op_ctx *c, ref_ew_row_fn fn, const void *arg)
{
    ref_tensor b_view, shape;
    int rc = ref_ew_binary_shape(c, &b_view, &shape);
    if (rc)
        return rc;
    const ref_tensor *ins[2] = {c->in[0], &b_view};
    ref_ew_apply(c, c->out[0], 2, ins, fn, arg);
    return REF_OK;
}

static int compare_run(ref_op_ctx *c, int kind) { return binary_apply(c, cmp_fn(kind, c->in[0]->dtype), NULL); }

int ref_ew_equal_run(ref_op_ctx *c) { return compare_run(c, CMP_EQ); }
int ref_ew_less_run(ref_op_ctx *c) { return compare_run(c, CMP_LT); }
int ref_ew_greater_run(ref_op_ctx *c) { return compare_run(c, CMP_GT); }
int ref_ew_less_equal_run(ref_op_ctx *c) { return compare_run(c, CMP_LE); }
int ref_ew_greater_equal_run(ref_op_ctx *c) { return compare_run(c, CMP_GE); }

/* ------------------------------------------------------------------------------------------------
 * Logic on bool.
 * ---------------------------------------------------------------------------------------------- */

static void and_k(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(uint8_t, uint8_t, (x != 0) & (y != 0)) }
static void or_k(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(uint8_t, uint8_t, (x != 0) | (y != 0)) }
static void xor_k(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(uint8_t, uint8_t, (x != 0) ^ (y != 0)) }

static void not_k(REF_EW_ROW_ARGS)
{
    (void)arg;
    REF_EW_UN_BODY(uint8_t, uint8_t, x == 0)
}

int ref_ew_logic_infer(ref_op_ctx *c)
{
    int rc = binary_checks(c);
    if (rc)
        return rc;
    if (c->in[0]->dtype != REF_DT_BOOL)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s does not support type %s (bool only)", c->node->op_type,
                        ref_dtype_name(c->in[0]->dtype));
    ref_tensor b_view;
    c->out[0]->dtype = REF_DT_BOOL;
    return ref_ew_binary_shape(c, &b_view, c->out[0]);
}

int ref_ew_and_run(ref_op_ctx *c) { return binary_apply(c, and_k, NULL); }
int ref_ew_or_run(ref_op_ctx *c) { return binary_apply(c, or_k, NULL); }
int ref_ew_xor_run(ref_op_ctx *c) { return binary_apply(c, xor_k, NULL); }

int ref_ew_not_infer(ref_op_ctx *c)
{
    if (c->n_in != 1 || !c->in[0])
        return ref_fail(c->err, REF_E_INVALID, "Not takes exactly 1 input, got %d", c->n_in);
    if (c->in[0]->dtype != REF_DT_BOOL)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Not does not support type %s (bool only)",
                        ref_dtype_name(c->in[0]->dtype));
    c->out[0]->dtype = REF_DT_BOOL;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

int ref_ew_not_run(ref_op_ctx *c)
{
    ref_ew_apply(c, c->out[0], 1, c->in, not_k, NULL);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Where: type-blind, it only moves elements of 1, 2, 4 or 8 bytes.
 * ---------------------------------------------------------------------------------------------- */

#define DEF_WHERE(T, S)                                                                 \
    static void where_##S(REF_EW_ROW_ARGS)                                              \
    {                                                                                   \
        (void)arg;                                                                      \
        T *o = out;                                                                     \
        const uint8_t *cond = in[0];                                                    \
        const T *x = in[1], *y = in[2];                                                 \
        if (step[0] && step[1] && step[2]) {                                            \
            for (int64_t i = 0; i < n; i++)                                             \
                o[i] = cond[i] ? x[i] : y[i];                                           \
            return;                                                                     \
        }                                                                               \
        const int64_t sc = step[0], sx = step[1], sy = step[2];                         \
        for (int64_t i = 0; i < n; i++)                                                 \
            o[i] = cond[i * sc] ? x[i * sx] : y[i * sy];                                \
    }
DEF_WHERE(uint8_t, 1)
DEF_WHERE(uint16_t, 2)
DEF_WHERE(uint32_t, 4)
DEF_WHERE(uint64_t, 8)

int ref_ew_where_infer(ref_op_ctx *c)
{
    if (c->n_in != 3 || !c->in[0] || !c->in[1] || !c->in[2])
        return ref_fail(c->err, REF_E_INVALID, "Where takes exactly 3 inputs, got %d", c->n_in);
    if (c->in[0]->dtype != REF_DT_BOOL)
        return ref_fail(c->err, REF_E_SHAPE, "Where: condition is %s, not bool", ref_dtype_name(c->in[0]->dtype));
    int dt = c->in[1]->dtype;
    if (c->in[2]->dtype != dt)
        return ref_fail(c->err, REF_E_SHAPE, "Where: X is %s but Y is %s", ref_dtype_name(dt),
                        ref_dtype_name(c->in[2]->dtype));
    size_t sz = ref_dtype_size(dt);
    if (dt == REF_DT_STRING || (sz != 1 && sz != 2 && sz != 4 && sz != 8))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Where does not support type %s", ref_dtype_name(dt));
    c->out[0]->dtype = dt;
    return ref_broadcast_shape(3, c->in, c->out[0], c->err);
}

int ref_ew_where_run(ref_op_ctx *c)
{
    ref_ew_row_fn fn = NULL;
    switch (ref_dtype_size(c->out[0]->dtype)) {
    case 1: fn = where_1; break;
    case 2: fn = where_2; break;
    case 4: fn = where_4; break;
    case 8: fn = where_8; break;
    default: return ref_fail(c->err, REF_E_UNSUPPORTED, "Where: type %s", ref_dtype_name(c->out[0]->dtype));
    }
    ref_ew_iter it;
    ref_ew_iter_init(&it, c->out[0], 3, c->in);
    ref_ew_run(c->pool, &it, fn, NULL);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * BitShift on unsigned integers; shifting by the width or more gives 0 (C leaves it undefined).
 * ---------------------------------------------------------------------------------------------- */

#define DEF_SHIFT(OP, T, S, W, DT)                                                                     \
    static void shl_##S(REF_EW_ROW_ARGS)                                                              \
    {                                                                                                 \
        REF_EW_BIN_BODY(T, T, y >= sizeof(T) * 8 ? (T)0 : (T)((W)x << y))                             \
    }                                                                                                 \
    static void shr_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, y >= sizeof(T) * 8 ? (T)0 : (T)(x >> y)) }
REF_EW_UINTS(DEF_SHIFT, _)

static const ref_ew_row_fn shl_tab[REF_EW_NDT] = {REF_EW_UINTS(REF_EW_TAB, shl)};
static const ref_ew_row_fn shr_tab[REF_EW_NDT] = {REF_EW_UINTS(REF_EW_TAB, shr)};

static int shift_left(ref_op_ctx *c, int *left)
{
    const char *d = ref_attr_str_or(c->node, "direction", "");
    *left = !strcmp(d, "LEFT");
    if (!*left && strcmp(d, "RIGHT"))
        return ref_fail(c->err, REF_E_INVALID, "BitShift: direction must be LEFT or RIGHT, got '%s'", d);
    return REF_OK;
}

int ref_ew_bitshift_infer(ref_op_ctx *c)
{
    int left, rc = binary_checks(c);
    if (rc || (rc = shift_left(c, &left)))
        return rc;
    int dt = c->in[0]->dtype;
    if (dt < 0 || dt >= REF_EW_NDT || !shl_tab[dt])
        return ref_fail(c->err, REF_E_UNSUPPORTED, "BitShift does not support type %s", ref_dtype_name(dt));
    ref_tensor b_view;
    c->out[0]->dtype = dt;
    return ref_ew_binary_shape(c, &b_view, c->out[0]);
}

int ref_ew_bitshift_run(ref_op_ctx *c)
{
    int left, rc = shift_left(c, &left);
    if (rc)
        return rc;
    int dt = c->out[0]->dtype;
    return binary_apply(c, left ? shl_tab[dt] : shr_tab[dt], NULL);
}
