/* model.c: storage of the ONNX IR: pool, growable graph arrays, owned buffers, mappings, references.
 * It must never free memory it did not allocate: mappings are only those registered with it. */
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "model.h"

#define REF_POOL_CHUNK (64 * 1024)

struct ref_pool_chunk {
    ref_pool_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

struct ref_owned_buf {
    ref_owned_buf *next;
    void *p;
};

ref_model *ref_model_new(void)
{
    ref_model *m = ref_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    atomic_init(&m->refs, 1);
    ref_options_init(&m->opts);
    return m;
}

void ref_model_ref(ref_model *m)
{
    if (m)
        atomic_fetch_add(&m->refs, 1);
}

static void graph_free_arrays(ref_graph *g)
{
    ref_free(g->nodes);
    ref_free(g->inits);
    ref_free(g->inputs);
    ref_free(g->outputs);
    ref_free(g->value_infos);
}

static void model_destroy(ref_model *m)
{
    for (size_t i = 0; i < m->n_maps; i++)
        munmap(m->maps[i].addr, m->maps[i].len);
    ref_free(m->maps);
    for (ref_owned_buf *b = m->bufs, *next; b; b = next) {
        next = b->next;
        ref_free(b->p);
        ref_free(b);
    }
    graph_free_arrays(&m->graph);
    for (ref_graph *g = m->subs; g; g = g->next_sub)
        graph_free_arrays(g);
    ref_free(m->opsets);
    for (ref_pool_chunk *c = m->pool, *next; c; c = next) {
        next = c->next;
        ref_free(c);
    }
    ref_free(m);
}

void ref_model_unref(ref_model *m)
{
    if (m && atomic_fetch_sub(&m->refs, 1) == 1)
        model_destroy(m);
}

void *ref_model_pool_alloc(ref_model *m, size_t bytes)
{
    bytes = ref_align_up(bytes ? bytes : 1, 16);
    ref_pool_chunk *c = m->pool;
    if (!c || c->cap - c->used < bytes) {
        /* Big requests get a chunk of their own so the shared chunk keeps serving small ones. */
        size_t cap = bytes > REF_POOL_CHUNK / 4 ? bytes : REF_POOL_CHUNK;
        ref_pool_chunk *n = ref_malloc(sizeof *n + cap);
        if (!n)
            return NULL;
        n->used = 0;
        n->cap = cap;
        if (c && cap != REF_POOL_CHUNK) {
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            m->pool = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

char *ref_model_strdup(ref_model *m, const char *s, size_t n)
{
    char *d = ref_model_pool_alloc(m, n + 1);
    if (d && n)
        memcpy(d, s, n);
    return d;
}

void *ref_model_heap_alloc(ref_model *m, size_t bytes)
{
    ref_owned_buf *b = ref_malloc(sizeof *b);
    if (!b)
        return NULL;
    b->p = ref_aligned_alloc(bytes);
    if (!b->p) {
        ref_free(b);
        return NULL;
    }
    b->next = m->bufs;
    m->bufs = b;
    return b->p;
}

/* Grow *arr (of elem-size items, *n used of *cap) by one zeroed element. */
static void *append(void **arr, size_t *n, size_t *cap, size_t elem)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        void *p = ref_realloc(*arr, ncap * elem);
        if (!p)
            return NULL;
        *arr = p;
        *cap = ncap;
    }
    void *slot = (char *)*arr + (*n)++ * elem;
    memset(slot, 0, elem);
    return slot;
}

int ref_model_add_mapping(ref_model *m, void *addr, size_t len)
{
    ref_mapping *s = append((void **)&m->maps, &m->n_maps, &m->cap_maps, sizeof *s);
    if (!s)
        return REF_E_NOMEM;
    s->addr = addr;
    s->len = len;
    return REF_OK;
}

ref_node *ref_graph_push_node(ref_graph *g)
{
    return append((void **)&g->nodes, &g->n_nodes, &g->cap_nodes, sizeof(ref_node));
}

ref_initializer *ref_graph_push_init(ref_graph *g)
{
    return append((void **)&g->inits, &g->n_inits, &g->cap_inits, sizeof(ref_initializer));
}

ref_value_info *ref_graph_push_value(ref_value_info **arr, size_t *n, size_t *cap)
{
    ref_value_info *v = append((void **)arr, n, cap, sizeof *v);
    if (v)
        v->rank = -1;
    return v;
}

ref_graph *ref_model_new_subgraph(ref_model *m)
{
    ref_graph *g = ref_model_pool_alloc(m, sizeof *g);
    if (!g)
        return NULL;
    g->name = "";
    g->next_sub = m->subs;
    m->subs = g;
    return g;
}

ref_node *ref_graph_add_node(ref_model *m) { return ref_graph_push_node(&m->graph); }

ref_initializer *ref_graph_add_init(ref_model *m) { return ref_graph_push_init(&m->graph); }

ref_value_info *ref_graph_add_input(ref_model *m)
{
    return ref_graph_push_value(&m->graph.inputs, &m->graph.n_inputs, &m->graph.cap_inputs);
}

ref_value_info *ref_graph_add_output(ref_model *m)
{
    return ref_graph_push_value(&m->graph.outputs, &m->graph.n_outputs, &m->graph.cap_outputs);
}

ref_value_info *ref_graph_add_value_info(ref_model *m)
{
    return ref_graph_push_value(&m->graph.value_infos, &m->graph.n_value_infos, &m->graph.cap_value_infos);
}

int ref_model_add_opset(ref_model *m, const char *domain, int64_t version)
{
    ref_opset *o = append((void **)&m->opsets, &m->n_opsets, &m->cap_opsets, sizeof *o);
    if (!o)
        return REF_E_NOMEM;
    o->domain = ref_model_strdup(m, domain, strlen(domain));
    if (!o->domain) {
        m->n_opsets--;
        return REF_E_NOMEM;
    }
    o->version = version;
    return REF_OK;
}

int64_t ref_model_opset(const ref_model *m)
{
    for (size_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain;
        if (!d[0] || !strcmp(d, "ai.onnx"))
            return m->opsets[i].version;
    }
    return 0;
}

const ref_initializer *ref_model_find_init(const ref_model *m, const char *name)
{
    for (size_t i = 0; i < m->graph.n_inits; i++)
        if (!strcmp(m->graph.inits[i].name, name))
            return &m->graph.inits[i];
    return NULL;
}

const ref_attr *ref_node_attr(const ref_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}

int64_t ref_attr_int_or(const ref_node *n, const char *name, int64_t dflt)
{
    const ref_attr *a = ref_node_attr(n, name);
    return a && a->type == REF_ATTR_INT ? a->i : dflt;
}

float ref_attr_float_or(const ref_node *n, const char *name, float dflt)
{
    const ref_attr *a = ref_node_attr(n, name);
    if (!a)
        return dflt;
    if (a->type == REF_ATTR_FLOAT)
        return a->f;
    if (a->type == REF_ATTR_INT)
        return (float)a->i;
    return dflt;
}

const char *ref_attr_str_or(const ref_node *n, const char *name, const char *dflt)
{
    const ref_attr *a = ref_node_attr(n, name);
    return a && a->type == REF_ATTR_STRING ? a->s : dflt;
}

size_t ref_attr_ints(const ref_node *n, const char *name, const int64_t **out)
{
    const ref_attr *a = ref_node_attr(n, name);
    if (!a || a->type != REF_ATTR_INTS) {
        *out = NULL;
        return 0;
    }
    *out = a->ints;
    return a->n;
}

size_t ref_attr_floats(const ref_node *n, const char *name, const float **out)
{
    const ref_attr *a = ref_node_attr(n, name);
    if (!a || a->type != REF_ATTR_FLOATS) {
        *out = NULL;
        return 0;
    }
    *out = a->floats;
    return a->n;
}

/* Graph inputs that are not initializers (older files list initializers among the inputs too). */
static bool is_initializer(const ref_model *m, const char *name)
{
    return ref_model_find_init(m, name) != NULL;
}

size_t ref_model_n_inputs(const ref_model *m)
{
    size_t n = 0;
    for (size_t i = 0; m && i < m->graph.n_inputs; i++)
        n += !is_initializer(m, m->graph.inputs[i].name);
    return n;
}

const char *ref_model_input_name(const ref_model *m, size_t i)
{
    for (size_t k = 0; m && k < m->graph.n_inputs; k++)
        if (!is_initializer(m, m->graph.inputs[k].name) && i-- == 0)
            return m->graph.inputs[k].name;
    return NULL;
}
