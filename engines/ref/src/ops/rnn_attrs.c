/* rnn_attrs.c: reads an RNN, GRU or LSTM node into a plan (direction, layout, hidden size, clip, activations and
 * their alpha/beta) and checks every input against it; also the gate activations themselves. It must never
 * touch tensor data: a plan comes from attributes and shapes only, so infer can build it before values exist. */
#include <math.h>
#include <string.h>

#include "rnn.h"

/* ---- activations ---------------------------------------------------------------------------------- */

enum { ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_AFFINE, ACT_LEAKY_RELU, ACT_THRESHOLDED_RELU, ACT_SCALED_TANH,
       ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS };

/* Which activations take alpha and beta, with the defaults of the ONNX operators of the same name. */
static const struct {
    const char *name;
    bool has_alpha, has_beta;
    float alpha, beta;
} acts[] = {
    [ACT_SIGMOID] = {"Sigmoid", false, false, 0, 0},
    [ACT_TANH] = {"Tanh", false, false, 0, 0},
    [ACT_RELU] = {"Relu", false, false, 0, 0},
    [ACT_AFFINE] = {"Affine", true, true, 1.0f, 0.0f},
    [ACT_LEAKY_RELU] = {"LeakyRelu", true, false, 0.01f, 0},
    [ACT_THRESHOLDED_RELU] = {"ThresholdedRelu", true, false, 1.0f, 0},
    [ACT_SCALED_TANH] = {"ScaledTanh", true, true, 1.0f, 1.0f},
    [ACT_HARD_SIGMOID] = {"HardSigmoid", true, true, 0.2f, 0.5f},
    [ACT_ELU] = {"Elu", true, false, 1.0f, 0},
    [ACT_SOFTSIGN] = {"Softsign", false, false, 0, 0},
    [ACT_SOFTPLUS] = {"Softplus", false, false, 0, 0},
};

float ref_rnn_act_apply(const ref_rnn_act *a, float x)
{
    switch (a->kind) {
    case ACT_SIGMOID:
        /* Split by sign so exp never overflows into inf/inf. */
        if (x >= 0)
            return 1.0f / (1.0f + expf(-x));
        else {
            float e = expf(x);
            return e / (1.0f + e);
        }
    case ACT_TANH:
        return tanhf(x);
    case ACT_RELU:
        return x > 0 ? x : 0;
    case ACT_AFFINE:
        return a->alpha * x + a->beta;
    case ACT_LEAKY_RELU:
        return x >= 0 ? x : a->alpha * x;
    case ACT_THRESHOLDED_RELU:
        return x > a->alpha ? x : 0;
    case ACT_SCALED_TANH:
        return a->alpha * tanhf(a->beta * x);
    case ACT_HARD_SIGMOID: {
        float y = a->alpha * x + a->beta;
        return y < 0 ? 0 : y > 1 ? 1 : y;
    }
    case ACT_ELU:
        return x >= 0 ? x : a->alpha * expm1f(x);
    case ACT_SOFTSIGN:
        return x / (1.0f + fabsf(x));
    default: /* ACT_SOFTPLUS; log1p(exp) loses nothing for large x only when written this way */
        return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
    }
}

/* Activation names are matched without regard to case: exporters write "sigmoid" as often as "Sigmoid". */
static bool same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

static const char *const op_names[] = {"RNN", "GRU", "LSTM"};
static const int n_funcs[] = {1, 2, 3};

/* Defaults per the spec: RNN's f is Tanh; GRU's f, g and LSTM's f, g, h are Sigmoid then Tanh. */
static void default_acts(ref_rnn_plan *p)
{
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < REF_RNN_MAX_FUNCS; k++)
            p->act[d][k] = (ref_rnn_act){.kind = p->cell == REF_RNN_SIMPLE || k > 0 ? ACT_TANH : ACT_SIGMOID};
}

/* The activations attribute lists f, g, h for the first direction, then for the second. alpha and beta are
 * consumed in that same order, one per activation that takes it, so a list need only hold those. */
static int read_acts(ref_op_ctx *c, ref_rnn_plan *p)
{
    const char *op = op_names[p->cell];
    default_acts(p);
    const ref_attr *a = ref_node_attr(c->node, "activations");
    if (!a)
        return REF_OK;
    int per = n_funcs[p->cell];
    size_t n = a->type == REF_ATTR_STRINGS ? a->n : 0;
    if (n != (size_t)per && n != (size_t)(per * p->n_dir))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: activations lists %zu functions, %d per direction wanted",
                        op, n, per);
    const float *alpha = NULL, *beta = NULL;
    size_t n_alpha = ref_attr_floats(c->node, "activation_alpha", &alpha), i_alpha = 0;
    size_t n_beta = ref_attr_floats(c->node, "activation_beta", &beta), i_beta = 0;
    for (size_t i = 0; i < n; i++) {
        int kind = -1;
        for (int k = 0; k < (int)(sizeof acts / sizeof acts[0]); k++)
            if (a->strings[i] && same_name(a->strings[i], acts[k].name))
                kind = k;
        if (kind < 0)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: activation '%s' is not supported", op,
                            a->strings[i] ? a->strings[i] : "");
        ref_rnn_act *act = &p->act[i / (size_t)per][i % (size_t)per];
        act->kind = kind;
        act->alpha = acts[kind].has_alpha && i_alpha < n_alpha ? alpha[i_alpha++] : acts[kind].alpha;
        act->beta = acts[kind].has_beta && i_beta < n_beta ? beta[i_beta++] : acts[kind].beta;
    }
    if (n == (size_t)per && p->n_dir == 2)
        memcpy(p->act[1], p->act[0], sizeof p->act[0]);
    return REF_OK;
}

/* ---- attributes and shapes --------------------------------------------------------------------------- */

static int read_attrs(ref_op_ctx *c, ref_rnn_plan *p)
{
    const char *op = op_names[p->cell];
    const char *dir = ref_attr_str_or(c->node, "direction", "forward");
    if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) {
        p->n_dir = 1;
        p->reverse = dir[0] == 'r';
    } else if (!strcmp(dir, "bidirectional")) {
        p->n_dir = 2;
    } else {
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: direction '%s' is none of forward, reverse, bidirectional",
                        op, dir);
    }
    int64_t layout = ref_attr_int_or(c->node, "layout", 0);
    if (layout != 0 && layout != 1)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: layout %lld is neither 0 nor 1", op, (long long)layout);
    p->batchwise = layout == 1;
    p->has_clip = ref_node_attr(c->node, "clip") != NULL;
    p->clip = ref_attr_float_or(c->node, "clip", 0.0f);
    if (p->has_clip && !(p->clip > 0))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: clip %g is not positive", op, (double)p->clip);
    p->input_forget = ref_attr_int_or(c->node, "input_forget", 0) != 0;
    p->lbr = ref_attr_int_or(c->node, "linear_before_reset", 0) != 0;
    return read_acts(c, p);
}

/* Input i, when present, must be float32 with exactly these dims. */
static int want_input(ref_op_ctx *c, const char *op, int i, const char *what, int rank, const int64_t *dims)
{
    const ref_tensor *t = ref_rnn_in(c, i);
    if (!t)
        return REF_OK;
    if (t->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: %s is %s; only float is supported", op, what,
                        ref_dtype_name(t->dtype));
    ref_tensor want = {.rank = rank};
    memcpy(want.dims, dims, sizeof(int64_t) * (size_t)rank);
    if (!ref_shape_equal(t, &want)) {
        char got_s[96], want_s[96];
        return ref_fail(c->err, REF_E_SHAPE, "%s: %s is %s, %s expected", op, what,
                        ref_shape_str(t, got_s, sizeof got_s), ref_shape_str(&want, want_s, sizeof want_s));
    }
    return REF_OK;
}

/* X, W and R fix the sizes; hidden_size, when given, must agree with R. */
static int read_sizes(ref_op_ctx *c, ref_rnn_plan *p)
{
    const char *op = op_names[p->cell];
    const ref_tensor *x = ref_rnn_in(c, 0), *w = ref_rnn_in(c, 1), *r = ref_rnn_in(c, 2);
    if (!x || !w || !r)
        return ref_fail(c->err, REF_E_INVALID, "%s: X, W and R are required", op);
    if (x->rank != 3 || r->rank != 3)
        return ref_fail(c->err, REF_E_SHAPE, "%s: X and R must be 3-D (ranks %d and %d)", op, x->rank, r->rank);
    p->seq = x->dims[p->batchwise ? 1 : 0];
    p->batch = x->dims[p->batchwise ? 0 : 1];
    p->input = x->dims[2];
    p->hidden = r->dims[2];
    int64_t hs = ref_attr_int_or(c->node, "hidden_size", p->hidden);
    if (hs != p->hidden)
        return ref_fail(c->err, REF_E_SHAPE, "%s: hidden_size %lld but R's last dim is %lld", op, (long long)hs,
                        (long long)p->hidden);
    int64_t gh = p->n_gates * p->hidden;
    /* The scratch holds seq * batch rows of gh floats: refuse sizes whose byte count would not fit. */
    if (p->seq < 0 || p->batch < 0 || p->input < 0 || p->hidden < 0 ||
        (double)p->seq * (double)p->batch * (double)gh > (double)(INT64_MAX / 64))
        return ref_fail(c->err, REF_E_SHAPE, "%s: sizes seq %lld, batch %lld, hidden %lld are out of range", op,
                        (long long)p->seq, (long long)p->batch, (long long)p->hidden);
    if (x->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: X is %s; only float is supported", op,
                        ref_dtype_name(x->dtype));
    int64_t wd[3] = {p->n_dir, gh, p->input}, rd[3] = {p->n_dir, gh, p->hidden};
    int rc = want_input(c, op, 1, "W", 3, wd);
    if (!rc)
        rc = want_input(c, op, 2, "R", 3, rd);
    return rc;
}

/* B, sequence_lens, initial_h, and for LSTM initial_c and P. */
static int check_optional(ref_op_ctx *c, ref_rnn_plan *p)
{
    const char *op = op_names[p->cell];
    int64_t bd[2] = {p->n_dir, 2 * p->n_gates * p->hidden}, pd[2] = {p->n_dir, 3 * p->hidden};
    int64_t sd[3] = {p->n_dir, p->batch, p->hidden};
    if (p->batchwise) {
        sd[0] = p->batch;
        sd[1] = p->n_dir;
    }
    int rc = want_input(c, op, 3, "B", 2, bd);
    if (!rc)
        rc = want_input(c, op, 5, "initial_h", 3, sd);
    if (!rc && p->cell == REF_RNN_LSTM)
        rc = want_input(c, op, 6, "initial_c", 3, sd);
    if (!rc && p->cell == REF_RNN_LSTM)
        rc = want_input(c, op, 7, "P", 2, pd);
    if (rc)
        return rc;
    const ref_tensor *lens = ref_rnn_in(c, 4);
    if (lens && ((lens->dtype != REF_DT_INT32 && lens->dtype != REF_DT_INT64) || lens->rank != 1 ||
                 lens->dims[0] != p->batch))
        return ref_fail(c->err, REF_E_SHAPE, "%s: sequence_lens is %s of rank %d, int32 [%lld] expected", op,
                        ref_dtype_name(lens->dtype), lens->rank, (long long)p->batch);
    int max_in = p->cell == REF_RNN_LSTM ? 8 : 6;
    if (ref_op_n_present(c) > max_in)
        return ref_fail(c->err, REF_E_INVALID, "%s takes at most %d inputs, %d given", op, max_in,
                        ref_op_n_present(c));
    return REF_OK;
}

int ref_rnn_plan_build(ref_op_ctx *c, int cell, ref_rnn_plan *p)
{
    memset(p, 0, sizeof *p);
    p->cell = cell;
    p->n_gates = cell == REF_RNN_LSTM ? 4 : cell == REF_RNN_GRU ? 3 : 1;
    int rc = read_attrs(c, p);
    if (!rc)
        rc = read_sizes(c, p);
    if (!rc)
        rc = check_optional(c, p);
    return rc;
}
