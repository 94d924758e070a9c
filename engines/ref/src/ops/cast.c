/* cast.c: operator family "cast": Cast (target from the `to` attribute) and CastLike (target from input 1)
 * between float, double, float16, bfloat16, every integer type and bool (strings: cast_string.c), and the Cast to
 * float16 of a graph run in float32 (ref_op_cast_round_half). It must never allocate at run time
 * and never perform a conversion C leaves undefined: out-of-range floats saturate, NaN becomes 0. */
#include <string.h>

#include "elementwise_broadcast.h"
#include "elementwise_kernels.h"

REF_EW_VECTORIZE

#include "cast_string.h"

/* after the pragma, so these inline helpers get the same options as the kernels and inline into them */
#include "cast_half.h"
#include "half_convert.h"

/* Every value passes through the one wide type that holds its source exactly: double for the float types,
 * int64 for signed integers and bool, uint64 for unsigned integers. */
typedef enum { WIDE_F64, WIDE_I64, WIDE_U64 } wide_kind;

#define CHUNK 256

typedef union wide_buf {
    double d[CHUNK];
    int64_t i[CHUNK];
    uint64_t u[CHUNK];
} wide_buf;

static int cast_supported(int dt)
{
    switch (dt) {
    case REF_DT_FLOAT: case REF_DT_DOUBLE: case REF_DT_FLOAT16: case REF_DT_BFLOAT16: case REF_DT_INT8:
    case REF_DT_INT16: case REF_DT_INT32: case REF_DT_INT64: case REF_DT_UINT8: case REF_DT_UINT16:
    case REF_DT_UINT32: case REF_DT_UINT64: case REF_DT_BOOL:
        return 1;
    default:
        return 0;
    }
}

static wide_kind wide_of(int dt)
{
    switch (dt) {
    case REF_DT_FLOAT: case REF_DT_DOUBLE: case REF_DT_FLOAT16: case REF_DT_BFLOAT16: return WIDE_F64;
    case REF_DT_UINT8: case REF_DT_UINT16: case REF_DT_UINT32: case REF_DT_UINT64: return WIDE_U64;
    default: return WIDE_I64;
    }
}

#define LOAD(T, FIELD, EXPR)                          \
    do {                                              \
        const T *s_ = (const T *)src + off;           \
        for (int64_t i = 0; i < m; i++) {             \
            const T x = s_[i];                        \
            w->FIELD[i] = (EXPR);                     \
        }                                             \
    } while (0)

static void load_chunk(int dt, const void *src, int64_t off, int64_t m, wide_buf *w)
{
    switch (dt) {
    case REF_DT_FLOAT: LOAD(float, d, x); break;
    case REF_DT_DOUBLE: LOAD(double, d, x); break;
    case REF_DT_FLOAT16: LOAD(uint16_t, d, ref_f16_to_f32(x)); break;
    case REF_DT_BFLOAT16: LOAD(uint16_t, d, ref_bf16_to_f32(x)); break;
    case REF_DT_INT8: LOAD(int8_t, i, x); break;
    case REF_DT_INT16: LOAD(int16_t, i, x); break;
    case REF_DT_INT32: LOAD(int32_t, i, x); break;
    case REF_DT_INT64: LOAD(int64_t, i, x); break;
    case REF_DT_BOOL: LOAD(uint8_t, i, x != 0); break;
    case REF_DT_UINT8: LOAD(uint8_t, u, x); break;
    case REF_DT_UINT16: LOAD(uint16_t, u, x); break;
    case REF_DT_UINT32: LOAD(uint32_t, u, x); break;
    case REF_DT_UINT64: LOAD(uint64_t, u, x); break;
    default: break;
    }
}

/* ONNX float->integer truncates toward zero. Beyond int64 the value saturates and NaN is 0; narrower
 * targets then wrap from int64 as C (and numpy on x86) do. */
static inline int64_t f2i(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static inline uint64_t f2u(double v)
{
    if (v >= 9223372036854775808.0)
        return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
    return (uint64_t)f2i(v);
}

#define STORE(T, FROM_D, FROM_I, FROM_U)                                   \
    do {                                                                   \
        T *d_ = (T *)dst + off;                                            \
        if (k == WIDE_F64)                                                 \
            for (int64_t i = 0; i < m; i++) {                              \
                const double x = w->d[i];                                  \
                d_[i] = (FROM_D);                                          \
            }                                                              \
        else if (k == WIDE_I64)                                            \
            for (int64_t i = 0; i < m; i++) {                              \
                const int64_t x = w->i[i];                                 \
                d_[i] = (FROM_I);                                          \
            }                                                              \
        else                                                               \
            for (int64_t i = 0; i < m; i++) {                              \
                const uint64_t x = w->u[i];                                \
                d_[i] = (FROM_U);                                          \
            }                                                              \
    } while (0)

#define STORE_INT(T, F2) STORE(T, (T)F2(x), (T)x, (T)x)

static void store_chunk(int dt, wide_kind k, const wide_buf *w, void *dst, int64_t off, int64_t m)
{
    switch (dt) {
    case REF_DT_FLOAT: STORE(float, (float)x, (float)x, (float)x); break;
    case REF_DT_DOUBLE: STORE(double, x, (double)x, (double)x); break;
    case REF_DT_FLOAT16:
        STORE(uint16_t, ref_f64_to_f16(x), ref_f64_to_f16((double)x), ref_f64_to_f16((double)x));
        break;
    case REF_DT_BFLOAT16:
        STORE(uint16_t, ref_f32_to_bf16_trunc((float)x), ref_f32_to_bf16_trunc((float)x),
              ref_f32_to_bf16_trunc((float)x));
        break;
    case REF_DT_BOOL: STORE(uint8_t, x != 0, x != 0, x != 0); break;
    case REF_DT_INT8: STORE_INT(int8_t, f2i); break;
    case REF_DT_INT16: STORE_INT(int16_t, f2i); break;
    case REF_DT_INT32: STORE_INT(int32_t, f2i); break;
    case REF_DT_INT64: STORE_INT(int64_t, f2i); break;
    case REF_DT_UINT8: STORE_INT(uint8_t, f2u); break;
    case REF_DT_UINT16: STORE_INT(uint16_t, f2u); break;
    case REF_DT_UINT32: STORE_INT(uint32_t, f2u); break;
    case REF_DT_UINT64: STORE_INT(uint64_t, f2u); break;
    default: break;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Direct loops for the common numeric pairs: one C conversion per element, no chunk buffer and no switch
 * in the loop, so the compiler vectorizes them. Each gives the bits of the path through the wide type:
 * an integer reaches float or double through int64/uint64 exactly and is rounded once either way, float
 * and double convert the same directly, and integer narrowing wraps the same from any wider source. Float
 * to integer is left out (it needs f2i's saturation and NaN rule), as are bool and the 16-bit floats.
 * ---------------------------------------------------------------------------------------------- */

typedef void (*cast_direct_fn)(const void *src, void *dst, int64_t begin, int64_t end);

#define CAST_DIRECT_FN(S, SN, D, DN)                                                  \
    static void cast_##SN##_##DN(const void *src, void *dst, int64_t begin, int64_t end) \
    {                                                                                 \
        const S *s_ = (const S *)src;                                                 \
        D *d_ = (D *)dst;                                                             \
        for (int64_t i = begin; i < end; i++)                                         \
            d_[i] = (D)s_[i];                                                         \
    }

/* X(S, SN, DT) over the sources; every source goes to float, double, int32 and int64 except float to
 * an integer. */
#define CAST_INT_SOURCES(X)                                                                          \
    X(int8_t, i8, REF_DT_INT8) X(uint8_t, u8, REF_DT_UINT8) X(int16_t, i16, REF_DT_INT16)            \
    X(uint16_t, u16, REF_DT_UINT16) X(int32_t, i32, REF_DT_INT32) X(uint32_t, u32, REF_DT_UINT32)    \
    X(int64_t, i64, REF_DT_INT64) X(uint64_t, u64, REF_DT_UINT64)
#define CAST_FLOAT_SOURCES(X) X(float, f32, REF_DT_FLOAT) X(double, f64, REF_DT_DOUBLE)

#define CAST_TO_FLOATS(S, SN, DT) CAST_DIRECT_FN(S, SN, float, f32) CAST_DIRECT_FN(S, SN, double, f64)
#define CAST_TO_INTS(S, SN, DT) CAST_DIRECT_FN(S, SN, int32_t, i32) CAST_DIRECT_FN(S, SN, int64_t, i64)
CAST_INT_SOURCES(CAST_TO_FLOATS)
CAST_INT_SOURCES(CAST_TO_INTS)
CAST_FLOAT_SOURCES(CAST_TO_FLOATS)

/* float <-> float16 through half_convert.c's array converters (F16C where the CPU has it): the same rounding to
 * nearest even and the same NaNs as ref_f64_to_f16 of the float widened (exact) and ref_f16_to_f32. */
static void cast_f32_f16(const void *src, void *dst, int64_t begin, int64_t end)
{
    ref_float_to_half_n((const float *)src + begin, (uint16_t *)dst + begin, end - begin);
}

static void cast_f16_f32(const void *src, void *dst, int64_t begin, int64_t end)
{
    ref_half_to_float_n((const uint16_t *)src + begin, (float *)dst + begin, end - begin);
}

/* A float Cast to float16 in a float32-run graph: copy, then round in place. */
static void cast_f32_round_half(const void *src, void *dst, int64_t begin, int64_t end)
{
    float *y = (float *)dst + begin;
    if (src != dst)
        memcpy(y, (const float *)src + begin, (size_t)(end - begin) * sizeof *y);
    ref_float_round_half_n(y, end - begin);
}

static cast_direct_fn cast_direct(int from, int to)
{
#define CAST_PICK_FLOATS(S, SN, DT)                       \
    if (from == DT && to == REF_DT_FLOAT)                 \
        return cast_##SN##_f32;                           \
    if (from == DT && to == REF_DT_DOUBLE)                \
        return cast_##SN##_f64;
#define CAST_PICK_INTS(S, SN, DT)                         \
    if (from == DT && to == REF_DT_INT32)                 \
        return cast_##SN##_i32;                           \
    if (from == DT && to == REF_DT_INT64)                 \
        return cast_##SN##_i64;
    CAST_INT_SOURCES(CAST_PICK_FLOATS)
    CAST_INT_SOURCES(CAST_PICK_INTS)
    CAST_FLOAT_SOURCES(CAST_PICK_FLOATS)
#undef CAST_PICK_FLOATS
#undef CAST_PICK_INTS
    if (from == REF_DT_FLOAT && to == REF_DT_FLOAT16)
        return cast_f32_f16;
    if (from == REF_DT_FLOAT16 && to == REF_DT_FLOAT)
        return cast_f16_f32;
    return NULL;
}

typedef struct cast_direct_job {
    cast_direct_fn fn;
    const void *src;
    void *dst;
} cast_direct_job;

static void cast_direct_range(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const cast_direct_job *j = arg;
    j->fn(j->src, j->dst, begin, end);
}

/* ------------------------------------------------------------------------------------------------
 * Operators.
 * ---------------------------------------------------------------------------------------------- */

/* Cast-1 spelled `to` as a type name. */
static int dtype_from_name(const char *s)
{
    static const struct {
        const char *name;
        int dt;
    } names[] = {{"FLOAT", REF_DT_FLOAT},   {"UINT8", REF_DT_UINT8},     {"INT8", REF_DT_INT8},
                 {"UINT16", REF_DT_UINT16}, {"INT16", REF_DT_INT16},     {"INT32", REF_DT_INT32},
                 {"INT64", REF_DT_INT64},   {"STRING", REF_DT_STRING},   {"BOOL", REF_DT_BOOL},
                 {"FLOAT16", REF_DT_FLOAT16}, {"DOUBLE", REF_DT_DOUBLE}, {"UINT32", REF_DT_UINT32},
                 {"UINT64", REF_DT_UINT64}, {"BFLOAT16", REF_DT_BFLOAT16}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(s, names[k].name))
            return names[k].dt;
    return -1;
}

static int cast_target(ref_op_ctx *c, int *to)
{
    int like = !strcmp(c->node->op_type, "CastLike");
    int want = like ? 2 : 1;
    if (c->n_in != want || !c->in[0] || (like && !c->in[1]))
        return ref_fail(c->err, REF_E_INVALID, "%s takes exactly %d input(s), got %d", c->node->op_type, want,
                        c->n_in);
    if (like) {
        *to = c->in[1]->dtype;
    } else {
        const ref_attr *a = ref_node_attr(c->node, "to");
        if (!a)
            return ref_fail(c->err, REF_E_INVALID, "Cast: attribute 'to' is required");
        *to = a->type == REF_ATTR_STRING ? dtype_from_name(a->s) : (int)a->i;
    }
    int from = c->in[0]->dtype;
    if ((from == REF_DT_STRING && (cast_supported(*to) || *to == REF_DT_STRING)) ||
        (*to == REF_DT_STRING && cast_supported(from)))
        return REF_OK; /* cast_string.c */
    if (!cast_supported(from))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s from type %s is not supported", c->node->op_type,
                        ref_dtype_name(from));
    if (!cast_supported(*to))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s to type %s (%d) is not supported", c->node->op_type,
                        ref_dtype_name(*to), *to);
    return REF_OK;
}

static int cast_infer(ref_op_ctx *c)
{
    int to = 0, rc = cast_target(c, &to);
    if (rc)
        return rc;
    c->out[0]->dtype = to;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

static void cast_range(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    ref_op_ctx *c = arg;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    wide_kind k = wide_of(x->dtype);
    wide_buf w;
    for (int64_t off = begin; off < end; off += CHUNK) {
        int64_t m = end - off < CHUNK ? end - off : CHUNK;
        load_chunk(x->dtype, x->data, off, m, &w);
        store_chunk(y->dtype, k, &w, y->data, off, m);
    }
}

static int cast_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    if (x->dtype == y->dtype) {
        if (ref_tensor_nbytes(x))
            memcpy(y->data, x->data, ref_tensor_nbytes(x));
        return REF_OK;
    }
    if (x->dtype == REF_DT_STRING || y->dtype == REF_DT_STRING)
        return ref_cast_string_run(c);
    cast_direct_job j = {.fn = cast_direct(x->dtype, y->dtype), .src = x->data, .dst = y->data};
    if (j.fn) {
        ref_ew_parallel(c->pool, ref_tensor_numel(x), cast_direct_range, &j);
        return REF_OK;
    }
    ref_ew_parallel(c->pool, ref_tensor_numel(x), cast_range, c);
    return REF_OK;
}

/* A Cast to float16 in a graph whose float16 values run as float32 (compile/half.c): the output is float32 holding
 * exactly the float16 the Cast would make, each value rounded once from its source. */
static int cast_round_half_infer(ref_op_ctx *c)
{
    int rc = cast_infer(c);
    if (rc)
        return rc;
    if (c->out[0]->dtype != REF_DT_FLOAT16 || c->in[0]->dtype == REF_DT_STRING)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Cast in a float16 graph: from %s to %s (only to float16 from "
                        "a number)", ref_dtype_name(c->in[0]->dtype), ref_dtype_name(c->out[0]->dtype));
    c->out[0]->dtype = REF_DT_FLOAT;
    return REF_OK;
}

static void cast_round_half_range(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    ref_op_ctx *c = arg;
    const ref_tensor *x = c->in[0];
    float *y = c->out[0]->data;
    wide_kind k = wide_of(x->dtype);
    wide_buf w;
    uint16_t h[CHUNK];
    for (int64_t off = begin; off < end; off += CHUNK) {
        int64_t m = end - off < CHUNK ? end - off : CHUNK;
        load_chunk(x->dtype, x->data, off, m, &w);
        store_chunk(REF_DT_FLOAT16, k, &w, h, 0, m);
        ref_half_to_float_n(h, y + off, m);
    }
}

static int cast_round_half_run(ref_op_ctx *c)
{
    if (c->in[0]->dtype == REF_DT_FLOAT) {
        cast_direct_job j = {.fn = cast_f32_round_half, .src = c->in[0]->data, .dst = c->out[0]->data};
        ref_ew_parallel(c->pool, ref_tensor_numel(c->in[0]), cast_direct_range, &j);
        return REF_OK;
    }
    ref_ew_parallel(c->pool, ref_tensor_numel(c->in[0]), cast_round_half_range, c);
    return REF_OK;
}

const ref_op ref_op_cast_round_half = {.name = "Cast", .infer = cast_round_half_infer, .run = cast_round_half_run};

const ref_op ref_ops_cast[] = {
    {.name = "Cast", .infer = cast_infer, .run = cast_run},
    {.name = "CastLike", .infer = cast_infer, .run = cast_run},
    {.name = NULL},
};
