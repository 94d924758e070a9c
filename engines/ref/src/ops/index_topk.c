/* index_topk.c: TopK (k attribute before opset 10, K input after; largest, sorted), ties by lower index.
 * It must never allocate at run time: each thread's selection heap lives in the planned scratch. */
#include <inttypes.h>
#include <math.h>

#include "index_util.h"

/* Three-way compare of elements a and b (offsets in elements); NaN sorts above every number. */
typedef int (*topk_cmp)(const void *x, int64_t a, int64_t b);

#define TOPK_CMP_INT(name, T)                                      \
    static int name(const void *x, int64_t a, int64_t b)           \
    {                                                              \
        T va = ((const T *)x)[a], vb = ((const T *)x)[b];          \
        return (va > vb) - (va < vb);                              \
    }
#define TOPK_CMP_FLOAT(name, T)                                    \
    static int name(const void *x, int64_t a, int64_t b)           \
    {                                                              \
        T va = ((const T *)x)[a], vb = ((const T *)x)[b];          \
        if (isnan(va) || isnan(vb))                                \
            return isnan(va) - isnan(vb);                          \
        return (va > vb) - (va < vb);                              \
    }

TOPK_CMP_FLOAT(cmp_f32, float)
TOPK_CMP_FLOAT(cmp_f64, double)
TOPK_CMP_INT(cmp_i8, int8_t)
TOPK_CMP_INT(cmp_u8, uint8_t)
TOPK_CMP_INT(cmp_i16, int16_t)
TOPK_CMP_INT(cmp_u16, uint16_t)
TOPK_CMP_INT(cmp_i32, int32_t)
TOPK_CMP_INT(cmp_u32, uint32_t)
TOPK_CMP_INT(cmp_i64, int64_t)
TOPK_CMP_INT(cmp_u64, uint64_t)

static topk_cmp topk_cmp_for(int dtype)
{
    switch (dtype) {
    case REF_DT_FLOAT: return cmp_f32;
    case REF_DT_DOUBLE: return cmp_f64;
    case REF_DT_INT8: return cmp_i8;
    case REF_DT_UINT8: return cmp_u8;
    case REF_DT_INT16: return cmp_i16;
    case REF_DT_UINT16: return cmp_u16;
    case REF_DT_INT32: return cmp_i32;
    case REF_DT_UINT32: return cmp_u32;
    case REF_DT_INT64: return cmp_i64;
    case REF_DT_UINT64: return cmp_u64;
    default: return NULL;
    }
}

static int topk_k(ref_op_ctx *c, int64_t *k)
{
    if (c->opset < 10) {
        const ref_attr *a = ref_node_attr(c->node, "k");
        if (!a)
            return ref_fail(c->err, REF_E_INVALID, "attribute k is required before opset 10");
        *k = a->i;
        return REF_OK;
    }
    const ref_tensor *t = ix_in(c, 1);
    if (t && t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "K must be int64, not %s", ref_dtype_name(t->dtype));
    return ix_read_scalar(c, 1, "K", k);
}

static int topk_axis(ref_op_ctx *c, int *axis)
{
    const ref_tensor *x = c->in[0];
    int64_t a = ref_attr_int_or(c->node, "axis", -1);
    *axis = ref_norm_axis(a, x->rank);
    if (x->rank < 1 || *axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for rank %d", a, x->rank);
    return REF_OK;
}

int ix_topk_infer(ref_op_ctx *c)
{
    const ref_tensor *x = ix_in(c, 0);
    if (!x)
        return ref_fail(c->err, REF_E_INVALID, "input 0 is required");
    if (!topk_cmp_for(x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 0 has unsupported type %s", ref_dtype_name(x->dtype));
    int axis;
    int64_t k;
    int rc = topk_axis(c, &axis);
    if (!rc)
        rc = topk_k(c, &k);
    if (rc)
        return rc;
    if (k < 0 || k > x->dims[axis])
        return ref_fail(c->err, REF_E_RANGE, "K = %" PRId64 " is out of range for axis %d of size %" PRId64, k,
                        axis, x->dims[axis]);
    for (int o = 0; o < c->n_out && o < 2; o++) {
        ref_tensor *y = c->out[o];
        y->dtype = o ? REF_DT_INT64 : x->dtype;
        ref_tensor_set_shape(y, x->rank, x->dims);
        y->dims[axis] = k;
    }
    return REF_OK;
}

size_t ix_topk_scratch_bytes(const ref_op_ctx *c)
{
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", -1), c->out[0]->rank);
    if (axis < 0)
        return 0;
    int threads = c->n_threads > 1 ? c->n_threads : 1;
    return (size_t)threads * (size_t)c->out[0]->dims[axis] * sizeof(int64_t);
}

typedef struct {
    const uint8_t *x;
    uint8_t *vals;
    int64_t *idx;
    int64_t *heaps; /* k per thread */
    int64_t dim, inner, k;
    int largest;
    size_t es;
    topk_cmp cmp;
} topk_job;

/* True when position a ranks after position b (worse): the heap keeps its worst element on top. */
static bool worse(const topk_job *j, const void *line, int64_t a, int64_t b)
{
    int s = j->cmp(line, a * j->inner, b * j->inner);
    if (!j->largest)
        s = -s;
    return s < 0 || (s == 0 && a > b);
}

static void sift_down(const topk_job *j, const void *line, int64_t *h, int64_t n, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && worse(j, line, h[l], h[m]))
            m = l;
        if (r < n && worse(j, line, h[r], h[m]))
            m = r;
        if (m == i)
            return;
        int64_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void topk_line(const topk_job *j, int64_t *h, int64_t line_no)
{
    int64_t o = line_no / j->inner, in = line_no % j->inner;
    const uint8_t *line = j->x + (size_t)(o * j->dim * j->inner + in) * j->es;
    int64_t n = 0;
    for (int64_t p = 0; p < j->dim; p++) {
        if (n < j->k) {
            h[n] = p;
            for (int64_t i = n++; i > 0 && worse(j, line, h[i], h[(i - 1) / 2]); i = (i - 1) / 2) {
                int64_t t = h[i];
                h[i] = h[(i - 1) / 2];
                h[(i - 1) / 2] = t;
            }
        } else if (n && worse(j, line, h[0], p)) {
            h[0] = p;
            sift_down(j, line, h, n, 0);
        }
    }
    /* Pop the worst into the last free slot until the heap is empty: best first. */
    int64_t base = o * j->k * j->inner + in;
    for (int64_t s = n - 1; s >= 0; s--) {
        int64_t p = h[0];
        h[0] = h[s];
        sift_down(j, line, h, s, 0);
        int64_t dst = base + s * j->inner;
        ix_copy_elem(j->vals + (size_t)dst * j->es, line + (size_t)(p * j->inner) * j->es, j->es);
        if (j->idx)
            j->idx[dst] = p;
    }
}

static void topk_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const topk_job *j = arg;
    for (int64_t l = begin; l < end; l++)
        topk_line(j, j->heaps + (size_t)tid * (size_t)j->k, l);
}

int ix_topk_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int axis;
    int64_t k;
    int rc = topk_axis(c, &axis);
    if (!rc)
        rc = topk_k(c, &k);
    if (rc)
        return rc;
    if (k != c->out[0]->dims[axis])
        return ref_fail(c->err, REF_E_SHAPE, "K = %" PRId64 " differs from the inferred %" PRId64, k,
                        c->out[0]->dims[axis]);
    int threads = c->n_threads > 1 ? c->n_threads : 1;
    if (c->scratch_bytes < (size_t)threads * (size_t)k * sizeof(int64_t))
        return ref_fail(c->err, REF_E_STATE, "scratch of %zu bytes is too small", c->scratch_bytes);
    topk_job j = {.x = x->data, .vals = c->out[0]->data, .idx = c->n_out > 1 ? c->out[1]->data : NULL,
                  .heaps = c->scratch, .dim = x->dims[axis], .inner = ref_dims_prod(x->dims, axis + 1, x->rank),
                  .k = k, .largest = ref_attr_int_or(c->node, "largest", 1) != 0,
                  .es = ref_dtype_size(x->dtype), .cmp = topk_cmp_for(x->dtype)};
    int64_t lines = ref_dims_prod(x->dims, 0, axis) * j.inner;
    if (k && lines) {
        int64_t grain = 4096 / (j.dim ? j.dim : 1);
        ref_parallel_for(c->pool, lines, grain < 1 ? 1 : grain, topk_task, &j);
    }
    return REF_OK;
}
