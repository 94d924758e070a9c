/* report_export.c: turns the db into the TSV files the gnuplot scripts read (memory per cell, trend per config
 * and metric, the allocator x threads x mmap matrix) and registers each plot. It must never write to the db, and
 * writes "?" (gnuplot's missing value) for a figure that was not measured, never 0. */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define TREND_MAX_RUNS 50 /* more would not fit labelled on one x axis */
#define BAND_RUNS 5       /* the baseline band: rolling median of the previous 5 runs */
#define BAND_REL 0.05     /* ... plus and minus 5% */

static int db_fail(sqlite3 *db, mlk_error *err, const char *what, const char *which)
{
    return mlk_fail(err, MLK_E_DB, "report: %s %s: %s", what, which, sqlite3_errmsg(db));
}

/* Create dir/data/<base><suffix>.tsv; its path goes to path (size len). */
static int open_data(const char *dir, const char *base, const char *suffix, char *path, size_t len, FILE **out,
                     mlk_error *err)
{
    if (snprintf(path, len, "%s/data/%s%s.tsv", dir, base, suffix) >= (int)len)
        return mlk_fail(err, MLK_E_IO, "report: output path too long: %.200s...", path);
    if (!(*out = fopen(path, "w")))
        return mlk_fail(err, MLK_E_IO, "report: cannot create %s: %s", path, strerror(errno));
    return MLK_OK;
}

static void put_num(FILE *f, sqlite3_stmt *st, int col, double scale)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        fputs("\t?", f);
    else
        fprintf(f, "\t%.6g", sqlite3_column_double(st, col) * scale);
}

/* Keep only [A-Za-z0-9_-] so a step name can be part of a file name. */
static void safe_name(char *out, size_t len, const char *s)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < len; i++) {
        char c = s[i];
        out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
                     ? c : '_';
    }
    out[i] = '\0';
}

/* ---- memory over iterations, one plot per cell ---- */

static int export_memory(sqlite3 *db, mlk_report *r, int ci, const char *dir, mlk_error *err)
{
    /* Per iteration: RSS and live heap after it, and its peak (the max of its steps' own VmHWM). */
    const char *sql = "SELECT iteration, phase = 'measure', MAX(CASE WHEN step = 'iteration' THEN vm_rss_kib END), "
                      "MAX(vm_hwm_kib), MAX(CASE WHEN step = 'iteration' THEN heap_live_bytes END) "
                      "FROM samples WHERE cell_id = ? AND iteration IS NOT NULL GROUP BY iteration ORDER BY iteration";
    mlk_rep_cell *c = &r->cells[ci];
    char base[64], path[4096];
    snprintf(base, sizeof base, "memory-cell-%d", c->idx);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the samples of", base);
    sqlite3_bind_int64(st, 1, c->id);
    FILE *f = NULL;
    int rc = open_data(dir, base, "", path, sizeof path, &f, err);
    if (rc) {
        sqlite3_finalize(st);
        return rc;
    }
    fputs("# iteration\tmeasured\trss_mib\thwm_mib\theap_mib\n", f);
    int n = 0, n_measured = 0;
    double first_measured = NAN, last = NAN;
    bool heap = false;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int it = sqlite3_column_int(st, 0), measured = sqlite3_column_int(st, 1);
        fprintf(f, "%d\t%d", it, measured);
        put_num(f, st, 2, 1.0 / 1024);
        put_num(f, st, 3, 1.0 / 1024);
        put_num(f, st, 4, 1.0 / (1024 * 1024));
        fputc('\n', f);
        heap = heap || sqlite3_column_type(st, 4) != SQLITE_NULL;
        if (measured && !n_measured++)
            first_measured = it;
        last = it;
        n++;
    }
    sqlite3_finalize(st);
    int wrc = mlk_rep_close(f, path, err);
    if (rc != SQLITE_DONE)
        return db_fail(db, err, "reading the samples of", base);
    if (wrc || n == 0) /* nothing sampled (a cell that failed before its first iteration): no plot */
        return wrc;
    char title[512];
    snprintf(title, sizeof title, "%s: memory per iteration (%s)", c->label, c->status);
    int p = mlk_rep_add_plot(r, MLK_REP_MEMORY, base, title, ci, "iteration", NULL, err);
    if (p < 0)
        return p;
    double late = n_measured ? first_measured + n_measured / 2 : NAN;
    r->plots[p].a[0] = first_measured;
    r->plots[p].a[1] = late;
    r->plots[p].a[2] = last;
    r->plots[p].a[3] = heap;
    c->memory_plot = p;
    return MLK_OK;
}

/* ---- one config's metric across runs ---- */

typedef struct {
    char label[24];
    char uuid[256]; /* a --run-key may be longer than a generated uuid */
    double v;
    bool flagged;
} trend_point;

typedef struct {
    const char *metric, *expr, *ylabel;
} metric_def;

static const metric_def metrics[] = {
    {"peak_kib", "s.peak_kib / 1024.0", "peak HWM (MiB)"},
    {"final_rss_kib", "s.final_rss_kib / 1024.0", "final RSS (MiB)"},
    {"final_anon_kib", "s.final_anon_kib / 1024.0", "final RssAnon (MiB)"},
    {"final_heap_bytes", "s.final_heap_bytes / 1048576.0", "final live heap (MiB)"},
    {"wall_ms", "s.wall_ms_median", "median latency (ms)"},
    {"growth", "COALESCE(s.heap_growth_per_iter, s.rss_growth_per_iter) / 1024.0", "growth (KiB per iteration)"},
};

static const metric_def *find_metric(const char *m)
{
    for (size_t i = 0; m && i < sizeof metrics / sizeof *metrics; i++)
        if (!strcmp(metrics[i].metric, m))
            return &metrics[i];
    return NULL;
}

static bool have_findings(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    bool yes = sqlite3_prepare_v2(db, "SELECT 1 FROM findings, comparisons LIMIT 0", -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    return yes;
}

/* The config's values of step/metric in the runs up to the reported one, oldest first, into pts (n <= max). */
static int trend_query(sqlite3 *db, const mlk_report *r, int ci, const char *step, const metric_def *m,
                       trend_point *pts, int *n, mlk_error *err)
{
    char sql[1536], flag[512] = "0";
    if (have_findings(db))
        snprintf(flag, sizeof flag,
                 "EXISTS (SELECT 1 FROM findings f WHERE f.cell_id = c.id AND f.step = s.step AND f.metric = '%s' "
                 "AND f.kind = 'regression' AND f.comparison_id = (SELECT id FROM comparisons WHERE run_id = ru.id "
                 "ORDER BY created_at DESC, id DESC LIMIT 1))", m->metric);
    snprintf(sql, sizeof sql,
             "SELECT ru.uuid, ru.commit_sha, %s, %s FROM runs ru JOIN cells c ON c.run_id = ru.id "
             "JOIN step_stats s ON s.cell_id = c.id WHERE c.config_key = ?1 AND s.step = ?2 AND "
             "((ru.status = 'done' AND ru.started_at < (SELECT started_at FROM runs WHERE id = ?3)) OR ru.id = ?3) "
             "ORDER BY ru.started_at DESC, ru.id DESC, c.idx DESC LIMIT %d", m->expr, flag, TREND_MAX_RUNS);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the history of", r->cells[ci].label);
    sqlite3_bind_text(st, 1, r->cells[ci].config_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->run_id);
    int rc, k = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < TREND_MAX_RUNS) {
        trend_point *p = &pts[k++];
        const char *uuid = (const char *)sqlite3_column_text(st, 0);
        const char *sha = (const char *)sqlite3_column_text(st, 1);
        snprintf(p->uuid, sizeof p->uuid, "%s", uuid ? uuid : "");
        char label[16];
        snprintf(label, sizeof label, "%.*s", sha && *sha ? 8 : 6, sha && *sha ? sha : p->uuid);
        mlk_rep_tsv_field(p->label, sizeof p->label, label);
        p->v = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        p->flagged = sqlite3_column_int(st, 3) != 0;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, err, "reading the history of", r->cells[ci].label);
    for (int i = 0; i < k / 2; i++) { /* newest first from the query: put oldest first */
        trend_point t = pts[i];
        pts[i] = pts[k - 1 - i];
        pts[k - 1 - i] = t;
    }
    *n = k;
    return MLK_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the up to BAND_RUNS measured values before pts[i]; NaN when there are none. */
static double band_median(const trend_point *pts, int i)
{
    double w[BAND_RUNS];
    int k = 0;
    for (int j = i - 1; j >= 0 && k < BAND_RUNS; j--)
        if (!isnan(pts[j].v))
            w[k++] = pts[j].v;
    if (!k)
        return NAN;
    qsort(w, (size_t)k, sizeof *w, cmp_double);
    return k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
}

static void put_val(FILE *f, double v)
{
    if (isnan(v))
        fputs("\t?", f);
    else
        fprintf(f, "\t%.6g", v);
}

/* Block 1 of a trend's TSV: x and commit of the change points of config/step/metric within the points. Returns
 * how many. */
static int write_change_points(FILE *f, const mlk_report *r, int ci, const char *step, const char *metric,
                               const trend_point *pts, int n)
{
    fputs("\n\n# x\tchange point commit\n", f);
    int n_cp = 0;
    for (int k = 0; k < r->n_cps; k++) {
        const mlk_rep_cp *cp = &r->cps[k];
        if (cp->cell < 0 || strcmp(r->cells[cp->cell].config_key, r->cells[ci].config_key) ||
            strcmp(cp->step, step) || strcmp(cp->metric, metric) || !cp->run_uuid)
            continue;
        for (int i = 0; i < n; i++)
            if (!strcmp(pts[i].uuid, cp->run_uuid)) {
                char label[24];
                mlk_rep_tsv_field(label, sizeof label, cp->commit_sha ? cp->commit_sha : pts[i].label);
                fprintf(f, "%d\t%.8s\n", i, label);
                n_cp++;
            }
    }
    if (!n_cp) /* the script leaves this block out then; a row keeps the file's shape the same */
        fputs("-10\t-\n", f);
    return n_cp;
}

/* Block 0: the points and the band; block 1: the change points (x, commit). */
static int write_trend(mlk_report *r, int ci, const char *step, const metric_def *m, const trend_point *pts, int n,
                       const char *dir, mlk_error *err)
{
    char sstep[64], base[160], path[4096], title[512];
    safe_name(sstep, sizeof sstep, step);
    snprintf(base, sizeof base, "trend-c%d-%s-%s", r->cells[ci].idx, sstep, m->metric);
    FILE *f = NULL;
    int rc = open_data(dir, base, "", path, sizeof path, &f, err);
    if (rc)
        return rc;
    double lo = INFINITY, hi = -INFINITY;
    int n_flagged = 0, n_band = 0;
    fputs("# x\tcommit\tvalue\tband_lo\tband_hi\tbaseline\tregression\n", f);
    for (int i = 0; i < n; i++) {
        double med = band_median(pts, i), v = pts[i].v;
        fprintf(f, "%d\t%s", i, pts[i].label);
        put_val(f, v);
        put_val(f, med * (1 - BAND_REL));
        put_val(f, med * (1 + BAND_REL));
        put_val(f, med);
        put_val(f, pts[i].flagged ? v : NAN);
        fputc('\n', f);
        n_flagged += pts[i].flagged && !isnan(v);
        n_band += !isnan(med);
        double cand[] = {v, med * (1 - BAND_REL), med * (1 + BAND_REL)};
        for (int k = 0; k < 3; k++)
            if (!isnan(cand[k]))
                lo = fmin(lo, cand[k]), hi = fmax(hi, cand[k]);
    }
    int n_cp = write_change_points(f, r, ci, step, m->metric, pts, n);
    if ((rc = mlk_rep_close(f, path, err)))
        return rc;
    if (!isfinite(lo))
        return MLK_OK; /* never measured (live heap without the shim): no plot */
    double pad = (hi - lo) * 0.1 + fmax(fabs(hi), 1e-9) * 0.02;
    snprintf(title, sizeof title, "%s: %s %s across runs", r->cells[ci].label, step, mlk_metric_label(m->metric));
    int p = mlk_rep_add_plot(r, MLK_REP_TREND, base, title, ci, step, m->metric, err);
    if (p < 0)
        return p;
    mlk_rep_plot *pl = &r->plots[p];
    pl->a[0] = n;
    pl->a[1] = lo - pad;
    pl->a[2] = hi + pad;
    pl->a[3] = n_cp;
    pl->a[4] = n_flagged;
    pl->a[5] = n_band;
    if (!(pl->ylabel = strdup(m->ylabel)))
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    return MLK_OK;
}

static int export_trend(sqlite3 *db, mlk_report *r, int ci, const char *step, const char *metric, const char *dir,
                        mlk_error *err)
{
    const metric_def *m = find_metric(metric);
    if (!m || mlk_rep_find_trend(r, ci, step, metric) >= 0)
        return MLK_OK; /* a metric this report cannot chart, or already charted */
    trend_point *pts = calloc(TREND_MAX_RUNS, sizeof *pts);
    if (!pts)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    int n = 0, rc = trend_query(db, r, ci, step, m, pts, &n, err);
    if (!rc && n)
        rc = write_trend(r, ci, step, m, pts, n, dir, err);
    free(pts);
    return rc;
}

/* Every config of the run: the whole iteration's figures, plus what its findings and the iteration's change
 * points name. */
static int export_trends(sqlite3 *db, mlk_report *r, const char *dir, mlk_error *err)
{
    static const char *base_metrics[] = {"peak_kib", "final_rss_kib", "final_heap_bytes", "wall_ms"};
    int rc = MLK_OK;
    for (int ci = 0; ci < r->n_cells && !rc; ci++) {
        bool first = true; /* one set of trends per config, under its first cell */
        for (int k = 0; k < ci; k++)
            first = first && strcmp(r->cells[k].config_key, r->cells[ci].config_key);
        for (size_t k = 0; first && k < sizeof base_metrics / sizeof *base_metrics && !rc; k++)
            rc = export_trend(db, r, ci, "iteration", base_metrics[k], dir, err);
    }
    /* A grown cell is flagged in every step: chart the iteration's, and another step's only when the iteration
     * was not flagged for that metric (a slower infer, say). The others link to the iteration's trend. */
    for (int i = 0; i < r->n_findings && !rc; i++) {
        mlk_rep_finding *f = &r->findings[i];
        if (f->cell < 0 || strcmp(f->kind, "regression"))
            continue;
        bool covered = false;
        for (int k = 0; k < r->n_findings; k++)
            covered = covered || (r->findings[k].cell == f->cell && !strcmp(r->findings[k].step, "iteration") &&
                                  !strcmp(r->findings[k].metric, f->metric) && !strcmp(r->findings[k].kind, f->kind));
        if (!strcmp(f->step, "iteration") || !covered)
            rc = export_trend(db, r, f->cell, f->step, f->metric, dir, err);
    }
    for (int i = 0; i < r->n_findings && !rc; i++) {
        mlk_rep_finding *f = &r->findings[i];
        f->plot = mlk_rep_find_trend(r, f->cell, f->step, f->metric);
        if (f->plot < 0)
            f->plot = mlk_rep_find_trend(r, f->cell, "iteration", f->metric);
    }
    /* A change in the whole iteration shows in every step too: chart the iteration's, and link the others to
     * their own trend when a finding charted it, else to the iteration's. */
    for (int i = 0; i < r->n_cps && !rc; i++) {
        mlk_rep_cp *c = &r->cps[i];
        if (c->cell >= 0 && !strcmp(c->step, "iteration"))
            rc = export_trend(db, r, c->cell, c->step, c->metric, dir, err);
    }
    for (int i = 0; i < r->n_cps && !rc; i++) {
        mlk_rep_cp *c = &r->cps[i];
        c->plot = mlk_rep_find_trend(r, c->cell, c->step, c->metric);
        if (c->plot < 0)
            c->plot = mlk_rep_find_trend(r, c->cell, "iteration", c->metric);
    }
    return rc;
}

/* ---- one step's peak and latency across allocators x threads x mmap ---- */

#define MATRIX_MAX 64

typedef struct {
    char groups[MATRIX_MAX][128], series[MATRIX_MAX][128];
    int n_groups, n_series;
    double peak[MATRIX_MAX][MATRIX_MAX], ms[MATRIX_MAX][MATRIX_MAX];
} matrix;

static int slot(char (*names)[128], int *n, const char *s)
{
    char name[128];
    mlk_rep_tsv_field(name, sizeof name, s);
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], name))
            return i;
    if (*n == MATRIX_MAX)
        return -1;
    memcpy(names[*n], name, sizeof name);
    return (*n)++;
}

/* series_keys: the axes that make the bars within a group, as an SQL list ('threads', 'mmap'); every other axis, with
 * the allocator, names the group. */
static int matrix_query(sqlite3 *db, const mlk_report *r, const char *step, const char *series_keys, matrix *m,
                        mlk_error *err)
{
    /* Group: the allocator and any axis not in the series; series: those axes. A missing axis collapses; bad axes
     * JSON puts the cell in its own group. */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT c.allocator || COALESCE(' ' || (SELECT group_concat(j.key || '=' || j.value, ' ') FROM "
             "json_each(CASE WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j WHERE j.key NOT IN ('allocator', "
             "%s)), ''), COALESCE((SELECT group_concat(j.key || '=' || j.value, ' ') FROM "
             "json_each(CASE WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j WHERE j.key IN (%s)), "
             "'all'), s.peak_kib / 1024.0, s.wall_ms_median FROM cells c JOIN step_stats s ON s.cell_id = c.id "
             "WHERE c.run_id = ? AND s.step = ? ORDER BY c.idx",
             series_keys, series_keys);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the matrix of step", step);
    sqlite3_bind_int64(st, 1, r->run_id);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *g = (const char *)sqlite3_column_text(st, 0), *s = (const char *)sqlite3_column_text(st, 1);
        int gi = slot(m->groups, &m->n_groups, g ? g : "-"), si = slot(m->series, &m->n_series, s ? s : "all");
        if (gi < 0 || si < 0)
            continue; /* more than MATRIX_MAX: the rest is in the html table */
        m->peak[gi][si] = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        m->ms[gi][si] = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? MLK_OK : db_fail(db, err, "reading the matrix of step", step);
}

static int write_matrix_table(const matrix *m, double (*v)[MATRIX_MAX], const char *dir, const char *base,
                              const char *suffix, mlk_error *err)
{
    char path[4096];
    FILE *f = NULL;
    int rc = open_data(dir, base, suffix, path, sizeof path, &f, err);
    if (rc)
        return rc;
    fputs("group", f);
    for (int s = 0; s < m->n_series; s++)
        fprintf(f, "\t%s", m->series[s]);
    fputc('\n', f);
    for (int g = 0; g < m->n_groups; g++) {
        fputs(m->groups[g], f);
        for (int s = 0; s < m->n_series; s++)
            put_val(f, v[g][s]);
        fputc('\n', f);
    }
    return mlk_rep_close(f, path, err);
}

static bool run_has_step(sqlite3 *db, int64_t run_id, const char *step)
{
    sqlite3_stmt *st = NULL;
    bool yes = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.run_id = ? "
                               "AND s.step = ? LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, step, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

static int distinct_engines(sqlite3 *db, int64_t run_id)
{
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(DISTINCT engine) FROM cells WHERE run_id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run_id);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return n;
}

/* One matrix plot: kind "matrix" has threads x mmap as bars; kind "engines" has the engines side by side. */
static int export_one_matrix(sqlite3 *db, mlk_report *r, const char *step, const char *kind, const char *series_keys,
                             const char *what, const char *dir, mlk_error *err)
{
    matrix *m = calloc(1, sizeof *m);
    if (!m)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    for (int g = 0; g < MATRIX_MAX; g++)
        for (int s = 0; s < MATRIX_MAX; s++)
            m->peak[g][s] = m->ms[g][s] = NAN;
    char sstep[64], base[96], title[256];
    safe_name(sstep, sizeof sstep, step);
    snprintf(base, sizeof base, "%s-%s", kind, sstep);
    int rc = matrix_query(db, r, step, series_keys, m, err);
    if (!rc && m->n_groups && !(rc = write_matrix_table(m, m->peak, dir, base, "-peak", err)) &&
        !(rc = write_matrix_table(m, m->ms, dir, base, "-latency", err))) {
        snprintf(title, sizeof title, "%s: step %s %s", r->scenario, step, what);
        int p = mlk_rep_add_plot(r, MLK_REP_MATRIX, base, title, -1, step, NULL, err);
        if (p < 0) {
            rc = p;
        } else {
            r->plots[p].a[0] = m->n_series;
            r->plots[p].a[1] = m->n_groups;
        }
    }
    free(m);
    return rc;
}

static int export_matrix(sqlite3 *db, mlk_report *r, const char *step, const char *dir, mlk_error *err)
{
    if (!step) /* infer is what a serving engine repeats; without it, the whole iteration */
        step = run_has_step(db, r->run_id, "infer") ? "infer" : "iteration";
    int rc = export_one_matrix(db, r, step, "matrix", "'threads', 'mmap'", "across allocators, threads and mmap",
                               dir, err);
    if (!rc && distinct_engines(db, r->run_id) > 1)
        rc = export_one_matrix(db, r, step, "engines", "'engine'", "engine by engine, side by side", dir, err);
    return rc;
}

int mlk_rep_export(sqlite3 *db, mlk_report *r, const char *dir, const char *matrix_step, mlk_error *err)
{
    int rc = MLK_OK;
    for (int i = 0; i < r->n_cells && !rc; i++)
        rc = export_memory(db, r, i, dir, err);
    if (!rc)
        rc = export_trends(db, r, dir, err);
    if (!rc)
        rc = export_matrix(db, r, matrix_step, dir, err);
    return rc;
}
