/* gen_transformer.c: the "transformer" architecture: a BERT-like post-norm encoder over [batch, seq, hidden] floats,
 * with multi-head attention, Erf-based GELU and reshape targets computed the way PyTorch exports them
 * (Shape -> Gather -> Unsqueeze -> Concat), so the engine's constant folding has real work to do.
 * It must never give a Reshape a plain int64 initializer as its target: that would bypass the shape subgraph. */
#include <math.h>

#include "gen_arch.h"
#include "gen_layers.h"

#define FFN_MULT 4

/* Constants every layer shares. */
typedef struct tf_consts {
    const char *idx_batch, *idx_seq, *axes0;     /* int64 scalars 0 and 1, and [0] */
    const char *heads, *head_dim, *hidden;      /* int64 [1] */
    const char *attn_scale, *sqrt2, *one, *half; /* float scalars */
} tf_consts;

static void make_consts(ref_gb *b, const ref_gen_options *o, tf_consts *c)
{
    int64_t one_dim = 1, zero = 0, one = 1, heads = o->heads, hd = o->hidden / o->heads, hidden = o->hidden;
    float scale = 1.0f / sqrtf((float)hd), sqrt2 = sqrtf(2.0f), f_one = 1.0f, f_half = 0.5f;
    c->idx_batch = ref_gb_const_i64(b, "const.shape_index_batch", 0, NULL, &zero);
    c->idx_seq = ref_gb_const_i64(b, "const.shape_index_seq", 0, NULL, &one);
    c->axes0 = ref_gb_const_i64(b, "const.unsqueeze_axes", 1, &one_dim, &zero);
    c->heads = ref_gb_const_i64(b, "const.num_heads", 1, &one_dim, &heads);
    c->head_dim = ref_gb_const_i64(b, "const.head_dim", 1, &one_dim, &hd);
    c->hidden = ref_gb_const_i64(b, "const.hidden", 1, &one_dim, &hidden);
    c->attn_scale = ref_gb_const_f32(b, "const.attn_scale", 0, NULL, &scale);
    c->sqrt2 = ref_gb_const_f32(b, "const.sqrt2", 0, NULL, &sqrt2);
    c->one = ref_gb_const_f32(b, "const.one", 0, NULL, &f_one);
    c->half = ref_gb_const_f32(b, "const.half", 0, NULL, &f_half);
}

/* x @ name.weight [in, out] + name.bias: MatMul `name.matmul`, Add `name`. */
static const char *linear(ref_gb *b, const char *name, const char *x, int64_t in, int64_t out, float gain)
{
    int64_t dims[2] = {in, out};
    const char *w = ref_gl_weight(b, ref_gb_str(b, "%s.weight", name), 2, dims, in, gain);
    const char *bias = ref_gl_bias(b, ref_gb_str(b, "%s.bias", name), out);
    const char *y = b->quantize ? ref_gl_qmatmul(b, ref_gb_str(b, "%s.matmul", name), x, w, false)
                                : REF_GB_NODE(b, "MatMul", ref_gb_str(b, "%s.matmul", name), x, w);
    return REF_GB_NODE(b, "Add", name, y, bias);
}

static const char *layer_norm(ref_gb *b, const char *name, const char *x, int64_t c)
{
    const char *g = ref_gb_random(b, ref_gb_str(b, "%s.weight", name), REF_GB_PARAM, 1, &c, 1.0f, 0.1f);
    const char *be = ref_gb_random(b, ref_gb_str(b, "%s.bias", name), REF_GB_PARAM, 1, &c, 0.0f, 0.05f);
    const char *y = REF_GB_NODE(b, "LayerNormalization", name, x, g, be);
    ref_gb_attr_int(b, "axis", -1);
    ref_gb_attr_float(b, "epsilon", 1e-5f);
    return y;
}

/* The reshape targets of layer `p`: [batch, seq, heads, head_dim] and [batch, seq, hidden], from Shape(x). */
static void shape_targets(ref_gb *b, const tf_consts *c, const char *p, const char *x, const char **split,
                          const char **merge)
{
    const char *s = REF_GB_NODE(b, "Shape", ref_gb_str(b, "%s.shape", p), x);
    const char *n = REF_GB_NODE(b, "Gather", ref_gb_str(b, "%s.shape.batch", p), s, c->idx_batch);
    ref_gb_attr_int(b, "axis", 0);
    const char *t = REF_GB_NODE(b, "Gather", ref_gb_str(b, "%s.shape.seq", p), s, c->idx_seq);
    ref_gb_attr_int(b, "axis", 0);
    n = REF_GB_NODE(b, "Unsqueeze", ref_gb_str(b, "%s.shape.batch_1d", p), n, c->axes0);
    t = REF_GB_NODE(b, "Unsqueeze", ref_gb_str(b, "%s.shape.seq_1d", p), t, c->axes0);
    *split = REF_GB_NODE(b, "Concat", ref_gb_str(b, "%s.shape.split_heads", p), n, t, c->heads, c->head_dim);
    ref_gb_attr_int(b, "axis", 0);
    *merge = REF_GB_NODE(b, "Concat", ref_gb_str(b, "%s.shape.merge_heads", p), n, t, c->hidden);
    ref_gb_attr_int(b, "axis", 0);
}

/* Projection `p.attn.<what>` of x, reshaped to heads and transposed by perm. */
static const char *heads_proj(ref_gb *b, const char *p, const char *what, const char *x, int64_t hidden,
                              const char *split, const int64_t perm[4])
{
    const char *y = linear(b, ref_gb_str(b, "%s.attn.%s", p, what), x, hidden, hidden, REF_GEN_GAIN_LINEAR);
    y = REF_GB_NODE(b, "Reshape", ref_gb_str(b, "%s.attn.%s.reshape", p, what), y, split);
    y = REF_GB_NODE(b, "Transpose", ref_gb_str(b, "%s.attn.%s.transpose", p, what), y);
    ref_gb_attr_ints(b, "perm", 4, perm);
    return y;
}

static const char *attention(ref_gb *b, const tf_consts *c, const char *p, const char *x, int64_t hidden)
{
    static const int64_t to_heads[4] = {0, 2, 1, 3}, k_to_heads[4] = {0, 2, 3, 1};
    const char *split, *merge;
    shape_targets(b, c, p, x, &split, &merge);
    const char *q = heads_proj(b, p, "q", x, hidden, split, to_heads);   /* [batch, heads, seq, head_dim] */
    const char *k = heads_proj(b, p, "k", x, hidden, split, k_to_heads); /* [batch, heads, head_dim, seq] */
    const char *v = heads_proj(b, p, "v", x, hidden, split, to_heads);   /* [batch, heads, seq, head_dim] */
    const char *s = REF_GB_NODE(b, "MatMul", ref_gb_str(b, "%s.attn.scores", p), q, k); /* [b, h, seq, seq] */
    s = REF_GB_NODE(b, "Mul", ref_gb_str(b, "%s.attn.scale", p), s, c->attn_scale);
    s = REF_GB_NODE(b, "Softmax", ref_gb_str(b, "%s.attn.softmax", p), s);
    ref_gb_attr_int(b, "axis", -1);
    const char *y = REF_GB_NODE(b, "MatMul", ref_gb_str(b, "%s.attn.context", p), s, v); /* [b, h, seq, hd] */
    y = REF_GB_NODE(b, "Transpose", ref_gb_str(b, "%s.attn.context.transpose", p), y); /* [b, seq, h, hd] */
    ref_gb_attr_ints(b, "perm", 4, to_heads);
    y = REF_GB_NODE(b, "Reshape", ref_gb_str(b, "%s.attn.context.reshape", p), y, merge); /* [b, seq, hidden] */
    return linear(b, ref_gb_str(b, "%s.attn.out", p), y, hidden, hidden, REF_GEN_GAIN_LINEAR);
}

/* x * 0.5 * (1 + erf(x / sqrt(2))), node by node as PyTorch exports nn.GELU. */
static const char *gelu(ref_gb *b, const tf_consts *c, const char *p, const char *x)
{
    const char *y = REF_GB_NODE(b, "Div", ref_gb_str(b, "%s.div", p), x, c->sqrt2);
    y = REF_GB_NODE(b, "Erf", ref_gb_str(b, "%s.erf", p), y);
    y = REF_GB_NODE(b, "Add", ref_gb_str(b, "%s.add", p), y, c->one);
    y = REF_GB_NODE(b, "Mul", ref_gb_str(b, "%s.mul", p), x, y);
    return REF_GB_NODE(b, "Mul", p, y, c->half);
}

static const char *encoder_layer(ref_gb *b, const tf_consts *c, int l, const char *x, int64_t hidden)
{
    const char *p = ref_gb_str(b, "layers.%d", l);
    const char *a = attention(b, c, p, x, hidden);
    a = REF_GB_NODE(b, "Add", ref_gb_str(b, "%s.attn.residual", p), x, a);
    a = layer_norm(b, ref_gb_str(b, "%s.norm1", p), a, hidden);
    const char *f = linear(b, ref_gb_str(b, "%s.ffn.fc1", p), a, hidden, FFN_MULT * hidden, REF_GEN_GAIN_LINEAR);
    f = gelu(b, c, ref_gb_str(b, "%s.ffn.gelu", p), f);
    f = linear(b, ref_gb_str(b, "%s.ffn.fc2", p), f, FFN_MULT * hidden, hidden, REF_GEN_GAIN_RELU);
    f = REF_GB_NODE(b, "Add", ref_gb_str(b, "%s.ffn.residual", p), a, f);
    return layer_norm(b, ref_gb_str(b, "%s.norm2", p), f, hidden);
}

int ref_gen_build_transformer(ref_gb *b, const ref_gen_options *o)
{
    const char *params[3] = {o->dynamic ? "batch" : NULL, o->dynamic ? "seq" : NULL, NULL};
    int64_t dims[3] = {o->batch, o->seq, o->hidden};
    ref_gb_io(b, false, "input", 3, dims, params);
    tf_consts c;
    make_consts(b, o, &c);
    const char *x = "input";
    for (int l = 0; l < o->layers; l++)
        x = encoder_layer(b, &c, l, x, o->hidden);
    ref_gb_rename_output(b, "output");
    return ref_gb_io(b, true, "output", 3, dims, params);
}
