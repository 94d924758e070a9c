/* bench_cases.c: the body of every memleak-bench benchmark: set up the engine objects once per case, run the timed
 * loop, then probe memory and publish it as user counters. It must never allocate or probe inside the timed loop. */
#include <stdio.h>
#include <string.h>

#include "bench_cases.h"

void mlk_bench_release(mlk_bench_case *c)
{
    if (!c)
        return;
    const engine_api *api = c->api;
    if (c->request)
        api->release_request(c->request);
    if (c->compiled)
        api->release_compiled(c->compiled);
    if (c->model)
        api->release_model(c->model);
    if (c->ctx)
        api->unload(c->ctx);
    c->request = NULL;
    c->compiled = NULL;
    c->model = NULL;
    c->ctx = NULL;
    if (c->env && c->env->live == c)
        c->env->live = NULL;
}

/* Make c the live case: load, read, and for infer compile and create a request with its inputs. Returns 0, or -1
 * with e set (and nothing held). */
static int setup(mlk_bench_case *c, engine_error *e)
{
    mlk_bench_env *env = c->env;
    if (env->live == c)
        return 0;
    mlk_bench_release(env->live);
    const engine_api *api = c->api;
    int rc = api->load(c->opts, (size_t)c->n_opts, &c->ctx, e);
    if (!rc)
        rc = api->read_model(c->ctx, c->model_path, &c->model, e);
    if (!rc && c->kind == MLK_BENCH_INFER) {
        rc = api->compile(c->ctx, c->model, &c->compiled, e);
        if (!rc)
            rc = api->create_request(c->compiled, &c->request, e);
        if (!rc)
            rc = mlk_inputs_apply(env->inputs, api, c->compiled, c->request, NULL, NULL, e);
    }
    if (rc) {
        mlk_bench_release(c);
        return -1;
    }
    env->live = c;
    return 0;
}

static void fail_run(mlk_gb_state *st, mlk_bench_case *c, const char *what, const engine_error *e)
{
    char msg[640];
    snprintf(msg, sizeof msg, "%s: %s", what, e->msg[0] ? e->msg : "failed (no message)");
    mlk_gb_skip_with_error(st, msg);
    c->env->n_failed++;
}

static void publish(mlk_gb_state *st, const mlk_bench_case *c, const mlk_mem *before, const mlk_mem *after)
{
    double iters = (double)mlk_gb_iterations(st);
    if (c->env->peak_resets && after->vm_hwm_kib >= 0) {
        mlk_gb_set_counter(st, "peak_rss_kib", (double)after->vm_hwm_kib, MLK_GB_COUNTER_PLAIN);
        if (before->vm_rss_kib >= 0)
            mlk_gb_set_counter(st, "peak_rss_delta_kib", (double)(after->vm_hwm_kib - before->vm_rss_kib),
                               MLK_GB_COUNTER_PLAIN);
    }
    if (!before->have_heap || !after->have_heap || iters < 1)
        return;
    const mlk_heap_stats *b = &before->heap, *a = &after->heap;
    mlk_gb_set_counter(st, "heap_bytes_per_iter", (double)(a->total_bytes - b->total_bytes) / iters,
                       MLK_GB_COUNTER_1024);
    mlk_gb_set_counter(st, "allocs_per_iter", (double)(a->n_allocs - b->n_allocs) / iters, MLK_GB_COUNTER_PLAIN);
    mlk_gb_set_counter(st, "heap_growth_per_iter", (double)(a->live_bytes - b->live_bytes) / iters,
                       MLK_GB_COUNTER_1024);
    mlk_gb_set_counter(st, "heap_peak_delta_bytes", (double)(a->peak_bytes - b->live_bytes), MLK_GB_COUNTER_1024);
    mlk_gb_set_counter(st, "heap_live_bytes", (double)a->live_bytes, MLK_GB_COUNTER_1024);
}

static bool timed_infer(mlk_gb_state *st, mlk_bench_case *c, engine_error *e)
{
    while (mlk_gb_keep_running(st))
        if (c->api->infer(c->request, e))
            return false;
    return true;
}

/* Only the compile is timed: the release of its result is paused out. */
static bool timed_compile(mlk_gb_state *st, mlk_bench_case *c, engine_error *e)
{
    while (mlk_gb_keep_running(st)) {
        if (c->api->compile(c->ctx, c->model, &c->compiled, e))
            return false;
        mlk_gb_pause_timing(st);
        c->api->release_compiled(c->compiled);
        c->compiled = NULL;
        mlk_gb_resume_timing(st);
    }
    return true;
}

void mlk_bench_run(mlk_gb_state *st, void *ctx)
{
    mlk_bench_case *c = ctx;
    engine_error e;
    memset(&e, 0, sizeof e);
    if (setup(c, &e)) {
        fail_run(st, c, "setup", &e);
        return;
    }
    mlk_mem before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    mlk_probe_reset_peak(c->env->probe);
    bool probed = mlk_probe_read(c->env->probe, &before) == 0;
    bool ok = c->kind == MLK_BENCH_INFER ? timed_infer(st, c, &e) : timed_compile(st, c, &e);
    probed = mlk_probe_read(c->env->probe, &after) == 0 && probed;
    if (!ok) {
        fail_run(st, c, c->kind == MLK_BENCH_INFER ? "infer" : "compile_model", &e);
        mlk_bench_release(c); /* a failed engine call may leave the objects in any state: start afresh */
        return;
    }
    if (probed)
        publish(st, c, &before, &after);
}
