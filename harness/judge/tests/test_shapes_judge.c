/* test_shapes_judge.c: a cell under a shape schedule: growth that comes only with shapes never met before is a plateau
 * bounded by the shapes, growth on shapes met before is a leak, and memory beyond the heap that follows the heap's
 * per-shape growth is not a leak. It must never depend on timing: every series here is synthetic and seeded. */
#include "detect_series.h"
#include "scenario.h"
#include "series.h"
#include "stream.h"

static uint64_t shape_rng = 7;
static uint64_t next(void)
{
    shape_rng = shape_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return shape_rng >> 17;
}

static mlk_scenario *scenario(void)
{
    const char *text = "name: t\nengine: ref\nmodel: {generate: mlp}\npipeline: [create_request, infer, "
                       "release_request]\nsetup: [load_engine, read_model, compile_model]\nteardown: "
                       "[release_compiled, release_model, unload_engine]\nshapes: {seq: [1, 200]}\n";
    return test_scenario(text);
}

typedef struct {
    bool numbered;        /* samples carry shape numbers (false: as a cell without a schedule) */
    double per_shape;     /* heap bytes kept per new shape */
    double per_iter;      /* heap bytes lost every iteration */
    double anon_repeat;   /* anon beyond the heap gained on iterations of shapes met before */
    double mapped_repeat; /* VmSize gained on those, outside what the allocator holds */
} cell_kind;

/* 400 iterations, 10 warmup; each draws one of 200 shapes (new ones keep coming till the end). */
static int judge_cell(const mlk_scenario *s, cell_kind k, mlk_judgement *j)
{
    mlk_cell_stream *c = mlk_cell_stream_new();
    shape_rng = 7; /* every cell meets the same shapes in the same order */
    bool seen[200] = {false};
    int n_shapes = 0, number[200];
    double heap = 1 << 20, anon = 4 << 20, vm = 100 << 20;
    int rc = c ? 0 : -1;
    for (int it = 0; !rc && it < 410; it++) {
        int shape = (int)(next() % 200);
        bool is_new = !seen[shape];
        if (is_new) {
            seen[shape] = true;
            number[shape] = ++n_shapes;
            heap += k.per_shape;
            vm += k.per_shape; /* the heap extended for the cached block */
        } else {
            anon += k.anon_repeat;
            vm += k.mapped_repeat;
        }
        heap += k.per_iter;
        mlk_sample x;
        memset(&x, 0, sizeof x);
        x.phase = it < 10 ? MLK_PHASE_WARMUP : MLK_PHASE_MEASURE;
        x.iteration = it;
        x.step = MLK_STEP_INFER;
        x.shape = k.numbered ? number[shape] : 0;
        double noise = (double)(next() % 2048);
        x.m.have_heap = true;
        x.m.heap.live_bytes = (int64_t)(heap + noise);
        x.m.alloc_held = (int64_t)(heap + (1 << 20));
        x.m.rss_anon_kib = (int64_t)((anon + heap + (1 << 20)) / 1024);
        x.m.vm_size_kib = (int64_t)(vm / 1024);
        x.m.vm_rss_kib = x.m.rss_anon_kib;
        x.m.fds = 5;
        x.m.threads = 2;
        x.m.alloc_bytes = -1;
        x.m.heap.n_mappings = 3;
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
    CHECK(s != NULL && s->shapes && s->shapes->n_dims == 1);
    if (!s)
        return check_summary();
    mlk_judgement j;

    /* A cache that keeps 64 KiB per shape: the raw heap grows to the end (new shapes keep coming), a leak to the plain
     * detector; with the shape numbers it is a plateau, named as such. */
    CHECK(judge_cell(s, (cell_kind){.numbered = false, .per_shape = 65536}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK);
    CHECK(judge_cell(s, (cell_kind){.numbered = true, .per_shape = 65536}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_PLATEAU && j.s[MLK_SERIES_HEAP].by_shapes);
    CHECK(strstr(j.detail, "new input shapes, flat on shapes met before") != NULL);
    CHECK(j.shapes > 100 && j.new_shapes > 0 && j.new_shapes <= j.shapes);
    printf("cache: %s\n", j.detail);

    /* The same cache and 512 B lost on every iteration: a leak on the shapes met before. */
    CHECK(judge_cell(s, (cell_kind){.numbered = true, .per_shape = 65536, .per_iter = 512}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.s[MLK_SERIES_HEAP].on_repeats);
    CHECK(strstr(j.detail, "on input shapes met before") != NULL);
    printf("cache + leak: %s\n", j.detail);

    /* Resident memory beyond the heap touched on shapes met before, less than the cache holds: the cache's pages. More
     * than the cache could explain: a leak. */
    CHECK(judge_cell(s, (cell_kind){.numbered = true, .per_shape = 65536, .anon_repeat = 8192}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_PLATEAU && j.s[MLK_SERIES_ANON].r.verdict != MLK_VERDICT_LEAK);
    CHECK(judge_cell(s, (cell_kind){.numbered = true, .per_shape = 4096, .anon_repeat = 65536}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.deciding == MLK_SERIES_ANON);
    printf("anon beyond the cache: %s\n", j.detail);

    /* Virtual memory outside the allocator on shapes met before (a mapping per iteration): a leak. */
    CHECK(judge_cell(s, (cell_kind){.numbered = true, .per_shape = 65536, .mapped_repeat = 1 << 20}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_LEAK && j.s[MLK_SERIES_MAPPED].r.verdict == MLK_VERDICT_LEAK);

    /* Nothing grows: pass, with or without numbers. */
    CHECK(judge_cell(s, (cell_kind){.numbered = true}, &j) == 0);
    CHECK(j.verdict == MLK_VERDICT_PASS);
    printf("flat: %s\n", j.detail);
    mlk_scenario_free(s);
    return check_summary();
}
