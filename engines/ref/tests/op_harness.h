/* op_harness.h: builds single-node graphs by hand and runs one operator through infer, prepare and run,
 * the way compile and the runtime do. It must never hide a failing status: every step reports through err. */
#ifndef REF_OP_HARNESS_H
#define REF_OP_HARNESS_H

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "model.h"
#include "ops/op.h"
#include "pool.h"

#define OH_MAX_ATTRS 16

/* A node named after its op with inputs "i0".. and outputs "o0".., owned by m's pool. */
static inline ref_node *oh_node(ref_model *m, const char *op_type, int n_in, int n_out)
{
    ref_node *n = ref_model_pool_alloc(m, sizeof *n);
    n->name = ref_model_strdup(m, op_type, strlen(op_type));
    n->op_type = n->name;
    n->domain = "";
    n->n_inputs = n_in;
    n->n_outputs = n_out;
    n->inputs = ref_model_pool_alloc(m, sizeof(char *) * (size_t)(n_in + 1));
    n->outputs = ref_model_pool_alloc(m, sizeof(char *) * (size_t)(n_out + 1));
    for (int i = 0; i < n_in; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "i%d", i);
        n->inputs[i] = ref_model_strdup(m, buf, strlen(buf));
    }
    for (int i = 0; i < n_out; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "o%d", i);
        n->outputs[i] = ref_model_strdup(m, buf, strlen(buf));
    }
    n->attrs = ref_model_pool_alloc(m, sizeof(ref_attr) * OH_MAX_ATTRS);
    return n;
}

static inline ref_attr *oh_attr(ref_model *m, ref_node *n, const char *name, int type)
{
    ref_attr *a = &n->attrs[n->n_attrs++];
    a->name = ref_model_strdup(m, name, strlen(name));
    a->type = type;
    return a;
}

static inline void oh_attr_int(ref_model *m, ref_node *n, const char *name, int64_t v)
{
    oh_attr(m, n, name, REF_ATTR_INT)->i = v;
}

static inline void oh_attr_float(ref_model *m, ref_node *n, const char *name, float v)
{
    oh_attr(m, n, name, REF_ATTR_FLOAT)->f = v;
}

static inline void oh_attr_str(ref_model *m, ref_node *n, const char *name, const char *v)
{
    ref_attr *a = oh_attr(m, n, name, REF_ATTR_STRING);
    a->s = ref_model_strdup(m, v, strlen(v));
    a->s_len = strlen(v);
}

static inline void oh_attr_ints(ref_model *m, ref_node *n, const char *name, size_t count, const int64_t *v)
{
    ref_attr *a = oh_attr(m, n, name, REF_ATTR_INTS);
    int64_t *copy = ref_model_pool_alloc(m, sizeof *copy * (count ? count : 1));
    memcpy(copy, v, sizeof *copy * count);
    a->ints = copy;
    a->n = count;
}

static inline void oh_attr_floats(ref_model *m, ref_node *n, const char *name, size_t count, const float *v)
{
    ref_attr *a = oh_attr(m, n, name, REF_ATTR_FLOATS);
    float *copy = ref_model_pool_alloc(m, sizeof *copy * (count ? count : 1));
    memcpy(copy, v, sizeof *copy * count);
    a->floats = copy;
    a->n = count;
}

/* A TENSOR attribute; t's data is copied into the pool. */
static inline void oh_attr_tensor(ref_model *m, ref_node *n, const char *name, const ref_tensor *t)
{
    ref_attr *a = oh_attr(m, n, name, REF_ATTR_TENSOR);
    ref_tensor *copy = ref_model_pool_alloc(m, sizeof *copy);
    *copy = *t;
    size_t bytes = ref_tensor_nbytes(t);
    copy->data = ref_model_pool_alloc(m, bytes ? bytes : 1);
    memcpy(copy->data, t->data, bytes);
    a->t = copy;
}

/* A tensor over caller memory. */
static inline ref_tensor oh_tensor(int dtype, int rank, const int64_t *dims, void *data)
{
    ref_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    ref_tensor_set_shape(&t, rank, dims);
    t.data = data;
    return t;
}

/* Run node n like compile + infer do: infer shapes with only the inputs in const_mask showing their
 * data (bit i for input i), prepare (worker scratch included), then run with every input's data, on a
 * pool of `threads`. in[i] may be NULL for an omitted input. Each out[i] gets shape and a
 * ref_aligned_alloc buffer the caller frees with oh_free_outputs. Returns the first failing status. */
static inline int oh_run(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, int n_out,
                         ref_tensor *out, unsigned const_mask, int threads, ref_error *err)
{
    const ref_op *op = ref_op_find(n->domain, n->op_type);
    if (!op)
        return ref_fail(err, REF_E_UNSUPPORTED, "no operator %s", n->op_type);
    ref_tensor shown[16];
    const ref_tensor *shown_p[16];
    ref_tensor *out_p[16];
    for (int i = 0; i < n_in; i++) {
        shown_p[i] = NULL;
        if (in[i]) {
            shown[i] = *in[i];
            if (!(const_mask & (1u << i)))
                shown[i].data = NULL;
            shown_p[i] = &shown[i];
        }
    }
    for (int i = 0; i < n_out; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out_p[i] = &out[i];
    }
    ref_pool *pool = NULL;
    int rc = ref_pool_new(threads, &pool, err);
    if (rc)
        return rc;
    ref_op_ctx c = {.node = n, .opset = opset, .n_in = n_in, .n_out = n_out, .in = shown_p,
                    .out = out_p, .pool = pool, .n_threads = ref_pool_threads(pool), .err = err};
    void *state = NULL, *scratch = NULL;
    rc = op->infer(&c);
    if (rc)
        goto done;
    for (int i = 0; i < n_out; i++) {
        out[i].data = ref_aligned_alloc(ref_tensor_nbytes(&out[i]) + 1);
        memset(out[i].data, 0, ref_tensor_nbytes(&out[i]));
    }
    if (op->prepare) {
        size_t ws = op->prepare_scratch_bytes ? op->prepare_scratch_bytes(&c) : 0;
        void *wscratch = ref_aligned_alloc(ws + 1);
        c.scratch = wscratch;
        c.scratch_bytes = ws;
        rc = op->prepare(&c, &state);
        ref_free(wscratch);
        if (rc)
            goto done;
    }
    for (int i = 0; i < n_in; i++)
        shown_p[i] = in[i];
    c.state = state;
    size_t sb = op->scratch_bytes ? op->scratch_bytes(&c) : 0;
    scratch = ref_aligned_alloc(sb + 1);
    c.scratch = scratch;
    c.scratch_bytes = sb;
    rc = op->run(&c);
done:
    if (state)
        op->state_free(state);
    ref_free(scratch);
    ref_pool_free(pool);
    return rc;
}

/* A request on c, its input 0 set to in, one infer: the first failing call's status. *r is the caller's to read and
 * free (NULL when it was not made). */
static inline int oh_request_infer(ref_compiled *c, const ref_tensor *in, ref_request **r, ref_error *err)
{
    int rc = ref_request_new(c, r, err);
    if (!rc)
        rc = ref_request_set_input(*r, 0, in, err);
    if (!rc)
        rc = ref_infer(*r, err);
    return rc;
}

/* Compile m with o (NULL: defaults), then oh_request_infer: *c and *r are the caller's to read and free. */
static inline int oh_compile_infer(ref_model *m, const ref_options *o, const ref_tensor *in, ref_compiled **c,
                                   ref_request **r, ref_error *err)
{
    int rc = ref_compile(m, o, c, err);
    return rc ? rc : oh_request_infer(*c, in, r, err);
}

static inline void oh_free_outputs(int n_out, ref_tensor *out)
{
    for (int i = 0; i < n_out; i++) {
        ref_free(out[i].data);
        out[i].data = NULL;
    }
}

#endif
