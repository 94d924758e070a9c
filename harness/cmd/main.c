/* main.c: the memleak-run command line: run a scenario, resume a run, or (internally) be a worker.
 * It must never run anything when the scenario or options are wrong: those exit 2 before the first worker. */
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alert.h"
#include "cell_filter.h"
#include "cellrun.h"
#include "cmd_repetitions.h"
#include "cmd_run_json.h"
#include "cmd_shapes.h"
#include "commands.h"
#include "db_inputs.h"
#include "files.h"
#include "model_id.h"
#include "plan.h"
#include "run_lock.h"
#include "runs.h"
#include "runner.h"
#include "scenario.h"
#include "store.h"
#include "strbuf.h"
#include "text.h"
#include "worker.h"

enum { EXIT_PASS = 0, EXIT_FINDING = 1, EXIT_INPUT = 2, EXIT_INTERNAL = 3 };

typedef struct {
    const char *scenario, *db, *commit, *branch, *engine_dir, *model_cache, *run_key, *json, *filter;
    int iterations, warmup; /* --iterations, --warmup: >= 0 override the scenario's; -1 keep */
    int repetitions;        /* --repetitions N: N runs and their aggregates; 0 or 1: one run */
    int64_t resume;
    double duration_s;  /* --duration: > 0 overrides the scenario's iterations or duration */
    bool strict;            /* --strict: a symbolic input dim nothing sets is an error, not a warning */
    bool dry_run, quiet, no_heap;
    int shard_index, shard_count;
} args;

#define MAX_REPETITIONS 100

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memleak-run [options] SCENARIO.yaml\n"
            "       memleak-run --resume RUN [options]\n"
            "       memleak-run compare|history|baseline|report|merge|import-gbench ...   (each with --help)\n\n"
            "Runs the scenario's pipeline over and over in one worker process per matrix cell, samples memory after\n"
            "every step into SQLite, and gives each cell a verdict: pass, leak, plateau, crashed, timeout, hung, oom, error.\n\n"
            "options:\n"
            "  --db PATH          results database, a file (default ./memleak.db; '' and :memory: are refused)\n"
            "  --resume RUN       run again the cells of run RUN that did not finish (scenario from the db); refused\n"
            "                     while another process runs it, or when its models changed since\n"
            "  --commit SHA       commit under test (default: $MLK_COMMIT, $GITHUB_SHA, else git)\n"
            "  --branch NAME      branch under test (default: $MLK_BRANCH, $GITHUB_REF_NAME, else git)\n"
            "  --engine-dir DIR   folder holding engine_<name>.so (default: $MLK_ENGINE_DIR, then ../lib)\n"
            "  --model-cache DIR  cache of generated models (default: $XDG_CACHE_HOME/memleak/models)\n"
            "  --duration LEN     measure each cell for LEN (8h, 90m, 1h30m, 45s, seconds) instead of the scenario's\n"
            "                     iterations or duration (give it again with --resume)\n"
            "  --shard I/N        run only the cells whose index modulo N is I\n"
            "  --run-key KEY      the run's identity; shards of one batch give the same key (default: random)\n"
            "  --no-heap          do not preload the heap-accounting shim (judge on RSS)\n"
            "  --dry-run          check everything and list the cells with their input shapes; run nothing\n"
            "  --strict           a symbolic input dim that nothing sets is an error (default: a warning; it runs as 1)\n"
            "  --quiet            no progress output (the final table is still printed)\n"
            "  --filter K=V,...   run only the cells whose axes hold these values (values of one key are\n"
            "                     alternatives: --filter threads=1,threads=2,allocator=jemalloc)\n"
            "  --iterations N     measure N iterations per cell instead of the scenario's iterations or duration\n"
            "  --warmup N         run N warmup iterations first instead of the scenario's\n"
            "  --repetitions N    run the scenario N times (N runs in the db, 1 to 100) and print each cell's mean,\n"
            "                     median, stddev and cv of its peak, final RSS and heap, growth and latency\n"
            "  --json FILE        also write the run (cells, verdicts, series, steps' figures) as JSON into FILE\n"
            "                     (db/run.schema.json)\n"
            "  --help, --version\n\n"
            "environment: workers get memleak-run's environment, except LD_PRELOAD, which each cell sets itself (the\n"
            "heap shim, then the cell's allocator): a LD_PRELOAD of your own is not passed on. To run under your own\n"
            "allocator build, give it in the scenario: matrix: {allocator: [{name: mine, preload: /abs/lib.so}]}.\n\n"
            "exit status: 0 every cell passed (or plateaued), 1 a finding (leak, crashed, timeout, hung, oom, error),\n"
            "             2 usage or input error (nothing ran), 3 internal error\n");
}

/* --iterations N (>= 1), --warmup N (>= 0), --repetitions N (1 to MAX_REPETITIONS) into a; -1 (said) when bad. */
static int count_opt(const char *k, const char *v, args *a)
{
    char *end;
    long x = strtol(v, &end, 10);
    bool it = !strcmp(k, "--iterations"), reps = !strcmp(k, "--repetitions");
    if (*end || end == v || x < (it || reps ? 1 : 0) || x > (reps ? MAX_REPETITIONS : 100000000)) {
        fprintf(stderr, "memleak-run: %s: '%s' is not a count (%s)\n", k, v,
                reps ? "1 to 100" : it ? "1 or more" : "0 or more");
        return -1;
    }
    *(reps ? &a->repetitions : it ? &a->iterations : &a->warmup) = (int)x;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->db = "memleak.db";
    a->iterations = a->warmup = -1;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = !strcmp(k, "--db")            ? &a->db
                            : !strcmp(k, "--commit")      ? &a->commit
                            : !strcmp(k, "--branch")      ? &a->branch
                            : !strcmp(k, "--engine-dir")  ? &a->engine_dir
                            : !strcmp(k, "--model-cache") ? &a->model_cache
                            : !strcmp(k, "--run-key")     ? &a->run_key
                            : !strcmp(k, "--json")        ? &a->json
                            : !strcmp(k, "--filter")      ? &a->filter
                                                          : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(k, "--version")) {
            printf("memleak-run %s\n", MLK_VERSION);
            return 1;
        } else if (!strcmp(k, "--dry-run")) {
            a->dry_run = true;
        } else if (!strcmp(k, "--strict")) {
            a->strict = true;
        } else if (!strcmp(k, "--quiet")) {
            a->quiet = true;
        } else if (!strcmp(k, "--no-heap")) {
            a->no_heap = true;
        } else if ((!strcmp(k, "--iterations") || !strcmp(k, "--warmup") || !strcmp(k, "--repetitions")) && v) {
            if (count_opt(k, v, a))
                return -1;
            i++;
        } else if (slot || !strcmp(k, "--resume") || !strcmp(k, "--shard") || !strcmp(k, "--duration")) {
            if (!v) {
                fprintf(stderr, "memleak-run: %s needs a value\n", k);
                return -1;
            }
            i++;
            if (slot) {
                *slot = v;
            } else if (!strcmp(k, "--duration")) {
                int bad = mlk_parse_duration(v, &a->duration_s);
                if (bad == -2)
                    fprintf(stderr, "memleak-run: --duration: '%s' is shorter than the 1 ms a cell can measure\n", v);
                else if (bad)
                    fprintf(stderr, "memleak-run: --duration: '%s' is not a length of time such as 8h, 90m, 1h30m, "
                                    "45s or seconds (at most a year)\n", v);
                if (bad)
                    return -1;
            } else if (!strcmp(k, "--resume")) {
                char *end;
                a->resume = strtoll(v, &end, 10);
                if (*end || a->resume <= 0) {
                    fprintf(stderr, "memleak-run: --resume: '%s' is not a run id\n", v);
                    return -1;
                }
            } else if (sscanf(v, "%d/%d%c", &a->shard_index, &a->shard_count, &(char){0}) != 2 ||
                       a->shard_count < 1 || a->shard_index < 0 || a->shard_index >= a->shard_count) {
                fprintf(stderr, "memleak-run: --shard: '%s' is not I/N with 0 <= I < N\n", v);
                return -1;
            }
        } else if (k[0] == '-') {
            fprintf(stderr, "memleak-run: unknown option %s (see --help)\n", k);
            return -1;
        } else if (a->scenario) {
            fprintf(stderr, "memleak-run: one scenario at a time (got %s and %s)\n", a->scenario, k);
            return -1;
        } else {
            a->scenario = k;
        }
    }
    if (!a->scenario == !a->resume) {
        fprintf(stderr, "memleak-run: give a scenario file, or --resume RUN (see --help)\n");
        return -1;
    }
    if (a->repetitions > 1 && (a->resume || a->run_key)) {
        fprintf(stderr, "memleak-run: --repetitions makes new runs: not with %s\n", a->resume ? "--resume" : "--run-key");
        return -1;
    }
    mlk_error e = {0};
    if (db_check_name(a->db, &e)) { /* before a model is generated or a worker runs */
        fprintf(stderr, "memleak-run: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    mlk_run_interrupted = 1;
}

static int exit_for(int code)
{
    switch (code) {
    case MLK_E_USAGE: case MLK_E_PARSE: case MLK_E_NOTFOUND: case MLK_E_ENGINE: return EXIT_INPUT;
    case MLK_E_INTERRUPTED: return 130; /* as a shell reports SIGINT; --resume continues a run */
    default: return EXIT_INTERNAL;
    }
}

static char *argv_text(int argc, char **argv)
{
    mlk_buf b = {0};
    for (int i = 0; i < argc; i++)
        mlk_buf_printf(&b, "%s%s", i ? " " : "", argv[i]);
    return mlk_buf_take(&b);
}

/* --filter: the cells it selects (*only malloc'd); MLK_E_USAGE when the spec is bad or selects none. */
static int select_cells(const mlk_plan *p, const char *spec, bool **only, mlk_error *err)
{
    int rc = mlk_filter_check(spec, "--filter", err), n = 0;
    if (rc)
        return rc;
    if (!(*only = calloc((size_t)p->n_cells + 1, sizeof **only)))
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    for (int i = 0; i < p->n_cells; i++)
        n += (*only)[i] = mlk_filter_match(spec, p->cells[i].label);
    if (!n)
        return mlk_fail(err, MLK_E_USAGE, "--filter %s selects none of the %d cells (e.g. %.200s)", spec, p->n_cells,
                        p->n_cells ? p->cells[0].label : "none");
    return MLK_OK;
}

static void print_cells(const mlk_plan *p, const bool *only)
{
    int n = 0;
    for (int i = 0; i < p->n_cells; i++)
        n += !only || only[i];
    if (n < p->n_cells)
        mlk_fprintf_safe(stdout, "%s: %d of %d cells (--filter)\n", p->s->name, n, p->n_cells);
    else
        mlk_fprintf_safe(stdout, "%s: %d cells\n", p->s->name, p->n_cells);
    for (int m = 0; m < p->n_models; m++)
        mlk_fprintf_safe(stdout, "  model %s%s%s\n", p->models[m].name ? p->models[m].name : "",
                         p->models[m].name ? ": " : "", p->models[m].path);
    for (int e = 0; e < p->n_engines; e++)
        mlk_fprintf_safe(stdout, "  engine %s: %s\n", p->engines[e], p->engine_libs[e]);
    for (int i = 0; i < p->n_cells; i++)
        if (!only || only[i])
            mlk_fprintf_safe(stdout, "  %3d  %s\n", i, p->cells[i].label);
}

static int check_before_run(const args *a, const mlk_plan *p, db_store *db, const char *self, const char *shim,
                            mlk_error *err)
{
    int rc = MLK_OK;
    for (int i = 0; i < p->n_cells && !rc; i++)
        rc = mlk_cellrun_check_exec(p, &p->cells[i], self, shim, err);
    if (!rc && a->resume)
        rc = mlk_run_check_resume(p, db, a->resume, err);
    if (!rc && !a->resume && a->dry_run) /* the db the run would write (a --resume has opened it already) */
        rc = db_check_usable(a->db, err);
    if (!rc && a->resume && a->dry_run) { /* the run itself claims it (runner.c) */
        mlk_proc_id me;
        mlk_proc_self(&me);
        rc = db_run_claim(db, a->resume, &me, a->shard_index, a->shard_count, true, err);
    }
    for (int m = 0; !rc && !a->quiet && m < p->n_models; m++)
        if (p->models[m].hash_sampled)
            fprintf(stderr, "memleak-run: note: model %s and its external data hold %.1f GiB: identified by their "
                            "size and %d sampled blocks of each file, not every byte (see README, \"Model "
                            "identity\")\n", p->models[m].path, (double)p->models[m].bytes / (1 << 30),
                    MLK_HASH_SAMPLES);
    return rc;
}

/* The scenario's budgets against run_id's figures: each crossing printed, *n_over counts them (a finding). */
static int over_budget(db_store *db, const mlk_scenario *s, int64_t run_id, int *n_over, mlk_error *err)
{
    mlk_step_figures *rows = NULL;
    int n = 0, rc = s->n_budgets ? mlk_runs_figures(db, run_id, &rows, &n, err) : MLK_OK;
    for (int i = 0; i < n && !rc; i++) {
        mlk_finding over[16];
        int k = mlk_budget_findings(s, &rows[i], "", over, 16);
        for (int j = 0; j < k; j++) {
            char text[512];
            mlk_finding_text(text, sizeof text, &over[j]);
            mlk_fprintf_safe(stdout, "over budget: %s: %s\n", rows[i].label, text);
        }
        *n_over += k;
    }
    free(rows);
    return rc;
}

/* Run the plan (--repetitions times), check the budgets, print the repetitions' aggregates, write --json; *code
 * gets the exit status. */
/* Each cell of run_id that the plan gave shapes for keeps them (cell_inputs). */
static int store_shapes(db_store *db, int64_t run_id, const mlk_plan *p, const char *const *shapes, mlk_error *err)
{
    int rc = MLK_OK;
    for (int i = 0; shapes && i < p->n_cells && !rc; i++)
        if (shapes[i])
            rc = db_cell_inputs_store(db, run_id, i, shapes[i], err);
    return rc;
}

static int run_all(const args *a, const mlk_plan *p, const mlk_scenario *s, db_store *db, const mlk_run_opts *ro,
                   const char *const *shapes, int *code, mlk_error *err)
{
    int64_t run_id = 0, rep_ids[MAX_REPETITIONS];
    int n_reps = 0, reps = a->repetitions > 1 ? a->repetitions : 1, rc = MLK_OK;
    bool finding = false;
    for (int r = 0; r < reps && !rc && !mlk_run_interrupted; r++) {
        int n_over = 0;
        run_id = 0;
        if (!(rc = mlk_run(p, db, ro, a->resume, &run_id, &finding, err)) &&
            !(rc = store_shapes(db, run_id, p, shapes, err)) && !(rc = over_budget(db, s, run_id, &n_over, err))) {
            finding |= n_over > 0;
            rep_ids[n_reps++] = run_id;
            mlk_fprintf_safe(stdout, "run %lld stored in %s%s\n", (long long)run_id, a->db,
                   mlk_run_interrupted ? " (interrupted: continue with --resume)" : "");
        }
    }
    mlk_buf extra = {0};
    if (!rc && n_reps > 1)
        rc = mlk_reps_report(db, rep_ids, n_reps, stdout, a->json ? &extra : NULL, err);
    if (!rc) {
        *code = mlk_run_interrupted ? 130 : finding ? EXIT_FINDING : EXIT_PASS;
        if (a->json && (rc = mlk_run_json_write(db, run_id, *code, extra.s, a->json, err)))
            *code = EXIT_INTERNAL;
    }
    mlk_buf_free(&extra);
    return rc;
}

/* Load the scenario (from its file, or from the db for --resume), plan and run. */
static int run(const args *a, const char *self, int argc, char **argv)
{
    mlk_error err = {0};
    mlk_scenario *s = NULL;
    mlk_plan *p = NULL;
    db_store *db = NULL;
    char *text = NULL, *spath = NULL, *cmd = argv_text(argc, argv);
    char *dir = strdup(self), *shim = NULL;
    bool *only = NULL;
    char **shapes = NULL; /* each cell's input shapes, kept with the cell (cell_inputs) */
    int rc = 0, code = EXIT_INTERNAL;
    if (a->resume) {
        if ((rc = db_open_existing(a->db, &db, &err)) || (rc = db_run_load(db, a->resume, &text, &spath, &err)) ||
            (rc = mlk_scenario_parse(text, strlen(text), spath ? spath : "(db)", &s, &err)))
            goto out;
    } else if ((rc = mlk_scenario_load(a->scenario, &s, &err))) {
        goto out;
    }
    if (a->duration_s > 0)
        s->duration_s = a->duration_s; /* the verdict and the store do not depend on which of the two was used */
    if (a->iterations > 0)
        s->iterations = a->iterations, s->duration_s = 0;
    if (a->warmup >= 0)
        s->warmup = a->warmup;
    mlk_plan_opts po = {a->engine_dir, a->model_cache, NULL, dirname(dir)};
    if ((rc = mlk_plan_build(s, &po, &p, &err)))
        goto out;
    if (a->filter && (rc = select_cells(p, a->filter, &only, &err)))
        goto out;
    mlk_buf b = {0};
    if (getenv("MLK_HEAP_SHIM"))
        mlk_buf_printf(&b, "%s", getenv("MLK_HEAP_SHIM"));
    else
        mlk_buf_printf(&b, "%s/../lib/libmemleak_heap.so", po.self_dir);
    shim = mlk_buf_take(&b);
    /* something there that is no library (a FIFO would block every worker's loader, a link to nothing): refused
     * like any other path (files.h); nothing there: judged on RSS, as said below */
    struct stat shim_st;
    if (s->heap && !a->no_heap && shim && !lstat(shim, &shim_st) &&
        (rc = mlk_check_regular(shim, "heap shim", false, &err)))
        goto out;
    bool use_shim = s->heap && !a->no_heap && shim && access(shim, R_OK) == 0;
    /* What a run would refuse, --dry-run refuses too: a worker execve cannot start, a resume of another model or
     * of a run a live process holds. */
    if ((rc = check_before_run(a, p, db, self, use_shim ? shim : NULL, &err)))
        goto out;
    if (a->dry_run) {
        print_cells(p, only);
        if ((rc = mlk_cmd_shapes(p, only, stdout, a->strict, NULL, &err)))
            goto out;
        code = EXIT_PASS;
        goto out;
    }
    if (!(shapes = calloc((size_t)p->n_cells + 1, sizeof *shapes))) {
        rc = mlk_fail(&err, MLK_E_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = mlk_cmd_shapes(p, only, NULL, a->strict, shapes, &err)) || (!db && (rc = db_open(a->db, &db, &err))))
        goto out;
    if (s->heap && !a->no_heap && !use_shim)
        fprintf(stderr, "memleak-run: heap shim %s not found: judging on RSS only\n", shim ? shim : "?");
    mlk_run_opts ro = {.self_exe = self, .heap_shim = use_shim ? shim : NULL, .commit = a->commit,
                       .branch = a->branch, .argv_text = cmd, .run_key = a->run_key, .progress_tty = isatty(STDOUT_FILENO),
                       .quiet = a->quiet, .shard_index = a->shard_index, .shard_count = a->shard_count,
                       .only = only};
    rc = run_all(a, p, s, db, &ro, (const char *const *)shapes, &code, &err);
out:
    if (rc) {
        mlk_fprintf_safe(stderr, "memleak-run: %s\n", err.msg); /* it may quote a model's names or a scenario's */
        code = exit_for(rc);
    }
    db_close(db);
    mlk_plan_free(p);
    mlk_scenario_free(s);
    free(text);
    free(spath);
    free(cmd);
    free(dir);
    free(shim);
    free(only);
    for (int i = 0; shapes && p && i < p->n_cells; i++)
        free(shapes[i]);
    free(shapes);
    return code;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} subcommands[] = {
    {"compare", mlk_cmd_compare}, {"history", mlk_cmd_history}, {"baseline", mlk_cmd_baseline},
    {"report", mlk_cmd_report},   {"merge", mlk_cmd_merge},
    {"import-gbench", mlk_cmd_import_gbench},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc > 1 && i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (!strcmp(argv[1], subcommands[i].name))
            return subcommands[i].fn(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "--worker")) {
        mlk_worker_args wa;
        if (mlk_worker_parse(argc, argv, &wa))
            return MLK_WORKER_EXIT_USAGE;
        return mlk_worker_run(&wa);
    }
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc > 0 ? EXIT_PASS : EXIT_INPUT;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "memleak-run: cannot find its own executable\n");
        return EXIT_INTERNAL;
    }
    self[n] = '\0';
    const char *pre = getenv("LD_PRELOAD");
    if (pre && pre[0] && !a.quiet)
        fprintf(stderr, "memleak-run: note: LD_PRELOAD=%s is not passed to the workers (each cell sets its own); "
                        "give your allocator as allocator: {name: N, preload: /abs/lib.so} (see --help)\n", pre);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return run(&a, self, argc, argv);
}
