/* gen_resnet.c: the "resnet18" (basic blocks) and "resnet50" (bottleneck blocks) architectures (He et al. 2016),
 * laid out and named like torchvision's, with the stride on the bottleneck's 3x3 conv (the "v1.5" variant).
 * It must never share a tensor between two layers: every conv and batch norm owns its parameters. */
#include "gen_arch.h"
#include "gen_layers.h"

#define RESNET_CLASSES 1000

/* Conv `name` then BN `bn_name`. */
static const char *conv_bn(ref_gb *b, const char *name, const char *bn_name, const char *x, int64_t cin,
                           int64_t cout, int k, int stride, float gain, float gamma)
{
    x = ref_gl_conv(b, name, x, cin, cout, k, stride, k / 2, 1, gain);
    return ref_gl_bn(b, bn_name, x, cout, gamma);
}

/* The shortcut of block `p`: x itself, or a strided 1x1 projection (downsample.0 conv, downsample.1 BN). */
static const char *shortcut(ref_gb *b, const char *p, const char *x, int64_t cin, int64_t cout, int stride)
{
    if (stride == 1 && cin == cout)
        return x;
    return conv_bn(b, ref_gb_str(b, "%s.downsample.0", p), ref_gb_str(b, "%s.downsample.1", p), x, cin, cout, 1,
                   stride, REF_GEN_GAIN_RELU, 1.0f);
}

static const char *basic_block(ref_gb *b, const char *p, const char *x, int64_t cin, int64_t planes, int stride)
{
    const char *y = conv_bn(b, ref_gb_str(b, "%s.conv1", p), ref_gb_str(b, "%s.bn1", p), x, cin, planes, 3, stride,
                            REF_GEN_GAIN_RELU, 1.0f);
    y = REF_GB_NODE(b, "Relu", ref_gb_str(b, "%s.relu1", p), y);
    y = conv_bn(b, ref_gb_str(b, "%s.conv2", p), ref_gb_str(b, "%s.bn2", p), y, planes, planes, 3, 1,
                REF_GEN_GAIN_RELU, REF_GEN_RESIDUAL_GAMMA);
    const char *s = shortcut(b, p, x, cin, planes, stride);
    y = REF_GB_NODE(b, "Add", ref_gb_str(b, "%s.add", p), y, s);
    return REF_GB_NODE(b, "Relu", ref_gb_str(b, "%s.relu2", p), y);
}

static const char *bottleneck(ref_gb *b, const char *p, const char *x, int64_t cin, int64_t planes, int stride)
{
    int64_t cout = planes * 4;
    const char *y = conv_bn(b, ref_gb_str(b, "%s.conv1", p), ref_gb_str(b, "%s.bn1", p), x, cin, planes, 1, 1,
                            REF_GEN_GAIN_RELU, 1.0f);
    y = REF_GB_NODE(b, "Relu", ref_gb_str(b, "%s.relu1", p), y);
    y = conv_bn(b, ref_gb_str(b, "%s.conv2", p), ref_gb_str(b, "%s.bn2", p), y, planes, planes, 3, stride,
                REF_GEN_GAIN_RELU, 1.0f);
    y = REF_GB_NODE(b, "Relu", ref_gb_str(b, "%s.relu2", p), y);
    y = conv_bn(b, ref_gb_str(b, "%s.conv3", p), ref_gb_str(b, "%s.bn3", p), y, planes, cout, 1, 1,
                REF_GEN_GAIN_RELU, REF_GEN_RESIDUAL_GAMMA);
    const char *s = shortcut(b, p, x, cin, cout, stride);
    y = REF_GB_NODE(b, "Add", ref_gb_str(b, "%s.add", p), y, s);
    return REF_GB_NODE(b, "Relu", ref_gb_str(b, "%s.relu3", p), y);
}

int ref_gen_build_resnet(ref_gb *b, const ref_gen_options *o, int depth)
{
    static const int blocks18[4] = {2, 2, 2, 2}, blocks50[4] = {3, 4, 6, 3};
    const int *blocks = depth == 50 ? blocks50 : blocks18;
    int expansion = depth == 50 ? 4 : 1;

    const char *params[4] = {o->dynamic ? "batch" : NULL, NULL, NULL, NULL};
    int64_t in_dims[4] = {o->batch, 3, o->image_size, o->image_size}, out_dims[2] = {o->batch, RESNET_CLASSES};
    ref_gb_io(b, false, "input", 4, in_dims, params);

    const char *x = conv_bn(b, "conv1", "bn1", "input", 3, 64, 7, 2, REF_GEN_GAIN_LINEAR, 1.0f);
    x = REF_GB_NODE(b, "Relu", "relu", x);
    x = REF_GB_NODE(b, "MaxPool", "maxpool", x);
    REF_GB_INTS(b, "kernel_shape", 3, 3);
    REF_GB_INTS(b, "strides", 2, 2);
    REF_GB_INTS(b, "pads", 1, 1, 1, 1);

    int64_t c = 64;
    for (int layer = 0; layer < 4; layer++) {
        int64_t planes = (int64_t)64 << layer;
        for (int i = 0; i < blocks[layer]; i++) {
            const char *p = ref_gb_str(b, "layer%d.%d", layer + 1, i);
            int stride = (layer > 0 && i == 0) ? 2 : 1;
            x = depth == 50 ? bottleneck(b, p, x, c, planes, stride) : basic_block(b, p, x, c, planes, stride);
            c = planes * expansion;
        }
    }
    ref_gl_head(b, "fc", x, c, RESNET_CLASSES);
    ref_gb_rename_output(b, "output");
    return ref_gb_io(b, true, "output", 2, out_dims, params);
}
