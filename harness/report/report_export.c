/* report_export.c: turns the store's series (db_report.h) into the TSV files the gnuplot scripts read (memory per
 * cell, trend per config and metric, the allocator x threads x mmap matrix) and registers each plot. It must never
 * query the db itself, and writes "?" (gnuplot's missing value) for a figure that was not measured, never 0. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "report.h"
#include "series.h"

#define TREND_MAX_RUNS 50 /* more would not fit labelled on one x axis */
#define BAND_RUNS 5       /* the baseline band: rolling median of the previous 5 runs */
#define BAND_REL 0.05     /* ... plus and minus 5% */

/* Create dir/data/<base><suffix>.tsv; its path goes to path (size len). */
static int open_data(const char *dir, const char *base, const char *suffix, char *path, size_t len, FILE **out,
                     mlk_error *err)
{
    if (snprintf(path, len, "%s/data/%s%s.tsv", dir, base, suffix) >= (int)len)
        return mlk_fail(err, MLK_E_IO, "report: output path too long: %.200s...", path);
    if (mlk_create_file(path, "report file", out, err))
        return mlk_fail_prefix(err, "report: ");
    return MLK_OK;
}

static void put_val(FILE *f, double v)
{
    if (isnan(v))
        fputs("\t?", f);
    else
        fprintf(f, "\t%.6g", v);
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

static int export_memory(db_store *db, mlk_report *r, int ci, const char *dir, mlk_error *err)
{
    mlk_rep_cell *c = &r->cells[ci];
    char base[64], path[4096];
    snprintf(base, sizeof base, "memory-cell-%d", c->idx);
    db_report_iter *it = NULL;
    int n = 0, rc = db_report_memory(db, c->id, &it, &n, err);
    FILE *f = NULL;
    if (rc || n == 0 || (rc = open_data(dir, base, "", path, sizeof path, &f, err))) {
        free(it); /* n == 0: nothing sampled (failed before its first iteration): no file, no plot */
        return rc;
    }
    fputs("# iteration\tmeasured\trss_mib\thwm_mib\theap_mib\n", f);
    int n_measured = 0;
    double first_measured = NAN, last = NAN;
    bool heap = false;
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d\t%d", it[i].iteration, it[i].measured);
        put_val(f, it[i].rss_kib * (1.0 / 1024));
        put_val(f, it[i].hwm_kib * (1.0 / 1024));
        put_val(f, it[i].heap_bytes * (1.0 / (1024 * 1024)));
        fputc('\n', f);
        heap = heap || !isnan(it[i].heap_bytes);
        if (it[i].measured && !n_measured++)
            first_measured = it[i].iteration;
        last = it[i].iteration;
    }
    free(it);
    if ((rc = mlk_rep_close(f, path, err)) || n == 0) /* nothing sampled (failed before its first iteration) */
        return rc;
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

/* ---- every judged signal over iterations, one panel each (issue 9) ---- */

static int64_t or_unknown(double v) { return isnan(v) ? -1 : (int64_t)v; }

/* What the judge read per iteration (series.c's own definitions, from the iteration's sample as stored), in the plot's
 * units: byte series in MiB, descriptors, threads and mappings as counts. */
static void signal_values(const db_report_iter *it, double v[MLK_SERIES_COUNT])
{
    mlk_sample x;
    memset(&x, 0, sizeof x);
    x.m.have_heap = !isnan(it->heap_bytes);
    x.m.heap.live_bytes = or_unknown(it->heap_bytes);
    x.m.heap.n_mappings = or_unknown(it->mappings);
    x.m.heap.shim_bytes = or_unknown(it->shim_bytes);
    x.m.alloc_bytes = or_unknown(it->alloc_bytes);
    x.m.alloc_held = or_unknown(it->alloc_held);
    x.m.rss_anon_kib = or_unknown(it->anon_kib);
    x.m.vm_size_kib = or_unknown(it->vm_size_kib);
    x.m.fds = or_unknown(it->fds);
    x.m.threads = or_unknown(it->threads);
    for (int k = 0; k < MLK_SERIES_COUNT; k++)
        v[k] = mlk_series_value(k, &x) / (strcmp(mlk_series_unit(k), "bytes") ? 1.0 : 1048576.0);
}

static int export_signals(db_store *db, mlk_report *r, int ci, const char *dir, mlk_error *err)
{
    mlk_rep_cell *c = &r->cells[ci];
    if (!c->n_series) /* a cell judged before issue 9, or not judged at all */
        return MLK_OK;
    char base[64], path[4096];
    snprintf(base, sizeof base, "signals-cell-%d", c->idx);
    db_report_iter *it = NULL;
    int n = 0, rc = db_report_memory(db, c->id, &it, &n, err);
    FILE *f = NULL;
    if (rc || n == 0 || (rc = open_data(dir, base, "", path, sizeof path, &f, err))) {
        free(it);
        return rc;
    }
    fputs("# iteration\tmeasured\theap_mib\tanon_mib\tmapped_mib\tfds\tthreads\tmappings\n", f);
    double first_measured = NAN, lo[MLK_SERIES_COUNT], hi[MLK_SERIES_COUNT];
    for (int k = 0; k < MLK_SERIES_COUNT; k++)
        lo[k] = hi[k] = NAN;
    for (int i = 0; i < n; i++) {
        double v[MLK_SERIES_COUNT];
        signal_values(&it[i], v);
        fprintf(f, "%d\t%d", it[i].iteration, it[i].measured);
        for (int k = 0; k < MLK_SERIES_COUNT; k++) {
            put_val(f, v[k]);
            if (!isnan(v[k])) {
                lo[k] = isnan(lo[k]) || v[k] < lo[k] ? v[k] : lo[k];
                hi[k] = isnan(hi[k]) || v[k] > hi[k] ? v[k] : hi[k];
            }
        }
        fputc('\n', f);
        if (it[i].measured && isnan(first_measured))
            first_measured = it[i].iteration;
    }
    free(it);
    if ((rc = mlk_rep_close(f, path, err)) || n == 0)
        return rc;
    /* The verdict of every series, in the words the script reads: "heap=pass anon=leak ..." */
    char verdicts[256] = "";
    size_t used = 0;
    for (int k = 0; k < c->n_series && used < sizeof verdicts; k++)
        used += (size_t)snprintf(verdicts + used, sizeof verdicts - used, "%s%s=%s", used ? " " : "",
                                 c->series[k].series, c->series[k].verdict);
    /* Each panel's y range, "lo hi" six times ("nan nan": not measured, an empty panel): computed here because
     * gnuplot warns on a flat series and fails on an empty one. */
    char ranges[512] = "";
    used = 0;
    for (int k = 0; k < MLK_SERIES_COUNT && used < sizeof ranges; k++) {
        double pad = hi[k] > lo[k] ? (hi[k] - lo[k]) * 0.05 : k < 3 ? fmax(0.01, fabs(hi[k]) * 0.01) : 0.5;
        used += (size_t)snprintf(ranges + used, sizeof ranges - used, "%s%.9g %.9g", k ? " " : "", lo[k] - pad,
                                 hi[k] + pad);
    }
    char title[512];
    snprintf(title, sizeof title, "%s: every judged signal per iteration (%s)", c->label, c->status);
    int p = mlk_rep_add_plot(r, MLK_REP_SIGNALS, base, title, ci, ranges, verdicts, err);
    if (p < 0)
        return p;
    r->plots[p].a[0] = first_measured;
    c->signals_plot = p;
    return MLK_OK;
}

/* ---- one config's metric across runs ---- */

typedef struct {
    char label[24];  /* the x axis' label: the commit's first 8 characters, else the uuid's first 6 */
    db_report_point p;
} trend_point;

/* The y axis a metric's trend is drawn on, by the metric's unit (names.h): its figure divided by div. */
typedef struct {
    const char *unit, *axis;
    double div;
} plot_unit;

static const plot_unit plot_units[] = {
    {"kib", "MiB", 1024.0}, {"bytes", "MiB", 1048576.0}, {"ms", "ms", 1.0}, {"bytes/iter", "KiB", 1024.0}};

static const plot_unit *unit_of(int metric)
{
    const char *u = mlk_metric_unit(metric);
    for (size_t i = 0; u && i < sizeof plot_units / sizeof *plot_units; i++)
        if (!strcmp(plot_units[i].unit, u))
            return &plot_units[i];
    return NULL;
}

/* The config's values of step/metric in the runs up to the reported one, oldest first, into pts (n <= max),
 * in the plot's unit. */
static int trend_query(db_store *db, const mlk_report *r, int ci, const char *step, int metric, trend_point *pts,
                       int *n, mlk_error *err)
{
    db_report_point *v = calloc(TREND_MAX_RUNS, sizeof *v);
    if (!v)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    const plot_unit *u = unit_of(metric);
    int k = 0, rc = db_report_trend(db, r->run_id, r->cells[ci].config_key, step, metric, TREND_MAX_RUNS, v, &k, err);
    for (int i = 0; !rc && i < k; i++) {
        trend_point *p = &pts[i];
        p->p = v[i];
        p->p.v = v[i].v / u->div;
        const char *sha = v[i].commit;
        char label[16];
        snprintf(label, sizeof label, "%.*s", *sha ? 8 : 6, *sha ? sha : v[i].uuid);
        mlk_rep_tsv_field(p->label, sizeof p->label, label);
    }
    free(v);
    if (!rc)
        *n = k;
    return rc;
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
        if (!isnan(pts[j].p.v))
            w[k++] = pts[j].p.v;
    if (!k)
        return NAN;
    qsort(w, (size_t)k, sizeof *w, cmp_double);
    return k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
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
            if (!strcmp(pts[i].p.uuid, cp->run_uuid)) {
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
static int write_trend(mlk_report *r, int ci, const char *step, int metric, const trend_point *pts, int n,
                       const char *dir, mlk_error *err)
{
    const char *name = mlk_metric_name(metric);
    char sstep[64], base[160], path[4096], title[512];
    safe_name(sstep, sizeof sstep, step);
    snprintf(base, sizeof base, "trend-c%d-%s-%s", r->cells[ci].idx, sstep, name);
    FILE *f = NULL;
    int rc = open_data(dir, base, "", path, sizeof path, &f, err);
    if (rc)
        return rc;
    double lo = INFINITY, hi = -INFINITY;
    int n_flagged = 0, n_band = 0;
    fputs("# x\tcommit\tvalue\tband_lo\tband_hi\tbaseline\tregression\n", f);
    for (int i = 0; i < n; i++) {
        double med = band_median(pts, i), v = pts[i].p.v;
        fprintf(f, "%d\t%s", i, pts[i].label);
        put_val(f, v);
        put_val(f, med * (1 - BAND_REL));
        put_val(f, med * (1 + BAND_REL));
        put_val(f, med);
        put_val(f, pts[i].p.flagged ? v : NAN);
        fputc('\n', f);
        n_flagged += pts[i].p.flagged && !isnan(v);
        n_band += !isnan(med);
        double cand[] = {v, med * (1 - BAND_REL), med * (1 + BAND_REL)};
        for (int k = 0; k < 3; k++)
            if (!isnan(cand[k]))
                lo = fmin(lo, cand[k]), hi = fmax(hi, cand[k]);
    }
    int n_cp = write_change_points(f, r, ci, step, name, pts, n);
    if ((rc = mlk_rep_close(f, path, err)))
        return rc;
    if (!isfinite(lo))
        return MLK_OK; /* never measured (live heap without the shim): no plot */
    double pad = (hi - lo) * 0.1 + fmax(fabs(hi), 1e-9) * 0.02;
    snprintf(title, sizeof title, "%s: %s %s across runs", r->cells[ci].label, step, mlk_metric_label(name));
    int p = mlk_rep_add_plot(r, MLK_REP_TREND, base, title, ci, step, name, err);
    if (p < 0)
        return p;
    mlk_rep_plot *pl = &r->plots[p];
    pl->a[0] = n;
    pl->a[1] = lo - pad;
    pl->a[2] = hi + pad;
    pl->a[3] = n_cp;
    pl->a[4] = n_flagged;
    pl->a[5] = n_band;
    char ylabel[128];
    snprintf(ylabel, sizeof ylabel, "%s (%s)", mlk_metric_label(name), unit_of(metric)->axis);
    if (!(pl->ylabel = strdup(ylabel)))
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    return MLK_OK;
}

static int export_trend(db_store *db, mlk_report *r, int ci, const char *step, const char *metric,
                        const char *dir, mlk_error *err)
{
    int m = mlk_metric_from_name(metric);
    if (m < 0 || !unit_of(m) || mlk_rep_find_trend(r, ci, step, metric) >= 0)
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
static int export_trends(db_store *db, mlk_report *r, const char *dir, mlk_error *err)
{
    static const char *base_metrics[] = {"peak_kib", "final_rss_kib", "final_heap_bytes", "wall_ms"};
    int rc = MLK_OK;
    for (int ci = 0; ci < r->n_cells && !rc; ci++) {
        /* One set of trends per config, under its first cell that ran (one that did not adds no point of this run). */
        bool first = mlk_rep_cell_ran(&r->cells[ci]);
        for (int k = 0; first && k < ci; k++)
            first = !mlk_rep_cell_ran(&r->cells[k]) || strcmp(r->cells[k].config_key, r->cells[ci].config_key);
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

/* The run's cells at step into m: the allocator and every axis not among series_axes name the group, those axes
 * the series (the bars within a group). */
static int matrix_query(db_store *db, const mlk_report *r, const char *step, const char *const *series_axes,
                        int n_axes, matrix *m, mlk_error *err)
{
    db_report_bar *bars = NULL;
    int n = 0, rc = db_report_matrix(db, r->run_id, step, series_axes, n_axes, &bars, &n, err);
    for (int i = 0; !rc && i < n; i++) {
        const char *g = bars[i].group, *s = bars[i].series;
        int gi = slot(m->groups, &m->n_groups, g ? g : "-"), si = slot(m->series, &m->n_series, s ? s : "all");
        if (gi < 0 || si < 0)
            continue; /* more than MATRIX_MAX: the rest is in the html table */
        m->peak[gi][si] = bars[i].peak_kib / 1024.0;
        m->ms[gi][si] = bars[i].wall_ms;
    }
    db_report_bars_free(bars, n);
    return rc;
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

/* One matrix plot: kind "matrix" has threads x mmap as bars; kind "engines" has the engines side by side. */
static int export_one_matrix(db_store *db, mlk_report *r, const char *step, const char *kind,
                             const char *const *series_axes, int n_axes, const char *what, const char *dir,
                             mlk_error *err)
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
    int rc = matrix_query(db, r, step, series_axes, n_axes, m, err);
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

static int export_matrix(db_store *db, mlk_report *r, const char *step, const char *dir, mlk_error *err)
{
    static const char *const threads_mmap[] = {"threads", "mmap"}, *const engine[] = {"engine"};
    bool infer = false;
    int n_engines = 0, rc = MLK_OK;
    if (!step) /* infer is what a serving engine repeats; without it, the whole iteration */
        rc = db_report_run_has_step(db, r->run_id, "infer", &infer, err);
    if (!step)
        step = infer ? "infer" : "iteration";
    if (!rc)
        rc = export_one_matrix(db, r, step, "matrix", threads_mmap, 2, "across allocators, threads and mmap", dir,
                               err);
    if (!rc && !(rc = db_report_n_engines(db, r->run_id, &n_engines, err)) && n_engines > 1)
        rc = export_one_matrix(db, r, step, "engines", engine, 1, "engine by engine, side by side", dir, err);
    return rc;
}

int mlk_rep_export(db_store *db, mlk_report *r, const char *dir, const char *matrix_step, mlk_error *err)
{
    int rc = MLK_OK;
    for (int i = 0; i < r->n_cells && !rc; i++)
        if (mlk_rep_cell_ran(&r->cells[i]) && !(rc = export_memory(db, r, i, dir, err)))
            rc = export_signals(db, r, i, dir, err);
    if (!rc)
        rc = export_trends(db, r, dir, err);
    if (!rc)
        rc = export_matrix(db, r, matrix_step, dir, err);
    return rc;
}
