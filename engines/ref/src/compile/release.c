/* release.c: gives back the memory of weights nothing reads any more: a weight a Conv, ConvTranspose, Gemm or
 * MatMul has pre-packed (freed when compile made it, dropped from RSS when mapped), and mapped initializer pages
 * no running node reads (dropped from RSS, still mapped); and the reader index that answers "who reads this value"
 * for it and for the rewrites before it, without scanning every node.
 * It must never release a value a node, a subgraph or the caller can still read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../alloc.h"
#include "../ops/gemm_ops.h"
#include "compiled.h"

void ref_readers_node(ref_compiled *c, int k, int delta)
{
    const ref_exec_node *e = &c->nodes[k];
    for (int j = 0; j < e->n_in + e->n_implicit; j++)
        if (e->in[j] >= 0)
            c->readers[e->in[j]] += delta;
}

int ref_vals_grow(ref_compiled *c, ref_error *err)
{
    if (c->n_vals < c->cap_vals)
        return REF_OK;
    int cap = c->cap_vals > 16 ? 2 * c->cap_vals : 32;
    ref_value *v = ref_realloc(c->vals, sizeof *v * (size_t)cap);
    if (v)
        c->vals = v;
    int *r = v ? ref_realloc(c->readers, sizeof *r * (size_t)cap) : NULL;
    if (r)
        c->readers = r;
    int *o = r ? ref_realloc(c->only_reader, sizeof *o * (size_t)cap) : NULL;
    if (!o)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory for %d values", cap);
    c->only_reader = o;
    for (int i = c->cap_vals; i < cap; i++) {
        c->readers[i] = 0;
        c->only_reader[i] = -1;
    }
    c->cap_vals = cap;
    return REF_OK;
}

static int by_data(const void *a, const void *b)
{
    const ref_initializer *x = *(const ref_initializer *const *)a, *y = *(const ref_initializer *const *)b;
    uintptr_t p = (uintptr_t)x->t.data, q = (uintptr_t)y->t.data;
    return p != q ? (p < q ? -1 : 1) : (x < y ? -1 : x > y); /* equal addresses: file order */
}

int ref_readers_build(ref_compiled *c, ref_error *err)
{
    c->cap_vals = c->n_vals; /* vals was sized exactly; ref_vals_grow doubles from here */
    c->readers = ref_calloc((size_t)c->n_vals + 1, sizeof *c->readers);
    c->only_reader = ref_malloc(((size_t)c->n_vals + 1) * sizeof *c->only_reader);
    c->mapped = ref_calloc(c->graph->n_inits + 1, sizeof *c->mapped);
    if (!c->readers || !c->only_reader || !c->mapped)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory indexing %d values", c->n_vals);
    for (int v = 0; v < c->n_vals; v++)
        c->only_reader[v] = -1;
    for (int k = 0; k < c->n_nodes; k++) {
        const ref_exec_node *e = &c->nodes[k];
        if (!e->folded && !e->elided)
            ref_readers_node(c, k, 1);
        for (int j = 0; j < e->n_in + e->n_implicit; j++) {
            int v = e->in[j], *o = v >= 0 ? &c->only_reader[v] : NULL;
            if (o)
                *o = e->n_implicit || j >= e->n_in || (*o != -1 && *o != k) ? -2 : k;
        }
    }
    c->n_mapped = 0;
    for (size_t i = 0; i < c->graph->n_inits; i++)
        if (c->graph->inits[i].storage == REF_STORAGE_MAPPED)
            c->mapped[c->n_mapped++] = &c->graph->inits[i];
    qsort(c->mapped, c->n_mapped, sizeof *c->mapped, by_data);
    return REF_OK;
}

/* Nodes that read value v at run time, node `except` aside; folded and elided nodes never run. */
static int runtime_readers(const ref_compiled *c, int v, int except)
{
    int n = c->readers[v];
    if (except >= 0 && !c->nodes[except].folded && !c->nodes[except].elided) {
        const ref_exec_node *e = &c->nodes[except];
        for (int j = 0; j < e->n_in + e->n_implicit; j++)
            n -= e->in[j] == v;
    }
    return n;
}

/* Drop the whole pages of an initializer's bytes from RSS when they lie in a file mapping. The mapping is private
 * and read-only, so a later read (another compile of the same model) faults the same bytes in again. */
static void drop_mapped(const ref_compiled *c, const void *data)
{
    size_t lo = 0, hi = c->n_mapped;
    if (!data || !c->mapped)
        return;
    while (lo < hi) { /* the first mapped initializer at data's address */
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)c->mapped[mid]->t.data < (uintptr_t)data)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->n_mapped || c->mapped[lo]->t.data != data)
        return;
    const ref_initializer *in = c->mapped[lo];
    uintptr_t page = 4096, p = (uintptr_t)in->t.data;
    uintptr_t from = (p + page - 1) & ~(page - 1), to = (p + in->nbytes) & ~(page - 1);
    if (to > from)
        madvise((void *)from, to - from, MADV_DONTNEED); /* only a hint: a failure changes nothing */
}

void ref_release_unread(ref_compiled *c, int v)
{
    if (v < 0 || c->vals[v].kind != REF_VAL_CONST)
        return;
    ref_value *val = &c->vals[v];
    if (val->half && !val->half_later)
        drop_mapped(c, val->half); /* widened (half.c): its float32 copy is what nodes read */
    if ((!val->t.data && !val->half_later) || val->graph_output || runtime_readers(c, v, -1) != 0)
        return;
    if (val->half_later) {
        /* A float16 Conv weight folding replaced before anything widened it: it never will be. */
        drop_mapped(c, val->half);
        val->half_later = false;
    } else if (!val->owned) {
        drop_mapped(c, val->t.data);
    } else if (val->half_copy) {
        /* A float16 weight's float32 copy that folding replaced (BatchNormalization into Conv): the float16
         * original stays, so the constant keeps its shape and nothing that ran at compile needs it again. */
        ref_free(val->owned);
        val->owned = NULL;
        val->t.data = NULL;
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
    /* Conv and ConvTranspose with packed weights never read input 1's data again (conv.c, conv_transpose.c); the
     * state is sized 0 when it did not pack. Gemm and MatMul with B packed read only its dims (gemm.c,
     * gemm_matmul.c). */
    bool conv = !strcmp(e->op->name, "Conv") || !strcmp(e->op->name, "ConvTranspose"),
         gemm = !strcmp(e->op->name, "Gemm") || !strcmp(e->op->name, "MatMul");
    if ((!conv && !gemm) || e->node->domain[0] || !e->state || !e->op->state_bytes ||
        !e->op->state_bytes(e->state) || e->n_in < 2 || (gemm && ((const ref_gemm_state *)e->state)->is_a))
        return;
    int w = e->in[1];
    if (w < 0 || c->vals[w].kind != REF_VAL_CONST || c->vals[w].graph_output || runtime_readers(c, w, k))
        return;
    ref_value *val = &c->vals[w];
    if (val->owned) {
        /* Still a constant of known shape; the node takes the packed copy and never touches the data. */
        ref_free(val->owned);
        val->owned = NULL;
        val->t.data = NULL;
        drop_mapped(c, val->half); /* a float16 weight widened for packing: its own bytes are done with too */
    } else {
        drop_mapped(c, val->t.data);
    }
}
