/* worker.c: runs one cell: loads the engine plugin, runs setup, warmup+measured iterations and teardown, probing
 * around every step and streaming one line per sample to the parent. It must never allocate between a step's
 * two probe reads except through the engine itself. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "allocators.h"
#include "inputs.h"
#include "plugin.h"
#include "probe.h"
#include "sample.h"
#include "sites.h"
#include "text.h"
#include "worker.h"

typedef struct {
    const mlk_worker_args *a;
    mlk_probe *probe;
    mlk_alloc_kind alloc;
    mlk_plugin plugin;     /* on the worker's own storage: loading allocates nothing of ours inside the step */
    const engine_api *api; /* &plugin.api while loaded */
    engine_ctx *ctx;
    engine_model *model;
    engine_compiled *compiled;
    engine_request *request;
    mlk_inputs *inputs;
    engine_error err;
    /* Under a shape schedule: this iteration's sizes, its shape number (sample.h), the iteration the request's inputs
     * were last set for, and the distinct size sets met so far (an open-addressing table made before any step). */
    const mlk_shapes *shapes; /* NULL without a schedule */
    int64_t sizes[MLK_SHAPE_MAX_DIMS];
    int shape;
    int applied_it, cur_it;
    uint64_t *seen_key;
    int *seen_id;
    size_t seen_cap, n_seen;
    int n_shapes;
} worker;

static void send_line(int fd, const char *line, size_t len)
{
    while (len) {
        ssize_t w = write(fd, line, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(MLK_WORKER_EXIT_STEP_FAILED); /* the parent is gone: nothing left to report to */
        line += w;
        len -= (size_t)w;
    }
}

static void send_error(worker *w, int step, const char *msg, int oom)
{
    char line[768];
    /* Tabs and newlines in the message would break the line format; an engine's message may quote a model's node
     * names, ESC and all: it is stored and shown made safe (text.h). */
    char clean[600];
    mlk_text_safe(msg, clean, sizeof clean, 0);
    int n = snprintf(line, sizeof line, "E\t%s\t%d\t%s\n", mlk_any_step_name(step), oom, clean);
    send_line(w->a->fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
}

/* "STEP: what"; the message a failed step sends to the parent. */
static int fail(worker *w, mlk_step s, const char *what)
{
    snprintf(w->err.msg, sizeof w->err.msg, "%s: %.480s", mlk_step_name(s), what);
    w->err.oom = 0;
    return -1;
}

static int load_engine(worker *w)
{
    if (w->ctx)
        return fail(w, MLK_STEP_LOAD_ENGINE, "the engine is already loaded");
    mlk_error e = {0};
    if (mlk_plugin_init(&w->plugin, w->a->engine_lib, &e))
        return fail(w, MLK_STEP_LOAD_ENGINE, e.msg);
    w->api = &w->plugin.api;
    return w->api->load(w->a->opts, (size_t)w->a->n_opts, &w->ctx, &w->err);
}

static int unload_engine(worker *w)
{
    if (!w->ctx)
        return fail(w, MLK_STEP_UNLOAD_ENGINE, "no engine is loaded");
    if (w->model || w->compiled || w->request)
        return fail(w, MLK_STEP_UNLOAD_ENGINE, "release the model, compiled model and request first");
    w->api->unload(w->ctx);
    w->ctx = NULL;
    w->api = NULL;
    mlk_plugin_deinit(&w->plugin);
    return 0;
}

static int create_request(worker *w)
{
    if (!w->compiled || w->request)
        return fail(w, MLK_STEP_CREATE_REQUEST,
                    w->request ? "a request exists: release_request must come first"
                               : "needs a compiled model (compile_model)");
    int rc = w->api->create_request(w->compiled, &w->request, &w->err);
    if (!rc)
        rc = mlk_inputs_apply(w->inputs, w->api, w->compiled, w->request, w->shapes, w->sizes, &w->err);
    w->applied_it = w->cur_it;
    return rc;
}

/* Run one step; 0 or non-zero with w->err set. */
static int do_step(worker *w, mlk_step s)
{
    const engine_api *api = w->api;
    if (s != MLK_STEP_LOAD_ENGINE && !w->ctx)
        return fail(w, s, "the engine is not loaded (load_engine)");
    switch (s) {
    case MLK_STEP_LOAD_ENGINE: return load_engine(w);
    case MLK_STEP_UNLOAD_ENGINE: return unload_engine(w);
    case MLK_STEP_READ_MODEL:
        if (w->model)
            return fail(w, s, "a model is already read: release_model must come first");
        return api->read_model(w->ctx, w->a->model, &w->model, &w->err);
    case MLK_STEP_COMPILE_MODEL:
        if (!w->model || w->compiled)
            return fail(w, s, w->compiled ? "a compiled model exists: release_compiled must come first"
                                                    : "needs a model (read_model)");
        return api->compile(w->ctx, w->model, &w->compiled, &w->err);
    case MLK_STEP_CREATE_REQUEST: return create_request(w);
    case MLK_STEP_INFER:
        if (!w->request)
            return fail(w, s, "needs a request (create_request)");
        return api->infer(w->request, &w->err);
    case MLK_STEP_RELEASE_REQUEST:
        if (!w->request)
            return fail(w, s, "no request to release");
        api->release_request(w->request);
        w->request = NULL;
        return 0;
    case MLK_STEP_RELEASE_COMPILED:
        if (!w->compiled || w->request)
            return fail(w, s, w->request ? "release_request must come first" : "no compiled model");
        api->release_compiled(w->compiled);
        w->compiled = NULL;
        return 0;
    case MLK_STEP_RELEASE_MODEL:
        if (!w->model)
            return fail(w, s, "no model to release");
        api->release_model(w->model);
        w->model = NULL;
        return 0;
    default: return fail(w, s, "unknown step");
    }
}

static void send_sample(worker *w, int phase, int iteration, int step, const mlk_mem *before, const mlk_mem *after)
{
    mlk_sample s = {.phase = phase, .iteration = iteration, .step = step, .m = *after};
    if (iteration >= 0)
        s.shape = w->shape;
    if (before) {
        s.wall_ns = after->wall_ns - before->wall_ns;
        s.cpu_ns = after->cpu_ns - before->cpu_ns;
        s.minflt = after->minflt - before->minflt;
        s.majflt = after->majflt - before->majflt;
    }
    char line[512];
    int n = mlk_sample_encode(&s, line, sizeof line);
    if (n > 0)
        send_line(w->a->fd, line, (size_t)n);
}

/* The engine's own figures after a step (arena stats and the like), as "M" lines that belong to the sample just
 * sent. Only engines that offer them pay for the call. */
static void send_metrics(worker *w)
{
    if (!w->ctx || !w->api || !w->api->metrics)
        return;
    engine_metric m[16];
    size_t n = 0;
    if (w->api->metrics(w->ctx, m, sizeof m / sizeof m[0], &n))
        return;
    for (size_t i = 0; i < n && i < sizeof m / sizeof m[0]; i++) {
        char line[128];
        m[i].name[sizeof m[i].name - 1] = '\0';
        for (char *p = m[i].name; *p; p++)
            if (*p == '\t' || *p == '\n')
                *p = '_';
        int len = snprintf(line, sizeof line, "M\t%s\t%lld\n", m[i].name, (long long)m[i].value);
        if (len > 0 && len < (int)sizeof line)
            send_line(w->a->fd, line, (size_t)len);
    }
}

/* A sample that could not be read is never sent: the cell ends as an error that says so. */
static int probe_failed(worker *w, int step, int rc)
{
    char msg[160];
    snprintf(msg, sizeof msg, "probe: reading /proc/self/status after %s failed: %s", mlk_any_step_name(step),
             strerror(-rc));
    send_error(w, step, msg, 0);
    return MLK_WORKER_EXIT_STEP_FAILED;
}

/* A request that outlives the iteration gets this iteration's shapes before its infer, outside the probes: the step
 * measures the infer, the iteration sample what setting the shapes kept. */
static int apply_shapes(worker *w, int iteration, mlk_step s)
{
    if (s == MLK_STEP_INFER && w->shapes && w->request && w->applied_it != iteration) {
        w->applied_it = iteration;
        if (mlk_inputs_apply(w->inputs, w->api, w->compiled, w->request, w->shapes, w->sizes, &w->err)) {
            send_error(w, (int)s, w->err.msg, w->err.oom);
            return w->err.oom ? MLK_WORKER_EXIT_OOM : MLK_WORKER_EXIT_STEP_FAILED;
        }
    }
    return 0;
}

static int probed_step(worker *w, int phase, int iteration, mlk_step s)
{
    mlk_mem before, after;
    int arc = apply_shapes(w, iteration, s);
    if (arc)
        return arc;
    mlk_probe_reset_peak(w->probe);
    mlk_probe_mark(w->probe, &before);
    int rc = do_step(w, s);
    int prc = mlk_probe_read(w->probe, &after);
    if (prc)
        return probe_failed(w, (int)s, prc);
    send_sample(w, phase, iteration, (int)s, &before, &after);
    send_metrics(w);
    if (rc) {
        send_error(w, (int)s, w->err.msg, w->err.oom);
        return w->err.oom ? MLK_WORKER_EXIT_OOM : MLK_WORKER_EXIT_STEP_FAILED;
    }
    return 0;
}

static int end_iteration(worker *w, int phase, int iteration)
{
    mlk_mem before, after;
    if (w->a->trim) {
        mlk_probe_reset_peak(w->probe);
        mlk_probe_mark(w->probe, &before);
        mlk_allocator_release(w->alloc);
        int rc = mlk_probe_read(w->probe, &after);
        if (rc)
            return probe_failed(w, MLK_STEP_TRIM, rc);
        send_sample(w, phase, iteration, MLK_STEP_TRIM, &before, &after);
    }
    int rc = mlk_probe_read(w->probe, &after);
    if (rc)
        return probe_failed(w, MLK_STEP_ITERATION, rc);
    send_sample(w, phase, iteration, MLK_STEP_ITERATION, NULL, &after);
    return 0;
}

static int run_steps(worker *w, int phase, int iteration, const mlk_step *steps, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = probed_step(w, phase, iteration, steps[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static void announce(worker *w)
{
    char path[400], line[512];
    mlk_allocator_detect(&w->alloc, path, sizeof path);
    int n = snprintf(line, sizeof line, "A\t%s\t%s\t%d\n", mlk_alloc_name(w->alloc) ? mlk_alloc_name(w->alloc) : "custom", path, mlk_probe_has_heap(w->probe));
    send_line(w->a->fd, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
}

/* The table of size sets met: room for every set the run can meet (twice, for short probes), at most 2^20 slots.
 * Made before the first step, so finding or adding a set allocates nothing. */
static int shapes_open(worker *w, const mlk_worker_args *a)
{
    w->applied_it = -1;
    if (a->shapes.n_dims == 0)
        return 0;
    w->shapes = &a->shapes;
    int64_t want = mlk_shapes_combinations(&a->shapes);
    int64_t iters = a->duration_ms > 0 ? INT64_MAX : (int64_t)a->warmup + a->iterations;
    want = want < iters ? want : iters;
    size_t cap = 16;
    while ((int64_t)cap < 2 * want && cap < ((size_t)1 << 20))
        cap *= 2;
    w->seen_key = calloc(cap, sizeof *w->seen_key);
    w->seen_id = calloc(cap, sizeof *w->seen_id);
    w->seen_cap = cap;
    return w->seen_key && w->seen_id ? 0 : -1;
}

static void shapes_close(worker *w)
{
    free(w->seen_key);
    free(w->seen_id);
}

/* Iteration it's sizes and shape number: the set's number when met before, else the next one. When the table is
 * three quarters full, sets not in it count as new: growth that comes with them is then read as a shape's, never
 * as a leak's (a long run with more than 786,432 distinct sets is judged on the sets it met first). */
static void shapes_at(worker *w, int it)
{
    if (!w->shapes)
        return;
    w->cur_it = it;
    uint64_t h = 0x84222325cbf29ce4ULL;
    for (int d = 0; d < w->shapes->n_dims; d++) {
        w->sizes[d] = mlk_shapes_value(w->shapes, d, it);
        h = (h ^ (uint64_t)w->sizes[d]) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    h |= 1; /* 0 marks an empty slot */
    size_t mask = w->seen_cap - 1;
    for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
        if (w->seen_key[j] == h) {
            w->shape = w->seen_id[j];
            return;
        }
        if (!w->seen_key[j]) {
            w->shape = ++w->n_shapes;
            if (4 * (w->n_seen + 1) <= 3 * w->seen_cap) {
                w->seen_key[j] = h;
                w->seen_id[j] = w->shape;
                w->n_seen++;
            }
            return;
        }
    }
}

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int mlk_worker_next_point(int p, int max)
{
    int64_t n = (int64_t)p + p / 2;
    if (n <= p)
        n = (int64_t)p + 1;
    return n > max ? max : (int)n;
}

/* iterations: auto: tell the parent how many iterations are measured and wait for its word. True: go on. */
static bool ask_parent(worker *w, int measured)
{
    char line[32], c = 0;
    int n = snprintf(line, sizeof line, "P\t%d\n", measured);
    send_line(w->a->fd, line, (size_t)n);
    for (;;) {
        ssize_t r = read(w->a->control_fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        return r == 1 && c == 'c';
    }
}

/* The window of exact stacks (sites.h, issue 23): when the heap grew under sampling, up to MLK_SITES_WINDOW more
 * iterations of the pipeline, neither probed nor sent (the verdict rests on the measured phase alone), a window
 * checkpoint after every second one. Bounded in time too: past eight iterations it stops once it has taken twice as
 * long as the measured phase (at least a second), so a slow cell pays at most about three times. A failing step fails
 * the cell. */
static int localize(worker *w, mlk_sites *sites, int first_it, int64_t measured_ms)
{
    int n = mlk_sites_window_wanted(sites);
    if (!n)
        return 0;
    mlk_sites_window_begin(sites);
    int rc = 0;
    int64_t budget_ms = 2 * measured_ms > 1000 ? 2 * measured_ms : 1000;
    for (int i = 0; !rc && i < n; i++) {
        int it = first_it + i;
        shapes_at(w, it);
        for (int k = 0; !rc && k < w->a->n_pipeline; k++) {
            mlk_step s = w->a->pipeline[k];
            rc = apply_shapes(w, it, s);
            if (!rc && do_step(w, s)) {
                send_error(w, (int)s, w->err.msg, w->err.oom);
                rc = w->err.oom ? MLK_WORKER_EXIT_OOM : MLK_WORKER_EXIT_STEP_FAILED;
            }
        }
        if (!rc)
            mlk_sites_window_after_iteration(sites);
        if (i >= 7 && mlk_sites_window_ms(sites) > budget_ms)
            break;
    }
    mlk_sites_window_end(sites);
    return rc;
}

int mlk_worker_run(const mlk_worker_args *a)
{
    /* Die with the parent: a killed memleak-run must not leave workers behind. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    worker w = {.a = a};
    mlk_error err = {0};
    if (mlk_probe_open(&w.probe, &err) || mlk_inputs_new(a->inputs, a->n_inputs, &w.inputs, &err) ||
        (shapes_open(&w, a) && mlk_fail(&err, MLK_E_NOMEM, "shapes: out of memory for the table of shapes met"))) {
        send_error(&w, MLK_STEP_LOAD_ENGINE, err.msg, 0);
        mlk_inputs_free(w.inputs);
        mlk_probe_free(w.probe);
        shapes_close(&w);
        return MLK_WORKER_EXIT_STEP_FAILED;
    }
    announce(&w);
    /* Where memory grows (issue 9): buffers now. Its checkpoints are placed by count, so a run by duration has none. */
    mlk_sites *sites = mlk_sites_open(a->warmup, a->duration_ms > 0 ? 0 : a->iterations, a->auto_min > 0);
    shapes_at(&w, 0); /* a request made in setup starts with the first iteration's shapes */
    int rc = run_steps(&w, MLK_PHASE_SETUP, -1, a->setup, a->n_setup);
    int64_t measure_start = -1;
    int64_t measure_ms = mono_ms();
    int next_point = a->auto_min, end_it = a->warmup + a->iterations;
    for (int it = 0; !rc && (a->duration_ms > 0 ? it < INT_MAX - 1 : it < a->warmup + a->iterations); it++) {
        int phase = it < a->warmup ? MLK_PHASE_WARMUP : MLK_PHASE_MEASURE;
        if (a->duration_ms > 0 && phase == MLK_PHASE_MEASURE) {
            /* By duration: the clock starts with the first measured iteration, and is read between iterations
             * only, never inside a probed step. At least one iteration is measured. */
            int64_t now = mono_ms();
            if (measure_start < 0)
                measure_start = now;
            else if (now - measure_start >= a->duration_ms)
                break;
        }
        shapes_at(&w, it);
        rc = run_steps(&w, phase, it, a->pipeline, a->n_pipeline);
        if (!rc)
            rc = end_iteration(&w, phase, it);
        if (!rc)
            mlk_sites_after_iteration(sites, it); /* after the iteration's sample, never between probes */
        int measured = it - a->warmup + 1;
        if (!rc && next_point > 0 && measured == next_point && measured < a->iterations) {
            if (!ask_parent(&w, measured)) {
                end_it = it + 1;
                break;
            }
            next_point = mlk_worker_next_point(next_point, a->iterations);
        }
    }
    if (!rc)
        rc = localize(&w, sites, end_it, mono_ms() - measure_ms);
    if (!rc)
        mlk_sites_report(sites, a->fd); /* before teardown: the engine is loaded, its frames can be named */
    if (!rc)
        rc = run_steps(&w, MLK_PHASE_TEARDOWN, -1, a->teardown, a->n_teardown);
    if (!rc)
        send_line(a->fd, "D\n", 2);
    mlk_sites_free(sites);
    mlk_inputs_free(w.inputs);
    mlk_probe_free(w.probe);
    shapes_close(&w);
    return rc;
}
