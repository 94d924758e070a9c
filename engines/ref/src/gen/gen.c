/* gen.c: the model generator's front door: option defaults and validation, dispatch to an architecture, write.
 * It must never let an architecture builder see unchecked options, nor write a file for a model that failed. */
#include <string.h>

#include "../ops/half_convert.h"
#include "gen.h"
#include "gen_arch.h"
#include "status.h"

/* One protobuf message cannot exceed 2 GiB; stay clear of it so the graph around the weights still fits. */
#define INLINE_WEIGHT_LIMIT ((size_t)2000000000)
/* The whole model is built in memory before it is written; this keeps a typo from eating the machine. */
#define EXTERNAL_WEIGHT_LIMIT ((size_t)8 << 30)

void ref_gen_options_init(ref_gen_options *o)
{
    memset(o, 0, sizeof *o);
    o->arch = "mlp";
    o->batch = 1;
    o->seed = 1;
    o->width_mult = 1.0f;
    o->image_size = 224;
    o->layers = 4;
    o->hidden = 256;
    o->heads = 4;
    o->seq = 128;
    o->mlp_hidden = 1024;
}

const char *ref_gen_arch_names(void)
{
    return "mlp, mobilenetv2, resnet18, resnet50, transformer, chain";
}

static int known_arch(const char *a)
{
    static const char *const names[] = {"mlp", "mobilenetv2", "resnet18", "resnet50", "transformer", "chain"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(a, names[i]))
            return 1;
    return 0;
}

static int check_range(const char *what, int v, int lo, int hi, ref_error *err)
{
    if (v < lo || v > hi)
        return ref_fail(err, REF_E_INVALID, "gen: %s = %d is out of range [%d, %d]", what, v, lo, hi);
    return REF_OK;
}

/* Options an architecture does not use are not checked: callers may leave any value there. */
int ref_gen_validate(const ref_gen_options *o, ref_error *err)
{
    if (!o || !o->arch)
        return ref_fail(err, REF_E_INVALID, "gen: no architecture given (expected one of %s)", ref_gen_arch_names());
    if (!known_arch(o->arch))
        return ref_fail(err, REF_E_INVALID, "gen: unknown arch '%s' (expected one of %s)", o->arch,
                        ref_gen_arch_names());
    if (o->dtype && strcmp(o->dtype, "float") && strcmp(o->dtype, "float16"))
        return ref_fail(err, REF_E_INVALID, "gen: dtype '%s' (expected float or float16)", o->dtype);
    bool quant = o->quantize && strcmp(o->quantize, "none");
    if (quant && strcmp(o->quantize, "uint8"))
        return ref_fail(err, REF_E_INVALID, "gen: quantize '%s' (expected none or uint8)", o->quantize);
    if (quant && o->dtype && !strcmp(o->dtype, "float16"))
        return ref_fail(err, REF_E_INVALID,
                        "gen: quantize uint8 needs dtype float (DynamicQuantizeLinear reads float)");
    int rc = check_range("batch", o->batch, 1, 65536, err);
    if (rc)
        return rc;
    if (!strcmp(o->arch, "mlp"))
        return check_range("mlp_hidden", o->mlp_hidden, 1, 1 << 20, err);
    if (!strcmp(o->arch, "chain"))
        return (rc = check_range("layers", o->layers, 1, 1 << 24, err)) ? rc
                                                                       : check_range("hidden", o->hidden, 1, 65536, err);
    if (!strcmp(o->arch, "transformer")) {
        if ((rc = check_range("layers", o->layers, 1, 1024, err)) ||
            (rc = check_range("hidden", o->hidden, 1, 65536, err)) ||
            (rc = check_range("heads", o->heads, 1, 65536, err)) || (rc = check_range("seq", o->seq, 1, 1 << 20, err)))
            return rc;
        if (o->hidden % o->heads)
            return ref_fail(err, REF_E_INVALID, "gen: hidden = %d is not a multiple of heads = %d", o->hidden,
                            o->heads);
        return REF_OK;
    }
    if ((rc = check_range("image_size", o->image_size, 8, 4096, err)))
        return rc;
    /* Written so NaN fails too. */
    if (!strcmp(o->arch, "mobilenetv2") && !(o->width_mult > 0.0f && o->width_mult <= 8.0f))
        return ref_fail(err, REF_E_INVALID, "gen: width_mult = %g is out of range (0, 8]", (double)o->width_mult);
    return REF_OK;
}

static int dispatch(ref_gb *b, const ref_gen_options *o)
{
    if (!strcmp(o->arch, "mlp"))
        return ref_gen_build_mlp(b, o);
    if (!strcmp(o->arch, "mobilenetv2"))
        return ref_gen_build_mobilenetv2(b, o);
    if (!strcmp(o->arch, "resnet18"))
        return ref_gen_build_resnet(b, o, 18);
    if (!strcmp(o->arch, "resnet50"))
        return ref_gen_build_resnet(b, o, 50);
    if (!strcmp(o->arch, "chain"))
        return ref_gen_build_chain(b, o);
    return ref_gen_build_transformer(b, o);
}

/* dtype float16: the float model built as usual, then every float initializer, graph input and output turned to
 * float16 (weights rounded to nearest even, in place), so the float16 model is the float one rounded, seed for seed. */
static void to_half(ref_gb *b)
{
    ref_graph *g = &b->m->graph;
    for (size_t i = 0; i < g->n_inits; i++) {
        ref_initializer *in = &g->inits[i];
        if (in->t.dtype != REF_DT_FLOAT)
            continue;
        int64_t n = ref_tensor_numel(&in->t);
        /* In place, front to back: element i's two bytes land where element i/2's four were already read. */
        for (int64_t j = 0; j < n; j += 1024) {
            float tmp[1024];
            int64_t m = n - j < 1024 ? n - j : 1024;
            memcpy(tmp, (float *)in->t.data + j, (size_t)m * sizeof *tmp);
            ref_float_to_half_n(tmp, (uint16_t *)in->t.data + j, m);
        }
        in->t.dtype = REF_DT_FLOAT16;
        b->weight_bytes -= in->nbytes / 2;
        in->nbytes /= 2;
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i].elem_type == REF_DT_FLOAT)
            g->inputs[i].elem_type = REF_DT_FLOAT16;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i].elem_type == REF_DT_FLOAT)
            g->outputs[i].elem_type = REF_DT_FLOAT16;
}

int ref_gen_build(const ref_gen_options *o, ref_model **out, ref_gen_stats *st, ref_error *err)
{
    int rc = ref_gen_validate(o, err);
    if (rc)
        return rc;
    ref_gb b;
    size_t limit = o->external_data ? EXTERNAL_WEIGHT_LIMIT : INLINE_WEIGHT_LIMIT;
    rc = ref_gb_init(&b, o->seed, limit, err);
    b.quantize = o->quantize && !strcmp(o->quantize, "uint8");
    if (rc || (rc = dispatch(&b, o))) {
        if (rc == REF_E_RANGE && !o->external_data)
            ref_fail_prefix(err, "gen %s (use external data for a model this big): ", o->arch);
        else
            ref_fail_prefix(err, "gen %s: ", o->arch);
        ref_gb_deinit(&b);
        return rc;
    }
    if (o->dtype && !strcmp(o->dtype, "float16"))
        to_half(&b);
    if (st) {
        st->n_nodes = b.m->graph.n_nodes;
        st->n_initializers = b.m->graph.n_inits;
        st->n_params = b.n_params;
        st->n_buffers = b.n_buffers;
        st->weight_bytes = b.weight_bytes;
    }
    return ref_gb_take(&b, out);
}

int ref_gen_write(const ref_gen_options *o, const char *out_path, ref_gen_stats *st, ref_error *err)
{
    if (!out_path || !out_path[0])
        return ref_fail(err, REF_E_INVALID, "gen: no output path given");
    ref_model *m = NULL;
    int rc = ref_gen_build(o, &m, st, err);
    if (rc)
        return rc;
    rc = ref_onnx_write(m, out_path, o->external_data != 0, err);
    ref_model_unref(m);
    return rc ? ref_fail_prefix(err, "gen %s: ", o->arch) : REF_OK;
}

int ref_gen_model(const ref_gen_options *o, const char *out_path, ref_error *err)
{
    return ref_gen_write(o, out_path, NULL, err);
}
