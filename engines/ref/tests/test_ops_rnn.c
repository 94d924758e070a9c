/* test_ops_rnn.c: RNN, GRU and LSTM against numbers worked out by hand (a 2-unit Relu RNN, both directions, with
 * sequence_lens) and against the ONNX equations written out for one unit (every cell, both directions, both layouts,
 * clip, activations with alpha/beta, peepholes, input_forget, linear_before_reset), plus the failures each input can
 * cause. It must never compare the engine with itself alone: every expected value comes from outside the engine. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "op_harness.h"
#include "tensor.h"

static ref_model *m;

/* Every output of a run within tol of want (n values), naming the case and index of the first few that are not. */
static void check_values(const char *name, const char *what, const ref_tensor *t, const double *want, int64_t n,
                         double tol)
{
    CHECK(ref_tensor_numel(t) == n);
    if (ref_tensor_numel(t) != n) {
        fprintf(stderr, "  %s: %s has %lld values, %lld expected\n", name, what, (long long)ref_tensor_numel(t),
                (long long)n);
        return;
    }
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double got = ((const float *)t->data)[i];
        if (!(fabs(got - want[i]) <= tol) && bad++ < 3)
            fprintf(stderr, "  %s: %s[%lld] = %.9g, want %.9g\n", name, what, (long long)i, got, want[i]);
    }
    CHECK(bad == 0);
}

/* Like oh_run, but every output starts as NaN bytes rather than zeros, as arena memory may hold anything: whatever
 * the op leaves unwritten shows. No prepare (these ops have none). Outputs are freed with oh_free_outputs. */
static int run_poisoned(const ref_node *n, int n_in, const ref_tensor *const *in, int n_out, ref_tensor *out,
                        int threads, ref_error *err)
{
    const ref_op *op = ref_op_find("", n->op_type);
    ref_tensor *out_p[4];
    for (int j = 0; j < n_out; j++) {
        memset(&out[j], 0, sizeof out[j]);
        out_p[j] = &out[j];
    }
    ref_pool *pool = NULL;
    int rc = op ? ref_pool_new(threads, &pool, err) : ref_fail(err, REF_E_UNSUPPORTED, "no %s", n->op_type);
    if (rc)
        return rc;
    ref_op_ctx c = {.node = n, .opset = 14, .n_in = n_in, .n_out = n_out, .in = in, .out = out_p, .pool = pool,
                    .n_threads = ref_pool_threads(pool), .err = err};
    void *scratch = NULL;
    if (!(rc = op->infer(&c))) {
        for (int j = 0; j < n_out; j++) {
            out[j].data = ref_aligned_alloc(ref_tensor_nbytes(&out[j]) + 1);
            memset(out[j].data, 0xff, ref_tensor_nbytes(&out[j]));
        }
        c.scratch_bytes = op->scratch_bytes ? op->scratch_bytes(&c) : 0;
        c.scratch = scratch = ref_aligned_alloc(c.scratch_bytes + 1);
        memset(scratch, 0xff, c.scratch_bytes);
        rc = op->run(&c);
    }
    ref_free(scratch);
    ref_pool_free(pool);
    return rc;
}

/* ---- a Relu RNN worked out by hand ------------------------------------------------------------------------
 * I = 2, H = 2, batch 2, seq 3, bidirectional, sequence_lens {3, 2}. Forward: W = identity, R = [[0,1],[.5,0]],
 * Wb + Rb = [.5,-.5]; reverse: W = [[1,1],[1,-1]], R = [[0,.5],[1,0]], Wb + Rb = [1,0]. For instance forward, entry 0:
 *   t0: x = [1,2]:  relu([1,2] + 0 + [.5,-.5]) = [1.5,1.5]
 *   t1: x = [-1,1]: R h = [h1, .5 h0] = [1.5,.75]; relu([-1+1.5+.5, 1+.75-.5]) = [1,1.25]
 *   t2: x = [.5,0]: R h = [1.25,.5]; relu([.5+1.25+.5, 0+.5-.5]) = [2.25,0]
 * Entry 1 stops after t1, so Y is zero at t2 for it and Y_h holds its t1 state; reverse starts it at t1. */

static const float hx[3][2][2] = {{{1, 2}, {0, 1}}, {{-1, 1}, {2, 0}}, {{0.5f, 0}, {9, 9}}}; /* [t][b][i] */
static const double hy[3][2][2][2] = {                                                       /* [t][d][b][h] */
    {{{1.5, 1.5}, {0.5, 0.5}}, {{4, 0.25}, {3, 2}}},
    {{{1, 1.25}, {3, 0}}, {{1.25, 0}, {3, 2}}},
    {{{2.25, 0}, {0, 0}}, {{1.5, 0.5}, {0, 0}}},
};
static const double hyh[2][2][2] = {{{2.25, 0}, {3, 0}}, {{4, 0.25}, {3, 2}}}; /* [d][b][h] */

static void test_hand_rnn(int layout, int threads, bool poisoned)
{
    float w[2][2][2] = {{{1, 0}, {0, 1}}, {{1, 1}, {1, -1}}}, r[2][2][2] = {{{0, 1}, {0.5f, 0}}, {{0, 0.5f}, {1, 0}}};
    float b[2][4] = {{0.5f, 0, 0, -0.5f}, {0, 0, 1, 0}}; /* Wb then Rb per direction */
    int32_t lens[2] = {3, 2};
    float x[12];
    double y[24], yh[8];
    for (int t = 0; t < 3; t++)
        for (int bb = 0; bb < 2; bb++)
            for (int i = 0; i < 2; i++)
                x[(layout ? bb * 3 + t : t * 2 + bb) * 2 + i] = hx[t][bb][i];
    for (int t = 0; t < 3; t++)
        for (int d = 0; d < 2; d++)
            for (int bb = 0; bb < 2; bb++)
                for (int h = 0; h < 2; h++) {
                    y[((layout ? (bb * 3 + t) * 2 + d : (t * 2 + d) * 2 + bb)) * 2 + h] = hy[t][d][bb][h];
                    yh[(layout ? bb * 2 + d : d * 2 + bb) * 2 + h] = hyh[d][bb][h];
                }
    int64_t xd[3] = {layout ? 2 : 3, layout ? 3 : 2, 2}, wd[3] = {2, 2, 2}, bd[2] = {2, 4}, ld[1] = {2};
    ref_tensor tx = oh_tensor(REF_DT_FLOAT, 3, xd, x), tw = oh_tensor(REF_DT_FLOAT, 3, wd, w),
               tr = oh_tensor(REF_DT_FLOAT, 3, wd, r), tb = oh_tensor(REF_DT_FLOAT, 2, bd, b),
               tl = oh_tensor(REF_DT_INT32, 1, ld, lens);
    const ref_tensor *in[5] = {&tx, &tw, &tr, &tb, &tl};
    ref_node *nd = oh_node(m, "RNN", 5, 2);
    oh_attr_int(m, nd, "hidden_size", 2);
    oh_attr_str(m, nd, "direction", "bidirectional");
    oh_attr_int(m, nd, "layout", layout);
    ref_attr *acts = oh_attr(m, nd, "activations", REF_ATTR_STRINGS);
    static const char *relu2[2] = {"Relu", "relu"};
    acts->strings = relu2;
    acts->n = 2;
    ref_tensor out[2];
    ref_error e = {0};
    int rc = poisoned ? run_poisoned(nd, 5, in, 2, out, threads, &e)
                      : oh_run(nd, 14, 5, in, 2, out, 0x6 /* W, R constant */, threads, &e);
    CHECK_OK(rc, &e);
    if (!rc) {
        char name[80];
        snprintf(name, sizeof name, "hand RNN, layout %d, %d threads%s", layout, threads, poisoned ? ", poisoned" : "");
        int64_t yshape[4] = {layout ? 2 : 3, layout ? 3 : 2, 2, 2}; /* [seq, dir, batch, h] or [batch, seq, dir, h] */
        ref_tensor want = {.rank = 4};
        memcpy(want.dims, yshape, sizeof yshape);
        CHECK(ref_shape_equal(&out[0], &want));
        check_values(name, "Y", &out[0], y, 24, 0);
        check_values(name, "Y_h", &out[1], yh, 8, 0);
    }
    oh_free_outputs(2, out);
}

/* ---- one unit, the ONNX equations written out ------------------------------------------------------------ */

enum { CELL_RNN, CELL_GRU, CELL_LSTM };
enum { F_SIGMOID, F_TANH, F_HARD_SIGMOID, F_AFFINE, F_LEAKY };

typedef struct fn {
    int kind;
    double alpha, beta;
} fn;

static double apply(fn f, double x)
{
    switch (f.kind) {
    case F_SIGMOID:
        return 1 / (1 + exp(-x));
    case F_TANH:
        return tanh(x);
    case F_HARD_SIGMOID:
        return fmax(0, fmin(1, f.alpha * x + f.beta));
    case F_AFFINE:
        return f.alpha * x + f.beta;
    default:
        return x >= 0 ? x : f.alpha * x;
    }
}

/* One direction's parameters for a single unit: gate order as in W (RNN i; GRU z r h; LSTM i o f c). */
typedef struct unit {
    float w[4], r[4], wb[4], rb[4], p[3]; /* p: i, o, f */
    float h0, c0;
    fn f, g, h;
} unit;

typedef struct variant {
    int cell, layout;
    bool has_b, has_p, has_init, lbr, input_forget;
    double clip; /* 0: none */
    bool custom_acts; /* the units' f, g, h instead of the defaults */
    int outs;         /* 0: every output; 1: Y's name left empty; 2: Y alone */
    bool zero_len;    /* entry 1's sequence_lens is 0 instead of 1 */
} variant;

static double clipped(const variant *v, double x)
{
    return v->clip > 0 ? fmax(-v->clip, fmin(v->clip, x)) : x;
}

/* Run one sequence of n inputs through one direction; ys[t] gets h after time t. */
static void unit_ref(const variant *v, const unit *u, const float *xs, int n, bool reverse, double *ys, double *h_out,
                     double *c_out)
{
    double h = v->has_init ? u->h0 : 0, c = v->has_init ? u->c0 : 0, wb[4] = {0}, rb[4] = {0};
    for (int k = 0; k < 4 && v->has_b; k++)
        wb[k] = u->wb[k], rb[k] = u->rb[k];
    for (int s = 0; s < n; s++) {
        int t = reverse ? n - 1 - s : s;
        double x = xs[t];
        if (v->cell == CELL_RNN) {
            h = apply(u->f, clipped(v, u->w[0] * x + u->r[0] * h + wb[0] + rb[0]));
        } else if (v->cell == CELL_GRU) {
            double z = apply(u->f, clipped(v, u->w[0] * x + u->r[0] * h + wb[0] + rb[0]));
            double r = apply(u->f, clipped(v, u->w[1] * x + u->r[1] * h + wb[1] + rb[1]));
            double pre = v->lbr ? u->w[2] * x + r * (u->r[2] * h + rb[2]) + wb[2]
                                : u->w[2] * x + u->r[2] * (r * h) + rb[2] + wb[2];
            double hh = apply(u->g, clipped(v, pre));
            h = (1 - z) * hh + z * h;
        } else {
            double pi = v->has_p ? u->p[0] : 0, po = v->has_p ? u->p[1] : 0, pf = v->has_p ? u->p[2] : 0;
            double i = apply(u->f, clipped(v, u->w[0] * x + u->r[0] * h + pi * c + wb[0] + rb[0]));
            double f = v->input_forget ? 1 - i
                                       : apply(u->f, clipped(v, u->w[2] * x + u->r[2] * h + pf * c + wb[2] + rb[2]));
            double cc = apply(u->g, clipped(v, u->w[3] * x + u->r[3] * h + wb[3] + rb[3]));
            c = f * c + i * cc;
            double o = apply(u->f, clipped(v, u->w[1] * x + u->r[1] * h + po * c + wb[1] + rb[1]));
            h = o * apply(u->h, c);
        }
        ys[t] = h;
    }
    *h_out = h;
    *c_out = c;
}

/* Two directions, batch 2, seq 3, sequence_lens {3, 1}. */
static const unit units[2] = {
    {.w = {0.5f, -0.25f, 0.75f, 0.3f}, .r = {-0.5f, 0.6f, 0.2f, -0.4f}, .wb = {0.1f, -0.2f, 0.3f, 0.05f},
     .rb = {0.2f, 0.1f, -0.1f, 0.15f}, .p = {0.3f, -0.2f, 0.4f}, .h0 = 0.25f, .c0 = -0.5f},
    {.w = {-0.7f, 0.4f, 0.9f, -0.35f}, .r = {0.3f, -0.45f, 0.55f, 0.25f}, .wb = {-0.15f, 0.25f, 0.05f, -0.3f},
     .rb = {0.05f, -0.1f, 0.2f, 0.1f}, .p = {-0.25f, 0.35f, 0.15f}, .h0 = -0.4f, .c0 = 0.6f},
};
static const float ux[2][3] = {{1.0f, -0.5f, 2.0f}, {-1.5f, 7.0f, 7.0f}}; /* [b][t]; entry 1's t1, t2 are padding */

static const char *const cell_names[] = {"RNN", "GRU", "LSTM"};

/* activations f, g, h per direction, cut to the cell's count, with alpha {0.3, 2, 0.1} and beta {0.4, 0.5}. Each
 * value goes to the next function that takes one, in list order; one that finds none left takes its default. */
static const char *const custom_names[2][3] = {{"HardSigmoid", "LeakyRelu", "Affine"},
                                              {"sigmoid", "Affine", "LeakyRelu"}};
static const float custom_alpha[3] = {0.3f, 2.0f, 0.1f}, custom_beta[2] = {0.4f, 0.5f};
static const fn custom_fns[3][2][3] = {
    /* RNN: HardSigmoid(0.3, 0.4); Sigmoid */
    {{{F_HARD_SIGMOID, 0.3f, 0.4f}}, {{F_SIGMOID, 0.0f, 0.0f}}},
    /* GRU: HardSigmoid(0.3, 0.4), LeakyRelu(2); Sigmoid, Affine(0.1, 0.5): LeakyRelu takes no beta */
    {{{F_HARD_SIGMOID, 0.3f, 0.4f}, {F_LEAKY, 2.0f, 0.0f}}, {{F_SIGMOID, 0.0f, 0.0f}, {F_AFFINE, 0.1f, 0.5f}}},
    /* LSTM: HardSigmoid(0.3, 0.4), LeakyRelu(2), Affine(0.1, 0.5); Sigmoid, Affine(1, 0), LeakyRelu(0.01): defaults */
    {{{F_HARD_SIGMOID, 0.3f, 0.4f}, {F_LEAKY, 2.0f, 0.0f}, {F_AFFINE, 0.1f, 0.5f}},
     {{F_SIGMOID, 0.0f, 0.0f}, {F_AFFINE, 1.0f, 0.0f}, {F_LEAKY, 0.01f, 0.0f}}},
};

static ref_node *unit_node(const variant *v, int n_in, int n_out, unit *u)
{
    ref_node *nd = oh_node(m, cell_names[v->cell], n_in, n_out);
    oh_attr_int(m, nd, "hidden_size", 1);
    oh_attr_str(m, nd, "direction", "bidirectional");
    oh_attr_int(m, nd, "layout", v->layout);
    if (v->clip > 0)
        oh_attr_float(m, nd, "clip", (float)v->clip);
    if (v->lbr)
        oh_attr_int(m, nd, "linear_before_reset", 1);
    if (v->input_forget)
        oh_attr_int(m, nd, "input_forget", 1);
    fn sig = {F_SIGMOID, 0, 0}, th = {F_TANH, 0, 0};
    for (int d = 0; d < 2; d++) {
        u[d].f = v->cell == CELL_RNN ? th : sig;
        u[d].g = u[d].h = th;
    }
    if (v->custom_acts) {
        int per = v->cell + 1;
        const char **list = ref_model_pool_alloc(m, sizeof *list * 6);
        for (int d = 0; d < 2; d++)
            for (int k = 0; k < per; k++)
                list[d * per + k] = custom_names[d][k];
        ref_attr *a = oh_attr(m, nd, "activations", REF_ATTR_STRINGS);
        a->strings = list;
        a->n = (size_t)(2 * per);
        oh_attr_floats(m, nd, "activation_alpha", 3, custom_alpha);
        oh_attr_floats(m, nd, "activation_beta", 2, custom_beta);
        for (int d = 0; d < 2; d++) {
            u[d].f = custom_fns[v->cell][d][0];
            u[d].g = custom_fns[v->cell][d][1];
            u[d].h = custom_fns[v->cell][d][2];
        }
    }
    return nd;
}

static void test_unit(const variant *v, int threads)
{
    unit u[2] = {units[0], units[1]};
    int g = v->cell == CELL_LSTM ? 4 : v->cell == CELL_GRU ? 3 : 1, n_in = v->cell == CELL_LSTM ? 8 : 6;
    int n_out = v->outs == 2 ? 1 : v->cell == CELL_LSTM ? 3 : 2;
    ref_node *nd = unit_node(v, n_in, n_out, u);
    if (v->outs == 1)
        nd->outputs[0] = "";
    float x[6], w[8], r[8], b[16], h0[4], c0[4], p[6];
    int32_t lens[2] = {3, v->zero_len ? 0 : 1};
    for (int bb = 0; bb < 2; bb++)
        for (int t = 0; t < 3; t++)
            x[v->layout ? bb * 3 + t : t * 2 + bb] = ux[bb][t];
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < g; k++) {
            w[d * g + k] = u[d].w[k];
            r[d * g + k] = u[d].r[k];
            b[d * 2 * g + k] = u[d].wb[k];
            b[d * 2 * g + g + k] = u[d].rb[k];
        }
        for (int k = 0; k < 3; k++)
            p[d * 3 + k] = u[d].p[k];
        for (int bb = 0; bb < 2; bb++) { /* the second entry starts elsewhere, so a mixed-up row shows */
            int at = v->layout ? bb * 2 + d : d * 2 + bb;
            h0[at] = u[d].h0 + 0.125f * (float)bb;
            c0[at] = u[d].c0 - 0.25f * (float)bb;
        }
    }
    int64_t xd[3] = {v->layout ? 2 : 3, v->layout ? 3 : 2, 1}, wd[3] = {2, g, 1}, bd[2] = {2, 2 * g}, ld[1] = {2};
    int64_t sd[3] = {2, 2, 1}, pd[2] = {2, 3};
    ref_tensor tx = oh_tensor(REF_DT_FLOAT, 3, xd, x), tw = oh_tensor(REF_DT_FLOAT, 3, wd, w),
               tr = oh_tensor(REF_DT_FLOAT, 3, wd, r), tb = oh_tensor(REF_DT_FLOAT, 2, bd, b),
               tl = oh_tensor(REF_DT_INT32, 1, ld, lens), th = oh_tensor(REF_DT_FLOAT, 3, sd, h0),
               tc = oh_tensor(REF_DT_FLOAT, 3, sd, c0), tp = oh_tensor(REF_DT_FLOAT, 2, pd, p);
    const ref_tensor *in[8] = {&tx, &tw, &tr, v->has_b ? &tb : NULL, &tl, v->has_init ? &th : NULL,
                               v->has_init ? &tc : NULL, v->has_p ? &tp : NULL};
    double y[12] = {0}, yh[4], yc[4];
    for (int d = 0; d < 2; d++)
        for (int bb = 0; bb < 2; bb++) {
            unit ub = u[d];
            ub.h0 += 0.125f * (float)bb;
            ub.c0 -= 0.25f * (float)bb;
            double ys[3], hl, cl;
            unit_ref(v, &ub, ux[bb], lens[bb], d == 1, ys, &hl, &cl);
            for (int t = 0; t < lens[bb]; t++)
                y[v->layout ? (bb * 3 + t) * 2 + d : (t * 2 + d) * 2 + bb] = ys[t];
            /* An entry that never ran reports zeros, as ONNX Runtime does; the spec is silent. */
            yh[v->layout ? bb * 2 + d : d * 2 + bb] = lens[bb] ? hl : 0;
            yc[v->layout ? bb * 2 + d : d * 2 + bb] = lens[bb] ? cl : 0;
        }
    ref_tensor out[3];
    ref_error e = {0};
    int rc = oh_run(nd, 14, n_in, in, n_out, out, 0, threads, &e);
    char name[160];
    snprintf(name, sizeof name,
             "%s outs %d, zero_len %d, layout %d, B %d, P %d, init %d, lbr %d, input_forget %d, clip %g, acts %d, "
             "%d threads", cell_names[v->cell], v->outs, v->zero_len, v->layout, v->has_b, v->has_p, v->has_init,
             v->lbr, v->input_forget, v->clip, v->custom_acts, threads);
    CHECK_OK(rc, &e);
    if (rc) {
        fprintf(stderr, "  case %s\n", name);
    } else {
        if (v->outs != 1)
            check_values(name, "Y", &out[0], y, 12, 2e-6);
        if (v->outs != 2)
            check_values(name, "Y_h", &out[1], yh, 4, 2e-6);
        if (v->cell == CELL_LSTM && v->outs != 2)
            check_values(name, "Y_c", &out[2], yc, 4, 2e-6);
    }
    oh_free_outputs(n_out, out);
}

static void test_units(void)
{
    for (int cell = 0; cell < 3; cell++)
        for (int layout = 0; layout < 2; layout++) {
            variant v = {.cell = cell, .layout = layout, .has_b = true, .has_init = true};
            test_unit(&v, 1);
            test_unit(&v, 2);
            variant bare = {.cell = cell, .layout = layout}; /* no B, no initial state */
            test_unit(&bare, 1);
            variant clip = v;
            clip.clip = 0.4;
            test_unit(&clip, 1);
            variant acts = v;
            acts.custom_acts = true;
            test_unit(&acts, 1);
        }
    variant lbr = {.cell = CELL_GRU, .has_b = true, .has_init = true, .lbr = true};
    test_unit(&lbr, 1);
    lbr.has_b = false; /* Rbh absent: nothing to scale */
    test_unit(&lbr, 1);
    variant peep = {.cell = CELL_LSTM, .has_b = true, .has_init = true, .has_p = true};
    test_unit(&peep, 1);
    peep.layout = 1;
    test_unit(&peep, 2);
    peep.input_forget = true;
    test_unit(&peep, 1);
}

static void test_outputs(void)
{
    for (int cell = 0; cell < 3; cell++)
        for (int outs = 1; outs <= 2; outs++) {
            variant v = {.cell = cell, .has_b = true, .has_init = true, .outs = outs};
            test_unit(&v, 1);
        }
    for (int cell = 0; cell < 3; cell++)
        for (int layout = 0; layout < 2; layout++) {
            variant v = {.cell = cell, .layout = layout, .has_b = true, .has_init = true, .zero_len = true};
            test_unit(&v, 1);
        }
}

/* ---- failures --------------------------------------------------------------------------------------------- */

enum { BAD_DIRECTION, BAD_LENS, BAD_W, BAD_ACTIVATION, BAD_HIDDEN, BAD_LAYOUT, BAD_DTYPE };

/* A forward LSTM (I = 1, H = 1, seq 3, batch 2) spoiled in one way; fails with code, and a message holding what. */
static void test_bad(int how, int code, const char *what)
{
    float x[6] = {0}, w[8] = {0}, r[4] = {0};
    int32_t lens[2] = {how == BAD_LENS ? 4 : 3, 1};
    int64_t xs[3] = {3, 2, 1}, ws[3] = {1, 4, how == BAD_W ? 2 : 1}, rs[3] = {1, 4, 1}, ls[1] = {2};
    ref_tensor tx = oh_tensor(how == BAD_DTYPE ? REF_DT_DOUBLE : REF_DT_FLOAT, 3, xs, x),
               tw = oh_tensor(REF_DT_FLOAT, 3, ws, w), tr = oh_tensor(REF_DT_FLOAT, 3, rs, r),
               tl = oh_tensor(REF_DT_INT32, 1, ls, lens);
    const ref_tensor *in[5] = {&tx, &tw, &tr, NULL, &tl};
    ref_node *nd = oh_node(m, "LSTM", 5, 2);
    oh_attr_int(m, nd, "hidden_size", how == BAD_HIDDEN ? 3 : 1);
    oh_attr_str(m, nd, "direction", how == BAD_DIRECTION ? "sideways" : "forward");
    oh_attr_int(m, nd, "layout", how == BAD_LAYOUT ? 2 : 0);
    if (how == BAD_ACTIVATION) {
        static const char *acts[3] = {"Sigmoid", "Gelu", "Tanh"};
        ref_attr *a = oh_attr(m, nd, "activations", REF_ATTR_STRINGS);
        a->strings = acts;
        a->n = 3;
    }
    ref_tensor out[2];
    ref_error e = {0};
    int rc = oh_run(nd, 14, 5, in, 2, out, 0, 1, &e);
    CHECK(rc == code);
    CHECK(strstr(e.msg, what) != NULL);
    if (rc != code || !strstr(e.msg, what))
        fprintf(stderr, "  bad case %d: status %d, message '%s'; wanted %d and '%s'\n", how, rc, e.msg, code, what);
    oh_free_outputs(2, out);
}

static void test_failures(void)
{
    test_bad(BAD_DIRECTION, REF_E_UNSUPPORTED, "direction 'sideways'");
    test_bad(BAD_LENS, REF_E_INVALID, "sequence_lens[0] is 4, outside [0, 3]");
    test_bad(BAD_W, REF_E_SHAPE, "W is [1,4,2], [1,4,1] expected");
    test_bad(BAD_ACTIVATION, REF_E_UNSUPPORTED, "activation 'Gelu'");
    test_bad(BAD_HIDDEN, REF_E_SHAPE, "hidden_size 3");
    test_bad(BAD_LAYOUT, REF_E_UNSUPPORTED, "layout 2");
    test_bad(BAD_DTYPE, REF_E_UNSUPPORTED, "X is double");
}

int main(void)
{
    m = ref_model_new();
    for (int layout = 0; layout < 2; layout++)
        for (int threads = 1; threads <= 2; threads++)
            for (int poisoned = 0; poisoned < 2; poisoned++)
                test_hand_rnn(layout, threads, poisoned);
    test_units();
    test_outputs();
    test_failures();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
