/* graph.c: turns the model's graph into a value table and a topological execution order.
 * It must never reorder nodes that are already in a valid order: file order decides tensor lifetimes. */
#include <limits.h>
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

/* Name → value id, open addressing; only alive while the graph is built. */
typedef struct {
    int *slots;
    size_t mask;
    const ref_value *vals;
} name_index;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int index_find(const name_index *ix, const char *name)
{
    for (size_t i = hash_str(name) & ix->mask;; i = (i + 1) & ix->mask) {
        int id = ix->slots[i];
        if (id < 0)
            return -1;
        if (!strcmp(ix->vals[id].name, name))
            return id;
    }
}

static void index_put(name_index *ix, const char *name, int id)
{
    size_t i = hash_str(name) & ix->mask;
    while (ix->slots[i] >= 0)
        i = (i + 1) & ix->mask;
    ix->slots[i] = id;
}

/* Add a value unless the name exists; REF_E_PARSE when it is defined twice. */
static int add_value(ref_compiled *c, name_index *ix, const char *name, ref_val_kind kind, int *id,
                     ref_error *err)
{
    if (index_find(ix, name) >= 0)
        return ref_fail(err, REF_E_PARSE, "value '%s' is defined more than once", name);
    ref_value *v = &c->vals[c->n_vals];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->kind = kind;
    v->producer = -1;
    v->last_use = -1;
    *id = c->n_vals++;
    index_put(ix, name, *id);
    return REF_OK;
}

static int add_sources(ref_compiled *c, name_index *ix, ref_error *err)
{
    const ref_graph *g = &c->model->graph;
    int id, rc;
    for (size_t i = 0; i < g->n_inits; i++) {
        if ((rc = add_value(c, ix, g->inits[i].name, REF_VAL_CONST, &id, err)))
            return rc;
        c->vals[id].t = g->inits[i].t;
        if (g->inits[i].t.dtype == REF_DT_STRING || (!g->inits[i].t.data && g->inits[i].nbytes))
            return ref_fail(err, REF_E_UNSUPPORTED, "initializer '%s' has unsupported type %s",
                            g->inits[i].name, ref_dtype_name(g->inits[i].t.dtype));
    }
    for (size_t i = 0; i < g->n_inputs; i++) {
        /* Older models list initializers among the inputs too; the initializer wins. */
        if (index_find(ix, g->inputs[i].name) >= 0)
            continue;
        if (!g->inputs[i].elem_type)
            return ref_fail(err, REF_E_UNSUPPORTED,
                            "graph input '%s' is not a tensor (sequence, map and optional inputs are unsupported)",
                            g->inputs[i].name);
        if (!ref_dtype_size(g->inputs[i].elem_type))
            return ref_fail(err, REF_E_UNSUPPORTED, "graph input '%s' has unsupported element type %s (%d)",
                            g->inputs[i].name, ref_dtype_name(g->inputs[i].elem_type), g->inputs[i].elem_type);
        if ((rc = add_value(c, ix, g->inputs[i].name, REF_VAL_INPUT, &id, err)))
            return rc;
        c->vals[id].t.dtype = g->inputs[i].elem_type;
        c->vals[id].declared = &g->inputs[i];
        c->inputs[c->n_inputs++] = id;
    }
    return REF_OK;
}

/* Resolve node inputs/outputs to ids. Outputs get values now; inputs are looked up after all exist. */
static int add_node_outputs(ref_compiled *c, name_index *ix, int *ids, ref_error *err)
{
    const ref_graph *g = &c->model->graph;
    for (size_t k = 0; k < g->n_nodes; k++) {
        const ref_node *n = &g->nodes[k];
        for (int j = 0; j < n->n_outputs; j++) {
            int *slot = &ids[j];
            *slot = -1;
            if (!n->outputs[j][0])
                continue;
            int rc = add_value(c, ix, n->outputs[j], REF_VAL_ACT, slot, err);
            if (rc)
                return ref_fail_prefix(err, "node %zu '%s' (%s): ", k, n->name, n->op_type);
            c->vals[*slot].producer = (int)k; /* file index for now; execution index after sorting */
        }
        ids += (size_t)n->n_outputs + (size_t)n->n_inputs;
    }
    return REF_OK;
}

static int resolve_inputs(ref_compiled *c, name_index *ix, int *ids, ref_error *err)
{
    const ref_graph *g = &c->model->graph;
    for (size_t k = 0; k < g->n_nodes; k++) {
        const ref_node *n = &g->nodes[k];
        int *in = ids + n->n_outputs;
        for (int j = 0; j < n->n_inputs; j++) {
            in[j] = n->inputs[j][0] ? index_find(ix, n->inputs[j]) : -1;
            if (n->inputs[j][0] && in[j] < 0)
                return ref_fail(err, REF_E_PARSE,
                                "node %zu '%s' (%s): input '%s' is not produced by any node, initializer "
                                "or graph input",
                                k, n->name, n->op_type, n->inputs[j]);
        }
        ids += (size_t)n->n_outputs + (size_t)n->n_inputs;
    }
    return REF_OK;
}

/* Kahn's algorithm, always taking the ready node that comes first in the file. */
static int topo_sort(ref_compiled *c, int *ids, ref_error *err)
{
    const ref_graph *g = &c->model->graph;
    size_t n = g->n_nodes;
    int *pending = ref_calloc(n ? n : 1, sizeof *pending);
    int **node_ids = ref_calloc(n ? n : 1, sizeof *node_ids);
    bool *done = ref_calloc(n ? n : 1, sizeof *done);
    int rc = REF_OK;
    if (!pending || !node_ids || !done) {
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory sorting %zu nodes", n);
        goto out;
    }
    for (size_t k = 0, off = 0; k < n; k++) {
        node_ids[k] = ids + off;
        off += (size_t)g->nodes[k].n_outputs + (size_t)g->nodes[k].n_inputs;
    }
    size_t placed = 0, scan = 0;
    while (placed < n) {
        /* Restart from the first unplaced node: cheap for graphs already in order. */
        size_t k = scan;
        for (; k < n; k++) {
            if (done[k])
                continue;
            const int *in = node_ids[k] + g->nodes[k].n_outputs;
            bool ready = true;
            for (int j = 0; j < g->nodes[k].n_inputs && ready; j++) {
                int v = in[j];
                if (v >= 0 && c->vals[v].kind == REF_VAL_ACT && !done[c->vals[v].producer])
                    ready = false;
            }
            if (ready)
                break;
        }
        if (k == n) {
            rc = ref_fail(err, REF_E_PARSE, "graph has a cycle: %zu of %zu nodes can never run", n - placed,
                          n);
            goto out;
        }
        ref_exec_node *e = &c->nodes[placed];
        e->node = &g->nodes[k];
        e->out = node_ids[k];
        e->n_out = g->nodes[k].n_outputs;
        e->in = node_ids[k] + e->n_out;
        e->n_in = g->nodes[k].n_inputs;
        done[k] = true;
        placed++;
        while (scan < n && done[scan])
            scan++;
    }
    for (int k = 0; k < c->n_nodes; k++)
        for (int j = 0; j < c->nodes[k].n_out; j++)
            if (c->nodes[k].out[j] >= 0)
                c->vals[c->nodes[k].out[j]].producer = k;
out:
    ref_free(pending);
    ref_free(node_ids);
    ref_free(done);
    return rc;
}

static int resolve_outputs_and_uses(ref_compiled *c, name_index *ix, ref_error *err)
{
    const ref_graph *g = &c->model->graph;
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        for (int j = 0; j < e->n_in; j++)
            if (e->in[j] >= 0)
                c->vals[e->in[j]].last_use = k;
        if (e->n_in > c->max_in)
            c->max_in = e->n_in;
        if (e->n_out > c->max_out)
            c->max_out = e->n_out;
        for (int j = 0; j < e->n_out; j++)
            if (e->out[j] < 0)
                c->omitted_outputs = true;
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        int id = index_find(ix, g->outputs[i].name);
        if (id < 0)
            return ref_fail(err, REF_E_PARSE, "graph output '%s' is not produced by anything",
                            g->outputs[i].name);
        c->outputs[c->n_outputs++] = id;
        c->vals[id].last_use = c->n_nodes;
    }
    return REF_OK;
}

int ref_graph_build(ref_compiled *c, ref_error *err)
{
    const ref_graph *g = &c->model->graph;
    size_t n_vals = g->n_inits + g->n_inputs, n_ids = 0;
    for (size_t k = 0; k < g->n_nodes; k++) {
        n_vals += (size_t)g->nodes[k].n_outputs;
        n_ids += (size_t)g->nodes[k].n_outputs + (size_t)g->nodes[k].n_inputs;
    }
    /* Value and node ids are ints; a graph past that is refused before anything is sized from it. */
    if (n_vals >= INT_MAX || g->n_nodes >= INT_MAX)
        return ref_fail(err, REF_E_UNSUPPORTED, "compile: %zu nodes and %zu values (at most %d of each)",
                        g->n_nodes, n_vals, INT_MAX - 1);
    size_t cap = 16;
    while (cap < 2 * n_vals + 1)
        cap *= 2;
    int *ids = ref_malloc(sizeof(int) * (n_ids ? n_ids : 1));
    c->vals = ref_calloc(n_vals ? n_vals : 1, sizeof *c->vals);
    c->nodes = ref_calloc(g->n_nodes ? g->n_nodes : 1, sizeof *c->nodes);
    c->inputs = ref_calloc(g->n_inputs + 1, sizeof(int));
    c->outputs = ref_calloc(g->n_outputs + 1, sizeof(int));
    name_index ix = {.slots = ref_malloc(sizeof(int) * cap), .mask = cap - 1, .vals = c->vals};
    int rc = REF_OK;
    if (!ids || !c->vals || !c->nodes || !c->inputs || !c->outputs || !ix.slots) {
        ref_free(ids);
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory for %zu values", n_vals);
        goto out;
    }
    /* The id block is owned through nodes[0].in/out after sorting; keep its base for freeing. */
    c->node_ids = ids;
    memset(ix.slots, 0xff, sizeof(int) * cap);
    c->n_nodes = (int)g->n_nodes;
    if ((rc = add_sources(c, &ix, err)) || (rc = add_node_outputs(c, &ix, ids, err)) ||
        (rc = resolve_inputs(c, &ix, ids, err)) || (rc = topo_sort(c, ids, err)) ||
        (rc = resolve_outputs_and_uses(c, &ix, err)))
        goto out;
out:
    ref_free(ix.slots);
    return rc;
}
