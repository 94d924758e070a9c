/* rnn.c: operator family "rnn": RNN, GRU and LSTM. Infers Y [seq, dir, batch, hidden] (layout 1: [batch, seq, dir,
 * hidden]), Y_h and Y_c, then runs each direction: X W^T for every step in one product, biases folded in, and a
 * cell step (rnn_cells.c) per time step over the batch entries whose sequence_lens reach it. It must never
 * allocate at run time: every buffer is a slice of the planned scratch. */
#include <string.h>

#include "../alloc.h"
#include "rnn.h"
#include "sgemm.h"

/* ---- shapes ----------------------------------------------------------------------------------------- */

/* Output j given (a node may list fewer outputs, or leave a name empty). */
static bool out_present(const ref_op_ctx *c, int j)
{
    return j < c->n_out && c->out[j] && j < c->node->n_outputs && c->node->outputs[j] && c->node->outputs[j][0];
}

static int rnn_infer(ref_op_ctx *c, int cell)
{
    ref_rnn_plan p;
    int rc = ref_rnn_plan_build(c, cell, &p);
    if (rc)
        return rc;
    int max_out = cell == REF_RNN_LSTM ? 3 : 2;
    if (c->n_out > max_out)
        return ref_fail(c->err, REF_E_INVALID, "%s has at most %d outputs, the node lists %d", c->node->op_type,
                        max_out, c->n_out);
    int64_t y[4] = {p.seq, p.n_dir, p.batch, p.hidden}, yh[3] = {p.n_dir, p.batch, p.hidden};
    if (p.batchwise) {
        int64_t yb[4] = {p.batch, p.seq, p.n_dir, p.hidden}, yhb[3] = {p.batch, p.n_dir, p.hidden};
        memcpy(y, yb, sizeof y);
        memcpy(yh, yhb, sizeof yh);
    }
    /* Omitted outputs still get a shape: the runtime gives them throwaway buffers of that size. */
    for (int j = 0; j < c->n_out; j++) {
        if (!c->out[j])
            continue;
        c->out[j]->dtype = REF_DT_FLOAT;
        if (j == 0)
            ref_tensor_set_shape(c->out[j], 4, y);
        else
            ref_tensor_set_shape(c->out[j], 3, yh);
    }
    return REF_OK;
}

/* ---- scratch ---------------------------------------------------------------------------------------- */

/* Byte offsets of the run's buffers inside the scratch, each 64-byte aligned as ref_sgemm needs. */
typedef struct rnn_layout {
    size_t lens, bias, xg, hg, h, cs, tmp, gemm, gemm_bytes, total;
} rnn_layout;

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

static void layout_of(const ref_rnn_plan *p, int n_threads, rnn_layout *l)
{
    size_t at = 0, gh = (size_t)(p->n_gates * p->hidden), bh = (size_t)(p->batch * p->hidden);
#define RNN_SLICE(field, bytes) (l->field = at, at += ref_align_up((bytes), REF_ALIGN))
    RNN_SLICE(lens, sizeof(int64_t) * (size_t)p->batch);
    RNN_SLICE(bias, sizeof(float) * gh);
    RNN_SLICE(xg, sizeof(float) * (size_t)(p->seq * p->batch) * gh);
    RNN_SLICE(hg, sizeof(float) * (size_t)p->batch * gh);
    RNN_SLICE(h, sizeof(float) * bh);
    RNN_SLICE(cs, sizeof(float) * bh);
    RNN_SLICE(tmp, sizeof(float) * bh);
#undef RNN_SLICE
    int64_t n = p->n_gates * p->hidden;
    size_t g = ref_sgemm_scratch_bytes(p->seq * p->batch, n, p->input, false, false, n_threads);
    g = max_size(g, ref_sgemm_scratch_bytes(p->batch, n, p->hidden, false, false, n_threads));
    g = max_size(g, ref_sgemm_scratch_bytes(p->batch, 2 * p->hidden, p->hidden, false, false, n_threads));
    g = max_size(g, ref_sgemm_scratch_bytes(p->batch, p->hidden, p->hidden, false, false, n_threads));
    l->gemm = at;
    l->gemm_bytes = g;
    l->total = at + g;
}

static size_t rnn_scratch(const ref_op_ctx *c, int cell)
{
    ref_error e;
    ref_op_ctx cc = *c;
    cc.err = &e;
    ref_rnn_plan p;
    if (ref_rnn_plan_build(&cc, cell, &p))
        return 0; /* run builds the same plan and reports the failure */
    rnn_layout l;
    layout_of(&p, c->n_threads, &l);
    return l.total;
}

/* ---- run -------------------------------------------------------------------------------------------- */

int ref_rnn_gemm(ref_rnn_run *r, int64_t n, const float *rmat, const float *a, float *out, int64_t ldc)
{
    int64_t h = r->p->hidden;
    ref_sgemm_operand A = {.data = a, .ld = h}, B = {.data = rmat, .ld = h, .trans = true};
    return ref_sgemm(r->c->pool, r->p->batch, n, h, 1.0f, &A, &B, 0.0f, out, ldc, r->gemm_scratch,
                     r->gemm_scratch_bytes, r->c->err);
}

/* sequence_lens as int64, each in [0, seq]; every entry runs the whole sequence when it is absent. */
static int read_lens(ref_op_ctx *c, const ref_rnn_plan *p, int64_t *lens, int64_t *max_len)
{
    const ref_tensor *t = ref_rnn_in(c, 4);
    *max_len = 0;
    for (int64_t b = 0; b < p->batch; b++) {
        int64_t n = !t ? p->seq : t->dtype == REF_DT_INT32 ? ((const int32_t *)t->data)[b]
                                                            : ((const int64_t *)t->data)[b];
        if (n < 0 || n > p->seq)
            return ref_fail(c->err, REF_E_INVALID, "%s: sequence_lens[%lld] is %lld, outside [0, %lld]",
                            c->node->op_type, (long long)b, (long long)n, (long long)p->seq);
        lens[b] = n;
        *max_len = n > *max_len ? n : *max_len;
    }
    return REF_OK;
}

/* xg = X W^T plus Wb + Rb. GRU with linear_before_reset keeps Rbh apart (r scales it), so only Wbh goes in there. */
static int input_products(ref_rnn_run *r, int d, float *xg, float *bias)
{
    const ref_rnn_plan *p = r->p;
    ref_op_ctx *c = r->c;
    int64_t gh = p->n_gates * p->hidden, rows = p->seq * p->batch;
    const float *w = (const float *)c->in[1]->data + d * gh * p->input;
    ref_sgemm_operand A = {.data = c->in[0]->data, .ld = p->input}, B = {.data = w, .ld = p->input, .trans = true};
    int rc = ref_sgemm(c->pool, rows, gh, p->input, 1.0f, &A, &B, 0.0f, xg, gh, r->gemm_scratch,
                       r->gemm_scratch_bytes, c->err);
    const ref_tensor *bt = ref_rnn_in(c, 3);
    if (rc || !bt)
        return rc;
    const float *wb = (const float *)bt->data + d * 2 * gh, *rb = wb + gh;
    int64_t kept = p->cell == REF_RNN_GRU && p->lbr ? 2 * p->hidden : gh;
    for (int64_t k = 0; k < gh; k++)
        bias[k] = wb[k] + (k < kept ? rb[k] : 0.0f);
    if (kept < gh)
        r->rb_h = rb + kept;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = 0; k < gh; k++)
            xg[i * gh + k] += bias[k];
    return REF_OK;
}

/* Row of a [dir, batch, hidden] state (layout 1: [batch, dir, hidden]) for direction d, entry b. */
static int64_t state_row(const ref_rnn_plan *p, int d, int64_t b)
{
    return p->batchwise ? b * p->n_dir + d : d * p->batch + b;
}

/* State from input i (initial_h, initial_c) for direction d, or zeros when it is absent. */
static void load_state(const ref_op_ctx *c, const ref_rnn_plan *p, int i, int d, float *dst)
{
    const ref_tensor *t = ref_rnn_in(c, i);
    size_t row = sizeof(float) * (size_t)p->hidden;
    for (int64_t b = 0; b < p->batch; b++) {
        float *to = dst + b * p->hidden;
        if (t)
            memcpy(to, (const float *)t->data + state_row(p, d, b) * p->hidden, row);
        else
            memset(to, 0, row);
    }
}

/* Y_h or Y_c for direction d. An entry with sequence_lens 0 never ran: it reports zeros, not its initial state, as
 * ONNX Runtime does (the spec does not say). */
static void store_state(const ref_op_ctx *c, const ref_rnn_plan *p, int j, int d, const int64_t *lens, const float *src)
{
    if (!out_present(c, j))
        return;
    float *y = c->out[j]->data;
    size_t row = sizeof(float) * (size_t)p->hidden;
    for (int64_t b = 0; b < p->batch; b++)
        if (lens[b])
            memcpy(y + state_row(p, d, b) * p->hidden, src + b * p->hidden, row);
        else
            memset(y + state_row(p, d, b) * p->hidden, 0, row);
}

/* After step s: each entry still running puts its new h in Y at the time it reached. */
static void store_y(ref_rnn_run *r, int d, int64_t s, float *y)
{
    const ref_rnn_plan *p = r->p;
    for (int64_t b = 0; b < p->batch; b++) {
        int64_t t = ref_rnn_time(r, b, s);
        if (t < 0)
            continue;
        int64_t row = p->batchwise ? (b * p->seq + t) * p->n_dir + d : (t * p->n_dir + d) * p->batch + b;
        memcpy(y + row * p->hidden, r->h + b * p->hidden, sizeof(float) * (size_t)p->hidden);
    }
}

static int run_direction(ref_op_ctx *c, const ref_rnn_plan *p, const rnn_layout *l, int d, const int64_t *lens,
                         int64_t max_len)
{
    char *base = c->scratch;
    int64_t gh = p->n_gates * p->hidden;
    const ref_tensor *pt = p->cell == REF_RNN_LSTM ? ref_rnn_in(c, 7) : NULL;
    ref_rnn_run r = {
        .p = p, .c = c, .reverse = p->reverse || d == 1, .lens = lens,
        .r = (const float *)c->in[2]->data + d * gh * p->hidden,
        .peep = pt ? (const float *)pt->data + d * 3 * p->hidden : NULL,
        .act = p->act[d], .xg = (const float *)(base + l->xg), .hg = (float *)(base + l->hg),
        .h = (float *)(base + l->h), .cs = (float *)(base + l->cs), .tmp = (float *)(base + l->tmp),
        .gemm_scratch = base + l->gemm, .gemm_scratch_bytes = l->gemm_bytes,
    };
    int rc = input_products(&r, d, (float *)(base + l->xg), (float *)(base + l->bias));
    if (rc)
        return rc;
    load_state(c, p, 5, d, r.h);
    if (p->cell == REF_RNN_LSTM)
        load_state(c, p, 6, d, r.cs);
    float *y = out_present(c, 0) ? c->out[0]->data : NULL;
    for (int64_t s = 0; s < max_len && !rc; s++) {
        rc = p->cell == REF_RNN_LSTM  ? ref_rnn_step_lstm(&r, s)
             : p->cell == REF_RNN_GRU ? ref_rnn_step_gru(&r, s)
                                      : ref_rnn_step_simple(&r, s);
        if (!rc && y)
            store_y(&r, d, s, y);
    }
    if (rc)
        return rc;
    store_state(c, p, 1, d, lens, r.h);
    if (p->cell == REF_RNN_LSTM)
        store_state(c, p, 2, d, lens, r.cs);
    return REF_OK;
}

static int rnn_run(ref_op_ctx *c, int cell)
{
    ref_rnn_plan p;
    int rc = ref_rnn_plan_build(c, cell, &p);
    if (rc)
        return rc;
    rnn_layout l;
    layout_of(&p, c->n_threads, &l);
    if (c->scratch_bytes < l.total || !c->scratch)
        return ref_fail(c->err, REF_E_INVALID, "%s: scratch of %zu bytes, %zu needed", c->node->op_type,
                        c->scratch_bytes, l.total);
    int64_t *lens = (int64_t *)((char *)c->scratch + l.lens), max_len;
    if ((rc = read_lens(c, &p, lens, &max_len)))
        return rc;
    /* Steps past an entry's sequence_lens are never written by a cell, and the spec has them zero. */
    if (out_present(c, 0))
        memset(c->out[0]->data, 0, ref_tensor_nbytes(c->out[0]));
    for (int d = 0; d < p.n_dir && !rc; d++)
        rc = run_direction(c, &p, &l, d, lens, max_len);
    return rc;
}

/* ---- table ------------------------------------------------------------------------------------------ */

static int simple_infer(ref_op_ctx *c) { return rnn_infer(c, REF_RNN_SIMPLE); }
static int gru_infer(ref_op_ctx *c) { return rnn_infer(c, REF_RNN_GRU); }
static int lstm_infer(ref_op_ctx *c) { return rnn_infer(c, REF_RNN_LSTM); }
static size_t simple_scratch(const ref_op_ctx *c) { return rnn_scratch(c, REF_RNN_SIMPLE); }
static size_t gru_scratch(const ref_op_ctx *c) { return rnn_scratch(c, REF_RNN_GRU); }
static size_t lstm_scratch(const ref_op_ctx *c) { return rnn_scratch(c, REF_RNN_LSTM); }
static int simple_run(ref_op_ctx *c) { return rnn_run(c, REF_RNN_SIMPLE); }
static int gru_run(ref_op_ctx *c) { return rnn_run(c, REF_RNN_GRU); }
static int lstm_run(ref_op_ctx *c) { return rnn_run(c, REF_RNN_LSTM); }

const ref_op ref_ops_rnn[] = {
    {.name = "RNN", .infer = simple_infer, .scratch_bytes = simple_scratch, .run = simple_run},
    {.name = "GRU", .infer = gru_infer, .scratch_bytes = gru_scratch, .run = gru_run},
    {.name = "LSTM", .infer = lstm_infer, .scratch_bytes = lstm_scratch, .run = lstm_run},
    {.name = NULL},
};
