/* reduce_elem.h: element access by runtime dtype for the pool, norm, reduce and softmax kernels, which
 * compute in double and store back in the tensor's own type. It must never read or write past the index given. */
#ifndef REF_REDUCE_ELEM_H
#define REF_REDUCE_ELEM_H

#include <math.h>
#include <stdint.h>

#include "op.h"

/* Kernels written over ref_elem_ld/st take the dtype as a parameter and are forced inline into a caller
 * that passes REF_DT_FLOAT as a constant for the hot type, so the per-element switch folds away there. */
#define REF_ELEM_INLINE static inline __attribute__((always_inline))

/* True for the dtypes ref_elem_ld / ref_elem_st handle. */
static inline int ref_elem_supported(int dt)
{
    switch (dt) {
    case REF_DT_FLOAT: case REF_DT_DOUBLE: case REF_DT_INT8: case REF_DT_UINT8:
    case REF_DT_INT16: case REF_DT_UINT16: case REF_DT_INT32: case REF_DT_INT64:
    case REF_DT_UINT32: case REF_DT_UINT64:
        return 1;
    default:
        return 0;
    }
}

static inline int ref_elem_is_float(int dt) { return dt == REF_DT_FLOAT || dt == REF_DT_DOUBLE; }

/* x[i] as double. The switch is on a loop-invariant value, so it predicts perfectly. */
static inline double ref_elem_ld(const void *x, int dt, int64_t i)
{
    switch (dt) {
    case REF_DT_FLOAT: return ((const float *)x)[i];
    case REF_DT_DOUBLE: return ((const double *)x)[i];
    case REF_DT_INT8: return ((const int8_t *)x)[i];
    case REF_DT_UINT8: return ((const uint8_t *)x)[i];
    case REF_DT_INT16: return ((const int16_t *)x)[i];
    case REF_DT_UINT16: return ((const uint16_t *)x)[i];
    case REF_DT_INT32: return ((const int32_t *)x)[i];
    case REF_DT_INT64: return (double)((const int64_t *)x)[i];
    case REF_DT_UINT32: return ((const uint32_t *)x)[i];
    case REF_DT_UINT64: return (double)((const uint64_t *)x)[i];
    default: return 0.0;
    }
}

/* x[i] as int64, exact for every integer dtype (uint64 above INT64_MAX wraps). */
static inline int64_t ref_elem_ldi(const void *x, int dt, int64_t i)
{
    switch (dt) {
    case REF_DT_INT8: return ((const int8_t *)x)[i];
    case REF_DT_UINT8: return ((const uint8_t *)x)[i];
    case REF_DT_INT16: return ((const int16_t *)x)[i];
    case REF_DT_UINT16: return ((const uint16_t *)x)[i];
    case REF_DT_INT32: return ((const int32_t *)x)[i];
    case REF_DT_INT64: return ((const int64_t *)x)[i];
    case REF_DT_UINT32: return ((const uint32_t *)x)[i];
    case REF_DT_UINT64: return (int64_t)((const uint64_t *)x)[i];
    default: return (int64_t)ref_elem_ld(x, dt, i);
    }
}

/* Saturating double -> int64 so out-of-range or NaN values never hit undefined conversions. */
static inline int64_t ref_elem_sat_i64(double v)
{
    if (!(v == v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static inline int64_t ref_elem_clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* y[i] = v converted to dt (integers saturate and truncate toward zero). */
static inline void ref_elem_st(void *y, int dt, int64_t i, double v)
{
    switch (dt) {
    case REF_DT_FLOAT: ((float *)y)[i] = (float)v; return;
    case REF_DT_DOUBLE: ((double *)y)[i] = v; return;
    default: break;
    }
    int64_t q = ref_elem_sat_i64(v);
    switch (dt) {
    case REF_DT_INT8: ((int8_t *)y)[i] = (int8_t)ref_elem_clamp(q, INT8_MIN, INT8_MAX); return;
    case REF_DT_UINT8: ((uint8_t *)y)[i] = (uint8_t)ref_elem_clamp(q, 0, UINT8_MAX); return;
    case REF_DT_INT16: ((int16_t *)y)[i] = (int16_t)ref_elem_clamp(q, INT16_MIN, INT16_MAX); return;
    case REF_DT_UINT16: ((uint16_t *)y)[i] = (uint16_t)ref_elem_clamp(q, 0, UINT16_MAX); return;
    case REF_DT_INT32: ((int32_t *)y)[i] = (int32_t)ref_elem_clamp(q, INT32_MIN, INT32_MAX); return;
    case REF_DT_INT64: ((int64_t *)y)[i] = q; return;
    case REF_DT_UINT32: ((uint32_t *)y)[i] = (uint32_t)ref_elem_clamp(q, 0, UINT32_MAX); return;
    case REF_DT_UINT64: ((uint64_t *)y)[i] = (uint64_t)(q < 0 ? 0 : q); return;
    default: return;
    }
}

/* y[i] = v for integer dtypes, wrapping like a C cast (used where the value is already in range). */
static inline void ref_elem_sti(void *y, int dt, int64_t i, int64_t v)
{
    switch (dt) {
    case REF_DT_INT8: ((int8_t *)y)[i] = (int8_t)v; return;
    case REF_DT_UINT8: ((uint8_t *)y)[i] = (uint8_t)v; return;
    case REF_DT_INT16: ((int16_t *)y)[i] = (int16_t)v; return;
    case REF_DT_UINT16: ((uint16_t *)y)[i] = (uint16_t)v; return;
    case REF_DT_INT32: ((int32_t *)y)[i] = (int32_t)v; return;
    case REF_DT_INT64: ((int64_t *)y)[i] = v; return;
    case REF_DT_UINT32: ((uint32_t *)y)[i] = (uint32_t)v; return;
    case REF_DT_UINT64: ((uint64_t *)y)[i] = (uint64_t)v; return;
    default: ref_elem_st(y, dt, i, (double)v); return;
    }
}

/* True when output i of the node is wanted. The runtime hands omitted optional outputs ("" names) a
 * placeholder tensor that must not be written, so presence is read from the node, not from c->out. */
static inline bool ref_elem_out_present(const ref_op_ctx *c, int i)
{
    return i < c->n_out && c->out[i] && i < c->node->n_outputs && c->node->outputs[i] &&
           c->node->outputs[i][0] != '\0';
}

/* Items per parallel chunk so each chunk does about this many element visits. */
static inline int64_t ref_elem_grain(int64_t work_per_item)
{
    const int64_t target = 32768;
    if (work_per_item < 1)
        work_per_item = 1;
    return work_per_item >= target ? 1 : target / work_per_item;
}

#endif
