/* gen_layers.c: conv, batch norm, linear and classifier-head layers on top of the builder.
 * It must never draw weights outside the builder, so the tensor index stays the only key besides the seed. */
#include <math.h>

#include "gen_layers.h"

const char *ref_gl_weight(ref_gb *b, const char *name, int rank, const int64_t *dims, int64_t fan_in, float gain)
{
    float half = sqrtf(3.0f * gain / (float)(fan_in > 0 ? fan_in : 1));
    return ref_gb_random(b, name, REF_GB_PARAM, rank, dims, 0.0f, half);
}

const char *ref_gl_bias(ref_gb *b, const char *name, int64_t n)
{
    /* Small enough that the fan-in scaled product dominates; non-zero so a dropped bias shows in outputs. */
    return ref_gb_random(b, name, REF_GB_PARAM, 1, &n, 0.0f, 0.02f);
}

const char *ref_gl_qmatmul(ref_gb *b, const char *name, const char *x, const char *w, bool transpose)
{
    const char *q[3], *ws, *wz;
    ref_gb_quantize_weight(b, w, transpose, &ws, &wz);
    ref_gb_dynamic_quantize(b, ref_gb_str(b, "%s.quant", name), x, q);
    const char *i = REF_GB_NODE(b, "MatMulInteger", ref_gb_str(b, "%s.int", name), q[0], w, q[2], wz);
    return ref_gl_dequant(b, name, i, q[1], ws);
}

const char *ref_gl_dequant(ref_gb *b, const char *name, const char *sums, const char *x_scale, const char *w_scale)
{
    const char *f = REF_GB_NODE(b, "Cast", ref_gb_str(b, "%s.float", name), sums);
    ref_gb_attr_int(b, "to", REF_DT_FLOAT);
    const char *s = REF_GB_NODE(b, "Mul", ref_gb_str(b, "%s.scale", name), x_scale, w_scale);
    return REF_GB_NODE(b, "Mul", name, f, s);
}

const char *ref_gl_conv(ref_gb *b, const char *name, const char *x, int64_t cin, int64_t cout, int k, int stride,
                        int pad, int64_t group, float gain)
{
    int64_t dims[4] = {cout, cin / group, k, k};
    const char *w = ref_gl_weight(b, ref_gb_str(b, "%s.weight", name), 4, dims, dims[1] * k * k, gain);
    const char *q[3], *ws = NULL, *wz = NULL;
    if (b->quantize) {
        ref_gb_quantize_weight(b, w, false, &ws, &wz);
        ref_gb_dynamic_quantize(b, ref_gb_str(b, "%s.quant", name), x, q);
    }
    const char *y = b->quantize ? REF_GB_NODE(b, "ConvInteger", ref_gb_str(b, "%s.int", name), q[0], w, q[2], wz)
                                : REF_GB_NODE(b, "Conv", name, x, w);
    REF_GB_INTS(b, "kernel_shape", k, k);
    REF_GB_INTS(b, "strides", stride, stride);
    REF_GB_INTS(b, "pads", pad, pad, pad, pad);
    REF_GB_INTS(b, "dilations", 1, 1);
    ref_gb_attr_int(b, "group", group);
    return b->quantize ? ref_gl_dequant(b, name, y, q[1], ws) : y;
}

const char *ref_gl_bn(ref_gb *b, const char *name, const char *x, int64_t c, float gamma_center)
{
    const char *g = ref_gb_random(b, ref_gb_str(b, "%s.weight", name), REF_GB_PARAM, 1, &c, gamma_center,
                                  0.1f * gamma_center);
    const char *be = ref_gb_random(b, ref_gb_str(b, "%s.bias", name), REF_GB_PARAM, 1, &c, 0.0f, 0.05f);
    const char *mu = ref_gb_random(b, ref_gb_str(b, "%s.running_mean", name), REF_GB_BUFFER, 1, &c, 0.0f, 0.05f);
    const char *var = ref_gb_random(b, ref_gb_str(b, "%s.running_var", name), REF_GB_BUFFER, 1, &c, 1.0f, 0.1f);
    const char *y = REF_GB_NODE(b, "BatchNormalization", name, x, g, be, mu, var);
    ref_gb_attr_float(b, "epsilon", 1e-5f);
    ref_gb_attr_float(b, "momentum", 0.9f);
    return y;
}

const char *ref_gl_gemm(ref_gb *b, const char *name, const char *x, int64_t in, int64_t out, float gain)
{
    int64_t dims[2] = {out, in};
    const char *w = ref_gl_weight(b, ref_gb_str(b, "%s.weight", name), 2, dims, in, gain);
    const char *bias = ref_gl_bias(b, ref_gb_str(b, "%s.bias", name), out);
    if (b->quantize)
        return REF_GB_NODE(b, "Add", name, ref_gl_qmatmul(b, ref_gb_str(b, "%s.matmul", name), x, w, true), bias);
    const char *y = REF_GB_NODE(b, "Gemm", name, x, w, bias);
    ref_gb_attr_int(b, "transB", 1);
    return y;
}

const char *ref_gl_head(ref_gb *b, const char *fc_name, const char *x, int64_t c, int64_t n_classes)
{
    const char *p = REF_GB_NODE(b, "GlobalAveragePool", "avgpool", x);
    const char *f = REF_GB_NODE(b, "Flatten", "flatten", p);
    ref_gb_attr_int(b, "axis", 1);
    return ref_gl_gemm(b, fc_name, f, c, n_classes, REF_GEN_GAIN_RELU);
}
