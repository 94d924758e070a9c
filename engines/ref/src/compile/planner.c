/* planner.c: the static memory planner: tensor lifetimes from the execution order, offsets in one arena
 * (naive: one slot per tensor; greedy: each tensor into the best-fitting gap among the tensors it overlaps in
 * time, visited by decreasing size as in TFLite's greedy-by-size, and again in execution order; the smaller
 * arena wins), and the lower bound (largest sum of bytes live at one operator). Time grows with the number of
 * tensors times those each overlaps (a max tree finds them), never with the square of the graph's length; a graph
 * whose tensors nearly all overlap (thousands of outputs, one Concat of every value) has little to gain from a
 * search that would then be quadratic, so past a budget of overlaps the arena is the naive one.
 * It must never place two tensors whose lifetimes overlap on overlapping bytes. */
#include <stdbool.h>
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

/* Bytes live at each node from a running sum of starts and ends (delta has n_nodes + 2 entries, zeroed). The sums
 * never exceed naive, which the caller checked fits. */
static size_t lower_bound(const ref_compiled *c, const ref_slot *s, size_t n, int64_t *delta)
{
    for (size_t i = 0; i < n; i++) {
        delta[s[i].first] += (int64_t)s[i].size;
        delta[s[i].last + 1] -= (int64_t)s[i].size;
    }
    int64_t live = 0, best = 0;
    for (int k = 0; k <= c->n_nodes; k++) {
        live += delta[k];
        if (live > best)
            best = live;
    }
    return (size_t)best;
}

/* The slots of one pass sorted by first use, and a max tree of their last uses over that order: the slots whose
 * lifetime meets [first, last] are those before the first one starting after `last` whose last >= first, found by
 * descending only into subtrees whose maximum reaches `first`. */
typedef struct overlap_index {
    int *by_first;  /* slot indices (into the pass's order) sorted by first use (a counting sort) */
    int *count;     /* n_times + 1 counters for that sort */
    int n_times;    /* first and last lie in [0, n_times) */
    int *max_last;  /* tree over by_first: node 1 the root, leaves at [leaves, 2 * leaves) */
    size_t leaves;
    bool *placed;
} overlap_index;

static void overlap_build(overlap_index *ix, const ref_slot *s, size_t n)
{
    memset(ix->count, 0, sizeof *ix->count * (size_t)(ix->n_times + 1));
    for (size_t i = 0; i < n; i++) {
        ix->count[s[i].first + 1]++;
        ix->placed[i] = false;
    }
    for (int t = 0; t < ix->n_times; t++)
        ix->count[t + 1] += ix->count[t];
    for (size_t i = 0; i < n; i++)
        ix->by_first[ix->count[s[i].first]++] = (int)i;
    for (size_t i = 0; i < ix->leaves; i++)
        ix->max_last[ix->leaves + i] = i < n ? s[ix->by_first[i]].last : -1;
    for (size_t i = ix->leaves - 1; i >= 1; i--) {
        int l = ix->max_last[2 * i], r = ix->max_last[2 * i + 1];
        ix->max_last[i] = l > r ? l : r;
    }
}

/* A subtree of the max tree and the leaves under it. */
typedef struct tree_at {
    size_t node, first_leaf, span;
} tree_at;

/* Placed slots overlapping slot i into out; returns their count. */
static size_t overlap_query(const overlap_index *ix, ref_slot *s, size_t n, size_t i, ref_slot **out)
{
    /* leaves [0, end) start at or before s[i].last */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[ix->by_first[mid]].first <= s[i].last)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo, m = 0;
    /* depth-first; each step pops one node and pushes at most two, so the stack stays within the tree's height */
    tree_at stack[2 * 64 + 2];
    int top = 0;
    stack[top++] = (tree_at){1, 0, ix->leaves};
    while (top) {
        tree_at at = stack[--top];
        if (at.first_leaf >= end || ix->max_last[at.node] < s[i].first)
            continue;
        if (at.span == 1) {
            int j = ix->by_first[at.first_leaf];
            if (ix->placed[j])
                out[m++] = &s[j];
            continue;
        }
        size_t half = at.span / 2;
        stack[top++] = (tree_at){2 * at.node + 1, at.first_leaf + half, half};
        stack[top++] = (tree_at){2 * at.node, at.first_leaf, half};
    }
    return m;
}

/* Overlaps one greedy pass may visit before the planner settles for the naive arena: a few seconds at most. */
#define OVERLAP_BUDGET(n) (((size_t)1 << 22) + 64 * (n))

/* Visit s in the order of cmp, placing each at the lowest-waste gap among the placed slots it overlaps. SIZE_MAX
 * when the overlaps visited exceed the budget (the offsets are then partial). */
static size_t greedy_pass(ref_slot *s, size_t n, ref_slot **scratch, overlap_index *ix,
                          int (*cmp)(const void *, const void *))
{
    size_t arena = 0, visited = 0;
    qsort(s, n, sizeof *s, cmp);
    overlap_build(ix, s, n);
    for (size_t i = 0; i < n; i++) {
        size_t m = overlap_query(ix, s, n, i, scratch);
        if ((visited += m) > OVERLAP_BUDGET(n))
            return SIZE_MAX;
        ix->placed[i] = true;
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
static size_t greedy(ref_slot *s, size_t n, ref_slot **scratch, overlap_index *ix)
{
    size_t by_time = greedy_pass(s, n, scratch, ix, by_start);
    size_t by_size = by_time == SIZE_MAX ? SIZE_MAX : greedy_pass(s, n, scratch, ix, by_size_desc);
    if (by_size != SIZE_MAX)
        return by_size <= by_time ? by_size : greedy_pass(s, n, scratch, ix, by_start);
    size_t naive = 0; /* over budget: every tensor its own bytes, in whatever order s is now */
    for (size_t i = 0; i < n; i++) {
        s[i].off = (int64_t)naive;
        naive += s[i].size;
    }
    return naive;
}

static void index_free(overlap_index *ix, int64_t *delta)
{
    ref_free(ix->by_first);
    ref_free(ix->count);
    ref_free(ix->max_last);
    ref_free(ix->placed);
    ref_free(delta);
}

int ref_plan_memory(const ref_compiled *c, ref_plan *p, int strategy, ref_error *err)
{
    size_t cap = (size_t)c->n_vals + (size_t)c->n_nodes + 1, n_times = (size_t)c->n_nodes + 2;
    overlap_index ix = {.n_times = c->n_nodes + 1, .leaves = 1};
    while (ix.leaves < cap)
        ix.leaves *= 2;
    ref_slot *s = ref_malloc(cap * sizeof *s);
    ref_slot **tmp = ref_malloc(cap * sizeof *tmp);
    int64_t *delta = ref_calloc(n_times, sizeof *delta);
    ix.by_first = ref_malloc(cap * sizeof *ix.by_first);
    ix.count = ref_malloc(n_times * sizeof *ix.count);
    ix.max_last = ref_malloc(2 * ix.leaves * sizeof *ix.max_last);
    ix.placed = ref_malloc(cap * sizeof *ix.placed);
    int rc = REF_OK;
    if (!s || !tmp || !delta || !ix.by_first || !ix.count || !ix.max_last || !ix.placed) {
        rc = ref_fail(err, REF_E_NOMEM, "planner: out of memory for %zu tensors", cap);
        goto out;
    }
    size_t n = collect(c, p, s);
    size_t naive = 0;
    for (size_t i = 0; i < n; i++) {
        s[i].off = (int64_t)naive;
        if (!ref_size_add(naive, s[i].size, &naive) || naive > (size_t)INT64_MAX) {
            rc = ref_fail(err, REF_E_RANGE, "planner: the activations' bytes overflow 64 bits");
            goto out;
        }
    }
    p->naive_bytes = naive;
    p->lower_bound_bytes = lower_bound(c, s, n, delta);
    p->n_tensors = n;
    p->arena_bytes = strategy == REF_PLANNER_NAIVE ? naive : greedy(s, n, tmp, &ix);
    for (int v = 0; v < c->n_vals; v++)
        p->offset[v] = -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i].value >= 0)
            p->offset[s[i].value] = s[i].off;
        else
            p->scratch_off[s[i].node] = s[i].off;
    }
out:
    ref_free(s);
    ref_free(tmp);
    index_free(&ix, delta);
    return rc;
}
