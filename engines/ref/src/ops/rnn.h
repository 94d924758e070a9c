/* rnn.h: what the recurrent operators RNN, GRU and LSTM share: the plan read from a node's attributes and input
 * shapes, the gate activations, and the per-direction run state a cell steps through. It must never hold state of
 * its own. */
#ifndef REF_RNN_H
#define REF_RNN_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

/* The operator table (rnn.c); registry.c lists it among the families. */
extern const ref_op ref_ops_rnn[];

enum { REF_RNN_SIMPLE, REF_RNN_GRU, REF_RNN_LSTM };

#define REF_RNN_MAX_FUNCS 3 /* activations per direction: f (RNN); f, g (GRU); f, g, h (LSTM) */

typedef struct ref_rnn_act {
    int kind; /* index into rnn_attrs.c's table */
    float alpha, beta;
} ref_rnn_act;

/* Everything the attributes and input shapes fix. Built by ref_rnn_plan, at infer and again at run. */
typedef struct ref_rnn_plan {
    int cell;            /* REF_RNN_* */
    int n_gates;         /* 1, 3 or 4: rows of W and R are n_gates * hidden */
    int n_dir;           /* 1 or 2 */
    bool reverse;        /* direction "reverse" (with n_dir 1) */
    bool batchwise;      /* layout 1: X is [batch, seq, input], Y [batch, seq, dir, hidden] */
    bool has_clip;
    float clip;
    bool input_forget;   /* LSTM: the forget gate is 1 - input gate */
    bool lbr;            /* GRU linear_before_reset */
    int64_t seq, batch, input, hidden;
    ref_rnn_act act[2][REF_RNN_MAX_FUNCS]; /* per direction */
} ref_rnn_plan;

/* Read node attributes and check every present input's dtype and shape against them. Fails with REF_E_UNSUPPORTED
 * (dtype, direction, layout, activation) or REF_E_SHAPE, naming the input or attribute; *p is then partly filled. */
int ref_rnn_plan_build(ref_op_ctx *c, int cell, ref_rnn_plan *p);

/* The activation a names, applied to x. */
float ref_rnn_act_apply(const ref_rnn_act *a, float x);

/* Optional input i, or NULL when omitted. */
static inline const ref_tensor *ref_rnn_in(const ref_op_ctx *c, int i)
{
    return i < c->n_in ? c->in[i] : NULL;
}

/* One direction while it runs. Every buffer is a slice of the op's planned scratch. */
typedef struct ref_rnn_run {
    const ref_rnn_plan *p;
    ref_op_ctx *c;
    bool reverse;            /* this direction walks each sequence from its last valid step */
    const int64_t *lens;     /* [batch] valid steps per batch entry */
    const float *r;          /* R of this direction, [n_gates * hidden, hidden] */
    const float *rb_h;       /* GRU with linear_before_reset: Rbh [hidden], kept out of xg; else NULL */
    const float *peep;       /* LSTM: P of this direction [3 * hidden] (i, o, f), or NULL */
    const ref_rnn_act *act;  /* this direction's f, g, h */
    const float *xg;         /* [seq * batch, n_gates * hidden]: X W^T plus the biases that add outright, */
                             /* rows in X's order */
    float *hg;               /* [batch, n_gates * hidden]: the recurrent product of the current step */
    float *h, *cs;           /* [batch, hidden]: hidden and (LSTM) cell state, updated in place */
    float *tmp;              /* [batch, hidden]: GRU's r (.) H */
    void *gemm_scratch;
    size_t gemm_scratch_bytes;
} ref_rnn_run;

/* Time index of step s for batch entry b, or -1 once b's sequence has ended. */
static inline int64_t ref_rnn_time(const ref_rnn_run *r, int64_t b, int64_t s)
{
    int64_t n = r->lens[b];
    if (s >= n)
        return -1;
    return r->reverse ? n - 1 - s : s;
}

/* Row of xg for batch entry b at step s, or NULL once b's sequence has ended. */
static inline const float *ref_rnn_xg_at(const ref_rnn_run *r, int64_t b, int64_t s)
{
    int64_t t = ref_rnn_time(r, b, s);
    if (t < 0)
        return NULL;
    const ref_rnn_plan *p = r->p;
    int64_t row = p->batchwise ? b * p->seq + t : t * p->batch + b;
    return r->xg + row * p->n_gates * p->hidden;
}

static inline float ref_rnn_clip(const ref_rnn_plan *p, float x)
{
    if (!p->has_clip)
        return x;
    return x > p->clip ? p->clip : x < -p->clip ? -p->clip : x;
}

/* out[batch, n] (row stride ldc) = a[batch, hidden] times the transpose of rmat[n, hidden]. Fails as ref_sgemm. */
int ref_rnn_gemm(ref_rnn_run *r, int64_t n, const float *rmat, const float *a, float *out, int64_t ldc);

/* One step s of a cell over every batch entry still running: h (and cs) move to the next state; entries whose
 * sequence has ended keep theirs. Fails only when a product fails (scratch too small). */
int ref_rnn_step_simple(ref_rnn_run *r, int64_t s);
int ref_rnn_step_gru(ref_rnn_run *r, int64_t s);
int ref_rnn_step_lstm(ref_rnn_run *r, int64_t s);

#endif
