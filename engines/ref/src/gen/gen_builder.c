/* gen_builder.c: the sticky-error model builder the architecture generators write through.
 * It must never store a pointer the model does not own (every string is copied into the pool) and never
 * allocate a tensor before checking its size against the byte budget. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gen_builder.h"
#include "gen_rng.h"
#include "status.h"

int ref_gb_init(ref_gb *b, uint64_t seed, size_t max_weight_bytes, ref_error *err)
{
    memset(b, 0, sizeof *b);
    b->err = err;
    b->seed = seed;
    b->max_weight_bytes = max_weight_bytes;
    b->m = ref_model_new();
    if (!b->m)
        return b->rc = ref_fail(err, REF_E_NOMEM, "cannot allocate the model");
    b->m->ir_version = 8;
    b->m->producer_name = ref_model_strdup(b->m, "memleak-refengine", strlen("memleak-refengine"));
    b->m->producer_version = ref_model_strdup(b->m, "0.1", 3);
    b->m->graph.name = ref_model_strdup(b->m, "generated", strlen("generated"));
    if (!b->m->producer_name || !b->m->producer_version || !b->m->graph.name ||
        ref_model_add_opset(b->m, "", 17) != REF_OK)
        return ref_gb_fail(b, REF_E_NOMEM, "cannot allocate the model header");
    return REF_OK;
}

void ref_gb_deinit(ref_gb *b)
{
    ref_model_unref(b->m);
    b->m = NULL;
}

int ref_gb_take(ref_gb *b, ref_model **out)
{
    if (b->rc)
        return b->rc;
    *out = b->m;
    b->m = NULL;
    return REF_OK;
}

int ref_gb_fail(ref_gb *b, int code, const char *fmt, ...)
{
    if (b->rc)
        return b->rc;
    b->rc = code;
    if (b->err) {
        b->err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->err->msg, sizeof b->err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *dup(ref_gb *b, const char *s)
{
    if (b->rc)
        return NULL;
    char *d = ref_model_strdup(b->m, s, strlen(s));
    if (!d)
        ref_gb_fail(b, REF_E_NOMEM, "out of memory copying name '%s'", s);
    return d;
}

const char *ref_gb_str(ref_gb *b, const char *fmt, ...)
{
    if (b->rc)
        return NULL;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) {
        ref_gb_fail(b, REF_E_RANGE, "name longer than %zu bytes (format '%s')", sizeof buf - 1, fmt);
        return NULL;
    }
    return dup(b, buf);
}

int ref_gb_io(ref_gb *b, bool output, const char *name, int rank, const int64_t *dims,
              const char *const *params)
{
    if (b->rc)
        return b->rc;
    if (rank < 0 || rank > REF_MAX_RANK)
        return ref_gb_fail(b, REF_E_INVALID, "%s '%s' has rank %d", output ? "output" : "input", name, rank);
    ref_value_info *v = output ? ref_graph_add_output(b->m) : ref_graph_add_input(b->m);
    if (!v)
        return ref_gb_fail(b, REF_E_NOMEM, "out of memory adding graph value '%s'", name);
    /* Fill a complete element before anything else can fail, so the graph never holds a half-made one. */
    v->elem_type = REF_DT_FLOAT;
    v->rank = 0;
    v->name = dup(b, name);
    ref_dim *d = ref_model_pool_alloc(b->m, (size_t)(rank ? rank : 1) * sizeof *d);
    if (!v->name || !d)
        return ref_gb_fail(b, REF_E_NOMEM, "out of memory describing graph value '%s'", name);
    for (int i = 0; i < rank; i++) {
        d[i].value = params && params[i] ? -1 : dims[i];
        d[i].param = params && params[i] ? dup(b, params[i]) : NULL;
    }
    v->dims = d;
    v->rank = rank;
    return b->rc;
}

const char *ref_gb_node(ref_gb *b, const char *op, const char *name, int n_in, const char *const *in)
{
    if (b->rc)
        return NULL;
    for (int i = 0; i < n_in; i++)
        if (!in[i]) {
            ref_gb_fail(b, REF_E_INVALID, "node '%s' (%s): input %d missing", name, op, i);
            return NULL;
        }
    const char **ins = ref_model_pool_alloc(b->m, (size_t)(n_in ? n_in : 1) * sizeof *ins);
    const char **outs = ref_model_pool_alloc(b->m, sizeof *outs);
    ref_attr *attrs = ref_model_pool_alloc(b->m, REF_GB_MAX_ATTRS * sizeof *attrs);
    const char *nm = dup(b, name), *op_copy = dup(b, op), *domain = dup(b, "");
    if (!ins || !outs || !attrs || !nm || !op_copy || !domain) {
        ref_gb_fail(b, REF_E_NOMEM, "out of memory adding node '%s'", name);
        return NULL;
    }
    for (int i = 0; i < n_in; i++)
        if (!(ins[i] = dup(b, in[i])))
            return NULL;
    outs[0] = nm;
    ref_node *n = ref_graph_add_node(b->m);
    if (!n) {
        ref_gb_fail(b, REF_E_NOMEM, "out of memory adding node '%s'", name);
        return NULL;
    }
    n->name = nm;
    n->op_type = op_copy;
    n->domain = domain;
    n->inputs = ins;
    n->n_inputs = n_in;
    n->outputs = outs;
    n->n_outputs = 1;
    n->attrs = attrs;
    return nm;
}

const char *ref_gb_rename_output(ref_gb *b, const char *name)
{
    const char *nm = dup(b, name);
    if (!nm)
        return NULL;
    if (!b->m->graph.n_nodes) {
        ref_gb_fail(b, REF_E_STATE, "output '%s' named before any node", name);
        return NULL;
    }
    b->m->graph.nodes[b->m->graph.n_nodes - 1].outputs[0] = nm;
    return nm;
}

/* The next attribute slot of the last node, or NULL (with the failure recorded). */
static ref_attr *next_attr(ref_gb *b, const char *name, int type)
{
    if (b->rc)
        return NULL;
    if (!b->m->graph.n_nodes) {
        ref_gb_fail(b, REF_E_STATE, "attribute '%s' before any node", name);
        return NULL;
    }
    ref_node *n = &b->m->graph.nodes[b->m->graph.n_nodes - 1];
    if (n->n_attrs >= REF_GB_MAX_ATTRS) {
        ref_gb_fail(b, REF_E_RANGE, "node '%s' has more than %d attributes", n->name, REF_GB_MAX_ATTRS);
        return NULL;
    }
    const char *nm = dup(b, name);
    if (!nm)
        return NULL;
    ref_attr *a = &n->attrs[n->n_attrs++];
    a->name = nm;
    a->type = type;
    return a;
}

void ref_gb_attr_int(ref_gb *b, const char *name, int64_t v)
{
    ref_attr *a = next_attr(b, name, REF_ATTR_INT);
    if (a)
        a->i = v;
}

void ref_gb_attr_float(ref_gb *b, const char *name, float v)
{
    ref_attr *a = next_attr(b, name, REF_ATTR_FLOAT);
    if (a)
        a->f = v;
}

void ref_gb_attr_ints(ref_gb *b, const char *name, size_t n, const int64_t *v)
{
    if (b->rc)
        return;
    int64_t *copy = ref_model_pool_alloc(b->m, (n ? n : 1) * sizeof *copy);
    if (!copy) {
        ref_gb_fail(b, REF_E_NOMEM, "out of memory for attribute '%s'", name);
        return;
    }
    if (n)
        memcpy(copy, v, n * sizeof *copy);
    ref_attr *a = next_attr(b, name, REF_ATTR_INTS);
    if (a) {
        a->ints = copy;
        a->n = n;
    }
}

/* Append an initializer of dtype and shape with a heap buffer for its values, returned in *data.
 * Checks the element count for overflow and the model's byte budget before allocating. */
static ref_initializer *add_init(ref_gb *b, const char *name, int dtype, int rank, const int64_t *dims,
                                 void **data)
{
    if (b->rc)
        return NULL;
    if (rank < 0 || rank > REF_MAX_RANK) {
        ref_gb_fail(b, REF_E_INVALID, "initializer '%s' has rank %d", name, rank);
        return NULL;
    }
    size_t esize = ref_dtype_size(dtype), numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && numel > SIZE_MAX / esize / (size_t)dims[i])) {
            ref_gb_fail(b, REF_E_RANGE, "initializer '%s': dim %d = %lld is negative or overflows", name, i,
                        (long long)dims[i]);
            return NULL;
        }
        numel *= (size_t)dims[i];
    }
    size_t nbytes = numel * esize;
    if (nbytes > b->max_weight_bytes - b->weight_bytes) {
        ref_gb_fail(b, REF_E_RANGE,
                    "initializer '%s' (%zu bytes) takes the weights past the limit of %zu bytes", name,
                    nbytes, b->max_weight_bytes);
        return NULL;
    }
    const char *nm = dup(b, name);
    void *p = nm ? ref_model_heap_alloc(b->m, nbytes ? nbytes : 1) : NULL;
    ref_initializer *in = p ? ref_graph_add_init(b->m) : NULL;
    if (!in) {
        ref_gb_fail(b, REF_E_NOMEM, "out of memory for initializer '%s' (%zu bytes)", name, nbytes);
        return NULL;
    }
    in->name = nm;
    in->t.dtype = dtype;
    in->t.rank = rank;
    for (int i = 0; i < rank; i++)
        in->t.dims[i] = dims[i];
    in->t.data = p;
    in->nbytes = nbytes;
    in->storage = REF_STORAGE_HEAP;
    b->weight_bytes += nbytes;
    *data = p;
    return in;
}

const char *ref_gb_random(ref_gb *b, const char *name, ref_gb_kind kind, int rank, const int64_t *dims,
                          float center, float half_width)
{
    void *data;
    ref_initializer *in = add_init(b, name, REF_DT_FLOAT, rank, dims, &data);
    if (!in)
        return NULL;
    size_t n = in->nbytes / sizeof(float);
    ref_gen_fill(data, n, b->seed, b->n_random++, center, half_width);
    if (kind == REF_GB_PARAM)
        b->n_params += (int64_t)n;
    else
        b->n_buffers += (int64_t)n;
    return in->name;
}

const char *ref_gb_const_f32(ref_gb *b, const char *name, int rank, const int64_t *dims, const float *v)
{
    void *data;
    ref_initializer *in = add_init(b, name, REF_DT_FLOAT, rank, dims, &data);
    if (!in)
        return NULL;
    memcpy(data, v, in->nbytes);
    return in->name;
}

void ref_gb_dynamic_quantize(ref_gb *b, const char *name, const char *x, const char *out[3])
{
    out[0] = out[1] = out[2] = NULL;
    const char *q = ref_gb_node(b, "DynamicQuantizeLinear", name, 1, &x);
    const char **outs = q ? ref_model_pool_alloc(b->m, 3 * sizeof *outs) : NULL;
    if (q && !outs) {
        ref_gb_fail(b, REF_E_NOMEM, "out of memory adding node '%s'", name);
        return;
    }
    if (!q)
        return;
    outs[0] = q;
    outs[1] = ref_gb_str(b, "%s.scale", name);
    outs[2] = ref_gb_str(b, "%s.zero_point", name);
    if (!outs[1] || !outs[2])
        return;
    ref_node *n = &b->m->graph.nodes[b->m->graph.n_nodes - 1];
    n->outputs = outs;
    n->n_outputs = 3;
    memcpy(out, outs, 3 * sizeof *out);
}

void ref_gb_quantize_weight(ref_gb *b, const char *w, bool transpose, const char **scale, const char **zero_point)
{
    *scale = *zero_point = NULL;
    ref_initializer *in = NULL;
    for (size_t i = b->m && w ? b->m->graph.n_inits : 0; i-- > 0 && !in;)
        if (!strcmp(b->m->graph.inits[i].name, w))
            in = &b->m->graph.inits[i];
    if (b->rc || !in || in->t.dtype != REF_DT_FLOAT || (transpose && in->t.rank != 2)) {
        ref_gb_fail(b, REF_E_INVALID, "cannot quantize weight '%s'", w ? w : "?");
        return;
    }
    const float *f = in->t.data;
    size_t n = in->nbytes / sizeof(float);
    float lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = f[i] < lo ? f[i] : lo;
        hi = f[i] > hi ? f[i] : hi;
    }
    float s = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    float z = nearbyintf(-lo / s);
    uint8_t zp = (uint8_t)(z < 0 ? 0 : z > 255 ? 255 : z);
    uint8_t *q = ref_model_heap_alloc(b->m, n ? n : 1);
    if (!q) {
        ref_gb_fail(b, REF_E_NOMEM, "out of memory quantizing '%s'", w);
        return;
    }
    int64_t rows = transpose ? in->t.dims[0] : 1, cols = transpose ? in->t.dims[1] : (int64_t)n;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            float v = nearbyintf(f[r * cols + c] / s) + zp;
            q[transpose ? c * rows + r : r * cols + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    if (transpose) {
        in->t.dims[0] = cols;
        in->t.dims[1] = rows;
    }
    in->t.data = q; /* the float buffer stays with the model's heap until it is freed */
    in->t.dtype = REF_DT_UINT8;
    b->weight_bytes -= in->nbytes - n;
    in->nbytes = n;
    *scale = ref_gb_const_f32(b, ref_gb_str(b, "%s.scale", w), 0, NULL, &s);
    void *data;
    ref_initializer *zi = add_init(b, ref_gb_str(b, "%s.zero_point", w), REF_DT_UINT8, 0, NULL, &data);
    if (!zi)
        return;
    *(uint8_t *)data = zp;
    *zero_point = zi->name;
}

const char *ref_gb_const_i64(ref_gb *b, const char *name, int rank, const int64_t *dims, const int64_t *v)
{
    void *data;
    ref_initializer *in = add_init(b, name, REF_DT_INT64, rank, dims, &data);
    if (!in)
        return NULL;
    memcpy(data, v, in->nbytes);
    return in->name;
}
