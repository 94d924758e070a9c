/* planner.c: the static memory planner: tensor lifetimes from the execution order, offsets in one arena
 * (naive: one slot per tensor; greedy: each tensor into the best-fitting gap among the tensors it overlaps in
 * time, visited by decreasing size as in TFLite's greedy-by-size, and again in execution order; the smaller
 * arena wins), and the lower bound (largest sum of bytes live at one operator).
 * It must never place two tensors whose lifetimes overlap on overlapping bytes. */
#include <stdlib.h>
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

typedef struct {
    int value;     /* value id, or -1 for node scratch */
    int node;      /* node whose scratch this is */
    int first, last;
    size_t size;
    int64_t off;
} ref_slot;

static int by_size_desc(const void *a, const void *b)
{
    const ref_slot *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->last < y->last ? -1 : (x->last > y->last);
}

/* Execution order: first use, then larger first. Catches what size order fragments: small per-node scratch
 * interleaved with a chain of equal activations. */
static int by_start(const void *a, const void *b)
{
    const ref_slot *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->last < y->last ? -1 : (x->last > y->last);
}

static int by_offset(const void *a, const void *b)
{
    const ref_slot *x = *(const ref_slot *const *)a, *y = *(const ref_slot *const *)b;
    return x->off < y->off ? -1 : (x->off > y->off);
}

/* Collect every tensor the arena must hold: activations of nodes that run, and node scratch. */
static size_t collect(const ref_compiled *c, const ref_plan *p, ref_slot *s)
{
    size_t n = 0;
    for (int v = 0; v < c->n_vals; v++) {
        const ref_value *val = &c->vals[v];
        if (val->kind != REF_VAL_ACT || p->skip[val->producer])
            continue;
        size_t bytes = ref_tensor_nbytes(&p->shapes[v]);
        if (!bytes)
            continue;
        int last = val->last_use < val->producer ? val->producer : val->last_use;
        s[n++] = (ref_slot){v, val->producer, val->producer, last, ref_align_up(bytes, REF_ALIGN), 0};
    }
    for (int k = 0; k < c->n_nodes; k++)
        if (!p->skip[k] && p->scratch_bytes[k])
            s[n++] = (ref_slot){-1, k, k, k, ref_align_up(p->scratch_bytes[k], REF_ALIGN), 0};
    return n;
}

static size_t lower_bound(const ref_compiled *c, const ref_slot *s, size_t n)
{
    size_t best = 0;
    for (int k = 0; k <= c->n_nodes; k++) {
        size_t live = 0;
        for (size_t i = 0; i < n; i++)
            if (s[i].first <= k && k <= s[i].last)
                live += s[i].size;
        if (live > best)
            best = live;
    }
    return best;
}

/* Visit s in the order of cmp, placing each at the lowest-waste gap among the placed slots it overlaps. */
static size_t greedy_pass(ref_slot *s, size_t n, ref_slot **scratch, int (*cmp)(const void *, const void *))
{
    size_t arena = 0;
    qsort(s, n, sizeof *s, cmp);
    for (size_t i = 0; i < n; i++) {
        size_t m = 0;
        for (size_t j = 0; j < i; j++)
            if (s[j].first <= s[i].last && s[i].first <= s[j].last)
                scratch[m++] = &s[j];
        qsort(scratch, m, sizeof *scratch, by_offset);
        int64_t prev_end = 0, best = -1;
        size_t best_gap = SIZE_MAX;
        for (size_t j = 0; j < m; j++) {
            int64_t gap = scratch[j]->off - prev_end;
            if (gap >= (int64_t)s[i].size && (size_t)gap < best_gap) {
                best = prev_end;
                best_gap = (size_t)gap;
            }
            int64_t end = scratch[j]->off + (int64_t)scratch[j]->size;
            if (end > prev_end)
                prev_end = end;
        }
        s[i].off = best >= 0 ? best : prev_end;
        if ((size_t)s[i].off + s[i].size > arena)
            arena = (size_t)s[i].off + s[i].size;
    }
    return arena;
}

/* Both visiting orders; s keeps the offsets of the smaller arena. */
static size_t greedy(ref_slot *s, size_t n, ref_slot **scratch)
{
    size_t by_time = greedy_pass(s, n, scratch, by_start);
    size_t by_size = greedy_pass(s, n, scratch, by_size_desc);
    return by_size <= by_time ? by_size : greedy_pass(s, n, scratch, by_start);
}

int ref_plan_memory(const ref_compiled *c, ref_plan *p, int strategy, ref_error *err)
{
    size_t cap = (size_t)c->n_vals + (size_t)c->n_nodes + 1;
    ref_slot *s = ref_malloc(cap * sizeof *s);
    ref_slot **tmp = ref_malloc(cap * sizeof *tmp);
    if (!s || !tmp) {
        ref_free(s);
        ref_free(tmp);
        return ref_fail(err, REF_E_NOMEM, "planner: out of memory for %zu tensors", cap);
    }
    size_t n = collect(c, p, s);
    size_t naive = 0;
    for (size_t i = 0; i < n; i++) {
        s[i].off = (int64_t)naive;
        naive += s[i].size;
    }
    p->naive_bytes = naive;
    p->lower_bound_bytes = lower_bound(c, s, n);
    p->n_tensors = n;
    p->arena_bytes = strategy == REF_PLANNER_NAIVE ? naive : greedy(s, n, tmp);
    for (int v = 0; v < c->n_vals; v++)
        p->offset[v] = -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i].value >= 0)
            p->offset[s[i].value] = s[i].off;
        else
            p->scratch_off[s[i].node] = s[i].off;
    }
    ref_free(s);
    ref_free(tmp);
    return REF_OK;
}
