/* test_runtime.c: compile and run whole small graphs: results against a hand-written reference, the arena
 * contract (infer allocates nothing), arena growth, the plan cache, I/O binding, threads and the thread arbiter,
 * dynamic shapes.
 * It must never pass on a result it did not compare element by element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_builder.h"
#include "pool.h"
#include "runtime/request.h"

#define D 64

static float weights[D * D];

/* x[batch, D] -> MatMul(W) -> Relu -> Add(x) -> Relu -> y; batch is symbolic. */
static ref_model *mlp_model(void)
{
    ref_model *m = gb_model(17);
    const char *params[] = {"batch", NULL};
    int64_t xd[] = {-1, D}, wd[] = {D, D};
    for (int i = 0; i < D * D; i++)
        weights[i] = (float)((i * 37 % 101) - 50) / 400.0f;
    if (gb_input(m, "x", REF_DT_FLOAT, 2, xd, params) || gb_init(m, "W", REF_DT_FLOAT, 2, wd, weights) ||
        !gb_node(m, "MatMul", "x,W", "a") || !gb_node(m, "Relu", "a", "b") || !gb_node(m, "Add", "b,x", "c") ||
        !gb_node(m, "Relu", "c", "y") || gb_output(m, "y", REF_DT_FLOAT)) {
        ref_model_unref(m);
        return NULL;
    }
    return m;
}

static void reference(const float *x, int batch, float *y)
{
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < D; j++) {
            float a = 0;
            for (int k = 0; k < D; k++)
                a += x[b * D + k] * weights[k * D + j];
            a = a > 0 ? a : 0;
            float c = a + x[b * D + j];
            y[b * D + j] = c > 0 ? c : 0;
        }
}

static void fill(float *x, int n, int seed)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)(((i + seed) * 7919 % 200) - 100) / 50.0f;
}

static int close_to_reference(const ref_tensor *out, const float *x, int batch)
{
    float *want = malloc(sizeof(float) * (size_t)(batch * D));
    reference(x, batch, want);
    int ok = out->rank == 2 && out->dims[0] == batch && out->dims[1] == D;
    for (int i = 0; ok && i < batch * D; i++)
        ok = fabsf(((const float *)out->data)[i] - want[i]) <= 1e-4f + 1e-4f * fabsf(want[i]);
    free(want);
    return ok;
}

static ref_tensor input(float *x, int batch)
{
    int64_t dims[] = {batch, D};
    return oh_tensor(REF_DT_FLOAT, 2, dims, x);
}

static void test_arena_allocates_nothing(void)
{
    ref_model *m = mlp_model();
    ref_options o;
    ref_options_init(&o);
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    ref_error err = {0};
    CHECK_OK(ref_compile(m, &o, &c, &err), &err);
    CHECK_OK(ref_request_new(c, &r, &err), &err);
    float x[D], *buf = x;
    fill(x, D, 1);
    ref_tensor t = input(buf, 1);
    CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
    CHECK_OK(ref_infer(r, &err), &err);
    ref_alloc_stats s0, s1;
    ref_alloc_get_stats(&s0);
    for (int i = 0; i < 5; i++)
        CHECK_OK(ref_infer(r, &err), &err);
    ref_alloc_get_stats(&s1);
    CHECK(s1.n_allocs == s0.n_allocs);
    ref_tensor out;
    CHECK_OK(ref_request_output(r, 0, &out, &err), &err);
    CHECK(close_to_reference(&out, x, 1));
    ref_plan_stats ps;
    CHECK_OK(ref_compiled_plan_stats(c, &ps, &err), &err);
    CHECK(ps.is_static);
    CHECK(ps.planned_bytes <= ps.naive_bytes);
    CHECK(ps.planned_bytes >= ps.lower_bound_bytes);
    CHECK(ref_request_arena_bytes(r) == ps.planned_bytes);
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

/* Arena off, mem_pattern off, both growth policies and the plan cache, all against the reference. */
static void run_config(int arena, int mem_pattern, int growth, int threads)
{
    ref_model *m = mlp_model();
    ref_options o;
    ref_options_init(&o);
    o.arena = arena;
    o.mem_pattern = mem_pattern;
    o.arena_growth = growth;
    o.threads = threads;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    ref_error err = {0};
    CHECK_OK(ref_compile(m, &o, &c, &err), &err);
    CHECK_OK(ref_request_new(c, &r, &err), &err);
    float x[5 * D];
    fill(x, 5 * D, 3);
    int batches[] = {1, 5, 3, 5, 1};
    size_t initial = ref_request_arena_bytes(r); /* the default plan's exact size */
    for (int i = 0; i < 5; i++) {
        ref_tensor t = input(x, batches[i]);
        CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        CHECK_OK(ref_infer(r, &err), &err);
        ref_alloc_get_stats(&s1);
        ref_tensor out;
        CHECK_OK(ref_request_output(r, 0, &out, &err), &err);
        CHECK(close_to_reference(&out, x, batches[i]));
        size_t arena_now = ref_request_arena_bytes(r);
        if (!arena) {
            CHECK(arena_now == 0);
            CHECK(s1.n_allocs > s0.n_allocs); /* one buffer per tensor, every run */
        } else if (growth == REF_GROWTH_POW2 && arena_now != initial) {
            CHECK((arena_now & (arena_now - 1)) == 0); /* grown: rounded to a power of two */
        }
        if (arena && mem_pattern && i >= 3)
            CHECK(s1.n_allocs == s0.n_allocs); /* batch 5 and 1 were planned before: cached */
        if (arena && !mem_pattern)
            CHECK(s1.n_allocs > s0.n_allocs); /* planned again every time */
    }
    if (arena && growth == REF_GROWTH_EXACT) {
        /* The arena grew exactly to what batch 5 needed. */
        ref_tensor t = input(x, 5);
        ref_request_set_input(r, 0, &t, &err);
        ref_infer(r, &err);
        CHECK(ref_request_arena_bytes(r) % 64 == 0);
    }
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

static void test_io_binding(void)
{
    ref_model *m = mlp_model();
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    ref_error err = {0};
    CHECK_OK(ref_compile(m, NULL, &c, &err), &err);
    CHECK_OK(ref_request_new(c, &r, &err), &err);
    float x[2 * D], y[2 * D];
    fill(x, 2 * D, 7);
    ref_tensor t = input(x, 2);
    CHECK_OK(ref_request_bind_input(r, 0, &t, &err), &err);
    CHECK_OK(ref_request_bind_output(r, 0, y, sizeof y, &err), &err);
    CHECK_OK(ref_infer(r, &err), &err);
    ref_tensor out;
    CHECK_OK(ref_request_output(r, 0, &out, &err), &err);
    CHECK(out.data == (void *)y);
    CHECK(close_to_reference(&out, x, 2));
    /* The bound input is read in place: change it and run again without set_input. */
    fill(x, 2 * D, 11);
    CHECK_OK(ref_infer(r, &err), &err);
    CHECK(close_to_reference(&out, x, 2));
    CHECK_OK(ref_request_bind_output(r, 0, y, sizeof y - 4, &err), &err);
    CHECK(ref_infer(r, &err) == REF_E_RANGE);
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

static void test_threads_identical(void)
{
    float x[8 * D], y1[8 * D], y2[8 * D];
    fill(x, 8 * D, 5);
    for (int threads = 1; threads <= 2; threads++) {
        ref_model *m = mlp_model();
        ref_options o;
        ref_options_init(&o);
        o.threads = threads;
        o.compile_threads = threads;
        ref_compiled *c = NULL;
        ref_request *r = NULL;
        ref_error err = {0};
        CHECK_OK(ref_compile(m, &o, &c, &err), &err);
        CHECK_OK(ref_request_new(c, &r, &err), &err);
        ref_tensor t = input(x, 8);
        CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
        CHECK_OK(ref_infer(r, &err), &err);
        ref_tensor out;
        CHECK_OK(ref_request_output(r, 0, &out, &err), &err);
        memcpy(threads == 1 ? y1 : y2, out.data, sizeof y1);
        ref_request_free(r);
        ref_compiled_free(c);
        ref_model_free(m);
    }
    CHECK(!memcmp(y1, y2, sizeof y1));
}

/* thread_arbiter: at 2 threads every infer gives the 1-thread result bit for bit whichever mode the arbiter picks,
 * two input shapes alternating; a warm infer allocates nothing; with the arbiter off no run is timed at all. */
static void test_thread_arbiter(void)
{
    float x[8 * D], want8[8 * D], want3[3 * D];
    fill(x, 8 * D, 11);
    ref_model *m = mlp_model();
    for (int threads = 1; threads <= 2; threads++)
        for (int arbiter = 1; arbiter >= 0; arbiter--) {
            ref_options o;
            ref_options_init(&o);
            ref_error err = {0};
            CHECK_OK(ref_options_set(&o, "threads", threads == 1 ? "1" : "2", &err), &err);
            CHECK_OK(ref_options_set(&o, "thread_arbiter", arbiter ? "on" : "off", &err), &err);
            ref_compiled *c = NULL;
            ref_request *r = NULL;
            CHECK_OK(ref_compile(m, &o, &c, &err), &err);
            CHECK_OK(ref_request_new(c, &r, &err), &err);
            int same = 1;
            for (int i = 0; i < 40; i++) {
                int batch = i % 2 ? 3 : 8;
                ref_tensor t = input(x, batch), out;
                CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
                CHECK_OK(ref_infer(r, &err), &err);
                CHECK_OK(ref_request_output(r, 0, &out, &err), &err);
                float *want = batch == 8 ? want8 : want3;
                if (threads == 1 && arbiter && i < 2)
                    memcpy(want, out.data, sizeof(float) * (size_t)(batch * D));
                else
                    same &= !memcmp(want, out.data, sizeof(float) * (size_t)(batch * D));
            }
            CHECK(same);
            ref_tensor t = input(x, 8);
            CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
            ref_alloc_stats s0, s1;
            ref_alloc_get_stats(&s0);
            CHECK_OK(ref_infer(r, &err), &err);
            ref_alloc_get_stats(&s1);
            CHECK(s1.n_allocs == s0.n_allocs);
            int64_t w = 0, solo = 0;
            ref_pool_run_counts(r->pool, &w, &solo);
            /* 41 infers of two kinds, the first of each not booked */
            CHECK(threads == 1 || !arbiter ? w + solo == 0 : w + solo == 39);
            ref_request_free(r);
            ref_compiled_free(c);
        }
    ref_model_free(m);
}

int main(void)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_arena_allocates_nothing();
    for (int arena = 0; arena <= 1; arena++)
        for (int mp = 0; mp <= 1; mp++)
            for (int growth = 0; growth <= 1; growth++)
                run_config(arena, mp, growth, 1 + growth);
    test_io_binding();
    test_threads_identical();
    test_thread_arbiter();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
