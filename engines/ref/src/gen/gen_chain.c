/* gen_chain.c: the "chain" architecture: [batch, hidden] through `layers` elementwise nodes, Add of one shared
 * constant then Relu, alternately: a graph as long as the options ask with almost no weights, to measure how
 * compile time grows with node count. It must never depend on anything but the options given. */
#include "gen_arch.h"
#include "gen_layers.h"

int ref_gen_build_chain(ref_gb *b, const ref_gen_options *o)
{
    const char *params[2] = {o->dynamic ? "batch" : NULL, NULL};
    int64_t dims[2] = {o->batch, o->hidden};
    ref_gb_io(b, false, "input", 2, dims, params);
    /* one constant read by every Add: fan-out as wide as the chain is long */
    const char *bias = ref_gb_random(b, "bias", REF_GB_PARAM, 1, &dims[1], 0.0f, 0.01f);
    const char *x = "input";
    for (int i = 0; i < o->layers && !b->rc; i++)
        x = i % 2 ? REF_GB_NODE(b, "Relu", ref_gb_str(b, "relu%d", i), x)
                  : REF_GB_NODE(b, "Add", ref_gb_str(b, "add%d", i), x, bias);
    ref_gb_rename_output(b, "output");
    return ref_gb_io(b, true, "output", 2, dims, params);
}
