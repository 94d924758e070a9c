/* test_planner.c: the memory planner on synthetic lifetimes: no two live tensors share bytes, naive and
 * lower-bound figures are exact, and greedy stays near the bound on chains. Must not depend on any operator. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "compile/compiled.h"

/* A fake compiled model: value v is produced by node prod[v] and last used by node last[v]. */
typedef struct {
    ref_compiled c;
    ref_plan p;
} fake;

static void fake_init(fake *f, int n_nodes, int n_vals, const int *prod, const int *last, const int64_t *elems)
{
    memset(f, 0, sizeof *f);
    f->c.n_nodes = n_nodes;
    f->c.n_vals = n_vals;
    f->c.vals = calloc((size_t)n_vals, sizeof *f->c.vals);
    f->p.shapes = calloc((size_t)n_vals, sizeof *f->p.shapes);
    f->p.offset = calloc((size_t)n_vals, sizeof *f->p.offset);
    f->p.skip = calloc((size_t)n_nodes, sizeof *f->p.skip);
    f->p.scratch_off = calloc((size_t)n_nodes, sizeof *f->p.scratch_off);
    f->p.scratch_bytes = calloc((size_t)n_nodes, sizeof *f->p.scratch_bytes);
    for (int v = 0; v < n_vals; v++) {
        f->c.vals[v].kind = REF_VAL_ACT;
        f->c.vals[v].producer = prod[v];
        f->c.vals[v].last_use = last[v];
        f->p.shapes[v].dtype = REF_DT_FLOAT;
        f->p.shapes[v].rank = 1;
        f->p.shapes[v].dims[0] = elems[v];
    }
}

static void fake_free(fake *f)
{
    free(f->c.vals);
    free(f->p.shapes);
    free(f->p.offset);
    free(f->p.skip);
    free(f->p.scratch_off);
    free(f->p.scratch_bytes);
}

/* Every pair of tensors alive at the same node must not overlap in the arena, and fit inside it. */
static int overlaps(const fake *f)
{
    for (int a = 0; a < f->c.n_vals; a++)
        for (int b = a + 1; b < f->c.n_vals; b++) {
            const ref_value *x = &f->c.vals[a], *y = &f->c.vals[b];
            int xl = x->last_use < x->producer ? x->producer : x->last_use;
            int yl = y->last_use < y->producer ? y->producer : y->last_use;
            if (x->producer > yl || y->producer > xl)
                continue;
            int64_t xs = f->p.offset[a], xe = xs + (int64_t)ref_tensor_nbytes(&f->p.shapes[a]);
            int64_t ys = f->p.offset[b], ye = ys + (int64_t)ref_tensor_nbytes(&f->p.shapes[b]);
            if (xs < ye && ys < xe)
                return 1;
        }
    for (int a = 0; a < f->c.n_vals; a++)
        if (f->p.offset[a] + (int64_t)ref_tensor_nbytes(&f->p.shapes[a]) > (int64_t)f->p.arena_bytes)
            return 1;
    return 0;
}

static void test_chain(void)
{
    /* x -> n0 -> v0 -> n1 -> v1 -> n2 -> v2 (graph output): each 1024 floats = 4096 bytes. */
    int prod[] = {0, 1, 2}, last[] = {1, 2, 3};
    int64_t elems[] = {1024, 1024, 1024};
    fake f;
    fake_init(&f, 3, 3, prod, last, elems);
    ref_error err = {0};
    CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
    CHECK(f.p.naive_bytes == 3 * 4096);
    CHECK(f.p.lower_bound_bytes == 2 * 4096);
    CHECK(f.p.arena_bytes == 2 * 4096);
    CHECK(!overlaps(&f));
    CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_NAIVE, &err), &err);
    CHECK(f.p.arena_bytes == 3 * 4096);
    CHECK(!overlaps(&f));
    fake_free(&f);
}

static void test_scratch_and_alignment(void)
{
    /* Sizes not multiple of 64 are padded; node 1's scratch lives only at node 1. */
    int prod[] = {0, 1}, last[] = {1, 2};
    int64_t elems[] = {10, 3}; /* 40 and 12 bytes -> 64 each */
    fake f;
    fake_init(&f, 2, 2, prod, last, elems);
    f.p.scratch_bytes[1] = 100; /* -> 128 */
    ref_error err = {0};
    CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
    CHECK(f.p.naive_bytes == 64 + 64 + 128);
    CHECK(f.p.lower_bound_bytes == 64 + 64 + 128);
    CHECK(f.p.arena_bytes == 256);
    CHECK(f.p.n_tensors == 3);
    int64_t so = f.p.scratch_off[1];
    CHECK(so % 64 == 0);
    CHECK(!(so < f.p.offset[0] + 64 && f.p.offset[0] < so + 128));
    CHECK(!(so < f.p.offset[1] + 64 && f.p.offset[1] < so + 128));
    fake_free(&f);
}

static void test_skipped_and_empty(void)
{
    /* A value of a skipped (folded) node and a zero-size value take no arena bytes. */
    int prod[] = {0, 1, 2}, last[] = {2, 2, 3};
    int64_t elems[] = {256, 0, 256};
    fake f;
    fake_init(&f, 3, 3, prod, last, elems);
    f.p.skip[0] = true;
    ref_error err = {0};
    CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
    CHECK(f.p.naive_bytes == 1024);
    CHECK(f.p.offset[0] == -1);
    CHECK(f.p.offset[1] == -1);
    fake_free(&f);
}

static void test_chain_with_scratch(void)
{
    /* An MLP's shape: a chain of equal activations, and a bigger scratch at every other node. Visiting by
     * size alone fragments it (17024 bytes here); the execution-order pass reaches the lower bound. */
    int prod[] = {0, 1, 2, 3, 4, 5}, last[] = {1, 2, 3, 4, 5, 6};
    int64_t elems[] = {1024, 1024, 1024, 1024, 1024, 1024};
    fake f;
    fake_init(&f, 6, 6, prod, last, elems);
    f.p.scratch_bytes[0] = 4736;
    f.p.scratch_bytes[2] = f.p.scratch_bytes[4] = 6144;
    ref_error err = {0};
    CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
    CHECK(f.p.lower_bound_bytes == 4096 + 4096 + 6144);
    CHECK(f.p.arena_bytes == f.p.lower_bound_bytes);
    CHECK(!overlaps(&f));
    fake_free(&f);
}

static uint64_t rng = 12345;
static int next_rand(int n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((rng >> 33) % (uint64_t)n);
}

static void test_random_lifetimes(void)
{
    /* Random DAG-like lifetimes and sizes: the plan must never overlap live tensors, must not beat the
     * lower bound, and the greedy arena must stay far below naive on long programs. */
    for (int round = 0; round < 200; round++) {
        int n = 5 + next_rand(60);
        int prod[64], last[64];
        int64_t elems[64];
        for (int v = 0; v < n; v++) {
            prod[v] = v;
            last[v] = v + next_rand(6);
            if (last[v] > n)
                last[v] = n;
            elems[v] = 1 + next_rand(5000);
        }
        fake f;
        fake_init(&f, n, n, prod, last, elems);
        ref_error err = {0};
        CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
        CHECK(!overlaps(&f));
        CHECK(f.p.arena_bytes >= f.p.lower_bound_bytes);
        CHECK(f.p.arena_bytes <= f.p.naive_bytes);
        CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_NAIVE, &err), &err);
        CHECK(!overlaps(&f));
        CHECK(f.p.arena_bytes == f.p.naive_bytes);
        fake_free(&f);
    }
}

/* The greedy passes as they were before the overlap index: every placed tensor scanned for each one placed. The
 * planner must produce the same arena. Slots: first, last, size; order by size then first then last, or by first. */
typedef struct {
    int first, last;
    int64_t size, off;
} ref_ref_slot;

static int ref_by_size(const void *a, const void *b)
{
    const ref_ref_slot *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->last < y->last ? -1 : (x->last > y->last);
}

static int ref_by_start(const void *a, const void *b)
{
    const ref_ref_slot *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->last < y->last ? -1 : (x->last > y->last);
}

static int64_t scan_pass(ref_ref_slot *s, int n, int (*cmp)(const void *, const void *))
{
    int64_t arena = 0;
    qsort(s, (size_t)n, sizeof *s, cmp);
    for (int i = 0; i < n; i++) {
        int64_t best = -1, best_gap = INT64_MAX, end_max = 0;
        /* gaps between the overlapping placed tensors, by offset: a quadratic walk is fine at test sizes */
        for (int64_t at = 0;;) {
            int64_t next = INT64_MAX, next_end = 0;
            for (int j = 0; j < i; j++)
                if (s[j].first <= s[i].last && s[i].first <= s[j].last && s[j].off >= at && s[j].off < next)
                    next = s[j].off, next_end = s[j].off + s[j].size;
            if (next == INT64_MAX)
                break;
            if (next - end_max >= s[i].size && next - end_max < best_gap)
                best = end_max, best_gap = next - end_max;
            if (next_end > end_max)
                end_max = next_end;
            at = next + 1;
        }
        s[i].off = best >= 0 ? best : end_max;
        if (s[i].off + s[i].size > arena)
            arena = s[i].off + s[i].size;
    }
    return arena;
}

static void test_same_as_scanning(void)
{
    /* Long programs with short and some long lifetimes (skip connections), and repeated sizes (ties). */
    for (int round = 0; round < 20; round++) {
        int n = 200 + next_rand(600);
        int *prod = malloc(sizeof(int) * (size_t)n), *last = malloc(sizeof(int) * (size_t)n);
        int64_t *elems = malloc(sizeof(int64_t) * (size_t)n);
        ref_ref_slot *s = malloc(sizeof *s * (size_t)n);
        for (int v = 0; v < n; v++) {
            prod[v] = v;
            last[v] = v + (next_rand(10) ? 1 + next_rand(4) : next_rand(n));
            if (last[v] > n)
                last[v] = n;
            elems[v] = 16 * (1 + next_rand(round % 2 ? 4 : 300));
            s[v] = (ref_ref_slot){prod[v], last[v], (int64_t)ref_align_up((size_t)elems[v] * 4, REF_ALIGN), 0};
        }
        fake f;
        fake_init(&f, n, n, prod, last, elems);
        ref_error err = {0};
        CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
        int64_t by_time = scan_pass(s, n, ref_by_start), by_size = scan_pass(s, n, ref_by_size);
        CHECK((int64_t)f.p.arena_bytes == (by_size <= by_time ? by_size : by_time));
        CHECK(!overlaps(&f));
        fake_free(&f);
        free(prod);
        free(last);
        free(elems);
        free(s);
    }
}

/* Every tensor lives to the end (thousands of graph outputs): past the overlap budget the arena is the naive one,
 * which is then also the lower bound. */
static void test_all_overlapping(void)
{
    int n = 3000;
    int *prod = malloc(sizeof(int) * (size_t)n), *last = malloc(sizeof(int) * (size_t)n);
    int64_t *elems = malloc(sizeof(int64_t) * (size_t)n);
    for (int v = 0; v < n; v++) {
        prod[v] = v;
        last[v] = n;
        elems[v] = 1 + next_rand(100);
    }
    fake f;
    fake_init(&f, n, n, prod, last, elems);
    ref_error err = {0};
    CHECK_OK(ref_plan_memory(&f.c, &f.p, REF_PLANNER_GREEDY, &err), &err);
    CHECK(f.p.arena_bytes == f.p.naive_bytes && f.p.arena_bytes == f.p.lower_bound_bytes);
    CHECK(!overlaps(&f));
    fake_free(&f);
    free(prod);
    free(last);
    free(elems);
}

int main(void)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_chain();
    test_scratch_and_alignment();
    test_skipped_and_empty();
    test_chain_with_scratch();
    test_random_lifetimes();
    test_same_as_scanning();
    test_all_overlapping();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
