/* gbench_import.c: reads a Google Benchmark JSON report through SQLite's JSON functions and stores it as one run
 * (the mapping is described in gbench_import.h). It must never leave a partial run: everything is written in one
 * transaction, and an error rolls it back. */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbench_import.h"
#include "gbench_report.h"
#include "scenario.h"
#include "strbuf.h"

#define MAX_FILE_BYTES (256u << 20)

static int sql_fail(sqlite3 *h, mlk_error *err, const char *what)
{
    return mlk_fail(err, MLK_E_DB, "import-gbench: %s: %s", what, sqlite3_errmsg(h));
}

/* ---- figures per family ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Linear-interpolation quantile of v[0..n) (sorted here), as memleak-run's own step statistics. */
static double quantile(double *v, int n, double q)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int lo = (int)pos;
    return lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (pos - lo) : v[lo];
}

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
            x = quantile(v, n, 0.5);
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
    double med = quantile(v, n, 0.5);
    *p90 = quantile(v, n, 0.9);
    free(v);
    if (f->median)
        med = (cpu ? f->median->cpu : f->median->real) * mlk_gbr_unit_ns(f->median->unit) / 1e6;
    else if (!n && f->mean)
        med = (cpu ? f->mean->cpu : f->mean->real) * mlk_gbr_unit_ns(f->mean->unit) / 1e6;
    return med;
}

/* ---- writing ---- */

typedef struct {
    sqlite3 *h;
    const mlk_gbr *r;
    mlk_gbench_import_result *out;
    int64_t run_id;
    const char *started;
    sqlite3_stmt *cell, *stats, *sample;
} writer;

static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v); /* an INTEGER column keeps a whole value as an integer */
    else
        sqlite3_bind_null(st, i);
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
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

static int write_samples(writer *w, int64_t cell_id, const gb_family *f)
{
    for (int i = 0; i < f->n_reps; i++) {
        const mlk_gbr_entry *e = f->reps[i];
        double ns = mlk_gbr_unit_ns(e->unit);
        sqlite3_stmt *st = w->sample;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cell_id);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_int(st, 3, i);
        bind_num(st, 4, e->real * ns);
        bind_num(st, 5, e->cpu * ns);
        bind_num(st, 6, mapped(e, k_peak));
        bind_num(st, 7, mapped(e, k_heap));
        if (sqlite3_step(st) != SQLITE_DONE)
            return -1;
        w->out->n_samples++;
    }
    return 0;
}

static int write_stats(writer *w, int64_t cell_id, const gb_family *f)
{
    double p90, cpu_p90, wall = family_ms(f, false, &p90), cpu = family_ms(f, true, &cpu_p90);
    int n = f->n_reps ? f->n_reps : f->median && isfinite(f->median->repetitions) ? (int)f->median->repetitions : 1;
    sqlite3_stmt *st = w->stats;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int(st, 2, n);
    bind_num(st, 3, sum_counter(f, k_peak));
    bind_num(st, 4, sum_counter(f, k_rss_growth));
    bind_num(st, 5, sum_counter(f, k_heap_growth));
    bind_num(st, 6, wall);
    bind_num(st, 7, p90);
    bind_num(st, 8, cpu);
    bind_num(st, 9, sum_counter(f, k_rss));
    bind_num(st, 10, sum_counter(f, k_heap));
    return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static int write_family(writer *w, const gb_family *f, int idx, mlk_error *err)
{
    mlk_buf axes = {0}, key = {0};
    mlk_buf_printf(&axes, "{\"benchmark\":");
    mlk_buf_json(&axes, f->run_name);
    mlk_buf_printf(&axes, "}");
    /* The benchmark first: compare and history print a key's start. */
    mlk_buf_printf(&key, "benchmark=%s;engine=gbench;binary=%s", f->run_name, w->out->name);
    char *detail = family_detail(f);
    int rc = MLK_OK;
    if (axes.failed || key.failed || !detail) {
        rc = mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
        goto out;
    }
    bool heap = !isnan(sum_counter(f, k_heap)) || !isnan(sum_counter(f, k_heap_growth));
    sqlite3_stmt *st = w->cell;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, w->run_id);
    sqlite3_bind_int(st, 2, idx);
    bind_str(st, 3, w->out->name);
    bind_str(st, 4, axes.s);
    bind_str(st, 5, key.s);
    if (heap)
        sqlite3_bind_int(st, 6, 1);
    else
        sqlite3_bind_null(st, 6);
    bind_str(st, 7, f->failed ? "error" : "pass");
    bind_str(st, 8, f->failed ? (f->failed->error_msg ? f->failed->error_msg : "error_occurred") : NULL);
    bind_str(st, 9, detail);
    bind_str(st, 10, w->started);
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = sql_fail(w->h, err, "storing a cell");
        goto out;
    }
    int64_t cell_id = sqlite3_last_insert_rowid(w->h);
    w->out->n_cells++;
    if (f->failed)
        w->out->n_failed++;
    else if (write_samples(w, cell_id, f) || write_stats(w, cell_id, f))
        rc = sql_fail(w->h, err, "storing a benchmark's figures");
out:
    mlk_buf_free(&axes);
    mlk_buf_free(&key);
    free(detail);
    return rc;
}

/* Every family, in the order of its first entry. */
static int write_families(writer *w, mlk_error *err)
{
    const mlk_gbr *r = w->r;
    int rc = MLK_OK, idx = 0;
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
            w->out->n_skipped++; /* only complexity aggregates (BigO, RMS): no time per iteration */
        else
            rc = write_family(w, &f, idx++, err);
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

static int insert_run(writer *w, const char *scenario, const mlk_gbench_import_opts *o, mlk_error *err)
{
    const mlk_gbr *r = w->r;
    const char *sql = "INSERT INTO runs(uuid, scenario_name, scenario_path, scenario_text, commit_sha, branch, host, "
                      "cpu, tool_version, argv, started_at, finished_at, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                      "?8, ?9, ?10, COALESCE(strftime('%Y-%m-%dT%H:%M:%fZ', ?11), "
                      "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'done') "
                      "RETURNING id, started_at";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w->h, sql, -1, &st, NULL) != SQLITE_OK)
        return sql_fail(w->h, err, "storing the run");
    char cpu[96] = "", tool[160];
    if (isfinite(r->n_cpus) && isfinite(r->mhz))
        snprintf(cpu, sizeof cpu, "%.0f x %.0f MHz", r->n_cpus, r->mhz);
    snprintf(tool, sizeof tool, "google benchmark (%s build), imported by memleak-run %s",
             r->build ? r->build : "unknown", MLK_VERSION);
    const char *f[] = {w->out->uuid, w->out->name, r->name, scenario, o->commit, o->branch, r->host,
                       cpu[0] ? cpu : NULL, tool, o->argv_text, r->date};
    for (int i = 0; i < 11; i++)
        bind_str(st, i + 1, f[i] && *f[i] ? f[i] : NULL);
    int rc = MLK_OK;
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = sql_fail(w->h, err, "storing the run");
    } else {
        w->run_id = sqlite3_column_int64(st, 0);
        w->started = (const char *)sqlite3_column_text(st, 1);
        w->started = w->started ? strdup(w->started) : NULL;
        if (!w->started)
            rc = mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    }
    sqlite3_finalize(st);
    return rc;
}

/* 1 with the run's id when the uuid is stored already, 0 when not, negative on error. */
static int find_run(sqlite3 *h, const char *uuid, int64_t *id, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT id FROM runs WHERE uuid = ?", -1, &st, NULL) != SQLITE_OK)
        return sql_fail(h, err, "looking the run up");
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

static int prepare_writer(writer *w, mlk_error *err)
{
    const char *cell = "INSERT INTO cells(run_id, idx, engine, model, axes, config_key, allocator, heap_shim, status, "
                       "error, detail, started_at, finished_at) VALUES (?1, ?2, 'gbench', ?3, ?4, ?5, 'unknown', ?6, "
                       "?7, ?8, ?9, ?10, ?10)";
    const char *stats = "INSERT INTO step_stats(cell_id, step, n, peak_kib, rss_growth_per_iter, "
                        "heap_growth_per_iter, wall_ms_median, wall_ms_p90, cpu_ms_median, final_rss_kib, "
                        "final_heap_bytes) VALUES (?1, 'iteration', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
    const char *sample = "INSERT INTO samples(cell_id, seq, phase, iteration, step, wall_ns, cpu_ns, vm_hwm_kib, "
                         "heap_live_bytes) VALUES (?1, ?2, 'measure', ?3, 'benchmark', ?4, ?5, ?6, ?7)";
    if (sqlite3_prepare_v2(w->h, cell, -1, &w->cell, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->h, stats, -1, &w->stats, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->h, sample, -1, &w->sample, NULL) != SQLITE_OK)
        return sql_fail(w->h, err, "preparing the inserts");
    return MLK_OK;
}

static int store(db_store *db, const mlk_gbr *r, const mlk_gbench_import_opts *o, mlk_gbench_import_result *out,
                 mlk_error *err)
{
    writer w = {.h = db_handle(db), .r = r, .out = out};
    char *scenario = NULL;
    int rc = scenario_for(r, out->name, &scenario, err);
    if (rc)
        return rc;
    if (sqlite3_exec(w.h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        free(scenario);
        return sql_fail(w.h, err, "starting the import");
    }
    int found = find_run(w.h, out->uuid, &out->run_id, err);
    if (found < 0)
        rc = found;
    else if (found)
        out->existed = true;
    else if (!(rc = insert_run(&w, scenario, o, err)) && !(rc = prepare_writer(&w, err)))
        rc = write_families(&w, err);
    if (!found && !rc)
        out->run_id = w.run_id;
    sqlite3_finalize(w.cell);
    sqlite3_finalize(w.stats);
    sqlite3_finalize(w.sample);
    free((char *)w.started);
    free(scenario);
    if (!rc && sqlite3_exec(w.h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = sql_fail(w.h, err, "committing the import");
    if (rc)
        sqlite3_exec(w.h, "ROLLBACK", NULL, NULL, NULL);
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
    int rc = mlk_gbr_read(db_handle(db), text, len, name, &r, err);
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return mlk_fail(err, MLK_E_IO, "cannot read %s: %s", path, strerror(errno));
    mlk_buf b = {0};
    char chunk[1 << 16];
    size_t n, total = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && total <= MAX_FILE_BYTES) {
        mlk_buf_printf(&b, "%.*s", (int)n, chunk);
        total += n;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    int rc;
    if (bad)
        rc = mlk_fail(err, MLK_E_IO, "cannot read %s", path);
    else if (total > MAX_FILE_BYTES)
        rc = mlk_fail(err, MLK_E_IO, "%s: larger than %u MiB", path, MAX_FILE_BYTES >> 20);
    else if (b.failed || (total && b.len != total))
        rc = mlk_fail(err, b.failed ? MLK_E_NOMEM : MLK_E_PARSE, "%s: %s", path,
                      b.failed ? "out of memory" : "holds a NUL byte: not a JSON report");
    else
        rc = mlk_gbench_import_text(db, b.s ? b.s : "", total, path, o, out, err);
    mlk_buf_free(&b);
    return rc;
}
