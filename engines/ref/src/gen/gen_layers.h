/* gen_layers.h: the layers the generated networks share (conv, batch norm, linear, classifier head), with
 * PyTorch-style parameter names and fan-in scaled weights.
 * It must never pick tensor names itself beyond suffixing the layer name given (".weight", ".bias", ...). */
#ifndef REF_GEN_LAYERS_H
#define REF_GEN_LAYERS_H

#include "gen_builder.h"

/* Each returns the name of what it made (a layer's output, or a tensor), or NULL once b has failed. */

/* Variance gains of the weight initializer: He's 2 for layers reading a ReLU's output (which halves the second
 * moment), 1 for layers reading a signed input. Either way the pre-activations keep their variance. */
#define REF_GEN_GAIN_RELU 2.0f
#define REF_GEN_GAIN_LINEAR 1.0f
/* Gamma of the last batch norm of a residual branch: damped, so the variance does not double at every Add. */
#define REF_GEN_RESIDUAL_GAMMA 0.25f

/* Fan-in scaled weight: uniform ±sqrt(3 gain / fan_in), so its variance is gain / fan_in. */
const char *ref_gl_weight(ref_gb *b, const char *name, int rank, const int64_t *dims, int64_t fan_in, float gain);
/* A small bias of n values. */
const char *ref_gl_bias(ref_gb *b, const char *name, int64_t n);

/* Conv named `name` (weight name.weight [cout, cin/group, k, k], no bias), square kernel, symmetric pads. */
/* Quantized layers (b->quantize): x @ w through DynamicQuantizeLinear and MatMulInteger (w transposed first when
 * it is [out, in]), then ref_gl_dequant; the last node is named `name`. */
const char *ref_gl_qmatmul(ref_gb *b, const char *name, const char *x, const char *w, bool transpose);
/* int32 sums back to float: Cast, times x_scale * w_scale, the last Mul named `name`. */
const char *ref_gl_dequant(ref_gb *b, const char *name, const char *sums, const char *x_scale, const char *w_scale);

const char *ref_gl_conv(ref_gb *b, const char *name, const char *x, int64_t cin, int64_t cout, int k, int stride,
                        int pad, int64_t group, float gain);

/* BatchNormalization named `name` over c channels: gamma ≈ gamma_center, beta ≈ 0 (parameters name.weight,
 * name.bias) and running mean ≈ 0, var ≈ 1 (buffers name.running_mean, name.running_var). */
const char *ref_gl_bn(ref_gb *b, const char *name, const char *x, int64_t c, float gamma_center);

/* Gemm(transB=1) named `name`: x [N, in] -> [N, out], weight name.weight [out, in], bias name.bias [out]. */
const char *ref_gl_gemm(ref_gb *b, const char *name, const char *x, int64_t in, int64_t out, float gain);

/* GlobalAveragePool "avgpool", Flatten "flatten", then Gemm `fc_name` from c to n_classes (x is a ReLU's output). */
const char *ref_gl_head(ref_gb *b, const char *fc_name, const char *x, int64_t c, int64_t n_classes);

#endif
