/* release.c: gives back the memory of weights nothing reads any more: a folded weight a Conv has pre-packed
 * (freed), and mapped initializer pages no running node reads (dropped from RSS, still mapped).
 * It must never release a value a node, a subgraph or the caller can still read. */
#include <string.h>
#include <sys/mman.h>

#include "../alloc.h"
#include "compiled.h"

/* Nodes that read value v at run time, node `except` aside; folded and elided nodes never run. */
static int runtime_readers(const ref_compiled *c, int v, int except)
{
    int n = 0;
    for (int k = 0; k < c->n_nodes; k++) {
        const ref_exec_node *e = &c->nodes[k];
        if (k == except || e->folded || e->elided)
            continue;
        for (int j = 0; j < e->n_in + e->n_implicit; j++)
            n += e->in[j] == v;
    }
    return n;
}

static bool is_graph_output(const ref_compiled *c, int v)
{
    for (int i = 0; i < c->n_outputs; i++)
        if (c->outputs[i] == v)
            return true;
    return false;
}

/* Drop the whole pages of v's bytes from RSS when they lie in a file mapping. The mapping is private and
 * read-only, so a later read (another compile of the same model) faults the same bytes in again. */
static void drop_mapped(const ref_compiled *c, int v)
{
    const ref_value *val = &c->vals[v];
    for (size_t i = 0; i < c->graph->n_inits; i++) {
        const ref_initializer *in = &c->graph->inits[i];
        if (in->storage != REF_STORAGE_MAPPED || in->t.data != val->t.data)
            continue;
        uintptr_t page = 4096, p = (uintptr_t)in->t.data;
        uintptr_t from = (p + page - 1) & ~(page - 1), to = (p + in->nbytes) & ~(page - 1);
        if (to > from)
            madvise((void *)from, to - from, MADV_DONTNEED); /* only a hint: a failure changes nothing */
        return;
    }
}

void ref_release_unread(ref_compiled *c, int v)
{
    if (v < 0 || c->vals[v].kind != REF_VAL_CONST || !c->vals[v].t.data || is_graph_output(c, v) ||
        runtime_readers(c, v, -1) != 0)
        return;
    if (!c->vals[v].owned) {
        drop_mapped(c, v);
    } else if (c->vals[v].half_copy) {
        /* A float16 weight's float32 copy that folding replaced (BatchNormalization into Conv): the float16
         * original stays, so the constant keeps its shape and nothing that ran at compile needs it again. */
        ref_free(c->vals[v].owned);
        c->vals[v].owned = NULL;
        c->vals[v].t.data = NULL;
    }
}

void ref_release_unread_mapped(ref_compiled *c)
{
    for (int v = 0; v < c->n_vals; v++)
        ref_release_unread(c, v);
}

void ref_release_packed_weight(ref_compiled *c, int k)
{
    const ref_exec_node *e = &c->nodes[k];
    /* Conv with packed weights never reads input 1 again (conv.c); its state is sized 0 when it did not pack. */
    if (strcmp(e->op->name, "Conv") || e->node->domain[0] || !e->state || !e->op->state_bytes ||
        !e->op->state_bytes(e->state) || e->n_in < 2)
        return;
    int w = e->in[1];
    if (w < 0 || c->vals[w].kind != REF_VAL_CONST || is_graph_output(c, w) || runtime_readers(c, w, k))
        return;
    ref_value *val = &c->vals[w];
    if (val->owned) {
        /* Still a constant of known shape; conv.c takes the packed copy and never touches the data. */
        ref_free(val->owned);
        val->owned = NULL;
        val->t.data = NULL;
    } else {
        drop_mapped(c, w);
    }
}
