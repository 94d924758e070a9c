/* cmd_compare.c: "memleak-run compare": one run against a baseline (a pinned run, or the rolling median of recent runs
 * of each config on a branch), per cell, step and metric; prints a table, stores findings, exits 1 on a regression.
 * It must never call a difference a regression unless it clears both floors (and, for latency, the U test). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h"
#include "commands.h"
#include "quantile.h"
#include "regress.h"
#include "runs.h"
#include "scenario.h"

#define MAX_WINDOW 50

typedef struct {
    const char *db_path, *run, *baseline, *branch, *baseline_engine;
    int window;
    bool all;
} compare_args;

typedef struct {
    db_store *db;
    const compare_args *a;
    const mlk_scenario *s;   /* the run's scenario: its thresholds */
    mlk_run_info run;
    int64_t pinned_run;      /* 0: rolling */
    int64_t comparison_id;
    int n_regressions, n_improvements, n_compared, n_no_baseline;
} compare_ctx;

static void usage(FILE *f)
{
    fprintf(f, "usage: memleak-run compare [--db PATH] [--run ID|latest] [--baseline ID|auto] [--branch B] [--window N]\n"
               "                           [--baseline-engine NAME] [--all]\n"
               "  Judges every cell and step of the run against a baseline: the run pinned for the branch (memleak-run\n"
               "  baseline pin), or else the median of the last N (--window, default 5) finished runs of the same config\n"
               "  on the branch (--branch, default the run's own). Memory (peak VmHWM, final VmRSS, RssAnon, heap bytes)\n"
               "  must move by more than the scenario's regression_rel and regression_abs_kib; growth per iteration by\n"
               "  more than regression_rel and leak_bytes_per_iter; latency by more than latency_rel and latency_abs_ms\n"
               "  with a Mann-Whitney p below latency_alpha. Every judged series (heap, anon, mapped, fds, threads,\n"
               "  mappings) is tracked too: one that leaks now and leaked in no baseline cell is a regression (series.NAME).\n"
               "  --baseline-engine NAME compares with that engine's cells of the same run.\n"
               "  Prints the findings (--all: every comparison), stores them in the db.\n"
               "  exit status: 1 a regression, 0 none (or no baseline yet), 2 usage error, 3 internal error\n");
}

static int parse(int argc, char **argv, compare_args *a)
{
    memset(a, 0, sizeof *a);
    a->db_path = "memleak.db";
    a->run = "latest";
    a->baseline = "auto";
    a->window = 5;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = !strcmp(k, "--db")                ? &a->db_path
                            : !strcmp(k, "--run")             ? &a->run
                            : !strcmp(k, "--baseline")        ? &a->baseline
                            : !strcmp(k, "--branch")          ? &a->branch
                            : !strcmp(k, "--baseline-engine") ? &a->baseline_engine
                                                              : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(k, "--all")) {
            a->all = true;
        } else if ((slot || !strcmp(k, "--window")) && v) {
            if (slot)
                *slot = v;
            else if ((a->window = atoi(v)) < 1 || a->window > MAX_WINDOW)
                return mlk_cmd_usage("compare", "--window must be 1 to 50");
            i++;
        } else {
            return mlk_cmd_usage("compare", slot ? "an option needs a value" : "unknown argument (see --help)");
        }
    }
    return 0;
}

/* Baseline cells of a config: the pinned run's cell, that of --baseline-engine in the same run, or the recent ones. */
static int baseline_cells(compare_ctx *x, const mlk_step_figures *f, int64_t *cells, int *n, mlk_error *err)
{
    *n = 0;
    if (x->a->baseline_engine)
        return db_engine_peer(x->db, x->run.id, f->cell_id, x->a->baseline_engine, cells, n, err);
    if (x->pinned_run)
        return db_cell_in_run(x->db, x->pinned_run, f->config_key, cells, n, err);
    int64_t runs[MAX_WINDOW];
    const char *branch = x->a->branch ? x->a->branch : (x->run.branch[0] ? x->run.branch : NULL);
    return mlk_runs_recent(x->db, f->config_key, branch, &x->run, x->a->window, runs, cells, n, err);
}

/* Store one finding and print it. */
static int finding_named(compare_ctx *x, const mlk_step_figures *f, const char *metric, const char *kind, double cur,
                         double base, double p, const char *why, mlk_error *err)
{
    double rel = base != 0 ? (cur - base) / fabs(base) : NAN;
    char detail[300];
    snprintf(detail, sizeof detail, "%s %s: %.6g -> %.6g (%+.1f%%)%s%s", f->step, metric, base, cur, 100 * rel,
             why ? ": " : "", why ? why : "");
    if (!strcmp(kind, "regression"))
        x->n_regressions++;
    else
        x->n_improvements++;
    printf("%-11s %-52.52s %-16s %-16s %14.6g %14.6g %+8.1f%%%s%s%s\n", kind, f->label, f->step, metric, base, cur,
           100 * rel, isnan(p) ? "" : " (U test)", why ? "  " : "", why ? why : "");
    return db_store_finding(x->db, x->comparison_id, f, metric, kind, cur, base, rel, cur - base, p, detail, err);
}

static int finding(compare_ctx *x, const mlk_step_figures *f, mlk_metric m, const char *kind, double cur, double base,
                   double p, mlk_error *err)
{
    return finding_named(x, f, mlk_metric_name(m), kind, cur, base, p, NULL, err);
}

/* The verdict of each judged series (issue 9): a series that leaks now and leaked in none of the baseline cells is
 * a regression, one that leaked in every baseline cell and no longer does an improvement; the figures are its late
 * slope per iteration now and the baseline cells' median. Judged once per cell, on its end-of-iteration row. */
static int judge_series(compare_ctx *x, const mlk_step_figures *f, const int64_t *cells, int n, mlk_error *err)
{
    db_series_row *cur = NULL;
    int nc = 0, rc = db_series_results_load(x->db, f->cell_id, &cur, &nc, err);
    db_series_row *base[MAX_WINDOW] = {NULL};
    int nb[MAX_WINDOW] = {0};
    for (int i = 0; !rc && i < n; i++)
        rc = db_series_results_load(x->db, cells[i], &base[i], &nb[i], err);
    for (int k = 0; !rc && k < nc; k++) {
        const db_series_row *c = &cur[k];
        int judged = 0, leaked = 0;
        double slopes[MAX_WINDOW];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < nb[i]; j++)
                if (!strcmp(base[i][j].series, c->series)) {
                    judged++;
                    leaked += !strcmp(base[i][j].verdict, "leak");
                    slopes[judged - 1] = isnan(base[i][j].late_slope) ? 0 : base[i][j].late_slope;
                }
        if (!judged)
            continue; /* a series the baseline did not judge (an older db, heap off) */
        bool leaks = !strcmp(c->verdict, "leak");
        double b = mlk_median(slopes, judged), now = isnan(c->late_slope) ? 0 : c->late_slope;
        char metric[40];
        snprintf(metric, sizeof metric, "series.%s", c->series);
        if (leaks && !leaked)
            rc = finding_named(x, f, metric, "regression", now, b, NAN, "leaks now, did not in the baseline", err);
        else if (!leaks && leaked == judged)
            rc = finding_named(x, f, metric, "improvement", now, b, NAN, "no longer leaks", err);
        else if (x->a->all)
            printf("%-11s %-52.52s %-16s %-16s %14.6g %14.6g  %s (baseline: %d of %d leaked)\n", "ok", f->label,
                   f->step, metric, b, now, c->verdict, leaked, judged);
    }
    free(cur);
    for (int i = 0; i < n; i++)
        free(base[i]);
    return rc;
}

/* Memory and growth: both floors. */
static const char *judge_level(const compare_ctx *x, mlk_metric m, double cur, double base)
{
    double floor_abs;
    if (m == MLK_M_GROWTH)
        floor_abs = (double)x->s->leak_bytes_per_iter;
    else if (m == MLK_M_FINAL_HEAP || m == MLK_M_REQ_HEAP || m == MLK_M_REQ_MAPPED) /* bytes */
        floor_abs = (double)x->s->regression_abs_kib * 1024.0;
    else
        floor_abs = (double)x->s->regression_abs_kib;
    double floor = fmax(x->s->regression_rel * fabs(base), floor_abs);
    if (cur - base > floor)
        return "regression";
    if (base - cur > floor)
        return "improvement";
    return NULL;
}

static int judge_latency(compare_ctx *x, const mlk_step_figures *f, const int64_t *cells, int n, mlk_error *err)
{
    double *cur = NULL, *base = NULL;
    int nc = 0, nb = 0, rc = mlk_runs_latency(x->db, f->cell_id, f->step, &cur, &nc, err);
    for (int i = 0; !rc && i < n; i++) {
        double *one = NULL;
        int k = 0;
        if ((rc = mlk_runs_latency(x->db, cells[i], f->step, &one, &k, err)))
            break;
        double *grown = realloc(base, sizeof *base * (size_t)(nb + k + 1));
        if (!grown) {
            free(one);
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
            break;
        }
        base = grown;
        memcpy(base + nb, one, sizeof *one * (size_t)k);
        nb += k;
        free(one);
    }
    double u, p;
    if (!rc && nc >= 3 && nb >= 3 && mlk_mann_whitney(cur, nc, base, nb, &u, &p) == 0) {
        double mc = mlk_median(cur, nc), mb = mlk_median(base, nb);
        double rel = mb > 0 ? (mc - mb) / mb : 0;
        if (p < x->s->latency_alpha && fabs(rel) > x->s->latency_rel && fabs(mc - mb) > x->s->latency_abs_ms)
            rc = finding(x, f, MLK_M_WALL, rel > 0 ? "regression" : "improvement", mc, mb, p, err);
        else if (x->a->all)
            printf("%-11s %-52.52s %-16s %-16s %14.6g %14.6g %+8.1f%% (p=%.2g)\n", "ok", f->label, f->step,
                   "wall_ms", mb, mc, 100 * rel, p);
    }
    free(cur);
    free(base);
    return rc;
}

static int compare_row(compare_ctx *x, const mlk_step_figures *f, mlk_error *err)
{
    int64_t cells[MAX_WINDOW];
    int n = 0, rc = baseline_cells(x, f, cells, &n, err);
    if (rc)
        return rc;
    if (!n) {
        x->n_no_baseline++;
        return MLK_OK;
    }
    x->n_compared++;
    for (int m = 0; m < MLK_M_COUNT && !rc; m++) {
        if (m == MLK_M_WALL || isnan(f->v[m]))
            continue;
        double vals[MAX_WINDOW];
        int k = 0;
        for (int i = 0; i < n; i++) {
            double v = mlk_runs_cell_figure(x->db, cells[i], f->step, (mlk_metric)m);
            if (!isnan(v))
                vals[k++] = v;
        }
        if (!k)
            continue;
        double base = mlk_median(vals, k);
        const char *kind = judge_level(x, (mlk_metric)m, f->v[m], base);
        if (kind)
            rc = finding(x, f, (mlk_metric)m, kind, f->v[m], base, NAN, err);
        else if (x->a->all)
            printf("%-11s %-52.52s %-16s %-16s %14.6g %14.6g\n", "ok", f->label, f->step,
                   mlk_metric_name((mlk_metric)m), base, f->v[m]);
    }
    if (!rc && !strcmp(f->step, "iteration"))
        rc = judge_series(x, f, cells, n, err);
    return rc ? rc : judge_latency(x, f, cells, n, err);
}

static int run_compare(compare_ctx *x, mlk_error *err)
{
    mlk_step_figures *rows = NULL;
    int n = 0, rc = mlk_runs_figures(x->db, x->run.id, &rows, &n, err);
    if (rc)
        return rc;
    char desc[256];
    if (x->a->baseline_engine)
        snprintf(desc, sizeof desc, "engine %s in the same run", x->a->baseline_engine);
    else if (x->pinned_run)
        snprintf(desc, sizeof desc, "run %lld (pinned)", (long long)x->pinned_run);
    else
        snprintf(desc, sizeof desc, "rolling median of up to %d runs on %s", x->a->window,
                 x->a->branch ? x->a->branch : x->run.branch[0] ? x->run.branch : "any branch");
    if ((rc = db_begin_comparison(x->db, x->run.id, desc, &x->comparison_id, err))) {
        free(rows);
        return rc;
    }
    printf("compare run %lld (%s, commit %.12s) against %s\n", (long long)x->run.id, x->run.scenario,
           x->run.commit[0] ? x->run.commit : "?", desc);
    printf("%-11s %-52s %-16s %-16s %14s %14s %9s\n", "finding", "cell", "step", "metric", "baseline", "current",
           "delta");
    for (int i = 0; i < n && !rc; i++)
        rc = compare_row(x, &rows[i], err);
    int rows_n = n;
    free(rows);
    if (rc)
        return rc;
    if (!x->n_compared)
        printf("no baseline yet: none of the run's %d cell steps has a finished run to compare with\n", rows_n);
    else
        printf("%d regression(s), %d improvement(s) over %d cell steps (%d without a baseline)\n", x->n_regressions,
               x->n_improvements, x->n_compared, x->n_no_baseline);
    return MLK_OK;
}

int mlk_cmd_compare(int argc, char **argv)
{
    compare_args a;
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc > 0 ? 0 : 2;
    mlk_error err = {0};
    compare_ctx x = {.a = &a};
    mlk_scenario *s = NULL;
    int code = 3;
    if ((rc = db_open_db(a.db_path, &x.db, &err)) || (rc = mlk_runs_find(x.db, a.run, &x.run, &err)) ||
        (rc = db_run_scenario(x.db, x.run.id, &s, &err)))
        goto out;
    x.s = s;
    if (a.baseline_engine) {
        bool has = false;
        char *names = NULL;
        if (!(rc = db_run_engines(x.db, x.run.id, a.baseline_engine, &has, &names, &err)) && !has)
            rc = mlk_fail(&err, MLK_E_USAGE, "--baseline-engine %s: run %lld has no cell of that engine (its engines: "
                          "%s)", a.baseline_engine, (long long)x.run.id, names && names[0] ? names : "none");
        free(names);
        if (rc)
            goto out;
    }
    if (strcmp(a.baseline, "auto")) {
        mlk_run_info b;
        if ((rc = mlk_runs_find(x.db, a.baseline, &b, &err)))
            goto out;
        x.pinned_run = b.id;
    } else if (!a.baseline_engine) {
        const char *branch = a.branch ? a.branch : x.run.branch;
        if ((rc = db_pinned_baseline(x.db, branch, x.run.id, &x.pinned_run, &err)))
            goto out;
    }
    if (!(rc = run_compare(&x, &err)))
        code = x.n_regressions ? 1 : 0;
out:
    if (rc) {
        fprintf(stderr, "memleak-run compare: %s\n", err.msg);
        code = rc == MLK_E_NOTFOUND || rc == MLK_E_USAGE || rc == MLK_E_PARSE ? 2 : 3;
    }
    mlk_scenario_free(s);
    db_close(x.db);
    return code;
}
