/* embed_ms.c: ONNX Runtime's com.microsoft EmbedLayerNormalization, the first node of an ORT-optimized BERT: word,
 * position (0..S-1, or position_ids) and optional segment embeddings summed per token, then LayerNorm over the hidden
 * size with gamma and beta; outputs the result, the mask index (per batch, how many mask values are 1, ORT's key
 * lengths for Attention; 0 without a mask) and optionally the sum before the norm. Float tables (float16 graphs reach
 * it as float), int32 ids. It must never read a table row an id does not name: an id out of range fails the run,
 * naming the input, batch and position. */
#include <math.h>
#include <string.h>

#include "norm_impl.h"
#include "rows.h"

enum { IDS, SEG, WORD, POS, SEGEMB, GAMMA, BETA, MASK, POSIDS };

static const ref_tensor *in_at(const ref_op_ctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

static int table(ref_op_ctx *c, int i, const char *what, int64_t H, bool required)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return required ? ref_fail(c->err, REF_E_INVALID, "EmbedLayerNormalization: input %d (%s) is required", i, what)
                        : REF_OK;
    if (t->dtype != REF_DT_FLOAT || t->rank != 2 || t->dims[1] != H)
        return ref_fail(c->err, REF_E_SHAPE, "EmbedLayerNormalization: input %d (%s) must be float [rows, %lld]", i, what,
                        (long long)H);
    return REF_OK;
}

static int ids(ref_op_ctx *c, int i, const char *what, const ref_tensor *like, bool batch_one_ok)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return REF_OK;
    if (t->dtype != REF_DT_INT32 || t->rank != 2 || t->dims[1] != like->dims[1] ||
        (t->dims[0] != like->dims[0] && !(batch_one_ok && t->dims[0] == 1)))
        return ref_fail(c->err, REF_E_SHAPE, "EmbedLayerNormalization: input %d (%s) must be int32 [%lld, %lld]", i, what,
                        (long long)like->dims[0], (long long)like->dims[1]);
    return REF_OK;
}

static int check(ref_op_ctx *c)
{
    const ref_tensor *x = in_at(c, IDS), *w = in_at(c, WORD);
    if (!x || x->dtype != REF_DT_INT32 || x->rank != 2)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "EmbedLayerNormalization: input 0 (input_ids) must be int32 [B, S]");
    if (!w || w->rank != 2)
        return ref_fail(c->err, REF_E_SHAPE, "EmbedLayerNormalization: input 2 (word_embedding) must be [vocab, H]");
    int64_t H = w->dims[1];
    const ref_tensor *g = in_at(c, GAMMA), *b = in_at(c, BETA);
    int rc;
    if ((rc = table(c, WORD, "word_embedding", H, true)) || (rc = table(c, POS, "position_embedding", H, true)) ||
        (rc = table(c, SEGEMB, "segment_embedding", H, false)) || (rc = ids(c, SEG, "segment_ids", x, false)) ||
        (rc = ids(c, MASK, "mask", x, false)) || (rc = ids(c, POSIDS, "position_ids", x, true)))
        return rc;
    if ((in_at(c, SEG) != NULL) != (in_at(c, SEGEMB) != NULL))
        return ref_fail(c->err, REF_E_INVALID, "EmbedLayerNormalization: segment_ids and segment_embedding go together");
    if (!g || g->dtype != REF_DT_FLOAT || ref_tensor_numel(g) != H || (b && (b->dtype != REF_DT_FLOAT ||
                                                                             ref_tensor_numel(b) != H)))
        return ref_fail(c->err, REF_E_SHAPE, "EmbedLayerNormalization: gamma (and beta) must be float [%lld]",
                        (long long)H);
    if (!in_at(c, POSIDS) && in_at(c, POS)->dims[0] < x->dims[1])
        return ref_fail(c->err, REF_E_SHAPE, "EmbedLayerNormalization: %lld positions, sequence of %lld",
                        (long long)in_at(c, POS)->dims[0], (long long)x->dims[1]);
    return REF_OK;
}

static int embed_infer(ref_op_ctx *c)
{
    int rc = check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[IDS];
    int64_t H = c->in[WORD]->dims[1];
    for (int j = 0; j < c->n_out && j < 3; j++) {
        if (!c->out[j])
            continue;
        c->out[j]->dtype = j == 1 ? REF_DT_INT32 : REF_DT_FLOAT;
        if (j == 1)
            ref_tensor_set_shape(c->out[j], 1, x->dims);
        else
            ref_tensor_set_shape(c->out[j], 3, (int64_t[]){x->dims[0], x->dims[1], H});
    }
    return REF_OK;
}

/* *out: the row of table t named by id[i] (token k of S a batch, for the message); fails when the id is out of range. */
static int row(ref_op_ctx *c, const ref_tensor *t, const int32_t *id, int64_t i, int64_t k, int64_t S, const char *what,
               const float **out)
{
    if (id[i] < 0 || id[i] >= t->dims[0])
        return ref_fail(c->err, REF_E_INVALID,
                        "EmbedLayerNormalization: %s %d at batch %lld position %lld is outside [0, %lld)", what, id[i],
                        (long long)(k / S), (long long)(k % S), (long long)t->dims[0]);
    *out = (const float *)t->data + (int64_t)id[i] * t->dims[1];
    return REF_OK;
}

static int embed_run(ref_op_ctx *c)
{
    int rc = check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[IDS], *seg = in_at(c, SEG), *pid = in_at(c, POSIDS), *mask = in_at(c, MASK);
    const ref_tensor *beta = in_at(c, BETA);
    int64_t B = x->dims[0], S = x->dims[1], H = c->in[WORD]->dims[1];
    float *y = c->out[0]->data, *sum = ref_elem_out_present(c, 2) ? c->out[2]->data : NULL;
    ref_rows_layernorm_fn ln = ref_rows_layernorm();
    for (int64_t k = 0; k < B * S; k++) {
        int32_t p = (int32_t)(k % S);
        const int32_t *pids = pid ? (const int32_t *)pid->data + (pid->dims[0] == 1 ? 0 : k / S * S) : &p;
        const float *w, *ps, *sg = NULL;
        if ((rc = row(c, c->in[WORD], x->data, k, k, S, "input id", &w)) ||
            (rc = row(c, c->in[POS], pids, pid ? k % S : 0, k, S, "position", &ps)) ||
            (seg && (rc = row(c, c->in[SEGEMB], seg->data, k, k, S, "segment id", &sg))))
            return rc;
        float *yr = y + k * H;
        for (int64_t h = 0; h < H; h++) /* word + position (+ segment), in ORT's order */
            yr[h] = sg ? w[h] + ps[h] + sg[h] : w[h] + ps[h];
        if (sum)
            memcpy(sum + k * H, yr, sizeof *yr * (size_t)H);
        double mean, inv;
        ln(yr, yr, H, c->in[GAMMA]->data, beta ? beta->data : NULL, ref_attr_float_or(c->node, "epsilon", 1e-12f),
           &mean, &inv);
    }
    if (ref_elem_out_present(c, 1)) {
        int32_t *mi = c->out[1]->data;
        for (int64_t b = 0; b < B; b++) {
            int32_t n = 0;
            for (int64_t s = 0; mask && s < S; s++)
                n += ((const int32_t *)mask->data)[b * S + s] == 1;
            mi[b] = n;
        }
    }
    return REF_OK;
}

const ref_op ref_ops_embed_ms[] = {
    {.name = "EmbedLayerNormalization", .infer = embed_infer, .run = embed_run},
    {.name = NULL},
};
