/* test_sequential.c: iterations: auto's decisions (issue 23) on synthetic cells judged at the decision points 30, 45,
 * 67, ...: a clean cell and a heap leak are decided at the second point; anonymous memory beyond a flat heap that
 * fills a pool is never decided a leak (plateau once it settles, inconclusive at a bound before); the same memory
 * leaking for good is decided a leak once the run is eight times as long as when it was first seen.
 * It must never depend on timing: every series here is synthetic. */
#include "detect_series.h"
#include "scenario.h"
#include "sequential.h"
#include "series.h"
#include "stream.h"

typedef struct {
    double heap_per_iter; /* live heap bytes per iteration */
    double anon_per_iter; /* RssAnon beyond the allocator's holding, per iteration ... */
    int anon_until;       /* ... up to this iteration (then flat); 0: for ever */
} cell_kind;

static int judge_at(const mlk_scenario *s, cell_kind k, int n, mlk_judgement *j)
{
    mlk_cell_stream *c = mlk_cell_stream_new();
    int rc = c ? 0 : -1;
    rng r = {42};
    for (int it = 0; !rc && it < 5 + n; it++) {
        int m = it < 5 ? 0 : it - 5;
        int grown = k.anon_until && m > k.anon_until ? k.anon_until : m;
        mlk_sample x;
        memset(&x, 0, sizeof x);
        x.phase = it < 5 ? MLK_PHASE_WARMUP : MLK_PHASE_MEASURE;
        x.iteration = it;
        x.step = MLK_STEP_ITERATION;
        x.m.have_heap = true;
        x.m.heap.live_bytes = 8000000 + (int64_t)(k.heap_per_iter * m);
        x.m.alloc_bytes = -1;
        x.m.alloc_held = 12 << 20;
        /* a page of noise either way, now and then */
        double noise = (double)(rng_next(&r) % 5 == 0) * PAGE * ((rng_next(&r) & 1) ? 1 : -1);
        x.m.rss_anon_kib = (int64_t)(((12 << 20) + 4 * MIB + k.anon_per_iter * grown + noise) / 1024);
        x.m.vm_rss_kib = x.m.rss_anon_kib + 20000;
        x.m.vm_size_kib = 400000;
        x.m.fds = 5;
        x.m.threads = 3;
        x.m.heap.n_mappings = 3;
        rc = mlk_cell_stream_push(c, &x);
    }
    if (!rc)
        rc = mlk_judge_stream(s, c, j);
    mlk_cell_stream_free(c);
    return rc;
}

/* Decision points from 30 up to max; returns the iterations the cell stopped at and its final judgement. */
static int run_auto(const mlk_scenario *s, cell_kind k, int max, mlk_judgement *j)
{
    mlk_seq q;
    mlk_seq_init(&q);
    for (int n = 30;; n = n + n / 2 > max ? max : n + n / 2) {
        if (judge_at(s, k, n, j))
            return -1;
        bool done = mlk_seq_point(&q, j, n);
        if (done)
            return n;
        if (n == max) {
            mlk_seq_conclude(&q, j, n, "max");
            return n;
        }
    }
}

int main(void)
{
    mlk_scenario *s = test_scenario("name: t\nengine: ref\nmodel: {generate: mlp}\npipeline: [create_request, "
                                    "infer, release_request]\nsetup: [load_engine, read_model, compile_model]\n"
                                    "teardown: [release_compiled, release_model, unload_engine]\niterations: auto\n");
    CHECK(s != NULL);
    if (!s)
        return check_summary();
    CHECK(s->iterations_auto && s->auto_min == 30 && s->iterations == 1000);
    mlk_judgement j;

    int n = run_auto(s, (cell_kind){0}, 1000, &j);
    CHECK(n == 45 && j.verdict == MLK_VERDICT_PASS);
    printf("clean: %d iterations, %s\n", n, j.detail);

    n = run_auto(s, (cell_kind){.heap_per_iter = 64}, 1000, &j);
    CHECK(n == 67 && j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_HEAP);
    printf("heap leak: %d iterations, %s\n", n, j.detail);

    /* A pool filling 32 KiB/iter up to iteration 300 (9.4 MiB), the heap flat: never a leak. */
    cell_kind pool = {.anon_per_iter = 32768, .anon_until = 300};
    n = run_auto(s, pool, 100, &j);
    CHECK(n == 100 && j.verdict == MLK_VERDICT_INCONCLUSIVE && strstr(j.detail, "anon") != NULL);
    printf("pool, max 100: %d iterations, %s\n", n, j.detail);
    n = run_auto(s, pool, 1000, &j);
    CHECK(j.verdict != MLK_VERDICT_LEAK);
    printf("pool, max 1000: %d iterations, %s\n", n, j.detail);

    /* The same memory leaking for good: a leak, once the run is long enough to tell. */
    n = run_auto(s, (cell_kind){.anon_per_iter = 32768}, 1000, &j);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_ANON && n >= 240 && n < 1000);
    printf("anon leak: %d iterations, %s\n", n, j.detail);

    /* iterations: {min, max, budget} */
    mlk_scenario *b = test_scenario("name: t\nengine: ref\nmodel: {generate: mlp}\npipeline: [create_request, "
                                    "infer, release_request]\nsetup: [load_engine, read_model, compile_model]\n"
                                    "teardown: [release_compiled, release_model, unload_engine]\n"
                                    "iterations: {min: 20, max: 400, budget: 2m}\n");
    CHECK(b && b->iterations_auto && b->auto_min == 20 && b->iterations == 400 && b->auto_budget_s == 120);
    mlk_scenario_free(b);
    mlk_scenario_free(s);
    return check_summary();
}
