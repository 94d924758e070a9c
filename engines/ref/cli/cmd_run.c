/* cmd_run.c: "refengine run MODEL": read, compile and infer repeatedly; prints latency quantiles, per-phase
 * memory peaks (VmHWM reset before each phase) and the planned arena. It must never report a figure it did
 * not measure: missing /proc fields print as "n/a". */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_inputs.h"
#include "cli_opts.h"
#include "cli_util.h"

typedef struct {
    ref_options o;
    const char *model;
    int iterations, warmup;
    bool json, io_binding, live_bytes;
    ref_cli_inputs *ins;
} run_args;

/* Per graph input: its buffer (room for the largest shape it cycles through) and its shapes. */
typedef struct {
    void *buf;
    const ref_cli_input *given; /* --shape / --input entry, or NULL */
    ref_tensor shape;           /* the compiled default when nothing is given */
} run_input;

typedef struct {
    double read_ms, compile_ms, median_ms, p90_ms, min_ms;
    ref_proc_mem after_read, after_compile, after_infer;
    int64_t hwm_read_kib, hwm_compile_kib, hwm_infer_kib;
    ref_model_info info;
    ref_plan_stats plan;
    int have_plan;
    size_t arena_bytes, packed_bytes;
    ref_plan_counts plans;
    int64_t live_first, live_max, live_last; /* engine live bytes after the infers (allocation counter) */
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
            "  --live-bytes     print the engine's live bytes after every infer (\"live_bytes ITER BYTES\")\n"
            "  --json           one JSON object instead of text\n\n%s\n%s",
            ref_cli_inputs_help, ref_cli_engine_help);
}

static int parse(int argc, char **argv, run_args *a)
{
    ref_options_init(&a->o);
    a->iterations = 20;
    a->warmup = 2;
    for (int i = 1; i < argc; i++) {
        int r = ref_cli_engine_option("run", argc, argv, &i, &a->o);
        if (!r)
            r = ref_cli_input_option("run", argc, argv, &i, a->ins);
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
        } else if (!strcmp(argv[i], "--live-bytes")) {
            a->live_bytes = true;
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

/* Buffers for every input, sized for the largest shape it takes (and output buffers with --io-binding when
 * shapes do not cycle); returns 0 or prints why. */
static int setup_io(ref_compiled *c, ref_request *r, const run_args *a, run_input *ins, void **out_bufs,
                    ref_error *err)
{
    size_t ni = ref_compiled_n_inputs(c), no = ref_compiled_n_outputs(c);
    for (size_t i = 0; i < ni; i++) {
        ref_value_desc d;
        ref_compiled_input(c, i, &d);
        ins[i].given = ref_cli_inputs_find(a->ins, d.name);
        ins[i].shape = d.shape;
        size_t most = ref_tensor_nbytes(&d.shape);
        for (int k = 0; ins[i].given && k < ins[i].given->n_shapes; k++) {
            ref_tensor t = ins[i].given->shapes[k];
            t.dtype = d.shape.dtype;
            if (ref_tensor_nbytes(&t) > most)
                most = ref_tensor_nbytes(&t);
        }
        if (d.shape.rank < 0 && !ins[i].given) {
            fprintf(stderr, "refengine run: input '%s' declares no shape (give --shape or --input)\n", d.name);
            return -1;
        }
        if (!(ins[i].buf = calloc(1, most + 1)))
            return -1;
    }
    if (!a->io_binding || ref_cli_inputs_cycle(a->ins) > 1)
        return 0;
    (void)r;
    (void)err;
    for (size_t i = 0; i < no; i++) {
        ref_value_desc d;
        ref_compiled_output(c, i, &d);
        if (d.shape.rank < 0)
            continue; /* shape only known at run time: the request keeps its own buffer */
        size_t bytes = ref_tensor_nbytes(&d.shape);
        out_bufs[i] = malloc(bytes + 1);
        ref_request_bind_output(r, i, out_bufs[i], bytes, err);
    }
    return 0;
}

/* feed's failure, already reported; err keeps the engine's code. */
#define FED_BADLY 1

/* Give the request its inputs for iteration it: the it-th shape of each cycling input (filled afresh), the .pb
 * data, or the default shape. Only what changes is set again after the first iteration. */
static int feed(ref_compiled *c, ref_request *r, const run_args *a, run_input *ins, int it, ref_error *err)
{
    for (size_t i = 0; i < ref_compiled_n_inputs(c); i++) {
        const ref_cli_input *g = ins[i].given;
        int n = g && !g->loaded ? g->n_shapes : 1;
        if (it > 0 && n <= 1)
            continue;
        ref_tensor t = ins[i].shape;
        if (g && g->loaded) {
            t = g->pb;
        } else {
            if (g && n >= 1) {
                int32_t dtype = t.dtype;
                t = g->shapes[it % n];
                t.dtype = dtype;
            }
            t.data = ins[i].buf;
            ref_cli_fill(&t, 0x5eed + i);
        }
        int rc = a->io_binding ? ref_request_bind_input(r, i, &t, err) : ref_request_set_input(r, i, &t, err);
        if (rc) {
            ref_value_desc d;
            ref_compiled_input(c, i, &d);
            fprintf(stderr, "refengine run: input '%s': %s\n", d.name, err->msg);
            return FED_BADLY;
        }
    }
    return 0;
}

static int infer_loop(ref_compiled *c, ref_request *r, const run_args *a, run_input *ins, run_result *res,
                      ref_error *err)
{
    double *lat = malloc(sizeof(double) * (size_t)a->iterations);
    if (!lat)
        return -1;
    int rc = 0;
    for (int i = 0; i < a->warmup + a->iterations && !rc; i++) {
        if ((rc = feed(c, r, a, ins, i, err)))
            break;
        int64_t t0 = ref_cli_now_ns();
        rc = ref_infer(r, err);
        if (i >= a->warmup)
            lat[i - a->warmup] = (double)(ref_cli_now_ns() - t0) / 1e6;
        ref_alloc_stats st;
        ref_alloc_get_stats(&st);
        if (!i)
            res->live_first = st.live_bytes;
        res->live_max = st.live_bytes > res->live_max ? st.live_bytes : res->live_max;
        res->live_last = st.live_bytes;
        if (a->live_bytes && !rc)
            printf("live_bytes %d %lld\n", i, (long long)st.live_bytes);
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
    printf("plans: %lld built, %lld evicted, %d cached (plan_cache %d); live bytes after infers: first %lld, max %lld, "
           "last %lld\n", (long long)r->plans.built, (long long)r->plans.evicted, r->plans.cached, a->o.plan_cache,
           (long long)r->live_first, (long long)r->live_max, (long long)r->live_last);
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
           "\"packed_bytes\":%zu,\"arena_bytes\":%zu,\"plans_built\":%lld,\"plans_evicted\":%lld,"
           "\"plans_cached\":%d,\"live_bytes_first\":%lld,\"live_bytes_max\":%lld,\"live_bytes_last\":%lld,",
           a->model, r->info.n_nodes, r->info.weight_bytes, r->info.mapped_bytes, a->o.threads,
           a->o.compile_threads, a->o.mmap, a->o.arena, a->iterations, r->read_ms, r->compile_ms, r->median_ms,
           r->p90_ms, (long long)r->hwm_read_kib, (long long)r->hwm_compile_kib, (long long)r->hwm_infer_kib,
           (long long)r->after_compile.rss_anon_kib, (long long)r->after_compile.rss_file_kib, r->packed_bytes,
           r->arena_bytes, (long long)r->plans.built, (long long)r->plans.evicted, r->plans.cached,
           (long long)r->live_first, (long long)r->live_max, (long long)r->live_last);
    if (r->have_plan)
        printf("\"naive_bytes\":%zu,\"planned_bytes\":%zu,\"lower_bound_bytes\":%zu}\n", r->plan.naive_bytes,
               r->plan.planned_bytes, r->plan.lower_bound_bytes);
    else
        printf("\"naive_bytes\":null,\"planned_bytes\":null,\"lower_bound_bytes\":null}\n");
}

int ref_cli_run(int argc, char **argv)
{
    run_args a = {0};
    if (!(a.ins = calloc(1, sizeof *a.ins)))
        return 1;
    int rc = parse(argc, argv, &a);
    if (rc) {
        free(a.ins);
        return rc == 1 ? 0 : rc;
    }
    run_result res = {0};
    ref_error err = {0};
    ref_model *m = NULL;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    void **bufs = NULL;
    run_input *ins = NULL;
    int status = 1;
    ref_cli_reset_hwm();
    int64_t t0 = ref_cli_now_ns();
    if ((rc = ref_model_read(a.model, &a.o, &m, &err))) {
        fprintf(stderr, "refengine run: %s\n", err.msg);
        status = ref_cli_exit_status(rc);
        goto out;
    }
    res.read_ms = (double)(ref_cli_now_ns() - t0) / 1e6;
    if (ref_cli_inputs_apply("run", a.ins, m, &a.o)) {
        status = 2;
        goto out;
    }
    ref_cli_proc_mem(&res.after_read);
    res.hwm_read_kib = res.after_read.vm_hwm_kib;
    ref_model_get_info(m, &res.info);
    ref_cli_reset_hwm();
    t0 = ref_cli_now_ns();
    if ((rc = ref_compile(m, &a.o, &c, &err))) {
        fprintf(stderr, "refengine run: %s\n", err.msg);
        status = ref_cli_exit_status(rc);
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
        status = ref_cli_exit_status(rc);
        goto out;
    }
    bufs = calloc(ref_compiled_n_outputs(c) + 1, sizeof *bufs);
    ins = calloc(ref_compiled_n_inputs(c) + 1, sizeof *ins);
    if (!bufs || !ins || setup_io(c, r, &a, ins, bufs, &err))
        goto out;
    if ((rc = infer_loop(c, r, &a, ins, &res, &err))) {
        if (rc != FED_BADLY)
            fprintf(stderr, "refengine run: infer: %s\n", err.msg);
        status = ref_cli_exit_status(rc == FED_BADLY ? err.code : rc);
        goto out;
    }
    ref_cli_proc_mem(&res.after_infer);
    res.hwm_infer_kib = res.after_infer.vm_hwm_kib;
    res.arena_bytes = ref_request_arena_bytes(r);
    ref_request_plan_counts(r, &res.plans);
    if (a.json)
        print_json(&a, &res);
    else
        print_text(&a, &res);
    status = 0;
out:
    ref_request_free(r);
    for (size_t i = 0; bufs && c && i < ref_compiled_n_outputs(c); i++)
        free(bufs[i]);
    for (size_t i = 0; ins && c && i < ref_compiled_n_inputs(c); i++)
        free(ins[i].buf);
    free(bufs);
    free(ins);
    ref_compiled_free(c);
    ref_model_free(m);
    ref_cli_inputs_free(a.ins);
    free(a.ins);
    return status;
}
