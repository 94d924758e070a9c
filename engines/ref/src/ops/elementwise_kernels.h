/* elementwise_kernels.h: macros that stamp out one row kernel per (operator, dtype), with a separate
 * tight loop for each contiguous/broadcast operand pattern so the compiler vectorizes every one of them.
 * It must never let a kernel do signed-overflow arithmetic: integer ops go through a wide unsigned type. */
#ifndef REF_ELEMENTWISE_KERNELS_H
#define REF_ELEMENTWISE_KERNELS_H

#include <stdint.h>

#include "elementwise_broadcast.h"

/* Vectorize the kernels even at -O2 (gcc 12's "very cheap" cost model refuses loops with an epilogue).
 * no-trapping-math lets selects between computed values (clamps, NaN tests) become blends: the engine never
 * unmasks floating-point exceptions, so nothing can trap. Neither option changes a single result. */
#if defined(__GNUC__) && !defined(__clang__)
#define REF_EW_VECTORIZE \
    _Pragma("GCC optimize(\"tree-vectorize\", \"vect-cost-model=dynamic\", \"no-math-errno\", \"no-trapping-math\")")
#else
#define REF_EW_VECTORIZE
#endif

/* Multiply-adds never contracted into FMA, in a file that builds a kernel for a CPU that has it: the results would
 * then depend on the CPU, and the AVX2 and portable builds promise the same bits. */
#if defined(__GNUC__) && !defined(__clang__)
#define REF_EW_NO_CONTRACT _Pragma("GCC optimize(\"fp-contract=off\")")
#else
#define REF_EW_NO_CONTRACT _Pragma("STDC FP_CONTRACT OFF")
#endif

/* Table size for per-dtype kernel arrays (indexed by ref_dtype). */
#define REF_EW_NDT 17

#define REF_EW_ROW_ARGS const void *arg, void *out, const void *const *in, const int *step, int64_t n

/* Type lists: X(OP, T, suffix, W, dtype) where W is the type integer arithmetic wraps in (unsigned, at
 * least int-wide, so no promotion can overflow a signed int) and the type itself for floats. */
#define REF_EW_FLOATS(X, OP) \
    X(OP, float, f32, float, REF_DT_FLOAT) X(OP, double, f64, double, REF_DT_DOUBLE)
#define REF_EW_SINTS(X, OP)                                                                           \
    X(OP, int8_t, i8, uint32_t, REF_DT_INT8) X(OP, int16_t, i16, uint32_t, REF_DT_INT16)               \
    X(OP, int32_t, i32, uint32_t, REF_DT_INT32) X(OP, int64_t, i64, uint64_t, REF_DT_INT64)
#define REF_EW_UINTS(X, OP)                                                                           \
    X(OP, uint8_t, u8, uint32_t, REF_DT_UINT8) X(OP, uint16_t, u16, uint32_t, REF_DT_UINT16)           \
    X(OP, uint32_t, u32, uint32_t, REF_DT_UINT32) X(OP, uint64_t, u64, uint64_t, REF_DT_UINT64)
#define REF_EW_INTS(X, OP) REF_EW_SINTS(X, OP) REF_EW_UINTS(X, OP)
#define REF_EW_NUMERIC(X, OP) REF_EW_FLOATS(X, OP) REF_EW_INTS(X, OP)
#define REF_EW_SIGNED(X, OP) REF_EW_FLOATS(X, OP) REF_EW_SINTS(X, OP)

/* Table entry: [dtype] = OP_suffix. */
#define REF_EW_TAB(OP, T, S, W, DT) [DT] = OP##_##S,

/* Body of a binary row kernel: out R from inputs T, with x and y bound to the two operands in EXPR. */
#define REF_EW_BIN_BODY(T, R, EXPR)                                   \
    (void)arg;                                                        \
    R *o = out;                                                       \
    const T *a = in[0], *b = in[1];                                   \
    if (step[0] && step[1]) {                                         \
        for (int64_t i = 0; i < n; i++) {                             \
            const T x = a[i], y = b[i];                               \
            o[i] = (R)(EXPR);                                         \
        }                                                             \
    } else if (step[0]) {                                             \
        const T y = b[0];                                             \
        for (int64_t i = 0; i < n; i++) {                             \
            const T x = a[i];                                         \
            o[i] = (R)(EXPR);                                         \
        }                                                             \
    } else if (step[1]) {                                             \
        const T x = a[0];                                             \
        for (int64_t i = 0; i < n; i++) {                             \
            const T y = b[i];                                         \
            o[i] = (R)(EXPR);                                         \
        }                                                             \
    } else {                                                          \
        const T x = a[0], y = b[0];                                   \
        const R r_ = (R)(EXPR);                                       \
        for (int64_t i = 0; i < n; i++)                               \
            o[i] = r_;                                                \
    }

/* Body of a unary row kernel (the input may still be a broadcast scalar), x bound in EXPR. arg is left to
 * the kernel, which reads its parameters from it or discards it. */
#define REF_EW_UN_BODY(T, R, EXPR)                                    \
    R *o = out;                                                       \
    const T *a = in[0];                                               \
    if (step[0]) {                                                    \
        for (int64_t i = 0; i < n; i++) {                             \
            const T x = a[i];                                         \
            o[i] = (R)(EXPR);                                         \
        }                                                             \
    } else {                                                          \
        const T x = a[0];                                             \
        const R r_ = (R)(EXPR);                                       \
        for (int64_t i = 0; i < n; i++)                               \
            o[i] = r_;                                                \
    }

#endif
