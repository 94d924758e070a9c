/* layout_trilu.c: Trilu, which keeps the upper or lower triangle (shifted by k) of the last two dims and zeroes
 * the rest. It must never allocate; zero is all-zero bytes, so every fixed-size dtype works unchanged. */
#include <string.h>

#include "layout_copy.h"
#include "layout_ops.h"

typedef struct {
    const char *src;
    char *dst;
    size_t es;
    int64_t rows, cols, k;
    bool upper;
} trilu_job;

/* k only moves the diagonal, so it may be unknown until run; its value never changes the shape. */
static int trilu_k(ref_op_ctx *c, int64_t *k)
{
    const ref_tensor *t = ref_layout_in(c, 1);
    *k = 0;
    if (!t)
        return REF_OK;
    if (t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Trilu: k must be int64, not %s", ref_dtype_name(t->dtype));
    if (ref_tensor_numel(t) != 1)
        return ref_fail(c->err, REF_E_SHAPE, "Trilu: k must be a scalar, has %lld elements",
                        (long long)ref_tensor_numel(t));
    if (t->data)
        *k = *(const int64_t *)t->data;
    return REF_OK;
}

int ref_trilu_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Trilu");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    if (x->rank < 2)
        return ref_fail(c->err, REF_E_SHAPE, "Trilu: input must have rank >= 2, got %d", x->rank);
    int64_t k;
    if ((rc = trilu_k(c, &k)))
        return rc;
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    return REF_OK;
}

/* Row i (of every matrix) keeps columns j with j - i >= k (upper) or j - i <= k (lower). */
static void trilu_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const trilu_job *j = arg;
    size_t row_bytes = (size_t)j->cols * j->es;
    for (int64_t r = begin; r < end; r++) {
        int64_t i = r % j->rows, lo, hi;
        if (j->upper) {
            lo = i + j->k;
            hi = j->cols;
        } else {
            lo = 0;
            hi = i + j->k + 1;
        }
        lo = lo < 0 ? 0 : lo > j->cols ? j->cols : lo;
        hi = hi < lo ? lo : hi > j->cols ? j->cols : hi;
        char *dst = j->dst + (size_t)r * row_bytes;
        const char *src = j->src + (size_t)r * row_bytes;
        memset(dst, 0, (size_t)lo * j->es);
        memcpy(dst + (size_t)lo * j->es, src + (size_t)lo * j->es, (size_t)(hi - lo) * j->es);
        memset(dst + (size_t)hi * j->es, 0, (size_t)(j->cols - hi) * j->es);
    }
}

int ref_trilu_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    trilu_job j = {.src = x->data, .dst = c->out[0]->data, .es = ref_dtype_size(x->dtype),
                   .rows = x->dims[x->rank - 2], .cols = x->dims[x->rank - 1],
                   .upper = ref_attr_int_or(c->node, "upper", 1) != 0};
    int rc = trilu_k(c, &j.k);
    if (rc)
        return rc;
    /* clamp so i + k cannot overflow; beyond rows + cols the result no longer changes */
    int64_t lim = j.rows + j.cols + 1;
    j.k = j.k > lim ? lim : j.k < -lim ? -lim : j.k;
    int64_t n_rows = ref_dims_prod(x->dims, 0, x->rank - 1);
    if (n_rows == 0 || j.cols == 0)
        return REF_OK;
    ref_parallel_for(c->pool, n_rows, 32768 / j.cols + 1, trilu_task, &j);
    return REF_OK;
}
