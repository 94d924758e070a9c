/* graph.c: turns a graph (the model's, or a subgraph with its outer-scope captures) into a value table and a
 * topological execution order; a node with subgraphs gets their outer-scope names as implicit inputs.
 * It must never reorder nodes that are already in a valid order: file order decides tensor lifetimes. */
#include <limits.h>
#include <string.h>

#include "../alloc.h"
#include "compiled.h"
#include "scope.h"

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

/* A subgraph's outer-scope names become values here: the parent's constants as constants (borrowed), the
 * rest as inputs after the formal ones, bound by the control-flow op at run time. */
static int add_captures(ref_compiled *c, name_index *ix, const ref_strset *caps, ref_error *err)
{
    const ref_compiled *pc = c->parent;
    const ref_exec_node *pe = &pc->nodes[c->parent_node];
    for (int j = 0; j < caps->n; j++) {
        int slot = -1, id, rc;
        for (int i = 0; i < pe->n_implicit && slot < 0; i++)
            if (!strcmp(pc->vals[pe->in[pe->n_in + i]].name, caps->names[j]))
                slot = i;
        if (slot < 0)
            return ref_fail(err, REF_E_PARSE, "subgraph reads '%s', which no enclosing scope defines", caps->names[j]);
        const ref_value *pv = &pc->vals[pe->in[pe->n_in + slot]];
        bool is_const = pv->kind == REF_VAL_CONST;
        if ((rc = add_value(c, ix, caps->names[j], is_const ? REF_VAL_CONST : REF_VAL_INPUT, &id, err)))
            return rc;
        c->capture_slot[j] = slot;
        c->capture_input[j] = -1;
        c->vals[id].t = pv->t;
        if (!is_const) {
            c->vals[id].t.data = NULL;
            c->capture_input[j] = c->n_inputs;
            c->inputs[c->n_inputs++] = id;
        }
    }
    c->n_captures = caps->n;
    return REF_OK;
}

static int add_sources(ref_compiled *c, name_index *ix, const ref_strset *caps, ref_error *err)
{
    const ref_graph *g = c->graph;
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
        if (index_find(ix, g->inputs[i].name) >= 0) {
            if (c->parent) /* a subgraph's inputs are bound by position */
                return ref_fail(err, REF_E_UNSUPPORTED, "subgraph input '%s' is also an initializer",
                                g->inputs[i].name);
            continue;
        }
        /* A subgraph may leave its inputs untyped (Loop's body): their types come from the bound values. */
        if (!g->inputs[i].elem_type && c->parent) {
            if ((rc = add_value(c, ix, g->inputs[i].name, REF_VAL_INPUT, &id, err)))
                return rc;
            c->vals[id].declared = &g->inputs[i];
            c->inputs[c->n_inputs++] = id;
            continue;
        }
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
    c->n_formal = c->n_inputs;
    return c->parent ? add_captures(c, ix, caps, err) : REF_OK;
}

/* Resolve node inputs/outputs to ids. Outputs get values now; inputs are looked up after all exist. */
static int add_node_outputs(ref_compiled *c, name_index *ix, int *ids, const int *n_impl, ref_error *err)
{
    const ref_graph *g = c->graph;
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
        ids += (size_t)n->n_outputs + (size_t)n->n_inputs + (size_t)n_impl[k];
    }
    return REF_OK;
}

static int resolve_name(ref_compiled *c, name_index *ix, size_t k, const char *name, int *id, ref_error *err)
{
    const ref_node *n = &c->graph->nodes[k];
    *id = name[0] ? index_find(ix, name) : -1;
    if (name[0] && *id < 0)
        return ref_fail(err, REF_E_PARSE,
                        "node %zu '%s' (%s): input '%s' is not produced by any node, initializer or graph input",
                        k, n->name, n->op_type, name);
    return REF_OK;
}

/* Explicit inputs, then the outer-scope names the node's subgraphs read (its implicit inputs). */
static int resolve_inputs(ref_compiled *c, name_index *ix, int *ids, const int *n_impl, ref_error *err)
{
    const ref_graph *g = c->graph;
    ref_strset uses = {0};
    int rc = REF_OK;
    for (size_t k = 0; k < g->n_nodes && !rc; k++) {
        const ref_node *n = &g->nodes[k];
        int *in = ids + n->n_outputs;
        for (int j = 0; j < n->n_inputs && !rc; j++)
            rc = resolve_name(c, ix, k, n->inputs[j], &in[j], err);
        if (n_impl[k] && !rc) {
            ref_strset_free(&uses);
            if (ref_scope_node_uses(n, &uses))
                rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory for the outer names of a subgraph");
            for (int j = 0; j < uses.n && !rc; j++)
                rc = resolve_name(c, ix, k, uses.names[j], &in[n->n_inputs + j], err);
        }
        ids += (size_t)n->n_outputs + (size_t)n->n_inputs + (size_t)n_impl[k];
    }
    ref_strset_free(&uses);
    return rc;
}

/* A binary min-heap of file indices: the ready nodes. */
static void heap_push(int *h, size_t *n, int v)
{
    size_t i = (*n)++;
    while (i && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, size_t *n)
{
    int top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        int mv = last;
        if (l < *n && h[l] < mv)
            m = l, mv = h[l];
        if (l + 1 < *n && h[l + 1] < mv)
            m = l + 1;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    if (*n)
        h[i] = last;
    return top;
}

/* Kahn's algorithm, always taking the ready node that comes first in the file (a min-heap of file indices), so a
 * graph already in order keeps it. Each node counts its inputs not yet produced (one per read); placing a node
 * counts down its readers', found through a list of readers per producing node. */
static int topo_sort(ref_compiled *c, int *ids, const int *n_impl, ref_error *err)
{
    const ref_graph *g = c->graph;
    size_t n = g->n_nodes, n_edges = 0;
    int **node_ids = ref_calloc(n ? n : 1, sizeof *node_ids);
    int *pending = ref_calloc(n ? n : 1, sizeof *pending);
    size_t *first_reader = ref_calloc(n + 1, sizeof *first_reader);
    int *heap = ref_malloc((n ? n : 1) * sizeof *heap), *readers = NULL;
    int rc = REF_OK;
    if (!pending || !node_ids || !first_reader || !heap) {
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory sorting %zu nodes", n);
        goto out;
    }
    for (size_t k = 0, off = 0; k < n; k++) {
        node_ids[k] = ids + off;
        off += (size_t)g->nodes[k].n_outputs + (size_t)g->nodes[k].n_inputs + (size_t)n_impl[k];
    }
    /* readers of node p's outputs: readers[first_reader[p] .. first_reader[p + 1]), one entry per read */
    for (size_t k = 0; k < n; k++) {
        const int *in = node_ids[k] + g->nodes[k].n_outputs;
        for (int j = 0; j < g->nodes[k].n_inputs + n_impl[k]; j++)
            if (in[j] >= 0 && c->vals[in[j]].kind == REF_VAL_ACT) {
                first_reader[c->vals[in[j]].producer + 1]++;
                n_edges++;
            }
    }
    for (size_t p = 0; p < n; p++)
        first_reader[p + 1] += first_reader[p];
    if (!(readers = ref_malloc((n_edges ? n_edges : 1) * sizeof *readers))) {
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory sorting %zu nodes", n);
        goto out;
    }
    size_t n_ready = 0;
    for (size_t k = 0; k < n; k++) {
        const int *in = node_ids[k] + g->nodes[k].n_outputs;
        for (int j = 0; j < g->nodes[k].n_inputs + n_impl[k]; j++)
            if (in[j] >= 0 && c->vals[in[j]].kind == REF_VAL_ACT) {
                readers[first_reader[c->vals[in[j]].producer]++] = (int)k;
                pending[k]++;
            }
        if (!pending[k])
            heap_push(heap, &n_ready, (int)k);
    }
    for (size_t p = n; p > 0; p--) /* the fill moved each start to the next one's: move them back */
        first_reader[p] = first_reader[p - 1];
    first_reader[0] = 0;
    size_t placed = 0;
    while (n_ready) {
        int k = heap_pop(heap, &n_ready);
        ref_exec_node *e = &c->nodes[placed++];
        e->node = &g->nodes[k];
        e->out = node_ids[k];
        e->n_out = g->nodes[k].n_outputs;
        e->in = node_ids[k] + e->n_out;
        e->n_in = g->nodes[k].n_inputs;
        e->n_implicit = n_impl[k];
        for (size_t r = first_reader[k]; r < first_reader[k + 1]; r++)
            if (--pending[readers[r]] == 0)
                heap_push(heap, &n_ready, readers[r]);
    }
    if (placed < n) {
        rc = ref_fail(err, REF_E_PARSE, "graph has a cycle: %zu of %zu nodes can never run", n - placed, n);
        goto out;
    }
    for (int k = 0; k < c->n_nodes; k++)
        for (int j = 0; j < c->nodes[k].n_out; j++)
            if (c->nodes[k].out[j] >= 0)
                c->vals[c->nodes[k].out[j]].producer = k;
out:
    ref_free(pending);
    ref_free(node_ids);
    ref_free(first_reader);
    ref_free(heap);
    ref_free(readers);
    return rc;
}

static int resolve_outputs_and_uses(ref_compiled *c, name_index *ix, ref_error *err)
{
    const ref_graph *g = c->graph;
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        for (int j = 0; j < e->n_in + e->n_implicit; j++)
            if (e->in[j] >= 0)
                c->vals[e->in[j]].last_use = k;
        if (e->n_in + e->n_implicit > c->max_in)
            c->max_in = e->n_in + e->n_implicit;
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
        c->vals[id].graph_output = true;
    }
    return REF_OK;
}

/* Per node, how many outer-scope names its subgraphs read; *total gets their sum. */
static int count_implicit(const ref_graph *g, int *n_impl, size_t *total, ref_error *err)
{
    ref_strset uses = {0};
    *total = 0;
    for (size_t k = 0; k < g->n_nodes; k++) {
        ref_strset_free(&uses);
        if (ref_scope_node_uses(&g->nodes[k], &uses)) {
            ref_strset_free(&uses);
            return ref_fail(err, REF_E_NOMEM, "compile: out of memory for the outer names of a subgraph");
        }
        n_impl[k] = uses.n;
        *total += (size_t)uses.n;
    }
    ref_strset_free(&uses);
    return REF_OK;
}

int ref_graph_build(ref_compiled *c, ref_error *err)
{
    const ref_graph *g = c->graph;
    size_t n_vals = g->n_inits + g->n_inputs, n_ids = 0, n_implicit = 0;
    ref_strset caps = {0};
    int *n_impl = ref_calloc(g->n_nodes + 1, sizeof *n_impl);
    int rc = n_impl ? REF_OK : ref_fail(err, REF_E_NOMEM, "compile: out of memory for %zu nodes", g->n_nodes);
    if (!rc)
        rc = count_implicit(g, n_impl, &n_implicit, err);
    if (!rc && c->parent && ref_scope_free_names(g, &caps))
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory for the outer names of a subgraph");
    if (rc) {
        ref_free(n_impl);
        ref_strset_free(&caps);
        return rc;
    }
    n_vals += (size_t)caps.n;
    for (size_t k = 0; k < g->n_nodes; k++) {
        n_vals += (size_t)g->nodes[k].n_outputs;
        n_ids += (size_t)g->nodes[k].n_outputs + (size_t)g->nodes[k].n_inputs;
    }
    n_ids += n_implicit;
    /* Value and node ids are ints; a graph past that is refused before anything is sized from it. */
    if (n_vals >= INT_MAX || g->n_nodes >= INT_MAX) {
        ref_free(n_impl);
        ref_strset_free(&caps);
        return ref_fail(err, REF_E_UNSUPPORTED, "compile: %zu nodes and %zu values (at most %d of each)",
                        g->n_nodes, n_vals, INT_MAX - 1);
    }
    size_t cap = 16;
    while (cap < 2 * n_vals + 1)
        cap *= 2;
    int *ids = ref_malloc(sizeof(int) * (n_ids ? n_ids : 1));
    c->vals = ref_calloc(n_vals ? n_vals : 1, sizeof *c->vals);
    c->nodes = ref_calloc(g->n_nodes ? g->n_nodes : 1, sizeof *c->nodes);
    c->inputs = ref_calloc(g->n_inputs + (size_t)caps.n + 1, sizeof(int));
    c->outputs = ref_calloc(g->n_outputs + 1, sizeof(int));
    c->capture_slot = ref_calloc((size_t)caps.n + 1, sizeof(int));
    c->capture_input = ref_calloc((size_t)caps.n + 1, sizeof(int));
    name_index ix = {.slots = ref_malloc(sizeof(int) * cap), .mask = cap - 1, .vals = c->vals};
    if (!ids || !c->vals || !c->nodes || !c->inputs || !c->outputs || !ix.slots || !c->capture_slot ||
        !c->capture_input) {
        ref_free(ids);
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory for %zu values", n_vals);
        goto out;
    }
    /* The id block is owned through nodes[0].in/out after sorting; keep its base for freeing. */
    c->node_ids = ids;
    memset(ix.slots, 0xff, sizeof(int) * cap);
    c->n_nodes = (int)g->n_nodes;
    if ((rc = add_sources(c, &ix, &caps, err)) || (rc = add_node_outputs(c, &ix, ids, n_impl, err)) ||
        (rc = resolve_inputs(c, &ix, ids, n_impl, err)) || (rc = topo_sort(c, ids, n_impl, err)) ||
        (rc = resolve_outputs_and_uses(c, &ix, err)))
        goto out;
out:
    ref_free(ix.slots);
    ref_free(n_impl);
    ref_strset_free(&caps);
    return rc;
}
