/* graph_builder.h: builds small whole models in the IR by hand for compile and runtime tests.
 * It must never hide an allocation failure: every builder returns NULL or a status the test checks. */
#ifndef REF_GRAPH_BUILDER_H
#define REF_GRAPH_BUILDER_H

#include <stdarg.h>
#include <string.h>

#include "alloc.h"
#include "model.h"
#include "op_harness.h"

/* An empty model importing the default domain at `opset`. */
static inline ref_model *gb_model(int opset)
{
    ref_model *m = ref_model_new();
    if (!m)
        return NULL;
    m->ir_version = 8;
    if (ref_model_add_opset(m, "", opset)) {
        ref_model_unref(m);
        return NULL;
    }
    return m;
}

static inline const char *gb_str(ref_model *m, const char *s) { return ref_model_strdup(m, s, strlen(s)); }

/* Fill a value info: dims[i] >= 0 fixed, or symbolic named params[i] when params and params[i] are set. */
static inline int gb_value(ref_model *m, ref_value_info *v, const char *name, int dtype, int rank,
                           const int64_t *dims, const char *const *params)
{
    if (!v)
        return REF_E_NOMEM;
    v->name = gb_str(m, name);
    v->elem_type = dtype;
    v->rank = rank;
    v->dims = ref_model_pool_alloc(m, sizeof(ref_dim) * (size_t)(rank > 0 ? rank : 1));
    if (!v->name || !v->dims)
        return REF_E_NOMEM;
    for (int i = 0; i < rank; i++) {
        v->dims[i].value = dims ? dims[i] : -1;
        v->dims[i].param = params && params[i] ? gb_str(m, params[i]) : NULL;
    }
    return REF_OK;
}

static inline int gb_input(ref_model *m, const char *name, int dtype, int rank, const int64_t *dims,
                           const char *const *params)
{
    return gb_value(m, ref_graph_add_input(m), name, dtype, rank, dims, params);
}

/* A graph output with no declared shape. */
static inline int gb_output(ref_model *m, const char *name, int dtype)
{
    return gb_value(m, ref_graph_add_output(m), name, dtype, -1, NULL, NULL);
}

/* An initializer with a heap copy of data. */
static inline int gb_init(ref_model *m, const char *name, int dtype, int rank, const int64_t *dims,
                          const void *data)
{
    ref_initializer *in = ref_graph_add_init(m);
    if (!in)
        return REF_E_NOMEM;
    in->name = gb_str(m, name);
    in->t.dtype = dtype;
    ref_tensor_set_shape(&in->t, rank, dims);
    in->nbytes = ref_tensor_nbytes(&in->t);
    in->t.data = ref_model_heap_alloc(m, in->nbytes ? in->nbytes : 1);
    in->storage = REF_STORAGE_HEAP;
    if (!in->name || !in->t.data)
        return REF_E_NOMEM;
    memcpy(in->t.data, data, in->nbytes);
    return REF_OK;
}

/* A node: "in1,in2" and "out1" name lists (comma-separated, "" entries for omitted ones). */
static inline ref_node *gb_node_in(ref_model *m, ref_graph *g, const char *op, const char *ins, const char *outs);

static inline ref_node *gb_node(ref_model *m, const char *op, const char *ins, const char *outs)
{
    return gb_node_in(m, &m->graph, op, ins, outs);
}

/* A value info appended to one of g's lists (&g->inputs...), as gb_value fills it. */
#define GB_VALUE(m, g, list, name, dtype, rank, dims)                                                          \
    gb_value(m, ref_graph_push_value(&(g)->list, &(g)->n_##list, &(g)->cap_##list), name, dtype, rank, dims, NULL)

/* The same node builder on any graph of m (a subgraph from ref_model_new_subgraph). */
static inline ref_node *gb_node_in(ref_model *m, ref_graph *g, const char *op, const char *ins, const char *outs)
{
    const char *lists[2] = {ins, outs};
    int counts[2] = {0, 0};
    for (int l = 0; l < 2; l++)
        if (lists[l][0])
            for (const char *p = lists[l]; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
                counts[l]++;
    ref_node *n = ref_graph_push_node(g);
    if (!n)
        return NULL;
    n->op_type = gb_str(m, op);
    n->name = n->op_type;
    n->domain = "";
    n->n_inputs = counts[0];
    n->n_outputs = counts[1];
    n->inputs = ref_model_pool_alloc(m, sizeof(char *) * (size_t)(counts[0] + 1));
    n->outputs = ref_model_pool_alloc(m, sizeof(char *) * (size_t)(counts[1] + 1));
    n->attrs = ref_model_pool_alloc(m, sizeof(ref_attr) * OH_MAX_ATTRS);
    if (!n->op_type || !n->inputs || !n->outputs || !n->attrs)
        return NULL;
    for (int l = 0; l < 2; l++) {
        const char **dst = l ? n->outputs : n->inputs;
        const char *p = lists[l];
        for (int i = 0; i < counts[l]; i++) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            dst[i] = ref_model_strdup(m, p, len);
            if (!dst[i])
                return NULL;
            p = end ? end + 1 : p + len;
        }
    }
    return n;
}

#endif
