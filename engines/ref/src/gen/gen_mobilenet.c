/* gen_mobilenet.c: the "mobilenetv2" architecture (Sandler et al. 2018), laid out and named like torchvision's:
 * Conv+BatchNormalization+Clip(0,6) blocks, inverted residuals with depthwise convs, 1x1 conv to 1280, head to 1000.
 * It must never fold BatchNormalization into the convs: the engine's own folding is what those nodes exercise. */
#include "gen_arch.h"
#include "gen_layers.h"

#define MBV2_CLASSES 1000

/* The paper's table 2: expansion t, output channels c, repeats n, first stride s. */
static const struct {
    int t, c, n, s;
} mbv2_table[] = {
    {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
};

int64_t ref_gen_make_divisible(double v)
{
    int64_t r = (int64_t)(v + 4.0) / 8 * 8;
    if (r < 8)
        r = 8;
    if ((double)r < 0.9 * v)
        r += 8;
    return r;
}

typedef struct mbv2 {
    ref_gb *b;
    const char *clip_min, *clip_max; /* shared scalar bounds of every ReLU6 */
} mbv2;

/* Conv2dNormActivation: conv `prefix.0`, BN `prefix.1`, Clip(0,6) `prefix.2`. The gain follows the input:
 * He's 2 after a ReLU6, 1 after a linear bottleneck. */
static const char *conv_bn_relu6(mbv2 *n, const char *prefix, const char *x, int64_t cin, int64_t cout, int k,
                                 int stride, int64_t group, float gain)
{
    ref_gb *b = n->b;
    x = ref_gl_conv(b, ref_gb_str(b, "%s.0", prefix), x, cin, cout, k, stride, k / 2, group, gain);
    x = ref_gl_bn(b, ref_gb_str(b, "%s.1", prefix), x, cout, 1.0f);
    return REF_GB_NODE(b, "Clip", ref_gb_str(b, "%s.2", prefix), x, n->clip_min, n->clip_max);
}

/* One inverted residual block `features.<idx>`: expand 1x1 (when t > 1), depthwise 3x3, linear 1x1 project. */
static const char *inverted_residual(mbv2 *n, int idx, const char *x, int64_t cin, int64_t cout, int stride, int t)
{
    ref_gb *b = n->b;
    int64_t hidden = cin * t;
    int j = 0;
    const char *y = x;
    if (t != 1)
        y = conv_bn_relu6(n, ref_gb_str(b, "features.%d.conv.%d", idx, j++), y, cin, hidden, 1, 1, 1,
                          REF_GEN_GAIN_LINEAR);
    y = conv_bn_relu6(n, ref_gb_str(b, "features.%d.conv.%d", idx, j++), y, hidden, hidden, 3, stride, hidden,
                      t != 1 ? REF_GEN_GAIN_RELU : REF_GEN_GAIN_LINEAR);
    y = ref_gl_conv(b, ref_gb_str(b, "features.%d.conv.%d", idx, j), y, hidden, cout, 1, 1, 0, 1,
                    REF_GEN_GAIN_RELU);
    int residual = stride == 1 && cin == cout;
    /* A damped last gamma keeps the variance from doubling at every residual Add. */
    y = ref_gl_bn(b, ref_gb_str(b, "features.%d.conv.%d", idx, j + 1), y, cout,
                  residual ? REF_GEN_RESIDUAL_GAMMA : 1.0f);
    if (residual)
        y = REF_GB_NODE(b, "Add", ref_gb_str(b, "features.%d.add", idx), x, y);
    return y;
}

int ref_gen_build_mobilenetv2(ref_gb *b, const ref_gen_options *o)
{
    const char *params[4] = {o->dynamic ? "batch" : NULL, NULL, NULL, NULL};
    int64_t in_dims[4] = {o->batch, 3, o->image_size, o->image_size}, out_dims[2] = {o->batch, MBV2_CLASSES};
    ref_gb_io(b, false, "input", 4, in_dims, params);

    mbv2 n = {.b = b};
    float lo = 0.0f, hi = 6.0f;
    n.clip_min = ref_gb_const_f32(b, "const.relu6_min", 0, NULL, &lo);
    n.clip_max = ref_gb_const_f32(b, "const.relu6_max", 0, NULL, &hi);

    double w = o->width_mult;
    int64_t c = ref_gen_make_divisible(32.0 * w);
    int idx = 0;
    const char *x = conv_bn_relu6(&n, ref_gb_str(b, "features.%d", idx++), "input", 3, c, 3, 2, 1, REF_GEN_GAIN_LINEAR);
    for (size_t r = 0; r < sizeof mbv2_table / sizeof mbv2_table[0]; r++) {
        int64_t cout = ref_gen_make_divisible(mbv2_table[r].c * w);
        for (int i = 0; i < mbv2_table[r].n; i++) {
            x = inverted_residual(&n, idx++, x, c, cout, i ? 1 : mbv2_table[r].s, mbv2_table[r].t);
            c = cout;
        }
    }
    int64_t last = ref_gen_make_divisible(1280.0 * (w > 1.0 ? w : 1.0));
    x = conv_bn_relu6(&n, ref_gb_str(b, "features.%d", idx), x, c, last, 1, 1, 1, REF_GEN_GAIN_LINEAR);
    ref_gl_head(b, "classifier.1", x, last, MBV2_CLASSES);
    ref_gb_rename_output(b, "output");
    return ref_gb_io(b, true, "output", 2, out_dims, params);
}
