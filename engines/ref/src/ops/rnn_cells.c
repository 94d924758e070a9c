/* rnn_cells.c: one time step of the RNN, GRU and LSTM cells over a batch, per the ONNX equations: the recurrent
 * product H W^T through ref_rnn_gemm, then the gates element by element. It must never write the state of a
 * batch entry whose sequence has ended: its last valid h and c are what Y_h and Y_c report. */
#include "rnn.h"

/* ---- RNN: Ht = f(Xt Wi^T + Ht-1 Ri^T + Wbi + Rbi) -------------------------------------------------- */

int ref_rnn_step_simple(ref_rnn_run *r, int64_t s)
{
    const ref_rnn_plan *p = r->p;
    int64_t hn = p->hidden;
    int rc = ref_rnn_gemm(r, hn, r->r, r->h, r->hg, hn);
    if (rc)
        return rc;
    for (int64_t b = 0; b < p->batch; b++) {
        const float *x = ref_rnn_xg_at(r, b, s), *g = r->hg + b * hn;
        float *h = r->h + b * hn;
        if (!x)
            continue;
        for (int64_t j = 0; j < hn; j++)
            h[j] = ref_rnn_act_apply(&r->act[0], ref_rnn_clip(p, x[j] + g[j]));
    }
    return REF_OK;
}

/* ---- GRU: gates z, r, h in that order in W, R and B ----------------------------------------------------
 * zt = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz), rt = f(Xt Wr^T + Ht-1 Rr^T + Wbr + Rbr)
 * ht = g(Xt Wh^T + (rt (.) Ht-1) Rh^T + Rbh + Wbh)       linear_before_reset = 0
 * ht = g(Xt Wh^T + rt (.) (Ht-1 Rh^T + Rbh) + Wbh)       linear_before_reset = 1
 * Ht = (1 - zt) (.) ht + zt (.) Ht-1 */

/* z and r for entry b: z goes back into hg's z slot (the product there is spent), r (.) Ht-1 into tmp. With
 * linear_before_reset, r itself goes into tmp, since it scales the product instead. */
static void gru_gates(ref_rnn_run *r, int64_t b, const float *x)
{
    const ref_rnn_plan *p = r->p;
    int64_t hn = p->hidden;
    float *g = r->hg + b * 3 * hn, *t = r->tmp + b * hn;
    const float *h = r->h + b * hn;
    for (int64_t j = 0; j < hn; j++) {
        float z = ref_rnn_act_apply(&r->act[0], ref_rnn_clip(p, x[j] + g[j]));
        float rr = ref_rnn_act_apply(&r->act[0], ref_rnn_clip(p, x[hn + j] + g[hn + j]));
        g[j] = z;
        t[j] = p->lbr ? rr : rr * h[j];
    }
}

int ref_rnn_step_gru(ref_rnn_run *r, int64_t s)
{
    const ref_rnn_plan *p = r->p;
    int64_t hn = p->hidden, ld = 3 * hn;
    /* Without linear_before_reset the h gate's product needs r first, so only z and r are multiplied now. */
    int rc = ref_rnn_gemm(r, p->lbr ? 3 * hn : 2 * hn, r->r, r->h, r->hg, ld);
    if (rc)
        return rc;
    for (int64_t b = 0; b < p->batch; b++) {
        const float *x = ref_rnn_xg_at(r, b, s);
        if (x)
            gru_gates(r, b, x);
        else /* the product below reads every row: give the ended ones defined values */
            for (int64_t j = 0; j < hn; j++)
                r->tmp[b * hn + j] = 0.0f;
    }
    if (!p->lbr && (rc = ref_rnn_gemm(r, hn, r->r + 2 * hn * hn, r->tmp, r->hg + 2 * hn, ld)))
        return rc;
    for (int64_t b = 0; b < p->batch; b++) {
        const float *x = ref_rnn_xg_at(r, b, s), *g = r->hg + b * ld, *t = r->tmp + b * hn;
        float *h = r->h + b * hn;
        if (!x)
            continue;
        for (int64_t j = 0; j < hn; j++) {
            float pre = x[2 * hn + j];
            if (p->lbr)
                pre += t[j] * (g[2 * hn + j] + (r->rb_h ? r->rb_h[j] : 0.0f));
            else
                pre += g[2 * hn + j];
            float hh = ref_rnn_act_apply(&r->act[1], ref_rnn_clip(p, pre));
            float z = g[j];
            h[j] = (1.0f - z) * hh + z * h[j];
        }
    }
    return REF_OK;
}

/* ---- LSTM: gates i, o, f, c in that order in W, R and B; peepholes P are i, o, f --------------------------
 * it = f(Xt Wi^T + Ht-1 Ri^T + Pi (.) Ct-1 + Wbi + Rbi), ft likewise with Pf (1 - it with input_forget)
 * ct = g(Xt Wc^T + Ht-1 Rc^T + Wbc + Rbc),  Ct = ft (.) Ct-1 + it (.) ct
 * ot = f(Xt Wo^T + Ht-1 Ro^T + Po (.) Ct + Wbo + Rbo),  Ht = ot (.) h(Ct) */

static void lstm_entry(ref_rnn_run *r, int64_t b, const float *x)
{
    const ref_rnn_plan *p = r->p;
    int64_t hn = p->hidden;
    const float *g = r->hg + b * 4 * hn, *pi = r->peep, *po = pi ? pi + hn : NULL, *pf = pi ? pi + 2 * hn : NULL;
    float *h = r->h + b * hn, *cs = r->cs + b * hn;
    for (int64_t j = 0; j < hn; j++) {
        float c0 = cs[j];
        float i = x[j] + g[j] + (pi ? pi[j] * c0 : 0.0f);
        float o = x[hn + j] + g[hn + j];
        float f = x[2 * hn + j] + g[2 * hn + j] + (pf ? pf[j] * c0 : 0.0f);
        float cc = x[3 * hn + j] + g[3 * hn + j];
        i = ref_rnn_act_apply(&r->act[0], ref_rnn_clip(p, i));
        f = p->input_forget ? 1.0f - i : ref_rnn_act_apply(&r->act[0], ref_rnn_clip(p, f));
        cc = ref_rnn_act_apply(&r->act[1], ref_rnn_clip(p, cc));
        float c1 = f * c0 + i * cc;
        o = ref_rnn_act_apply(&r->act[0], ref_rnn_clip(p, o + (po ? po[j] * c1 : 0.0f)));
        cs[j] = c1;
        h[j] = o * ref_rnn_act_apply(&r->act[2], c1);
    }
}

int ref_rnn_step_lstm(ref_rnn_run *r, int64_t s)
{
    const ref_rnn_plan *p = r->p;
    int64_t hn = p->hidden;
    int rc = ref_rnn_gemm(r, 4 * hn, r->r, r->h, r->hg, 4 * hn);
    if (rc)
        return rc;
    for (int64_t b = 0; b < p->batch; b++) {
        const float *x = ref_rnn_xg_at(r, b, s);
        if (x)
            lstm_entry(r, b, x);
    }
    return REF_OK;
}
