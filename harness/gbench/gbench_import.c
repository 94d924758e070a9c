/* gbench_import.c: turns a Google Benchmark JSON report (gbench_report.h) into one run's rows and hands them to the
 * store (db_import.h); the mapping is described in gbench_import.h. It must never leave a partial run: the store
 * writes everything in one transaction, and an error rolls it back. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_import.h"
#include "files.h"
#include "gbench_import.h"
#include "gbench_report.h"
#include "quantile.h"
#include "scenario.h"
#include "strbuf.h"

#define MAX_FILE_BYTES (256u << 20)

/* ---- figures per family ---- */

static double counter(const mlk_gbr_entry *e, const char *key)
{
    for (int i = 0; e && i < e->n_counters; i++)
        if (!strcmp(e->counters[i].key, key))
            return e->counters[i].v;
    return NAN;
}

/* The first of keys (NULL-terminated) the entry has. */
static double mapped(const mlk_gbr_entry *e, const char *const *keys)
{
    for (int i = 0; keys[i]; i++)
        if (!isnan(counter(e, keys[i])))
            return counter(e, keys[i]);
    return NAN;
}

static const char *const k_peak[] = {"peak_rss_kib", "peak_kib", "vm_hwm_kib", NULL};
static const char *const k_rss[] = {"final_rss_kib", "rss_kib", NULL};
static const char *const k_heap[] = {"heap_live_bytes", "final_heap_bytes", NULL};
static const char *const k_heap_growth[] = {"heap_growth_per_iter", NULL};
static const char *const k_rss_growth[] = {"rss_growth_per_iter", NULL};

/* One family: its repetitions and aggregates, and the figures stored for it. */
typedef struct {
    const char *run_name;
    const mlk_gbr_entry **reps;  /* run_type iteration, report order */
    int n_reps;
    const mlk_gbr_entry *median, *mean, *first;
    const mlk_gbr_entry *failed; /* a repetition with error_occurred */
    /* the counters summarizing the family: the median aggregate's, else medians over the repetitions */
    mlk_gbr_counter *sum;
    int n_sum;
} gb_family;

static void family_free(gb_family *f)
{
    free(f->reps);
    for (int i = 0; i < f->n_sum; i++)
        free(f->sum[i].key);
    free(f->sum);
    memset(f, 0, sizeof *f);
}

static bool same_family(const mlk_gbr_entry *e, const char *run_name) { return !strcmp(e->run_name, run_name); }

static int family_collect(const mlk_gbr *r, const char *run_name, gb_family *f)
{
    memset(f, 0, sizeof *f);
    f->run_name = run_name;
    if (!(f->reps = calloc((size_t)r->n, sizeof *f->reps)))
        return -1;
    for (int i = 0; i < r->n; i++) {
        const mlk_gbr_entry *e = &r->e[i];
        if (!same_family(e, run_name))
            continue;
        if (!f->first)
            f->first = e;
        if (e->error && !f->failed)
            f->failed = e;
        if (!e->is_agg && !e->error)
            f->reps[f->n_reps++] = e;
        else if (e->is_agg && e->agg && !strcmp(e->agg, "median") && !f->median)
            f->median = e;
        else if (e->is_agg && e->agg && !strcmp(e->agg, "mean") && !f->mean)
            f->mean = e;
    }
    /* The summary counters. */
    const mlk_gbr_entry *src = f->median ? f->median : f->n_reps ? f->reps[0] : f->mean;
    if (!src || !src->n_counters)
        return 0;
    if (!(f->sum = calloc((size_t)src->n_counters, sizeof *f->sum)))
        return -1;
    double *v = malloc(sizeof *v * (size_t)(f->n_reps + 1));
    if (!v)
        return -1;
    for (int k = 0; k < src->n_counters; k++) {
        double x = src->counters[k].v;
        if (!f->median && f->n_reps > 1) {
            int n = 0;
            for (int i = 0; i < f->n_reps; i++)
                if (!isnan(counter(f->reps[i], src->counters[k].key)))
                    v[n++] = counter(f->reps[i], src->counters[k].key);
            x = mlk_median(v, n);
        }
        if (!(f->sum[k].key = strdup(src->counters[k].key))) {
            free(v);
            return -1;
        }
        f->sum[k].v = x;
        f->n_sum++;
    }
    free(v);
    return 0;
}

static double sum_counter(const gb_family *f, const char *const *keys)
{
    mlk_gbr_entry tmp = {.counters = f->sum, .n_counters = f->n_sum};
    return mapped(&tmp, keys);
}

/* wall or cpu in ms: the median aggregate, else the repetitions' median, else the mean aggregate. */
static double family_ms(const gb_family *f, bool cpu, double *p90)
{
    *p90 = NAN;
    double *v = malloc(sizeof *v * (size_t)(f->n_reps + 1));
    if (!v)
        return NAN;
    int n = 0;
    for (int i = 0; i < f->n_reps; i++) {
        double x = (cpu ? f->reps[i]->cpu : f->reps[i]->real) * mlk_gbr_unit_ns(f->reps[i]->unit) / 1e6;
        if (!isnan(x))
            v[n++] = x;
    }
    double med = mlk_median(v, n);
    *p90 = mlk_quantile(v, n, 0.9);
    free(v);
    if (f->median)
        med = (cpu ? f->median->cpu : f->median->real) * mlk_gbr_unit_ns(f->median->unit) / 1e6;
    else if (!n && f->mean)
        med = (cpu ? f->mean->cpu : f->mean->real) * mlk_gbr_unit_ns(f->mean->unit) / 1e6;
    return med;
}

/* ---- one cell per family ---- */

/* The rows of the run being built: the families' cells, and what each cell's strings and samples take. */
typedef struct {
    const mlk_gbr *r;
    mlk_gbench_import_result *out;
    db_import_cell *cells;
    int n_cells, cap;
} builder;

static void builder_free(builder *b)
{
    for (int i = 0; i < b->n_cells; i++) {
        db_import_cell *c = &b->cells[i];
        free((char *)c->axes_json);
        free((char *)c->config_key);
        free((char *)c->detail);
        free((char *)c->error);
        free((db_import_sample *)c->samples);
    }
    free(b->cells);
}

/* The cell's detail: a JSON object with what step_stats has no column for. */
static char *family_detail(const gb_family *f)
{
    /* The repetitions' own entries: an aggregate's "iterations" is the number of repetitions. */
    const mlk_gbr_entry *e = f->n_reps ? f->reps[0] : f->median ? f->median : f->first;
    mlk_buf b = {0};
    mlk_buf_printf(&b, "{\"source\":\"google benchmark\",\"time_unit\":");
    mlk_buf_json(&b, e->unit ? e->unit : "ns");
    if (isfinite(e->iterations))
        mlk_buf_printf(&b, ",\"iterations\":%.17g", e->iterations);
    mlk_buf_printf(&b, ",\"repetitions\":%d", f->n_reps);
    if (e->label) {
        mlk_buf_printf(&b, ",\"label\":");
        mlk_buf_json(&b, e->label);
    }
    mlk_buf_printf(&b, ",\"counters\":{");
    for (int i = 0, first = 1; i < f->n_sum; i++) {
        if (!isfinite(f->sum[i].v))
            continue;
        mlk_buf_printf(&b, "%s", first ? "" : ",");
        mlk_buf_json(&b, f->sum[i].key);
        mlk_buf_printf(&b, ":%.17g", f->sum[i].v);
        first = 0;
    }
    mlk_buf_printf(&b, "}}");
    return mlk_buf_take(&b);
}

/* One sample per repetition: its time per iteration and the mapped counters. NULL when out of memory. */
static db_import_sample *family_samples(const gb_family *f)
{
    db_import_sample *v = calloc((size_t)f->n_reps + 1, sizeof *v);
    for (int i = 0; v && i < f->n_reps; i++) {
        const mlk_gbr_entry *e = f->reps[i];
        double ns = mlk_gbr_unit_ns(e->unit);
        v[i] = (db_import_sample){.wall_ns = e->real * ns, .cpu_ns = e->cpu * ns, .vm_hwm_kib = mapped(e, k_peak),
                                  .heap_live_bytes = mapped(e, k_heap)};
    }
    return v;
}

/* The family's step figures: medians of time per iteration and the mapped summary counters. */
static void family_stats(const gb_family *f, db_import_cell *c)
{
    double p90, cpu_p90;
    c->has_stats = true;
    c->step = "iteration";
    c->sample_step = "benchmark";
    c->n = f->n_reps ? f->n_reps : f->median && isfinite(f->median->repetitions) ? (int)f->median->repetitions : 1;
    c->wall_ms_median = family_ms(f, false, &p90);
    c->wall_ms_p90 = p90;
    c->cpu_ms_median = family_ms(f, true, &cpu_p90);
    c->peak_kib = sum_counter(f, k_peak);
    c->rss_growth = sum_counter(f, k_rss_growth);
    c->heap_growth = sum_counter(f, k_heap_growth);
    c->final_rss_kib = sum_counter(f, k_rss);
    c->final_heap_bytes = sum_counter(f, k_heap);
}

/* Append the family's cell to b. MLK_E_NOMEM. */
static int add_family(builder *b, const gb_family *f, mlk_error *err)
{
    if (b->n_cells == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        db_import_cell *p = realloc(b->cells, sizeof *p * (size_t)cap);
        if (!p)
            return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
        b->cells = p;
        b->cap = cap;
    }
    mlk_buf axes = {0}, key = {0};
    mlk_buf_printf(&axes, "{\"benchmark\":");
    mlk_buf_json(&axes, f->run_name);
    mlk_buf_printf(&axes, "}");
    /* The benchmark first: compare and history print a key's start. */
    mlk_buf_printf(&key, "benchmark=%s;engine=gbench;binary=%s", f->run_name, b->out->name);
    db_import_cell *c = &b->cells[b->n_cells++];
    memset(c, 0, sizeof *c);
    c->axes_json = mlk_buf_take(&axes);
    c->config_key = mlk_buf_take(&key);
    c->detail = family_detail(f);
    const char *error = f->failed ? (f->failed->error_msg ? f->failed->error_msg : "error_occurred") : NULL;
    c->error = error ? strdup(error) : NULL;
    c->engine = "gbench";
    c->model = b->out->name;
    c->allocator = "unknown";
    c->status = f->failed ? "error" : "pass";
    c->heap_shim = !isnan(sum_counter(f, k_heap)) || !isnan(sum_counter(f, k_heap_growth)) ? 1 : -1;
    if (!f->failed) {
        family_stats(f, c);
        c->samples = family_samples(f);
        c->n_samples = f->n_reps;
    }
    if (!c->axes_json || !c->config_key || !c->detail || (error && !c->error) || (!f->failed && !c->samples))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    b->out->n_cells++;
    if (f->failed)
        b->out->n_failed++;
    else
        b->out->n_samples += f->n_reps;
    return MLK_OK;
}

/* Every family, in the order of its first entry. */
static int build_families(builder *b, mlk_error *err)
{
    const mlk_gbr *r = b->r;
    int rc = MLK_OK;
    for (int i = 0; i < r->n && !rc; i++) {
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = same_family(&r->e[k], r->e[i].run_name);
        if (seen)
            continue;
        gb_family f;
        if (family_collect(r, r->e[i].run_name, &f)) {
            family_free(&f);
            return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
        }
        double p90;
        if (!f.failed && isnan(family_ms(&f, false, &p90)))
            b->out->n_skipped++; /* only complexity aggregates (BigO, RMS): no time per iteration */
        else
            rc = add_family(b, &f, err);
        family_free(&f);
    }
    return rc;
}

/* ---- the run ---- */

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The scenario name: the executable's base name, else the file's without .json; [A-Za-z0-9._-] only. */
static void run_name(const mlk_gbr *r, char *out, size_t len)
{
    const char *src = r->exe && *r->exe ? r->exe : r->name;
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    size_t n = strlen(base);
    if (!(r->exe && *r->exe) && n > 5 && !strcmp(base + n - 5, ".json"))
        n -= 5;
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < len; i++) {
        char c = base[i];
        out[o++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                           c == '_' || c == '-'
                       ? c
                       : '_';
    }
    out[o] = '\0';
    if (!o)
        snprintf(out, len, "gbench");
}

/* A scenario memleak-run's commands can parse (compare reads its thresholds), which says what the run is. The
 * context goes into the description unless it would not parse (say, invalid UTF-8): then it is left out. */
static char *scenario_text(const mlk_gbr *r, const char *name, int max_reps, bool with_context)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b,
                   "# Imported by memleak-run import-gbench: Google Benchmark results, not a scenario to run.\n"
                   "# Each cell is one benchmark (engine gbench); its step 'iteration' holds the time per iteration\n"
                   "# (median over repetitions) and the user counters that map onto memleak's figures, and its\n"
                   "# samples one row per repetition (step 'benchmark').\n"
                   "name: %s\nengine: gbench\ndescription: |\n  Google Benchmark report %s\n",
                   name, r->name);
    if (with_context && r->ctx.s)
        mlk_buf_printf(&b, "  context:\n%s", r->ctx.s);
    mlk_buf_printf(&b, "model: {path: ");
    mlk_buf_json(&b, r->name);
    /* Time per iteration is already an average over many iterations: a floor of 1 ns, not 50 us. */
    mlk_buf_printf(&b, "}\npipeline: [compile_model, release_compiled]\niterations: %d\nwarmup: 0\n"
                       "thresholds: {latency_abs_ms: 0.000001}\n",
                   max_reps > 0 ? max_reps : 1);
    return mlk_buf_take(&b);
}

static int scenario_for(const mlk_gbr *r, const char *name, char **out, mlk_error *err)
{
    int max_reps = 0;
    for (int i = 0; i < r->n; i++)
        if (isfinite(r->e[i].repetitions) && r->e[i].repetitions > max_reps && r->e[i].repetitions < 1e9)
            max_reps = (int)r->e[i].repetitions;
    for (int ctx = 1; ctx >= 0; ctx--) {
        char *text = scenario_text(r, name, max_reps, ctx);
        if (!text)
            return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
        mlk_scenario *s = NULL;
        mlk_error perr = {0};
        if (!mlk_scenario_parse(text, strlen(text), r->name, &s, &perr)) {
            mlk_scenario_free(s);
            *out = text;
            return MLK_OK;
        }
        free(text);
        if (!ctx)
            return mlk_fail(err, MLK_E_PARSE, "%s: cannot describe it as a scenario: %s", r->name, perr.msg);
    }
    return MLK_E_INTERNAL;
}

static int store(db_store *db, const mlk_gbr *r, const mlk_gbench_import_opts *o, mlk_gbench_import_result *out,
                 mlk_error *err)
{
    char *scenario = NULL;
    int rc = scenario_for(r, out->name, &scenario, err);
    if (rc)
        return rc;
    builder b = {.r = r, .out = out};
    if (!(rc = build_families(&b, err))) {
        char cpu[96] = "", tool[160];
        if (isfinite(r->n_cpus) && isfinite(r->mhz))
            snprintf(cpu, sizeof cpu, "%.0f x %.0f MHz", r->n_cpus, r->mhz);
        snprintf(tool, sizeof tool, "google benchmark (%s build), imported by memleak-run %s",
                 r->build ? r->build : "unknown", MLK_VERSION);
        db_import_run run = {.uuid = out->uuid, .scenario_name = out->name, .scenario_path = r->name,
                             .scenario_text = scenario, .commit_sha = o->commit, .branch = o->branch,
                             .host = r->host, .cpu = cpu, .tool_version = tool, .argv = o->argv_text, .date = r->date};
        rc = db_import_store(db, &run, b.cells, b.n_cells, &out->run_id, &out->existed, err);
        if (!rc && out->existed) /* nothing was written: nothing was imported */
            out->n_cells = out->n_failed = out->n_skipped = out->n_samples = 0;
    }
    builder_free(&b);
    free(scenario);
    return rc;
}

int mlk_gbench_import_text(db_store *db, const char *text, size_t len, const char *name,
                           const mlk_gbench_import_opts *o, mlk_gbench_import_result *out, mlk_error *err)
{
    mlk_gbench_import_opts none = {0};
    if (!o)
        o = &none;
    mlk_gbr r;
    mlk_gbench_import_result res;
    memset(&res, 0, sizeof res);
    int rc = mlk_gbr_read(db, text, len, name, &r, err);
    if (!rc) {
        uint64_t h = fnv1a(1469598103934665603ULL, text, len);
        h = fnv1a(h, "\0", 1);
        h = fnv1a(h, o->commit ? o->commit : "", o->commit ? strlen(o->commit) : 0);
        snprintf(res.uuid, sizeof res.uuid, "gbench-%016llx", (unsigned long long)h);
        run_name(&r, res.name, sizeof res.name);
        rc = store(db, &r, o, &res, err);
    }
    mlk_gbr_free(&r);
    if (!rc)
        *out = res;
    return rc;
}

int mlk_gbench_import_file(db_store *db, const char *path, const mlk_gbench_import_opts *o,
                           mlk_gbench_import_result *out, mlk_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = mlk_read_regular(path, "report", MAX_FILE_BYTES, &text, &len, err);
    if (!rc && strlen(text) != len)
        rc = mlk_fail(err, MLK_E_PARSE, "%s: holds a NUL byte: not a JSON report", path);
    if (!rc)
        rc = mlk_gbench_import_text(db, text, len, path, o, out, err);
    free(text);
    return rc;
}
