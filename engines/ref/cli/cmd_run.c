/* cmd_run.c: "refengine run MODEL": read, compile and infer repeatedly; prints latency quantiles, per-phase
 * memory peaks (VmHWM reset before each phase) and the planned arena. It must never report a figure it did
 * not measure: missing /proc fields print as "n/a". */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "cli_util.h"

typedef struct {
    ref_options o;
    const char *model;
    int iterations, warmup;
    bool json, io_binding;
} run_args;

typedef struct {
    double read_ms, compile_ms, median_ms, p90_ms, min_ms;
    ref_proc_mem after_read, after_compile, after_infer;
    int64_t hwm_read_kib, hwm_compile_kib, hwm_infer_kib;
    ref_model_info info;
    ref_plan_stats plan;
    int have_plan;
    size_t arena_bytes, packed_bytes;
} run_result;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: refengine run MODEL [options]\n"
            "  Reads and compiles MODEL, then runs inference on deterministic inputs.\n"
            "  Prints median and p90 latency, VmHWM of each phase and the planned arena bytes.\n\n"
            "  --iterations N   timed infers (default 20)\n"
            "  --warmup N       untimed infers first (default 2)\n"
            "  --io-binding     bind inputs and outputs to caller buffers (zero-copy)\n"
            "  --json           one JSON object instead of text\n\n%s",
            ref_cli_engine_help);
}

static int parse(int argc, char **argv, run_args *a)
{
    ref_options_init(&a->o);
    a->iterations = 20;
    a->warmup = 2;
    for (int i = 1; i < argc; i++) {
        int r = ref_cli_engine_option("run", argc, argv, &i, &a->o);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(argv[i], "--json")) {
            a->json = true;
        } else if (!strcmp(argv[i], "--io-binding")) {
            a->io_binding = true;
        } else if ((!strcmp(argv[i], "--iterations") || !strcmp(argv[i], "--warmup")) && i + 1 < argc) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < 0 || v > 10000000 || (argv[i][2] == 'i' && v < 1)) {
                fprintf(stderr, "refengine run: %s: '%s' is not a valid count\n", argv[i], argv[i + 1]);
                return 2;
            }
            *(argv[i][2] == 'i' ? &a->iterations : &a->warmup) = (int)v;
            i++;
        } else if (argv[i][0] == '-' || a->model) {
            fprintf(stderr, "refengine run: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            a->model = argv[i];
        }
    }
    if (!a->model) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* Allocate and fill every input (and output buffers with --io-binding); returns 0 or prints why. */
static int setup_io(ref_compiled *c, ref_request *r, bool bind, void **bufs, ref_error *err)
{
    size_t ni = ref_compiled_n_inputs(c), no = ref_compiled_n_outputs(c);
    for (size_t i = 0; i < ni; i++) {
        ref_value_desc d;
        ref_compiled_input(c, i, &d);
        if (d.shape.rank < 0) {
            fprintf(stderr, "refengine run: input '%s' declares no shape\n", d.name);
            return -1;
        }
        ref_tensor t = d.shape;
        bufs[i] = t.data = calloc(1, ref_tensor_nbytes(&t) + 1);
        ref_cli_fill(&t, 0x5eed + i);
        int rc = bind ? ref_request_bind_input(r, i, &t, err) : ref_request_set_input(r, i, &t, err);
        if (rc) {
            fprintf(stderr, "refengine run: input '%s': %s\n", d.name, err->msg);
            return -1;
        }
    }
    for (size_t i = 0; bind && i < no; i++) {
        ref_value_desc d;
        ref_compiled_output(c, i, &d);
        if (d.shape.rank < 0)
            continue; /* shape only known at run time: the request keeps its own buffer */
        size_t bytes = ref_tensor_nbytes(&d.shape);
        bufs[ni + i] = malloc(bytes + 1);
        ref_request_bind_output(r, i, bufs[ni + i], bytes, err);
    }
    return 0;
}

static int infer_loop(ref_request *r, const run_args *a, run_result *res, ref_error *err)
{
    double *lat = malloc(sizeof(double) * (size_t)a->iterations);
    if (!lat)
        return -1;
    int rc = 0;
    for (int i = 0; i < a->warmup + a->iterations && !rc; i++) {
        int64_t t0 = ref_cli_now_ns();
        rc = ref_infer(r, err);
        if (i >= a->warmup)
            lat[i - a->warmup] = (double)(ref_cli_now_ns() - t0) / 1e6;
    }
    if (!rc) {
        res->median_ms = ref_cli_quantile(lat, a->iterations, 0.5);
        res->p90_ms = ref_cli_quantile(lat, a->iterations, 0.9);
        res->min_ms = lat[0];
    }
    free(lat);
    return rc;
}

static void print_text(const run_args *a, const run_result *r)
{
    printf("model: %s (%zu nodes, %.1f MiB weights, %.1f MiB mapped)\n", a->model, r->info.n_nodes,
           r->info.weight_bytes / 1048576.0, r->info.mapped_bytes / 1048576.0);
    printf("read: %.2f ms   compile: %.2f ms (%d compile threads, %.1f MiB pre-packed)\n", r->read_ms,
           r->compile_ms, a->o.compile_threads, r->packed_bytes / 1048576.0);
    printf("infer: median %.3f ms   p90 %.3f ms   min %.3f ms   (%d iterations, %d threads)\n", r->median_ms,
           r->p90_ms, r->min_ms, a->iterations, a->o.threads);
    if (r->have_plan)
        printf("arena: planned %zu bytes (naive %zu, lower bound %zu; %s planner, request holds %zu)\n",
               r->plan.planned_bytes, r->plan.naive_bytes, r->plan.lower_bound_bytes,
               a->o.planner == REF_PLANNER_NAIVE ? "naive" : "greedy", r->arena_bytes);
    else
        printf("arena: no static plan (shapes depend on run-time values)\n");
    printf("VmHWM: read %.1f MiB   compile %.1f MiB   infer %.1f MiB\n", r->hwm_read_kib / 1024.0,
           r->hwm_compile_kib / 1024.0, r->hwm_infer_kib / 1024.0);
    printf("after compile: RssAnon %.1f MiB   RssFile %.1f MiB\n", r->after_compile.rss_anon_kib / 1024.0,
           r->after_compile.rss_file_kib / 1024.0);
}

static void print_json(const run_args *a, const run_result *r)
{
    printf("{\"model\":\"%s\",\"nodes\":%zu,\"weight_bytes\":%zu,\"mapped_bytes\":%zu,"
           "\"threads\":%d,\"compile_threads\":%d,\"mmap\":%d,\"arena\":%d,\"iterations\":%d,"
           "\"read_ms\":%.3f,\"compile_ms\":%.3f,\"infer_median_ms\":%.4f,\"infer_p90_ms\":%.4f,"
           "\"hwm_read_kib\":%lld,\"hwm_compile_kib\":%lld,\"hwm_infer_kib\":%lld,"
           "\"rss_anon_after_compile_kib\":%lld,\"rss_file_after_compile_kib\":%lld,"
           "\"packed_bytes\":%zu,\"arena_bytes\":%zu,",
           a->model, r->info.n_nodes, r->info.weight_bytes, r->info.mapped_bytes, a->o.threads,
           a->o.compile_threads, a->o.mmap, a->o.arena, a->iterations, r->read_ms, r->compile_ms, r->median_ms,
           r->p90_ms, (long long)r->hwm_read_kib, (long long)r->hwm_compile_kib, (long long)r->hwm_infer_kib,
           (long long)r->after_compile.rss_anon_kib, (long long)r->after_compile.rss_file_kib, r->packed_bytes,
           r->arena_bytes);
    if (r->have_plan)
        printf("\"naive_bytes\":%zu,\"planned_bytes\":%zu,\"lower_bound_bytes\":%zu}\n", r->plan.naive_bytes,
               r->plan.planned_bytes, r->plan.lower_bound_bytes);
    else
        printf("\"naive_bytes\":null,\"planned_bytes\":null,\"lower_bound_bytes\":null}\n");
}

int ref_cli_run(int argc, char **argv)
{
    run_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    run_result res = {0};
    ref_error err = {0};
    ref_model *m = NULL;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    void **bufs = NULL;
    int status = 1;
    ref_cli_reset_hwm();
    int64_t t0 = ref_cli_now_ns();
    if ((rc = ref_model_read(a.model, &a.o, &m, &err))) {
        fprintf(stderr, "refengine run: %s\n", err.msg);
        goto out;
    }
    res.read_ms = (double)(ref_cli_now_ns() - t0) / 1e6;
    ref_cli_proc_mem(&res.after_read);
    res.hwm_read_kib = res.after_read.vm_hwm_kib;
    ref_model_get_info(m, &res.info);
    ref_cli_reset_hwm();
    t0 = ref_cli_now_ns();
    if ((rc = ref_compile(m, &a.o, &c, &err))) {
        fprintf(stderr, "refengine run: %s\n", err.msg);
        goto out;
    }
    res.compile_ms = (double)(ref_cli_now_ns() - t0) / 1e6;
    ref_cli_proc_mem(&res.after_compile);
    res.hwm_compile_kib = res.after_compile.vm_hwm_kib;
    res.packed_bytes = ref_compiled_packed_bytes(c);
    res.have_plan = ref_compiled_plan_stats(c, &res.plan, NULL) == 0;
    ref_cli_reset_hwm();
    if ((rc = ref_request_new(c, &r, &err))) {
        fprintf(stderr, "refengine run: %s\n", err.msg);
        goto out;
    }
    bufs = calloc(ref_compiled_n_inputs(c) + ref_compiled_n_outputs(c) + 1, sizeof *bufs);
    if (!bufs || setup_io(c, r, a.io_binding, bufs, &err))
        goto out;
    if ((rc = infer_loop(r, &a, &res, &err))) {
        fprintf(stderr, "refengine run: infer: %s\n", err.msg);
        goto out;
    }
    ref_cli_proc_mem(&res.after_infer);
    res.hwm_infer_kib = res.after_infer.vm_hwm_kib;
    res.arena_bytes = ref_request_arena_bytes(r);
    if (a.json)
        print_json(&a, &res);
    else
        print_text(&a, &res);
    status = 0;
out:
    ref_request_free(r);
    for (size_t i = 0; bufs && c && i < ref_compiled_n_inputs(c) + ref_compiled_n_outputs(c); i++)
        free(bufs[i]);
    free(bufs);
    ref_compiled_free(c);
    ref_model_free(m);
    return status;
}
