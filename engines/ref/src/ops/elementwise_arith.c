/* elementwise_arith.c: the arithmetic row kernels (Add, Sub, Mul, Div, Max, Min, Mod, Pow, copy) for every
 * numeric dtype. It must never trap or hit undefined behavior on any input: integer division by 0 or -1,
 * signed overflow and out-of-range float->int conversions all have defined results here. */
#include <math.h>
#include <string.h>

#include "elementwise_kernels.h"
#include "elementwise_ops.h"

REF_EW_VECTORIZE

/* ------------------------------------------------------------------------------------------------
 * Scalar helpers whose integer edge cases C leaves undefined.
 * ---------------------------------------------------------------------------------------------- */

#define DEF_SINT_HELPERS(OP, T, S, W, DT)                                                        \
    static inline T div_##S(T x, T y) { return y == 0 ? 0 : y == -1 ? (T)(0 - (W)x) : (T)(x / y); } \
    static inline T fmod_##S(T x, T y) { return (y == 0 || y == -1) ? 0 : (T)(x % y); }             \
    static inline T mod_##S(T x, T y)                                                            \
    {                                                                                            \
        if (y == 0 || y == -1)                                                                   \
            return 0;                                                                            \
        T r = (T)(x % y);                                                                        \
        return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;                                \
    }
REF_EW_SINTS(DEF_SINT_HELPERS, _)

#define DEF_UINT_HELPERS(OP, T, S, W, DT)                                 \
    static inline T div_##S(T x, T y) { return y ? (T)(x / y) : 0; }     \
    static inline T fmod_##S(T x, T y) { return y ? (T)(x % y) : 0; }    \
    static inline T mod_##S(T x, T y) { return y ? (T)(x % y) : 0; }
REF_EW_UINTS(DEF_UINT_HELPERS, _)

/* numpy's float remainder: fmod, moved into the divisor's sign; a zero result takes the divisor's sign. */
static inline float mod_f32(float x, float y)
{
    float r = fmodf(x, y);
    if (r != 0)
        return ((r < 0) != (y < 0)) ? r + y : r;
    return copysignf(0.0f, y);
}

static inline double mod_f64(double x, double y)
{
    double r = fmod(x, y);
    if (r != 0)
        return ((r < 0) != (y < 0)) ? r + y : r;
    return copysign(0.0, y);
}

static inline float fmod_f32(float x, float y) { return fmodf(x, y); }
static inline double fmod_f64(double x, double y) { return fmod(x, y); }

/* ------------------------------------------------------------------------------------------------
 * Kernels.
 * ---------------------------------------------------------------------------------------------- */

#define DEF_WRAP(OP, T, S, W, DT) \
    static void OP##_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, OP##_expr(T, W, x, y)) }
#define add_expr(T, W, x, y) (T)((W)(x) + (W)(y))
#define sub_expr(T, W, x, y) (T)((W)(x) - (W)(y))
#define mul_expr(T, W, x, y) (T)((W)(x) * (W)(y))
REF_EW_NUMERIC(DEF_WRAP, add)
REF_EW_NUMERIC(DEF_WRAP, sub)
REF_EW_NUMERIC(DEF_WRAP, mul)

#define DEF_FLOAT_DIV(OP, T, S, W, DT) static void div_k_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, x / y) }
REF_EW_FLOATS(DEF_FLOAT_DIV, _)

#define DEF_HELPER_KERNEL(OP, T, S, W, DT) \
    static void OP##_k_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, OP##_##S(x, y)) }
REF_EW_INTS(DEF_HELPER_KERNEL, div)
REF_EW_NUMERIC(DEF_HELPER_KERNEL, mod)
REF_EW_NUMERIC(DEF_HELPER_KERNEL, fmod)

/* x != x is the NaN test; written so that a NaN in either operand wins. */
#define DEF_FLOAT_MINMAX(OP, T, S, W, DT)                                                           \
    static void max_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, (x != x || x > y) ? x : y) }      \
    static void min_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, (x != x || x < y) ? x : y) }
REF_EW_FLOATS(DEF_FLOAT_MINMAX, _)
#define DEF_INT_MINMAX(OP, T, S, W, DT)                                        \
    static void max_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, x > y ? x : y) } \
    static void min_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, x < y ? x : y) }
REF_EW_INTS(DEF_INT_MINMAX, _)

static const ref_ew_row_fn arith_tab[REF_EW_N_ARITH][REF_EW_NDT] = {
    [REF_EW_ADD] = {REF_EW_NUMERIC(REF_EW_TAB, add)},
    [REF_EW_SUB] = {REF_EW_NUMERIC(REF_EW_TAB, sub)},
    [REF_EW_MUL] = {REF_EW_NUMERIC(REF_EW_TAB, mul)},
    [REF_EW_DIV] = {REF_EW_NUMERIC(REF_EW_TAB, div_k)},
    [REF_EW_MAX] = {REF_EW_NUMERIC(REF_EW_TAB, max)},
    [REF_EW_MIN] = {REF_EW_NUMERIC(REF_EW_TAB, min)},
    [REF_EW_MOD] = {REF_EW_NUMERIC(REF_EW_TAB, mod_k)},
    [REF_EW_FMOD] = {REF_EW_NUMERIC(REF_EW_TAB, fmod_k)},
};

ref_ew_row_fn ref_ew_arith_fn(ref_ew_arith op, int dtype)
{
    if ((unsigned)op >= REF_EW_N_ARITH || dtype < 0 || dtype >= REF_EW_NDT)
        return NULL;
    return arith_tab[op][dtype];
}

/* ------------------------------------------------------------------------------------------------
 * Copy / fill.
 * ---------------------------------------------------------------------------------------------- */

#define DEF_COPY(T, S)                                   \
    static void copy_##S(REF_EW_ROW_ARGS)                \
    {                                                    \
        (void)arg;                                       \
        T *o = out;                                      \
        const T *a = in[0];                              \
        if (step[0]) {                                   \
            memcpy(o, a, (size_t)n * sizeof(T));         \
        } else {                                         \
            const T v = a[0];                            \
            for (int64_t i = 0; i < n; i++)              \
                o[i] = v;                                \
        }                                                \
    }
DEF_COPY(uint8_t, 1)
DEF_COPY(uint16_t, 2)
DEF_COPY(uint32_t, 4)
DEF_COPY(uint64_t, 8)

ref_ew_row_fn ref_ew_copy_fn(size_t elem_size)
{
    switch (elem_size) {
    case 1: return copy_1;
    case 2: return copy_2;
    case 4: return copy_4;
    case 8: return copy_8;
    default: return NULL;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Pow.
 * ---------------------------------------------------------------------------------------------- */

/* Same-type float powers. Broadcast exponents of 1 and 2 (x^2 in norms and losses) are exactly what a
 * correctly rounded pow returns; 3 (the tanh form of GELU) is x*x*x, within 2 ulps of it, and vectorizes
 * where pow cannot. */
#define DEF_POW_SAME(T, S, POWF)                                                    \
    static void pow_same_##S(REF_EW_ROW_ARGS)                                       \
    {                                                                               \
        const T e = ((const T *)in[1])[0];                                          \
        if (step[0] && !step[1] && (e == (T)1 || e == (T)2 || e == (T)3)) {         \
            const T *a = in[0];                                                     \
            T *o = out;                                                             \
            if (e == (T)1)                                                          \
                memcpy(o, a, (size_t)n * sizeof(T));                                \
            else if (e == (T)2)                                                     \
                for (int64_t i = 0; i < n; i++)                                     \
                    o[i] = a[i] * a[i];                                             \
            else                                                                    \
                for (int64_t i = 0; i < n; i++)                                     \
                    o[i] = a[i] * a[i] * a[i];                                      \
            return;                                                                 \
        }                                                                           \
        REF_EW_BIN_BODY(T, T, POWF(x, y))                                           \
    }
DEF_POW_SAME(float, f32, powf)
DEF_POW_SAME(double, f64, pow)

/* The exponent as double (or int64 for integer dtypes), by its runtime dtype. */
static double exp_ld(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case REF_DT_FLOAT: return ((const float *)p)[i];
    case REF_DT_DOUBLE: return ((const double *)p)[i];
    case REF_DT_INT8: return ((const int8_t *)p)[i];
    case REF_DT_INT16: return ((const int16_t *)p)[i];
    case REF_DT_INT32: return ((const int32_t *)p)[i];
    case REF_DT_INT64: return (double)((const int64_t *)p)[i];
    case REF_DT_UINT8: return ((const uint8_t *)p)[i];
    case REF_DT_UINT16: return ((const uint16_t *)p)[i];
    case REF_DT_UINT32: return ((const uint32_t *)p)[i];
    case REF_DT_UINT64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

static int64_t exp_ldi(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case REF_DT_INT8: return ((const int8_t *)p)[i];
    case REF_DT_INT16: return ((const int16_t *)p)[i];
    case REF_DT_INT32: return ((const int32_t *)p)[i];
    case REF_DT_INT64: return ((const int64_t *)p)[i];
    case REF_DT_UINT8: return ((const uint8_t *)p)[i];
    case REF_DT_UINT16: return ((const uint16_t *)p)[i];
    case REF_DT_UINT32: return ((const uint32_t *)p)[i];
    case REF_DT_UINT64: {
        uint64_t v = ((const uint64_t *)p)[i];
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default: return 0;
    }
}

static int exp_is_int(int dt) { return dt != REF_DT_FLOAT && dt != REF_DT_DOUBLE; }

/* x^e by squaring, wrapping like numpy's integer power. Negative powers truncate 1/x^|e| toward zero. */
static uint64_t ipow(int64_t x, int64_t e)
{
    if (e < 0) {
        if (x == 1)
            return 1;
        if (x == -1)
            return (e & 1) ? (uint64_t)-1 : 1;
        return 0;
    }
    uint64_t r = 1, b = (uint64_t)x;
    while (e) {
        if (e & 1)
            r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}

/* double -> int64 truncating toward zero; NaN is 0 and out-of-range values saturate. */
static int64_t sat_i64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static void pow_any_f32(REF_EW_ROW_ARGS)
{
    const int edt = *(const int *)arg;
    const float *a = in[0];
    float *o = out;
    for (int64_t i = 0; i < n; i++)
        o[i] = (float)pow(a[step[0] ? i : 0], exp_ld(in[1], edt, step[1] ? i : 0));
}

static void pow_any_f64(REF_EW_ROW_ARGS)
{
    const int edt = *(const int *)arg;
    const double *a = in[0];
    double *o = out;
    for (int64_t i = 0; i < n; i++)
        o[i] = pow(a[step[0] ? i : 0], exp_ld(in[1], edt, step[1] ? i : 0));
}

#define DEF_POW_INT(T, S)                                                                  \
    static void pow_any_##S(REF_EW_ROW_ARGS)                                               \
    {                                                                                      \
        const int edt = *(const int *)arg;                                                 \
        const T *a = in[0];                                                                \
        T *o = out;                                                                        \
        for (int64_t i = 0; i < n; i++) {                                                  \
            const T x = a[step[0] ? i : 0];                                                \
            const int64_t j = step[1] ? i : 0;                                             \
            if (exp_is_int(edt))                                                           \
                o[i] = (T)ipow(x, exp_ldi(in[1], edt, j));                                 \
            else                                                                           \
                o[i] = (T)sat_i64(pow((double)x, exp_ld(in[1], edt, j)));                  \
        }                                                                                  \
    }
DEF_POW_INT(int32_t, i32)
DEF_POW_INT(int64_t, i64)

static int pow_exp_ok(int dt)
{
    switch (dt) {
    case REF_DT_FLOAT: case REF_DT_DOUBLE: case REF_DT_INT8: case REF_DT_INT16: case REF_DT_INT32:
    case REF_DT_INT64: case REF_DT_UINT8: case REF_DT_UINT16: case REF_DT_UINT32: case REF_DT_UINT64:
        return 1;
    default:
        return 0;
    }
}

ref_ew_row_fn ref_ew_pow_fn(int base_dt, int exp_dt)
{
    if (!pow_exp_ok(exp_dt))
        return NULL;
    switch (base_dt) {
    case REF_DT_FLOAT: return exp_dt == REF_DT_FLOAT ? pow_same_f32 : pow_any_f32;
    case REF_DT_DOUBLE: return exp_dt == REF_DT_DOUBLE ? pow_same_f64 : pow_any_f64;
    case REF_DT_INT32: return pow_any_i32;
    case REF_DT_INT64: return pow_any_i64;
    default: return NULL;
    }
}
