/* memleak_bench.c: memleak-bench, Google Benchmark benchmarks of the engine plugins: infer latency per engine x
 * model x threads and compile time per engine x model, with memory figures as user counters.
 * It must never write anything but Google Benchmark's report to stdout: --benchmark_format=json output is parsed. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cases.h"
#include "gbench.h"
#include "heap_shim.h"
#include "plan.h"
#include "plugin.h"
#include "scenario.h"
#include "strbuf.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

#define MAX_MODELS 16
#define MAX_ENGINES 8
#define DEFAULT_MODELS "mlp:mlp_hidden=256", "mobilenetv2:width_mult=0.35,image_size=96"

typedef struct {
    const char *models[MAX_MODELS];
    int n_models;
    const char *engines;     /* comma-separated; NULL: ref, and ort when its plugin exists */
    const char *threads;     /* comma-separated engine thread counts */
    const char *engine_dir, *model_cache, *refengine;
    bool heap;
} bench_args;

/* Everything built before the run, freed after it. */
typedef struct {
    mlk_scenario *scenarios[MAX_MODELS * MAX_ENGINES];
    mlk_plan *plans[MAX_MODELS * MAX_ENGINES];
    const char *specs[MAX_MODELS * MAX_ENGINES]; /* the --model of each plan */
    int n_plans;
    mlk_plugin plugins[MAX_ENGINES];
    const char *dl_path[MAX_ENGINES];
    int n_dl;
    mlk_bench_case *cases;
    int n_cases, cap_cases;
    mlk_bench_env env;
} bench_world;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memleak-bench [options] [--benchmark_* flags]\n\n"
            "Google Benchmark benchmarks of the engine plugins: infer/ENGINE/MODEL/threads:N times one infer on a\n"
            "request made once; compile/ENGINE/MODEL times one compile_model. Memory figures are user counters:\n"
            "peak_rss_kib and peak_rss_delta_kib (VmHWM over the timed loop), and with the heap shim preloaded\n"
            "(--heap) heap_bytes_per_iter, allocs_per_iter, heap_growth_per_iter, heap_peak_delta_bytes and\n"
            "heap_live_bytes; a figure not measured is absent, never 0.\n\n"
            "options:\n"
            "  --model SPEC       a model: ARCH[:KEY=VALUE,...] generated with refengine gen (cached), or FILE.onnx;\n"
            "                     repeatable (default: %s and %s)\n"
            "  --engines LIST     engine plugins, e.g. ref,ort (default: ref, and ort when engine_ort.so is found)\n"
            "  --threads LIST     engine threads values for infer (default 1,2)\n"
            "  --engine-dir DIR   folder holding engine_<name>.so (default: $MLK_ENGINE_DIR, then ../lib)\n"
            "  --model-cache DIR  cache of generated models (default: $XDG_CACHE_HOME/memleak/models)\n"
            "  --refengine PATH   the model generator (default: $MLK_REFENGINE, then next to this binary)\n"
            "  --heap             run again with the heap-accounting shim preloaded (../lib/libmemleak_heap.so or\n"
            "                     $MLK_HEAP_SHIM), for the heap counters\n"
            "  --help, --version\n\n"
            "exit status: 0 every benchmark ran, 1 a benchmark failed (error_occurred in the report),\n"
            "             2 usage error, 3 internal error\n\n"
            "Google Benchmark's flags (e.g. --benchmark_filter=infer/ref, --benchmark_format=json,\n"
            "--benchmark_repetitions=5, --benchmark_min_time=0.1 -- a bare number of seconds in 1.7.1):\n",
            "mlp:mlp_hidden=256", "mobilenetv2:width_mult=0.35,image_size=96");
}

/* "--key VALUE" or "--key=VALUE": the value, advancing *i past it; NULL when k is not this option. */
static const char *opt_value(int argc, char **argv, int *i, const char *key, bool *missing)
{
    size_t n = strlen(key);
    const char *k = argv[*i];
    if (strncmp(k, key, n))
        return NULL;
    if (k[n] == '=')
        return k + n + 1;
    if (k[n])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

/* Own options out of argv (kept: argv[0] and everything else, for Google Benchmark). 1: help or version printed,
 * -1: usage error, 0: go on. */
static int parse_args(int *argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->threads = "1,2";
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        bool missing = false;
        const char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            mlk_gb_print_help();
            return 1;
        } else if (!strcmp(argv[i], "--version")) {
            printf("memleak-bench %s\n", MLK_VERSION);
            return 1;
        } else if (!strcmp(argv[i], "--heap")) {
            a->heap = true;
        } else if ((v = opt_value(*argc, argv, &i, "--model", &missing))) {
            if (a->n_models == MAX_MODELS) {
                fprintf(stderr, "memleak-bench: at most %d --model options\n", MAX_MODELS);
                return -1;
            }
            a->models[a->n_models++] = v;
        } else if ((v = opt_value(*argc, argv, &i, "--engines", &missing))) {
            a->engines = v;
        } else if ((v = opt_value(*argc, argv, &i, "--threads", &missing))) {
            a->threads = v;
        } else if ((v = opt_value(*argc, argv, &i, "--engine-dir", &missing))) {
            a->engine_dir = v;
        } else if ((v = opt_value(*argc, argv, &i, "--model-cache", &missing))) {
            a->model_cache = v;
        } else if ((v = opt_value(*argc, argv, &i, "--refengine", &missing))) {
            a->refengine = v;
        } else if (missing) {
            fprintf(stderr, "memleak-bench: %s needs a value\n", argv[i]);
            return -1;
        } else {
            argv[out++] = argv[i]; /* Google Benchmark's, or refused by it */
        }
    }
    argv[out] = NULL;
    *argc = out;
    if (!a->n_models) {
        const char *defaults[] = {DEFAULT_MODELS};
        for (size_t k = 0; k < sizeof defaults / sizeof *defaults; k++)
            a->models[a->n_models++] = defaults[k];
    }
    return 0;
}

/* --heap: exec this binary again with the shim preloaded (once: the second time, carry on without it). */
static int reexec_with_heap(const char *self, const char *self_dir, char **argv)
{
    if (dlsym(RTLD_DEFAULT, MLK_HEAP_STATS_SYMBOL))
        return 0;
    if (getenv("MLK_BENCH_REEXEC")) {
        fprintf(stderr, "memleak-bench: the heap shim did not load: heap counters are absent\n");
        return 0;
    }
    mlk_buf shim = {0}, pre = {0};
    if (getenv("MLK_HEAP_SHIM"))
        mlk_buf_printf(&shim, "%s", getenv("MLK_HEAP_SHIM"));
    else
        mlk_buf_printf(&shim, "%s/../lib/libmemleak_heap.so", self_dir);
    if (!shim.s || access(shim.s, R_OK)) {
        fprintf(stderr, "memleak-bench: --heap: no heap shim at %s (set MLK_HEAP_SHIM)\n", shim.s ? shim.s : "?");
        mlk_buf_free(&shim);
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    mlk_buf_printf(&pre, "%s%s%s", shim.s, old && *old ? " " : "", old ? old : "");
    if (pre.s && !setenv("LD_PRELOAD", pre.s, 1) && !setenv("MLK_BENCH_REEXEC", "1", 1)) {
        fflush(NULL);
        execv(self, argv);
    }
    fprintf(stderr, "memleak-bench: --heap: cannot run %s again: %s\n", self, strerror(errno));
    mlk_buf_free(&shim);
    mlk_buf_free(&pre);
    return -1;
}

/* ---- planning: one scenario and plan per model and engine, reusing memleak-run's model cache ---- */

static bool plain_token(const char *s, size_t n)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static bool is_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".onnx"));
}

/* The scenario text of one model and engine: a compile pipeline (never run: only planned) over the threads axis. */
static char *scenario_text(const char *spec, const char *engine, const char *threads, mlk_error *err)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b, "name: memleak-bench\nengine: %s\nmodel: {", engine);
    if (is_path(spec)) {
        mlk_buf_printf(&b, "path: ");
        mlk_buf_json(&b, spec);
    } else {
        const char *colon = strchr(spec, ':');
        size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
        if (!plain_token(spec, n)) {
            mlk_buf_free(&b);
            mlk_fail(err, MLK_E_USAGE, "--model %s: expected ARCH[:KEY=VALUE,...] or a .onnx file", spec);
            return NULL;
        }
        mlk_buf_printf(&b, "generate: %.*s", (int)n, spec);
        for (const char *p = colon ? colon + 1 : NULL; p && *p;) {
            const char *end = strchr(p, ','), *eq = strchr(p, '=');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (!eq || eq >= p + len || !plain_token(p, (size_t)(eq - p)) ||
                !plain_token(eq + 1, (size_t)(p + len - eq - 1))) {
                mlk_buf_free(&b);
                mlk_fail(err, MLK_E_USAGE, "--model %s: '%.*s' is not KEY=VALUE", spec, (int)len, p);
                return NULL;
            }
            mlk_buf_printf(&b, ", %.*s: %.*s", (int)(eq - p), p, (int)(p + len - eq - 1), eq + 1);
            p = end ? end + 1 : NULL;
        }
    }
    mlk_buf_printf(&b, "}\npipeline: [compile_model, release_compiled]\nmatrix:\n  threads: [");
    for (const char *p = threads; *p;) {
        size_t len = strcspn(p, ",");
        if (!plain_token(p, len)) {
            mlk_buf_free(&b);
            mlk_fail(err, MLK_E_USAGE, "--threads %s: expected a comma-separated list of numbers", threads);
            return NULL;
        }
        mlk_buf_printf(&b, "%s%.*s", p == threads ? "" : ", ", (int)len, p);
        p += len + (p[len] == ',');
    }
    mlk_buf_printf(&b, "]\n");
    char *s = mlk_buf_take(&b);
    if (!s)
        mlk_fail(err, MLK_E_NOMEM, "out of memory");
    return s;
}

/* Plan one model for one engine. The generator prints to stdout: it goes to stderr meanwhile. */
static int plan_one(bench_world *w, const bench_args *a, const char *self_dir, const char *spec, const char *engine,
                    mlk_error *err)
{
    char abs[PATH_MAX];
    if (is_path(spec) && !realpath(spec, abs))
        return mlk_fail(err, MLK_E_NOTFOUND, "--model %s: %s", spec, strerror(errno));
    char *text = scenario_text(is_path(spec) ? abs : spec, engine, a->threads, err);
    if (!text)
        return err->code;
    mlk_scenario *s = NULL;
    mlk_plan *p = NULL;
    /* Its name has no '/': a relative path in it would be taken relative to that "folder". */
    int rc = mlk_scenario_parse(text, strlen(text), "memleak-bench", &s, err);
    free(text);
    if (rc)
        return mlk_fail_prefix(err, "--model %s, engine %s: ", spec, engine);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved >= 0)
        dup2(STDERR_FILENO, STDOUT_FILENO);
    mlk_plan_opts po = {a->engine_dir, a->model_cache, a->refengine, self_dir};
    rc = mlk_plan_build(s, &po, &p, err);
    if (saved >= 0) {
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    if (rc) {
        mlk_scenario_free(s);
        return mlk_fail_prefix(err, "--model %s, engine %s: ", spec, engine);
    }
    w->specs[w->n_plans] = spec;
    w->scenarios[w->n_plans] = s;
    w->plans[w->n_plans++] = p;
    return MLK_OK;
}

static int plan_all(bench_world *w, const bench_args *a, const char *self_dir, mlk_error *err)
{
    char list[256];
    snprintf(list, sizeof list, "%s", a->engines ? a->engines : "ref,ort");
    const char *engines[MAX_ENGINES];
    int n_engines = 0;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n_engines == MAX_ENGINES || !plain_token(t, strlen(t)))
            return mlk_fail(err, MLK_E_USAGE, "--engines %s: at most %d engine names, comma-separated", a->engines,
                            MAX_ENGINES);
        engines[n_engines++] = t;
    }
    if (!n_engines)
        return mlk_fail(err, MLK_E_USAGE, "--engines: no engine named");
    for (int e = 0; e < n_engines; e++)
        for (int m = 0; m < a->n_models; m++) {
            int rc = plan_one(w, a, self_dir, a->models[m], engines[e], err);
            /* By default ORT is optional: another build step provides it, and it may be absent. */
            if (rc == MLK_E_NOTFOUND && !a->engines && !strcmp(engines[e], "ort") && strstr(err->msg, "engine_ort")) {
                fprintf(stderr, "memleak-bench: no engine_ort.so: benchmarking ref only\n");
                break;
            }
            if (rc)
                return rc;
        }
    return MLK_OK;
}

/* ---- registration ---- */

/* The model's part of a benchmark name: the file's base name without .onnx, or the spec with ':' and ',' as '/'. */
static void model_label(const char *spec, char *out, size_t len)
{
    if (is_path(spec)) {
        const char *base = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
        size_t n = strlen(base);
        snprintf(out, len, "%.*s", (int)(n > 5 && !strcmp(base + n - 5, ".onnx") ? n - 5 : n), base);
        return;
    }
    snprintf(out, len, "%s", spec);
    for (char *p = out; *p; p++)
        if (*p == ':' || *p == ',')
            *p = '/';
}

static const engine_api *engine_of(bench_world *w, const char *lib, mlk_error *err)
{
    int i = 0;
    while (i < w->n_dl && strcmp(w->dl_path[i], lib))
        i++;
    if (i == w->n_dl) {
        if (i == MAX_ENGINES)
            return mlk_fail(err, MLK_E_USAGE, "too many engine plugins"), NULL;
        if (mlk_plugin_init(&w->plugins[i], lib, err))
            return NULL;
        w->dl_path[i] = lib;
        w->n_dl++;
    }
    return &w->plugins[i].api;
}

static mlk_bench_case *new_case(bench_world *w, mlk_error *err)
{
    if (w->n_cases == w->cap_cases) {
        /* Cases are registered by address: allocate them all at once, before the first registration. */
        return mlk_fail(err, MLK_E_INTERNAL, "more benchmarks than planned"), NULL;
    }
    mlk_bench_case *c = &w->cases[w->n_cases++];
    memset(c, 0, sizeof *c);
    c->env = &w->env;
    return c;
}

static int register_case(bench_world *w, mlk_bench_kind kind, const mlk_plan *p, const mlk_cell *cell,
                         const engine_api *api, const char *name, mlk_error *err)
{
    mlk_bench_case *c = new_case(w, err);
    if (!c)
        return err->code;
    c->kind = kind;
    c->api = api;
    c->opts = cell->opts;
    c->n_opts = cell->n_opts;
    c->model_path = p->models[cell->model].path;
    mlk_gb_bench *b = mlk_gb_register(name, mlk_bench_run, c, err);
    if (!b)
        return err->code;
    int rc = mlk_gb_set_unit(b, kind == MLK_BENCH_INFER ? MLK_GB_US : MLK_GB_MS);
    if (!rc)
        rc = mlk_gb_use_real_time(b); /* engines run their own threads: the caller's CPU time says little */
    if (!rc)
        rc = mlk_gb_measure_process_cpu_time(b);
    return rc ? mlk_fail(err, rc, "configuring benchmark %s failed", name) : MLK_OK;
}

static int register_all(bench_world *w, mlk_error *err)
{
    int total = 0;
    for (int i = 0; i < w->n_plans; i++)
        total += w->plans[i]->n_cells + 1;
    if (!(w->cases = calloc((size_t)total, sizeof *w->cases)))
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    w->cap_cases = total;
    int rc = MLK_OK;
    for (int i = 0; i < w->n_plans && !rc; i++) {
        const mlk_plan *p = w->plans[i];
        const char *engine = p->s->engine;
        char model[128], name[512];
        model_label(w->specs[i], model, sizeof model);
        const engine_api *api = engine_of(w, p->cells[0].engine_lib, err);
        if (!api)
            return err->code;
        snprintf(name, sizeof name, "compile/%s/%s", engine, model);
        rc = register_case(w, MLK_BENCH_COMPILE, p, &p->cells[0], api, name, err);
        for (int k = 0; k < p->n_cells && !rc; k++) {
            const char *threads = "?";
            for (int o = 0; o < p->cells[k].n_opts; o++)
                if (!strcmp(p->cells[k].opts[o].key, "threads"))
                    threads = p->cells[k].opts[o].value;
            snprintf(name, sizeof name, "infer/%s/%s/threads:%s", engine, model, threads);
            rc = register_case(w, MLK_BENCH_INFER, p, &p->cells[k], api, name, err);
        }
    }
    return rc;
}

static void world_free(bench_world *w)
{
    for (int i = 0; i < w->n_cases; i++)
        mlk_bench_release(&w->cases[i]);
    mlk_gb_clear();
    free(w->cases);
    for (int i = 0; i < w->n_plans; i++) {
        mlk_plan_free(w->plans[i]);
        mlk_scenario_free(w->scenarios[i]);
    }
    for (int i = 0; i < w->n_dl; i++)
        mlk_plugin_deinit(&w->plugins[i]);
    mlk_inputs_free(w->env.inputs);
    mlk_probe_free(w->env.probe);
}

/* VmHWM can be reset only where the kernel lets a process write its clear_refs. */
static bool peak_resets(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && write(fd, "5", 1) == 1;
    if (fd >= 0)
        close(fd);
    return ok;
}

int main(int argc, char **argv)
{
    char self[PATH_MAX], dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "memleak-bench: cannot find its own executable\n");
        return EXIT_INTERNAL;
    }
    self[n] = '\0';
    snprintf(dir, sizeof dir, "%s", self);
    dirname(dir);
    /* parse_args takes our options out of argv; --heap runs the whole command line again. */
    char **orig = calloc((size_t)argc + 1, sizeof *orig);
    if (!orig)
        return EXIT_INTERNAL;
    memcpy(orig, argv, sizeof *orig * (size_t)argc);
    bench_args a;
    int rc = parse_args(&argc, argv, &a);
    if (!rc && a.heap && reexec_with_heap(self, dir, orig))
        rc = -1;
    free(orig);
    if (rc)
        return rc > 0 ? EXIT_OK : EXIT_USAGE;
    bench_world w;
    memset(&w, 0, sizeof w);
    mlk_error err = {0};
    int code = EXIT_INTERNAL;
    w.env.peak_resets = peak_resets();
    if ((rc = mlk_probe_open(&w.env.probe, &err)) || (rc = mlk_inputs_new(NULL, 0, &w.env.inputs, &err)) ||
        (rc = plan_all(&w, &a, dir, &err)) || (rc = register_all(&w, &err)))
        goto out;
    rc = mlk_gb_run(&argc, argv, &err);
    if (rc >= 0) {
        code = w.env.n_failed ? EXIT_FAILED : EXIT_OK;
        rc = 0;
    }
out:
    if (rc) {
        fprintf(stderr, "memleak-bench: %s\n", err.msg);
        code = rc == MLK_E_USAGE || rc == MLK_E_PARSE || rc == MLK_E_NOTFOUND || rc == MLK_E_ENGINE ? EXIT_USAGE
                                                                                                    : EXIT_INTERNAL;
    }
    world_free(&w);
    return code;
}
