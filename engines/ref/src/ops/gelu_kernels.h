/* gelu_kernels.h: the float GELU-family row kernels (erf and tanh forms, each with or without a bias operand, and
 * x * sigmoid(alpha x)), stamped out portable in gelu.c and for AVX2 in gelu_avx2.c from these same expressions.
 * It must never be included before REF_EW_NO_CONTRACT and REF_EW_VECTORIZE: both builds must give the same bits. */
#ifndef REF_GELU_KERNELS_H
#define REF_GELU_KERNELS_H

#include "elementwise_kernels.h"
#include "unary_fastmath.h"

/* 0.5 x (1 + erf(x / sqrt 2)) and 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), ONNX Gelu's two forms. */
#define REF_GELU_ERF(x) (0.5f * (x) * (1.0f + ref_ferf((x) * 0.70710678118654752f)))
#define REF_GELU_TANH(x) \
    (0.5f * (x) * (1.0f + ref_ftanh((x) * (0.7978845608028654f + 0.035677408136300125f * (x) * (x)))))

/* Kernel names, SUFFIX f32 (portable) or f32_avx2. QuickGelu's arg points at its float alpha. */
#define REF_GELU_DECLARE(SUFFIX)                             \
    void ref_gelu_erf_##SUFFIX(REF_EW_ROW_ARGS);             \
    void ref_gelu_tanh_##SUFFIX(REF_EW_ROW_ARGS);            \
    void ref_gelu_erf_bias_##SUFFIX(REF_EW_ROW_ARGS);        \
    void ref_gelu_tanh_bias_##SUFFIX(REF_EW_ROW_ARGS);       \
    void ref_gelu_quick_##SUFFIX(REF_EW_ROW_ARGS);

/* Each kernel first lays its argument (x, or x + bias) into the output row, then maps the row in place: one call
 * site of the transcendental per kernel, so the compiler inlines and vectorizes it (with one per broadcast pattern
 * it kept ref_ferf out of line: a quarter of a Whisper-tiny encoder's time). */
#define REF_GELU_MAP(EXPR)                  \
    float *o_ = out;                        \
    for (int64_t i_ = 0; i_ < n; i_++) {    \
        const float x = o_[i_];             \
        o_[i_] = EXPR;                      \
    }

#define REF_GELU_DEFINE(SUFFIX)                                                                                \
    void ref_gelu_erf_##SUFFIX(REF_EW_ROW_ARGS)                                                                \
    {                                                                                                          \
        {                                                                                                      \
            (void)arg;                                                                                         \
            REF_EW_UN_BODY(float, float, x)                                                                    \
        }                                                                                                      \
        REF_GELU_MAP(REF_GELU_ERF(x))                                                                          \
    }                                                                                                          \
    void ref_gelu_tanh_##SUFFIX(REF_EW_ROW_ARGS)                                                               \
    {                                                                                                          \
        {                                                                                                      \
            (void)arg;                                                                                         \
            REF_EW_UN_BODY(float, float, x)                                                                    \
        }                                                                                                      \
        REF_GELU_MAP(REF_GELU_TANH(x))                                                                         \
    }                                                                                                          \
    void ref_gelu_erf_bias_##SUFFIX(REF_EW_ROW_ARGS)                                                           \
    {                                                                                                          \
        {                                                                                                      \
            REF_EW_BIN_BODY(float, float, x + y)                                                               \
        }                                                                                                      \
        REF_GELU_MAP(REF_GELU_ERF(x))                                                                          \
    }                                                                                                          \
    void ref_gelu_tanh_bias_##SUFFIX(REF_EW_ROW_ARGS)                                                          \
    {                                                                                                          \
        {                                                                                                      \
            REF_EW_BIN_BODY(float, float, x + y)                                                               \
        }                                                                                                      \
        REF_GELU_MAP(REF_GELU_TANH(x))                                                                         \
    }                                                                                                          \
    void ref_gelu_quick_##SUFFIX(REF_EW_ROW_ARGS)                                                              \
    {                                                                                                          \
        const float alpha = *(const float *)arg;                                                               \
        {                                                                                                      \
            REF_EW_UN_BODY(float, float, x)                                                                    \
        }                                                                                                      \
        REF_GELU_MAP(x * ref_fsigmoid(alpha * x))                                                              \
    }

REF_GELU_DECLARE(f32)
REF_GELU_DECLARE(f32_avx2)

#endif
