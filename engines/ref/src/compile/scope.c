/* scope.c: the names a subgraph reads from enclosing scopes (If's branches, Loop's and Scan's bodies): every name
 * its nodes, its outputs and its own subgraphs use that it does not define itself, and a small string set to
 * collect them. It must never keep a name it does not borrow from the model (strings live in the model's pool). */
#include <string.h>

#include "../alloc.h"
#include "scope.h"

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int find_slot(const ref_strset *s, const char *name)
{
    for (size_t i = hash_name(name) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i] < 0 || !strcmp(s->names[s->slots[i]], name))
            return (int)i;
    }
}

bool ref_strset_has(const ref_strset *s, const char *name)
{
    return s->cap && s->slots[find_slot(s, name)] >= 0;
}

static int grow(ref_strset *s)
{
    size_t cap = s->cap ? s->cap * 2 : 16;
    int *slots = ref_malloc(cap * sizeof *slots);
    const char **names = ref_realloc((void *)s->names, cap / 2 * sizeof *names);
    if (!slots || !names) {
        ref_free(slots);
        if (names)
            s->names = names;
        return REF_E_NOMEM;
    }
    s->names = names;
    memset(slots, 0xff, cap * sizeof *slots);
    ref_free(s->slots);
    s->slots = slots;
    s->cap = cap;
    for (int k = 0; k < s->n; k++)
        s->slots[find_slot(s, s->names[k])] = k;
    return REF_OK;
}

int ref_strset_add(ref_strset *s, const char *name)
{
    if (ref_strset_has(s, name))
        return REF_OK;
    /* names holds cap / 2 entries: the table stays at most half full. */
    if ((size_t)s->n + 1 > s->cap / 2 && grow(s))
        return REF_E_NOMEM;
    s->names[s->n] = name;
    s->slots[find_slot(s, name)] = s->n;
    s->n++;
    return REF_OK;
}

void ref_strset_free(ref_strset *s)
{
    ref_free(s->slots);
    ref_free((void *)s->names);
    memset(s, 0, sizeof *s);
}

/* Every name g defines: its inputs, initializers and node outputs. */
static int defined_names(const ref_graph *g, ref_strset *defs)
{
    int rc = REF_OK;
    for (size_t i = 0; i < g->n_inputs && !rc; i++)
        rc = ref_strset_add(defs, g->inputs[i].name);
    for (size_t i = 0; i < g->n_inits && !rc; i++)
        rc = ref_strset_add(defs, g->inits[i].name);
    for (size_t k = 0; k < g->n_nodes && !rc; k++)
        for (int j = 0; j < g->nodes[k].n_outputs && !rc; j++)
            if (g->nodes[k].outputs[j][0])
                rc = ref_strset_add(defs, g->nodes[k].outputs[j]);
    return rc;
}

static int add_unless(ref_strset *out, const ref_strset *defs, const char *name)
{
    if (!name[0] || (defs && ref_strset_has(defs, name)))
        return REF_OK;
    return ref_strset_add(out, name);
}

int ref_scope_node_uses(const ref_node *n, ref_strset *out)
{
    int rc = REF_OK;
    for (int a = 0; a < n->n_attrs && !rc; a++) {
        const ref_attr *at = &n->attrs[a];
        if (at->g)
            rc = ref_scope_free_names(at->g, out);
        for (size_t i = 0; i < at->n_graphs && !rc; i++)
            rc = ref_scope_free_names(at->graphs[i], out);
    }
    return rc;
}

int ref_scope_free_names(const ref_graph *g, ref_strset *out)
{
    ref_strset defs = {0}, inner = {0};
    int rc = defined_names(g, &defs);
    for (size_t k = 0; k < g->n_nodes && !rc; k++) {
        const ref_node *n = &g->nodes[k];
        for (int j = 0; j < n->n_inputs && !rc; j++)
            rc = add_unless(out, &defs, n->inputs[j]);
        inner.n = 0;
        if (inner.cap)
            memset(inner.slots, 0xff, inner.cap * sizeof *inner.slots);
        if (!rc)
            rc = ref_scope_node_uses(n, &inner);
        for (int j = 0; j < inner.n && !rc; j++)
            rc = add_unless(out, &defs, inner.names[j]);
    }
    for (size_t i = 0; i < g->n_outputs && !rc; i++)
        rc = add_unless(out, &defs, g->outputs[i].name);
    ref_strset_free(&defs);
    ref_strset_free(&inner);
    return rc;
}
