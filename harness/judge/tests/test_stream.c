/* test_stream.c: the streaming state a cell is judged from: block series exact then block means, verdicts on runs
 * far longer than the state holds (leak, plateau, pass), reservoir quantiles, bounded memory, and that a short cell
 * judged from its stream matches the detector on the raw series. It must never depend on timing. */
#include "detect_series.h"
#include "scenario.h"
#include "series.h"
#include "stream.h"

static uint64_t rng_state = 42;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void test_block_series(void)
{
    mlk_block_series b = {0};
    const int n = 3 * MLK_STREAM_POINTS + 5;
    for (int i = 0; i < n; i++)
        CHECK(mlk_block_series_push(&b, (double)i) == 0);
    /* 3*P+5 values: doubled once at 2P... stride 4 after 4P would need more; here 2P..3P+5 are blocks of 2 */
    CHECK(b.stride == 2 || b.stride == 4);
    CHECK(b.n <= MLK_STREAM_POINTS && b.n >= MLK_STREAM_POINTS / 2);
    CHECK(b.pushed == n);
    /* block i is the mean of iterations [i*stride, (i+1)*stride) */
    double want0 = (double)(b.stride - 1) / 2.0;
    CHECK(fabs(b.v[0] - want0) < 1e-9);
    CHECK(fabs(b.v[10] - (10.0 * (double)b.stride + want0)) < 1e-9);
    CHECK(b.n * b.stride + b.part_n == n);
    mlk_block_series_clear(&b);
    CHECK(b.v == NULL && b.n == 0);
}

static mlk_scenario *scenario(void)
{
    const char *text = "name: t\nengine: ref\nmodel: {generate: mlp}\npipeline: [compile_model, create_request, infer, "
                       "release_request, release_compiled]\n";
    return test_scenario(text);
}

/* One iteration: an infer sample then the end-of-iteration sample, heap bytes and RSS given. */
static int push_iteration(mlk_cell_stream *c, int it, double heap, double rss_kib, double wall_ms)
{
    mlk_sample s;
    memset(&s, 0, sizeof s);
    s.phase = MLK_PHASE_MEASURE;
    s.iteration = it;
    s.step = MLK_STEP_INFER;
    s.wall_ns = (int64_t)(wall_ms * 1e6);
    s.m.have_heap = true;
    s.m.heap.live_bytes = (int64_t)heap;
    s.m.vm_rss_kib = s.m.rss_anon_kib = (int64_t)rss_kib;
    s.m.vm_size_kib = 100000;
    s.m.vm_hwm_kib = (int64_t)rss_kib + it % 7;
    s.m.fds = 5;
    s.m.threads = 2;
    s.m.alloc_held = -1;
    s.m.alloc_bytes = -1;
    s.m.heap.n_mappings = 3;
    int rc = mlk_cell_stream_push(c, &s);
    s.step = MLK_STEP_ITERATION;
    s.wall_ns = 0;
    return rc | mlk_cell_stream_push(c, &s);
}

/* kind 0: flat noise; 1: 16 B/iter leak under noise; 2: a bounded cache filled over the first 30% of the run
 * (what fills within the first tenth sits in the detector's early median: pass, on the raw series as here). */
static double heap_at(int kind, int it)
{
    double noise = floor(uniform() * 4096.0) - 2048.0; /* churn of a few KiB up and down */
    double base = 1 << 20;
    if (kind == 1)
        return base + 16.0 * it + noise;
    if (kind == 2)
        return base + (it < 60000 ? it : 60000) * 16.0 + noise;
    return base + noise;
}

static void judge_long(int kind, int iters, mlk_verdict want)
{
    mlk_scenario *s = scenario();
    mlk_cell_stream *c = mlk_cell_stream_new();
    CHECK(s && c);
    if (!s || !c) {
        mlk_scenario_free(s);
        mlk_cell_stream_free(c);
        return;
    }
    rng_state = 7 + (uint64_t)kind;
    mlk_sample setup;
    memset(&setup, 0, sizeof setup);
    setup.phase = MLK_PHASE_SETUP;
    setup.iteration = -1;
    setup.step = MLK_STEP_COMPILE_MODEL;
    setup.m.have_heap = true;
    CHECK(mlk_cell_stream_push(c, &setup) == 0); /* a step's heap delta needs a sample before it */
    for (int it = 0; it < iters; it++)
        if (push_iteration(c, it, heap_at(kind, it), 50000, 0.5 + uniform()))
            CHECK(!"push failed");
    const mlk_block_series *b = mlk_cell_stream_series(c, MLK_SERIES_HEAP);
    CHECK(b && b->n <= MLK_STREAM_POINTS && b->stride > 1);
    mlk_judgement j;
    CHECK(mlk_judge_stream(s, c, &j) == 0);
    CHECK(j.verdict == want);
    if (j.verdict != want)
        fprintf(stderr, "kind %d, %d iterations: %s\n", kind, iters, j.detail);
    if (want == MLK_VERDICT_LEAK) /* the slope is per iteration whatever the stride */
        CHECK(fabs(j.s[MLK_SERIES_HEAP].r.late_slope - 16.0) < 2.0);
    db_step_stats st[MLK_STEP_ANY_COUNT];
    int n = mlk_cell_stream_step_stats(c, st);
    CHECK(n == 2 && st[0].step == MLK_STEP_INFER && st[1].step == MLK_STEP_ITERATION);
    if (n == 2) {
        CHECK(st[0].n == iters);
        CHECK(fabs(st[0].wall_ms_median - 1.0) < 0.05); /* uniform in [0.5, 1.5): the reservoir's median */
        CHECK(fabs(st[0].wall_ms_p90 - 1.4) < 0.05);
        CHECK(st[0].peak_kib == 50006);               /* exact, whatever the length */
        if (kind == 1)
            CHECK(fabs(st[0].heap_growth - 16.0) < 2.0);
    }
    mlk_cell_stream_free(c);
    mlk_scenario_free(s);
}

/* A short cell: the stream keeps every value, so its verdict is the detector's on the raw series. */
static void short_cell_is_exact(void)
{
    mlk_scenario *s = scenario();
    mlk_cell_stream *c = mlk_cell_stream_new();
    CHECK(s && c);
    if (!s || !c) {
        mlk_scenario_free(s);
        mlk_cell_stream_free(c);
        return;
    }
    enum { N = 300 };
    double y[N];
    rng_state = 99;
    for (int it = 0; it < N; it++) {
        y[it] = heap_at(1, it);
        push_iteration(c, it, y[it], 50000, 1);
    }
    mlk_judgement j;
    CHECK(mlk_judge_stream(s, c, &j) == 0);
    mlk_detect_opts o;
    mlk_detect_opts_init(&o);
    o.floor_per_iter = mlk_series_def_of(MLK_SERIES_HEAP)->floor;
    o.quantum = 1;
    mlk_detect_result r;
    CHECK(mlk_detect_leak(y, N, &o, &r) == 0);
    CHECK(j.s[MLK_SERIES_HEAP].r.verdict == r.verdict && j.s[MLK_SERIES_HEAP].r.late_slope == r.late_slope &&
          j.s[MLK_SERIES_HEAP].r.mk_p == r.mk_p && !strcmp(j.s[MLK_SERIES_HEAP].r.detail, r.detail));
    mlk_cell_stream_free(c);
    mlk_scenario_free(s);
}

int main(void)
{
    test_block_series();
    short_cell_is_exact();
    judge_long(0, 200000, MLK_VERDICT_PASS);
    judge_long(1, 200000, MLK_VERDICT_LEAK);
    judge_long(2, 200000, MLK_VERDICT_PLATEAU);
    judge_long(1, 20000, MLK_VERDICT_LEAK);
    return check_summary();
}
