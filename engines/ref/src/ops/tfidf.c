/* tfidf.c: TfIdfVectorizer over integer tokens: counts of the pool's n-grams (lengths min..max, items up to
 * max_skip_count apart) per row, as TF, IDF (weight when present) or TFIDF (count times weight). String pools and
 * inputs are unsupported (the engine has no string tensors). It must never count an n-gram past its row's end. */
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

typedef struct {
    int64_t min_n, max_n, max_skip, n_out;
    const int64_t *counts, *indexes, *pool;
    size_t n_counts, n_indexes, n_pool;
    const float *weights;
    size_t n_weights;
    int mode; /* 0 TF, 1 IDF, 2 TFIDF */
} tfidf_p;

static int tfidf_params(ref_op_ctx *c, tfidf_p *p)
{
    memset(p, 0, sizeof *p);
    p->min_n = ref_attr_int_or(c->node, "min_gram_length", 1);
    p->max_n = ref_attr_int_or(c->node, "max_gram_length", 1);
    p->max_skip = ref_attr_int_or(c->node, "max_skip_count", 0);
    p->n_counts = ref_attr_ints(c->node, "ngram_counts", &p->counts);
    p->n_indexes = ref_attr_ints(c->node, "ngram_indexes", &p->indexes);
    p->n_pool = ref_attr_ints(c->node, "pool_int64s", &p->pool);
    p->n_weights = ref_attr_floats(c->node, "weights", &p->weights);
    const char *mode = ref_attr_str_or(c->node, "mode", "TF");
    p->mode = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
    if (ref_node_attr(c->node, "pool_strings"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "TfIdfVectorizer over strings (no string tensors)");
    if (p->mode < 0 || p->min_n < 1 || p->max_n < p->min_n || p->max_skip < 0 || (int64_t)p->n_counts < p->max_n)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "TfIdfVectorizer: mode '%s', gram lengths %lld..%lld, %zu counts",
                        mode, (long long)p->min_n, (long long)p->max_n, p->n_counts);
    const ref_tensor *x = c->in[0];
    if ((x->dtype != REF_DT_INT32 && x->dtype != REF_DT_INT64) || x->rank < 1 || x->rank > 2)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "TfIdfVectorizer of %s rank %d", ref_dtype_name(x->dtype), x->rank);
    for (size_t i = 0; i < p->n_indexes; i++)
        if (p->indexes[i] + 1 > p->n_out)
            p->n_out = p->indexes[i] + 1;
    return REF_OK;
}

static int tfidf_infer(ref_op_ctx *c)
{
    tfidf_p p;
    int rc = tfidf_params(c, &p);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    c->out[0]->dtype = REF_DT_FLOAT;
    c->out[0]->rank = x->rank;
    c->out[0]->dims[0] = x->rank == 2 ? x->dims[0] : p.n_out;
    c->out[0]->dims[1] = p.n_out;
    return REF_OK;
}

/* Index in the pool order of the n-gram at row[at], row[at+step], ...; -1 when the pool lacks it. */
static int64_t find_gram(const tfidf_p *p, const ref_tensor *x, int64_t base, int64_t at, int64_t step, int64_t n)
{
    int64_t start = p->counts[n - 1], end = n < (int64_t)p->n_counts ? p->counts[n] : (int64_t)p->n_pool;
    int64_t before = 0; /* n-grams of shorter lengths come first in ngram_indexes */
    for (int64_t k = 1; k < n; k++) {
        int64_t s = p->counts[k - 1], e = k < (int64_t)p->n_counts ? p->counts[k] : (int64_t)p->n_pool;
        before += (e - s) / k;
    }
    for (int64_t g = start; g + n <= end; g += n) {
        bool match = true;
        for (int64_t i = 0; i < n && match; i++)
            match = p->pool[g + i] == ref_elem_ldi(x->data, x->dtype, base + at + i * step);
        if (match)
            return before + (g - start) / n;
    }
    return -1;
}

static int tfidf_run(ref_op_ctx *c)
{
    tfidf_p p;
    int rc = tfidf_params(c, &p);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    float *y = c->out[0]->data;
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, len = x->dims[x->rank - 1];
    memset(y, 0, ref_tensor_nbytes(c->out[0]));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t n = p.min_n; n <= p.max_n; n++)
            for (int64_t skip = 0; skip <= (n == 1 ? 0 : p.max_skip); skip++) {
                int64_t step = skip + 1;
                for (int64_t at = 0; at + (n - 1) * step < len; at++) {
                    int64_t g = find_gram(&p, x, r * len, at, step, n);
                    if (g >= 0 && (size_t)g < p.n_indexes)
                        y[r * p.n_out + p.indexes[g]] += 1.0f;
                }
            }
    for (int64_t i = 0; i < rows * p.n_out && p.mode; i++) {
        int64_t col = i % p.n_out;
        float w = 1.0f;
        for (size_t g = 0; g < p.n_indexes && p.n_weights; g++)
            if (p.indexes[g] == col && g < p.n_weights)
                w = p.weights[g];
        y[i] = p.mode == 1 ? (y[i] > 0 ? w : 0.0f) : y[i] * w;
    }
    return REF_OK;
}

const ref_op ref_ops_tfidf[] = {
    {.name = "TfIdfVectorizer", .infer = tfidf_infer, .run = tfidf_run},
    {.name = NULL},
};
