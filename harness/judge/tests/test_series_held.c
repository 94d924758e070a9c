/* test_series_held.c: virtual memory the allocator holds is its retention, not a leak, when the heap is judged: glibc
 * extending its heap in steps through a short run passes, a mapping outside malloc in the same steps leaks. The heap
 * shim's own tables are never the process's: anon growing with them passes, a page lost beside them leaks.
 * It must never depend on timing: every series here is synthetic. */
#include <math.h>

#include "detect_series.h"
#include "scenario.h"
#include "series.h"
#include "stream.h"

static mlk_scenario *scenario(void)
{
    const char *text = "name: t\nengine: ref\nmodel: {generate: mlp}\npipeline: [create_request, infer, "
                       "release_request]\nsetup: [load_engine, read_model, compile_model]\nteardown: "
                       "[release_compiled, release_model, unload_engine]\niterations: 30\nwarmup: 5\n";
    return test_scenario(text);
}

typedef struct {
    bool heap;         /* the heap shim counted (else no heap series: the allocator's count is unknown too) */
    bool held_follows; /* the allocator's holding grows with VmSize (its heap extended), else a mapping outside */
    bool held_known;   /* the allocator says what it holds */
} cell_kind;

/* 5 warmup and 30 measured iterations, the heap flat; VmSize rises 544 KiB every 3rd iteration, the steps the ORT
 * transformer's glibc heap took here with arena off, kept up through the late part. */
static int judge_one(const mlk_scenario *s, cell_kind k, mlk_judgement *j)
{
    mlk_cell_stream *c = mlk_cell_stream_new();
    int rc = c ? 0 : -1;
    double vm = 150000.0 * 1024, held = 16u << 20, step = 544.0 * 1024;
    for (int it = 0; !rc && it < 35; it++) {
        if (it % 3 == 1) {
            vm += step;
            if (k.held_follows)
                held += step;
        }
        mlk_sample x;
        memset(&x, 0, sizeof x);
        x.phase = it < 5 ? MLK_PHASE_WARMUP : MLK_PHASE_MEASURE;
        x.iteration = it;
        x.step = MLK_STEP_INFER;
        x.m.have_heap = k.heap;
        x.m.heap.live_bytes = k.heap ? 11747272 + (it % 3) * 40 : -1;
        x.m.alloc_bytes = -1;
        x.m.alloc_held = k.held_known ? (int64_t)held : -1;
        x.m.rss_anon_kib = 18624;
        x.m.vm_rss_kib = 30000;
        x.m.vm_size_kib = (int64_t)(vm / 1024);
        x.m.fds = 5;
        x.m.threads = 3;
        x.m.heap.n_mappings = k.heap ? 3 : -1;
        rc = mlk_cell_stream_push(c, &x);
        x.step = MLK_STEP_ITERATION;
        rc |= mlk_cell_stream_push(c, &x);
    }
    if (!rc)
        rc = mlk_judge_stream(s, c, j);
    mlk_cell_stream_free(c);
    return rc;
}

/* 30 measured iterations, heap and allocator flat; the shim's site table grows 8 KiB per iteration (OpenVINO compiling
 * every iteration: 30 new stacks), RssAnon with it, plus lost_kib of the engine's own. told: the shim says so. */
static int judge_anon(const mlk_scenario *s, bool told, int lost_kib, mlk_judgement *j)
{
    mlk_cell_stream *c = mlk_cell_stream_new();
    int rc = c ? 0 : -1;
    for (int it = 0; !rc && it < 35; it++) {
        mlk_sample x;
        memset(&x, 0, sizeof x);
        x.phase = it < 5 ? MLK_PHASE_WARMUP : MLK_PHASE_MEASURE;
        x.iteration = it;
        x.step = MLK_STEP_INFER;
        x.m.have_heap = true;
        x.m.heap.live_bytes = 3 << 20;
        x.m.heap.n_mappings = 3;
        x.m.heap.shim_bytes = told ? (1 << 20) + it * 8192 : -1;
        x.m.alloc_bytes = -1;
        x.m.alloc_held = 15 << 20;
        x.m.rss_anon_kib = 20000 + it * 8 + it * lost_kib;
        x.m.vm_rss_kib = 40000;
        x.m.vm_size_kib = 300000;
        x.m.fds = 5;
        x.m.threads = 3;
        rc = mlk_cell_stream_push(c, &x);
        x.step = MLK_STEP_ITERATION;
        rc |= mlk_cell_stream_push(c, &x);
    }
    if (!rc)
        rc = mlk_judge_stream(s, c, j);
    mlk_cell_stream_free(c);
    return rc;
}

int main(void)
{
    mlk_scenario *s = scenario();
    CHECK(s != NULL);
    if (!s)
        return check_summary();
    mlk_judgement j;

    /* The steps come from outside malloc: the mapped series leaks, and the cell with it. */
    CHECK(judge_one(s, (cell_kind){.heap = true, .held_known = true}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_MAPPED);
    CHECK(!strcmp(j.metric, "vm_beyond_alloc_bytes"));
    printf("outside malloc: %s\n", j.detail);

    /* The allocator holds every step: its retention, the cell passes. */
    CHECK(judge_one(s, (cell_kind){.heap = true, .held_known = true, .held_follows = true}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_PASS && j.s[MLK_SERIES_MAPPED].r.verdict == MLK_VERDICT_PASS);
    printf("allocator's own: %s\n", j.detail);

    /* Without a heap series malloc's own growth must stay visible: all of VmSize is judged, named as such. */
    CHECK(judge_one(s, (cell_kind){.held_known = true, .held_follows = true}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_MAPPED && !strcmp(j.metric, "vm_size_bytes"));
    CHECK(strstr(j.detail, "mapped memory (VmSize)") != NULL);
    printf("no heap series: %s\n", j.detail);

    /* The allocator silent on what it holds: all of VmSize again. */
    CHECK(judge_one(s, (cell_kind){.heap = true, .held_follows = true}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && !strcmp(j.metric, "vm_size_bytes"));

    /* The shim's own table grows 8 KiB/iter: left out, anon passes; not said (an older shim), it reads as a leak. */
    CHECK(judge_anon(s, true, 0, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_PASS && j.s[MLK_SERIES_ANON].r.verdict == MLK_VERDICT_PASS);
    printf("the shim's own: %s\n", j.detail);
    CHECK(judge_anon(s, false, 0, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_ANON);
    /* A page of the engine's lost beside it: a leak at that page, not at the page and the table. */
    CHECK(judge_anon(s, true, 4, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_ANON);
    CHECK(fabs(j.s[MLK_SERIES_ANON].r.late_slope - 4096) < 1);
    printf("a page lost beside it: %s\n", j.detail);
    mlk_scenario_free(s);
    return check_summary();
}
