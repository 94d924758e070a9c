/* elementwise_broadcast.c: the broadcast iterator (shape collapsing, row walking), the parallel driver and
 * the half-precision row adapter shared by the elementwise, unary, activation and cast families.
 * It must never allocate: iterators live on the caller's stack and half rows convert in stack chunks. */
#include <string.h>

#include "cast_half.h"
#include "elementwise_broadcast.h"

void ref_ew_iter_init(ref_ew_iter *it, const ref_tensor *out, int n_in, const ref_tensor *const *in)
{
    memset(it, 0, sizeof *it);
    it->n_in = n_in;
    it->numel = ref_tensor_numel(out);
    it->out = out->data;
    it->out_size = ref_dtype_size(out->dtype);
    int64_t bs[REF_EW_MAX_IN][REF_MAX_RANK];
    for (int k = 0; k < n_in; k++) {
        ref_broadcast_strides(in[k], out, bs[k]);
        it->in[k] = in[k]->data;
        it->in_size[k] = ref_dtype_size(in[k]->dtype);
    }
    /* Keep the output's non-1 dims, merging a dim into the one after it whenever every operand walks
     * both as one contiguous (or one broadcast) run: same-shape and scalar operands collapse to rank 1. */
    int r = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1)
            continue;
        int merge = r > 0;
        for (int k = 0; k < n_in && merge; k++)
            merge = it->strides[k][r - 1] == bs[k][d] * out->dims[d];
        if (merge) {
            it->dims[r - 1] *= out->dims[d];
            for (int k = 0; k < n_in; k++)
                it->strides[k][r - 1] = bs[k][d];
            continue;
        }
        it->dims[r] = out->dims[d];
        for (int k = 0; k < n_in; k++)
            it->strides[k][r] = bs[k][d];
        r++;
    }
    if (r == 0) { /* a scalar, or all dims 1 */
        it->dims[0] = 1;
        r = 1;
    }
    it->rank = r;
}

void ref_ew_iter_range(const ref_ew_iter *it, int64_t begin, int64_t end, ref_ew_row_fn fn, const void *arg)
{
    if (begin >= end)
        return;
    const int r = it->rank;
    int64_t idx[REF_MAX_RANK];
    int64_t rem = begin;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rem % it->dims[d];
        rem /= it->dims[d];
    }
    int step[REF_EW_MAX_IN] = {0};
    const void *in[REF_EW_MAX_IN] = {0};
    for (int k = 0; k < it->n_in; k++)
        step[k] = it->strides[k][r - 1] != 0; /* the innermost non-1 dim is contiguous or broadcast */
    const int64_t inner = it->dims[r - 1];
    int64_t pos = begin;
    while (pos < end) {
        int64_t len = inner - idx[r - 1];
        if (len > end - pos)
            len = end - pos;
        for (int k = 0; k < it->n_in; k++) {
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += idx[d] * it->strides[k][d];
            in[k] = it->in[k] + (size_t)off * it->in_size[k];
        }
        fn(arg, it->out + (size_t)pos * it->out_size, in, step, len);
        pos += len;
        idx[r - 1] += len;
        for (int d = r - 1; d > 0 && idx[d] == it->dims[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void ref_ew_parallel(ref_pool *pool, int64_t n, ref_task_fn task, void *arg)
{
    if (n <= 0)
        return;
    if (n < REF_EW_PARALLEL_MIN || ref_pool_threads(pool) <= 1) {
        task(arg, 0, n, 0);
        return;
    }
    ref_parallel_for(pool, n, REF_EW_GRAIN, task, arg);
}

typedef struct run_task {
    const ref_ew_iter *it;
    ref_ew_row_fn fn;
    const void *arg;
} run_task;

static void run_range(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const run_task *t = arg;
    ref_ew_iter_range(t->it, begin, end, t->fn, t->arg);
}

void ref_ew_run(ref_pool *pool, const ref_ew_iter *it, ref_ew_row_fn fn, const void *arg)
{
    run_task t = {it, fn, arg};
    ref_ew_parallel(pool, it->numel, run_range, &t);
}

/* ------------------------------------------------------------------------------------------------
 * Half-precision adapter.
 * ---------------------------------------------------------------------------------------------- */

#define HALF_CHUNK 256

static void half_load(int dtype, const uint16_t *src, float *dst, int64_t m)
{
    if (dtype == REF_DT_FLOAT16)
        for (int64_t i = 0; i < m; i++)
            dst[i] = ref_f16_to_f32(src[i]);
    else
        for (int64_t i = 0; i < m; i++)
            dst[i] = ref_bf16_to_f32(src[i]);
}

static void half_store(int dtype, const float *src, uint16_t *dst, int64_t m)
{
    if (dtype == REF_DT_FLOAT16)
        for (int64_t i = 0; i < m; i++)
            dst[i] = ref_f32_to_f16(src[i]);
    else
        for (int64_t i = 0; i < m; i++)
            dst[i] = ref_f32_to_bf16(src[i]);
}

void ref_ew_half_row(const void *arg, void *out, const void *const *in, const int *step, int64_t n)
{
    const ref_ew_half *h = arg;
    float buf_in[REF_EW_MAX_IN][HALF_CHUNK];
    float buf_out[HALF_CHUNK];
    const void *cin[REF_EW_MAX_IN];
    for (int64_t i0 = 0; i0 < n; i0 += HALF_CHUNK) {
        int64_t m = n - i0 < HALF_CHUNK ? n - i0 : HALF_CHUNK;
        for (int k = 0; k < h->n_in; k++) {
            if (h->in_half & (1u << k)) {
                const uint16_t *src = (const uint16_t *)in[k] + (step[k] ? i0 : 0);
                half_load(h->dtype, src, buf_in[k], step[k] ? m : 1);
                cin[k] = buf_in[k];
            } else {
                cin[k] = (const char *)in[k] + (step[k] ? (size_t)i0 * h->in_size[k] : 0);
            }
        }
        void *o = h->out_half ? (void *)buf_out : (char *)out + (size_t)i0 * h->out_size;
        h->fn(h->arg, o, cin, step, m);
        if (h->out_half)
            half_store(h->dtype, buf_out, (uint16_t *)out + i0, m);
    }
}

void ref_ew_half_init(ref_ew_half *h, int dtype, ref_ew_row_fn fn, const void *arg, int n_in, int out_half,
                      size_t out_size)
{
    memset(h, 0, sizeof *h);
    h->fn = fn;
    h->arg = arg;
    h->dtype = dtype;
    h->n_in = n_in;
    h->in_half = (1u << n_in) - 1;
    for (int k = 0; k < n_in; k++)
        h->in_size[k] = 2;
    h->out_half = out_half;
    h->out_size = out_half ? 2 : out_size;
}

void ref_ew_apply(ref_op_ctx *c, const ref_tensor *out, int n_in, const ref_tensor *const *in, ref_ew_row_fn fn,
                  const void *arg)
{
    ref_ew_iter it;
    ref_ew_iter_init(&it, out, n_in, in);
    ref_ew_half h;
    memset(&h, 0, sizeof h);
    for (int k = 0; k < n_in; k++) {
        h.in_size[k] = ref_dtype_size(in[k]->dtype);
        if (ref_ew_is_half(in[k]->dtype)) {
            h.in_half |= 1u << k;
            h.dtype = in[k]->dtype;
        }
    }
    if (ref_ew_is_half(out->dtype)) {
        h.out_half = 1;
        h.dtype = out->dtype;
    }
    if (!h.in_half && !h.out_half) {
        ref_ew_run(c->pool, &it, fn, arg);
        return;
    }
    h.fn = fn;
    h.arg = arg;
    h.n_in = n_in;
    h.out_size = ref_dtype_size(out->dtype);
    ref_ew_run(c->pool, &it, ref_ew_half_row, &h);
}

int ref_ew_binary_shape(ref_op_ctx *c, ref_tensor *b_view, ref_tensor *out)
{
    const ref_tensor *a = c->in[0];
    *b_view = *c->in[1];
    int legacy = c->opset < 7 && ref_attr_int_or(c->node, "broadcast", 0);
    char sa[96], sb[96];
    if (legacy) {
        const ref_tensor *b = c->in[1];
        int64_t axis = ref_attr_int_or(c->node, "axis", a->rank - b->rank);
        if (axis < 0)
            axis += a->rank;
        if (b->rank > a->rank || axis < 0 || axis + b->rank > a->rank)
            return ref_fail(c->err, REF_E_SHAPE, "legacy broadcast of %s onto %s at axis %lld does not fit",
                            ref_shape_str(b, sb, sizeof sb), ref_shape_str(a, sa, sizeof sa), (long long)axis);
        b_view->rank = a->rank - (int)axis;
        for (int d = b->rank; d < b_view->rank; d++)
            b_view->dims[d] = 1;
    }
    const ref_tensor *ops[2] = {a, b_view};
    int rc = ref_broadcast_shape(2, ops, out, c->err);
    if (rc)
        return rc;
    if (legacy && !ref_shape_equal(out, a))
        return ref_fail(c->err, REF_E_SHAPE, "legacy broadcast of %s onto %s would grow the first input",
                        ref_shape_str(c->in[1], sb, sizeof sb), ref_shape_str(a, sa, sizeof sa));
    return REF_OK;
}
