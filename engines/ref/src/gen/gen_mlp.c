/* gen_mlp.c: the "mlp" architecture: [batch, 784] -> 3 x (Gemm + Relu) of mlp_hidden -> Gemm to 10 -> Softmax.
 * It must never depend on anything but the options given, so the same options give the same graph. */
#include "gen_arch.h"
#include "gen_layers.h"

#define MLP_IN 784
#define MLP_CLASSES 10
#define MLP_HIDDEN_LAYERS 3

int ref_gen_build_mlp(ref_gb *b, const ref_gen_options *o)
{
    const char *batch = o->dynamic ? "batch" : NULL;
    const char *params[2] = {batch, NULL};
    int64_t in_dims[2] = {o->batch, MLP_IN}, out_dims[2] = {o->batch, MLP_CLASSES};
    ref_gb_io(b, false, "input", 2, in_dims, params);

    const char *x = "input";
    int64_t width = MLP_IN;
    for (int i = 0; i < MLP_HIDDEN_LAYERS; i++) {
        x = ref_gl_gemm(b, ref_gb_str(b, "fc%d", i + 1), x, width, o->mlp_hidden,
                        i ? REF_GEN_GAIN_RELU : REF_GEN_GAIN_LINEAR);
        x = REF_GB_NODE(b, "Relu", ref_gb_str(b, "relu%d", i + 1), x);
        width = o->mlp_hidden;
    }
    x = ref_gl_gemm(b, ref_gb_str(b, "fc%d", MLP_HIDDEN_LAYERS + 1), x, width, MLP_CLASSES, REF_GEN_GAIN_RELU);
    REF_GB_NODE(b, "Softmax", "softmax", x);
    ref_gb_attr_int(b, "axis", -1);
    ref_gb_rename_output(b, "output");
    return ref_gb_io(b, true, "output", 2, out_dims, params);
}
