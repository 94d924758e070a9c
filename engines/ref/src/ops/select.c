/* select.c: operators whose output size depends on the data, known only when they run (sets_outputs): 
 * NonMaxSuppression (greedy per batch and class, by descending score, ties by index) and Unique (values or slices
 * along an axis, sorted or in order of first appearance, with indices, inverse indices and counts). Their working
 * arrays come from scratch sized by the inputs, so run allocates nothing but its outputs (through
 * ref_op_output). It must never select a box twice or count an element in two groups. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

/* Stable merge sort of idx[0..n) by cmp(arg, a, b) (< 0: a first), with tmp of n entries. */
static void msort(int64_t *idx, int64_t *tmp, int64_t n, int (*cmp)(const void *, int64_t, int64_t), const void *arg)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = cmp(arg, idx[b], idx[a]) < 0 ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[k++] = idx[a++];
            while (b < hi)
                tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, sizeof *idx * (size_t)n);
    }
}

/* ---- NonMaxSuppression -------------------------------------------------------------------------- */

typedef struct {
    const ref_tensor *boxes, *scores;
    int64_t b, c, n;
    bool center;
} nms_ctx;

static int nms_check(ref_op_ctx *c, int64_t *batches, int64_t *classes, int64_t *n)
{
    const ref_tensor *bx = c->in[0], *sc = c->n_in > 1 ? c->in[1] : NULL;
    if (!sc || bx->rank != 3 || bx->dims[2] != 4 || sc->rank != 3 || sc->dims[0] != bx->dims[0] ||
        sc->dims[2] != bx->dims[1] || !ref_elem_is_float(bx->dtype) || !ref_elem_is_float(sc->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "NonMaxSuppression needs float boxes [B, N, 4] and scores [B, C, N]");
    *batches = bx->dims[0];
    *classes = sc->dims[1];
    *n = bx->dims[1];
    return REF_OK;
}

static int nms_infer(ref_op_ctx *c)
{
    int64_t b, cl, n;
    int rc = nms_check(c, &b, &cl, &n);
    return rc ? rc : ref_fail(c->err, REF_E_DYNAMIC, "NonMaxSuppression: the count selected is known when it runs");
}

static size_t nms_scratch_bytes(const ref_op_ctx *c)
{
    const ref_tensor *bx = c->in[0], *sc = c->n_in > 1 ? c->in[1] : NULL;
    int64_t n = bx->rank == 3 ? bx->dims[1] : 0, cl = sc && sc->rank == 3 ? sc->dims[1] : 0;
    int64_t b = bx->rank == 3 ? bx->dims[0] : 0;
    return sizeof(int64_t) * (size_t)(3 * n + 3 * b * cl * n + 1);
}

static int by_score(const void *arg, int64_t a, int64_t b)
{
    const nms_ctx *x = arg;
    int64_t base = (x->b * x->scores->dims[1] + x->c) * x->n;
    double sa = ref_elem_ld(x->scores->data, x->scores->dtype, base + a);
    double sb = ref_elem_ld(x->scores->data, x->scores->dtype, base + b);
    return sa > sb ? -1 : sa < sb ? 1 : 0;
}

static void corners(const nms_ctx *x, int64_t i, double *y1, double *x1, double *y2, double *x2)
{
    int64_t at = (x->b * x->n + i) * 4;
    double v[4];
    for (int k = 0; k < 4; k++)
        v[k] = ref_elem_ld(x->boxes->data, x->boxes->dtype, at + k);
    if (x->center) { /* [x_center, y_center, width, height] */
        *x1 = v[0] - v[2] / 2;
        *x2 = v[0] + v[2] / 2;
        *y1 = v[1] - v[3] / 2;
        *y2 = v[1] + v[3] / 2;
        return;
    }
    *y1 = fmin(v[0], v[2]);
    *y2 = fmax(v[0], v[2]);
    *x1 = fmin(v[1], v[3]);
    *x2 = fmax(v[1], v[3]);
}

static double iou(const nms_ctx *x, int64_t i, int64_t j)
{
    double a[4], b[4];
    corners(x, i, &a[0], &a[1], &a[2], &a[3]);
    corners(x, j, &b[0], &b[1], &b[2], &b[3]);
    double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]), iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
    if (ih <= 0 || iw <= 0)
        return 0;
    double inter = ih * iw, ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return ua > 0 ? inter / ua : 0;
}

static double scalar_or(ref_op_ctx *c, int i, double dflt)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    return t && ref_tensor_numel(t) > 0 ? ref_elem_ld(t->data, t->dtype, 0) : dflt;
}

static int nms_run(ref_op_ctx *c)
{
    int64_t batches, classes, n;
    int rc = nms_check(c, &batches, &classes, &n);
    if (rc)
        return rc;
    if (c->scratch_bytes < nms_scratch_bytes(c))
        return ref_fail(c->err, REF_E_INVALID, "NonMaxSuppression: scratch of %zu bytes", c->scratch_bytes);
    int64_t *idx = c->scratch, *tmp = idx + n, *kept = tmp + n, *out = kept + n, n_sel = 0;
    const ref_tensor *mt = c->n_in > 2 ? c->in[2] : NULL;
    int64_t max_out = mt && ref_tensor_numel(mt) > 0 ? ref_elem_ldi(mt->data, mt->dtype, 0) : 0;
    double iou_th = scalar_or(c, 3, 0.0);
    bool has_score_th = c->n_in > 4 && c->in[4] && ref_tensor_numel(c->in[4]) > 0;
    double score_th = scalar_or(c, 4, 0.0);
    nms_ctx x = {.boxes = c->in[0], .scores = c->in[1], .n = n,
                 .center = ref_attr_int_or(c->node, "center_point_box", 0) != 0};
    for (x.b = 0; x.b < batches; x.b++)
        for (x.c = 0; x.c < classes; x.c++) {
            int64_t m = 0, n_kept = 0, base = (x.b * classes + x.c) * n;
            for (int64_t i = 0; i < n; i++)
                if (!has_score_th || ref_elem_ld(x.scores->data, x.scores->dtype, base + i) > score_th)
                    idx[m++] = i;
            msort(idx, tmp, m, by_score, &x);
            for (int64_t k = 0; k < m && n_kept < max_out; k++) {
                bool keep = true;
                for (int64_t j = 0; j < n_kept && keep; j++)
                    keep = iou(&x, idx[k], kept[j]) <= iou_th;
                if (!keep)
                    continue;
                kept[n_kept++] = idx[k];
                out[3 * n_sel] = x.b;
                out[3 * n_sel + 1] = x.c;
                out[3 * n_sel + 2] = idx[k];
                n_sel++;
            }
        }
    ref_tensor y = {.dtype = REF_DT_INT64, .rank = 2, .dims = {n_sel, 3}};
    if ((rc = ref_op_output(c, 0, &y)))
        return rc;
    memcpy(c->out[0]->data, out, sizeof(int64_t) * 3 * (size_t)n_sel);
    return REF_OK;
}

/* ---- Unique ------------------------------------------------------------------------------------- */

typedef struct {
    const ref_tensor *x;
    int64_t outer, len, inner; /* x as [outer, len, inner]: slices along the axis */
} uniq_ctx;

/* Compare slices a and b lexicographically (elements in row-major order of [outer, inner]). */
static int slice_cmp(const void *arg, int64_t a, int64_t b)
{
    const uniq_ctx *u = arg;
    for (int64_t o = 0; o < u->outer; o++)
        for (int64_t q = 0; q < u->inner; q++) {
            double va = ref_elem_ld(u->x->data, u->x->dtype, (o * u->len + a) * u->inner + q);
            double vb = ref_elem_ld(u->x->data, u->x->dtype, (o * u->len + b) * u->inner + q);
            if (va != vb)
                return va < vb ? -1 : 1;
        }
    return 0;
}

static int uniq_geom(ref_op_ctx *c, uniq_ctx *u, int *axis)
{
    const ref_tensor *x = c->in[0];
    if (!ref_dtype_size(x->dtype) || x->dtype == REF_DT_FLOAT16 || x->dtype == REF_DT_BFLOAT16)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Unique of %s", ref_dtype_name(x->dtype));
    const ref_attr *a = ref_node_attr(c->node, "axis");
    u->x = x;
    *axis = -1;
    if (!a) {
        u->outer = u->inner = 1;
        u->len = ref_tensor_numel(x);
        return REF_OK;
    }
    *axis = ref_norm_axis(a->i, x->rank);
    if (*axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "Unique: axis %lld for rank %d", (long long)a->i, x->rank);
    u->outer = ref_dims_prod(x->dims, 0, *axis);
    u->len = x->dims[*axis];
    u->inner = ref_dims_prod(x->dims, *axis + 1, x->rank);
    return REF_OK;
}

static int uniq_infer(ref_op_ctx *c)
{
    uniq_ctx u;
    int axis, rc = uniq_geom(c, &u, &axis);
    return rc ? rc : ref_fail(c->err, REF_E_DYNAMIC, "Unique: the count of unique values is known when it runs");
}

static size_t uniq_scratch_bytes(const ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int64_t n = ref_tensor_numel(x);
    return sizeof(int64_t) * (size_t)(6 * n + 1);
}

/* Give output j a 1-D int64 of n values from v (when the node has it). */
static int out_ints(ref_op_ctx *c, int j, const int64_t *v, int64_t n)
{
    if (j >= c->n_out || !c->out[j])
        return REF_OK;
    ref_tensor t = {.dtype = REF_DT_INT64, .rank = 1, .dims = {n}};
    int rc = ref_op_output(c, j, &t);
    if (!rc && n)
        memcpy(c->out[j]->data, v, sizeof(int64_t) * (size_t)n);
    return rc;
}

static int uniq_run(ref_op_ctx *c)
{
    uniq_ctx u;
    int axis, rc = uniq_geom(c, &u, &axis);
    if (rc)
        return rc;
    if (c->scratch_bytes < uniq_scratch_bytes(c))
        return ref_fail(c->err, REF_E_INVALID, "Unique: scratch of %zu bytes", c->scratch_bytes);
    int64_t n = u.len, *idx = c->scratch, *tmp = idx + n, *first = tmp + n, *count = first + n, *inv = count + n;
    int64_t *order = inv + n, groups = 0;
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    msort(idx, tmp, n, slice_cmp, &u); /* stable: each group starts with its first appearance */
    for (int64_t k = 0; k < n; k++) {
        if (k == 0 || slice_cmp(&u, idx[k - 1], idx[k])) {
            first[groups] = idx[k];
            count[groups++] = 0;
        }
        count[groups - 1]++;
        tmp[idx[k]] = groups - 1; /* tmp: group of each element, in sorted group order */
    }
    for (int64_t g = 0; g < groups; g++)
        order[g] = g;
    if (!ref_attr_int_or(c->node, "sorted", 1)) { /* groups by first appearance: reorder by first index */
        for (int64_t g = 1; g < groups; g++)
            for (int64_t h = g; h > 0 && first[order[h - 1]] > first[order[h]]; h--) {
                int64_t t = order[h];
                order[h] = order[h - 1];
                order[h - 1] = t;
            }
    }
    for (int64_t g = 0; g < groups; g++)
        idx[order[g]] = g; /* idx: output position of each sorted group */
    for (int64_t i = 0; i < n; i++)
        inv[i] = idx[tmp[i]];
    for (int64_t g = 0; g < groups; g++) { /* tmp, idx now: first and count in output order */
        tmp[g] = first[order[g]];
        idx[g] = count[order[g]];
    }
    const ref_tensor *x = c->in[0];
    ref_tensor y = {.dtype = x->dtype, .rank = axis < 0 ? 1 : x->rank};
    memcpy(y.dims, x->dims, sizeof y.dims);
    y.dims[axis < 0 ? 0 : axis] = groups;
    if ((rc = ref_op_output(c, 0, &y)))
        return rc;
    size_t es = ref_dtype_size(x->dtype), block = (size_t)u.inner * es;
    for (int64_t o = 0; o < u.outer; o++)
        for (int64_t g = 0; g < groups; g++)
            memcpy((char *)c->out[0]->data + ((size_t)o * (size_t)groups + (size_t)g) * block,
                   (const char *)x->data + ((size_t)o * (size_t)n + (size_t)tmp[g]) * block, block);
    if ((rc = out_ints(c, 1, tmp, groups)) || (rc = out_ints(c, 2, inv, n)) || (rc = out_ints(c, 3, idx, groups)))
        return rc;
    return REF_OK;
}

const ref_op ref_ops_select[] = {
    {.name = "NonMaxSuppression", .infer = nms_infer, .scratch_bytes = nms_scratch_bytes, .run = nms_run,
     .sets_outputs = true},
    {.name = "Unique", .infer = uniq_infer, .scratch_bytes = uniq_scratch_bytes, .run = uniq_run,
     .sets_outputs = true},
    {.name = NULL},
};
