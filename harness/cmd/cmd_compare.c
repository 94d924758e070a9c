/* cmd_compare.c: "memleak-run compare": one run against a baseline (a pinned run, or the rolling median of recent runs
 * of each config on a branch), per cell, step and metric; stores the findings and prints them as alert summaries
 * (alert.h), one per cell; exits 1 when an alert fails the gate. It must never call a difference a finding unless it
 * clears its floors and the baseline runs' own spread (latency: across runs or repetitions, never iterations). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"
#include "cmd_alerts.h"
#include "cell_filter.h"
#include "cmd_util.h"
#include "commands.h"
#include "quantile.h"
#include "runs.h"
#include "scenario.h"
#include "text.h"

#define MAX_WINDOW 50

typedef struct {
    const char *db_path, *run, *baseline, *branch, *baseline_engine, *filter;
    int window;
    bool all;
    mlk_alert_opts ao;
} compare_args;

typedef struct {
    db_store *db;
    const compare_args *a;
    const mlk_scenario *s;   /* the run's scenario: its thresholds */
    mlk_alert_floors floors; /* its thresholds as floors, --floor over them */
    FILE *out;               /* the text (stdout), NULL under --format json */
    mlk_run_info run;
    int64_t pinned_run;      /* 0: rolling */
    int64_t comparison_id;
    bool repetitions;        /* latency samples are repetitions (imported benchmarks), not back-to-back iterations */
    char where[160];
    mlk_findings found;
    int n_compared, n_no_baseline;
} compare_ctx;

static void usage(FILE *f)
{
    fprintf(f, "usage: memleak-run compare [--db PATH] [--run ID|latest] [--baseline ID|auto] [--branch B] [--window N]\n"
               "                           [--baseline-engine NAME] [--all] [--gate G] [--floor K=V,...]\n"
               "                           [--filter K=V,...] [--format text|json] [--json FILE]\n"
               "  Judges every cell and step of the run against a baseline: the run pinned for the branch (memleak-run\n"
               "  baseline pin), or else the median of the last N (--window, default 5) finished runs of the same config\n"
               "  on the branch (--branch, default the run's own). A figure is a finding only past its floors and the\n"
               "  baseline runs' own spread (3 x 1.48 MAD): memory (peak VmHWM, final VmRSS, RssAnon, heap bytes, requested\n"
               "  peaks) by more than each metric's floors (peak 5%% and 1 MiB, final RSS 10%% and 4 MiB, requested mapped\n"
               "  peak 10%% and 16 MiB: see --floor); growth per iteration by more than leak_bytes_per_iter; latency (the\n"
               "  run's median) by more than latency_rel and latency_abs_ms against at least 3 baseline runs' medians,\n"
               "  its CPU time accounting for half the move (imported benchmarks: a U test over repetitions). A judged\n"
               "  series (heap, anon, mapped, fds, threads, mappings) that leaks now and leaked in no baseline cell is a\n"
               "  finding too (series.NAME) when its slope moved and, for bytes, it grew past its level's floor. The\n"
               "  scenario's budgets: are findings without a baseline; a verdict its expect: names never fails. Findings of one cell collapse into one alert summary, ranked by effect\n"
               "  size, memory before latency; improvements are listed apart. --all also prints every comparison.\n"
               "  --baseline-engine NAME compares with that engine's cells of the same run.\n"
               "  --filter K=V,... compares only the cells whose axes hold these values (as memleak-run --filter).\n"
               MLK_ALERT_OPTS_USAGE
               "  exit status: 1 an alert that fails the gate, 0 none (or no baseline yet), 2 usage error, 3 internal\n");
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
                            : !strcmp(k, "--filter")          ? &a->filter
                                                              : NULL;
        int took = mlk_alert_opt("compare", argc, argv, &i, &a->ao);
        if (took < 0)
            return -1;
        if (took)
            continue;
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

/* Collect one finding and store it with the comparison. */
static int finding_named(compare_ctx *x, const mlk_step_figures *f, const char *metric, int dir, double cur,
                         double base, double effect, double p, const char *why, mlk_error *err)
{
    mlk_finding *v = mlk_findings_add(&x->found);
    if (!v)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    mlk_finding_set(v, f->config_key, f->label, x->where, f->step, metric, dir, cur, base, effect);
    v->p = p;
    v->cell_id = f->cell_id;
    snprintf(v->note, sizeof v->note, "%s", why ? why : "");
    const mlk_expect *ex = mlk_scenario_expected(x->s, f->label, f->status);
    if (ex) { /* known: reported, never failing */
        v->expected = true;
        size_t k = strlen(v->note);
        snprintf(v->note + k, sizeof v->note - k, "%sexpected %s%s%.80s", k ? "; " : "", f->status,
                 ex->reason ? ": " : "", ex->reason ? ex->reason : "");
    }
    char detail[600];
    mlk_finding_text(detail, sizeof detail, v);
    return db_store_finding(x->db, x->comparison_id, f, metric, dir > 0 ? "regression" : "improvement", cur, base,
                            v->rel, cur - base, p, detail, err);
}

/* --all: a comparison that is no finding, one line. */
static void print_ok(compare_ctx *x, const mlk_step_figures *f, const char *metric, double base, double cur,
                     const char *extra)
{
    if (!x->out || !x->a->all)
        return;
    char b[40], c[40], r[24];
    mlk_fmt_metric_value(b, sizeof b, metric, base);
    mlk_fmt_metric_value(c, sizeof c, metric, cur);
    mlk_fmt_rel(r, sizeof r, cur, base);
    fputs("ok  ", x->out);
    mlk_cmd_text(x->out, f->label);
    fprintf(x->out, " | %s %s: %s -> %s (%s)%s\n", f->step, metric, b, c, r, extra ? extra : "");
}

/* The floor (bytes) of the level a byte series feeds: heap the live heap, anon RssAnon, mapped the requested mapped
 * peak; 0 for count series (descriptors, threads, mappings: any new one counts). */
static double series_level_floor(const compare_ctx *x, const char *series)
{
    if (!strcmp(series, "heap"))
        return x->floors.abs[MLK_M_FINAL_HEAP];
    if (!strcmp(series, "anon"))
        return x->floors.abs[MLK_M_FINAL_ANON] * 1024;
    if (!strcmp(series, "mapped"))
        return x->floors.abs[MLK_M_REQ_MAPPED];
    return 0;
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
        double spread = mlk_alert_spread(slopes, judged);
        double b = mlk_median(slopes, judged), now = isnan(c->late_slope) ? 0 : c->late_slope;
        /* a verdict that flips on a slope the baseline already had (a series judged near its floor, run to run) is
         * no finding: the slope itself must move by half the baseline's and leave its spread, and by the growth
         * floor for byte series (ref under jemalloc: mapped +60 KiB/iter passed, +80 KiB/iter leaked, clean runs) */
        double floor = fmax(fmax(spread, fabs(b) / 2), strcmp(c->unit, "bytes") ? 0 : x->floors.abs[MLK_M_GROWTH]);
        /* and what it grew by over the run must reach the floor of the level it feeds: the judge calls a slope of
         * tens of KiB/iter a leak on ref under jemalloc in identical runs (mapped grew 0.5 MiB, anon 74 KiB); a real
         * leak of that size is the growth figure's finding anyway */
        double total = isfinite(c->growth) ? c->growth : now * x->s->iterations;
        double level = series_level_floor(x, c->series);
        bool moved = fabs(now - b) > floor && (!leaks || level <= 0 || fabs(total) > level);
        char metric[40];
        snprintf(metric, sizeof metric, "series.%s", c->series);
        /* the judge's own floor decided the verdict: the effect is the slope over the growth floor, at least 1 */
        double effect = fmax(1, fabs(now - b) / fmax(x->floors.abs[MLK_M_GROWTH], 1));
        if (moved && leaks && !leaked)
            rc = finding_named(x, f, metric, 1, now, b, effect, NAN, "leaks now, did not in the baseline", err);
        else if (moved && !leaks && leaked == judged)
            rc = finding_named(x, f, metric, -1, now, b, effect, NAN, "no longer leaks", err);
        else if (x->out && x->a->all) {
            char extra[96];
            snprintf(extra, sizeof extra, " %s (baseline: %d of %d leaked)", c->verdict, leaked, judged);
            print_ok(x, f, metric, b, now, extra);
        }
    }
    free(cur);
    for (int i = 0; i < n; i++)
        free(base[i]);
    return rc;
}

/* Latency over repetitions (imported benchmarks): every baseline cell's samples pooled, the U test decides too. */
static int latency_reps(compare_ctx *x, const mlk_step_figures *f, const int64_t *cells, int n, mlk_error *err)
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
    double effect, p, mc, mb;
    int dir = rc ? 0 : mlk_alert_latency_reps(&x->floors, cur, nc, base, nb, &effect, &p, &mc, &mb);
    if (dir)
        rc = finding_named(x, f, "wall_ms", dir, mc, mb, effect, p, NULL, err);
    else if (!rc && !isnan(p)) {
        char extra[32];
        snprintf(extra, sizeof extra, " p=%.2g", p);
        print_ok(x, f, "wall_ms", mb, mc, extra);
    }
    free(cur);
    free(base);
    return rc;
}

/* Latency across runs: the run's median against each baseline run's median (one figure per run), and the same for
 * CPU time when every run measured it: a step that got slower but did no more work waited for the machine. */
static int judge_latency(compare_ctx *x, const mlk_step_figures *f, const int64_t *cells, int n, mlk_error *err)
{
    if (x->repetitions)
        return latency_reps(x, f, cells, n, err);
    double meds[MAX_WINDOW], cpus[MAX_WINDOW], effect, cpu_effect;
    int k = 0, kc = 0;
    for (int i = 0; i < n; i++) {
        double v = mlk_runs_cell_figure(x->db, cells[i], f->step, MLK_M_WALL);
        double c = mlk_runs_cell_cpu_ms(x->db, cells[i], f->step);
        if (!isnan(v))
            meds[k++] = v;
        if (!isnan(c))
            cpus[kc++] = c;
    }
    double cur = f->v[MLK_M_WALL], cur_cpu = mlk_runs_cell_cpu_ms(x->db, f->cell_id, f->step);
    if (!k || isnan(cur))
        return MLK_OK;
    int dir = mlk_alert_latency_runs(&x->floors, cur, meds, k, &effect);
    double base = mlk_median(meds, k);
    char extra[96] = "";
    if (dir && !isnan(cur_cpu) && kc == k) {
        int cdir = mlk_alert_latency_runs(&x->floors, cur_cpu, cpus, kc, &cpu_effect);
        double cpu_base = mlk_median(cpus, kc);
        /* the work must account for at least half of the time: one thread busy for all of it moves both alike */
        if (cdir != dir || fabs(cur_cpu - cpu_base) < 0.5 * fabs(cur - base)) {
            snprintf(extra, sizeof extra, " (CPU time %.3g -> %.3g ms did not move with it: load, not work)",
                     cpu_base, cur_cpu);
            dir = 0;
        }
    }
    if (dir)
        return finding_named(x, f, "wall_ms", dir, cur, base, effect, NAN, "CPU time moved with it", err);
    if (k < x->floors.latency_min_runs)
        snprintf(extra, sizeof extra, " (%d baseline run(s): too few to judge latency)", k);
    print_ok(x, f, "wall_ms", base, cur, extra);
    return MLK_OK;
}

/* The scenario's budgets: absolute, no baseline needed. */
static int judge_budgets(compare_ctx *x, const mlk_step_figures *f, mlk_error *err)
{
    mlk_finding over[16];
    int n = mlk_budget_findings(x->s, f, x->where, over, 16), rc = MLK_OK;
    for (int i = 0; i < n && !rc; i++)
        rc = finding_named(x, f, over[i].metric, 1, over[i].cur, over[i].base, over[i].effect, NAN, over[i].note,
                           err);
    return rc;
}

static int compare_row(compare_ctx *x, const mlk_step_figures *f, mlk_error *err)
{
    int64_t cells[MAX_WINDOW];
    int n = 0, rc = judge_budgets(x, f, err);
    if (!rc)
        rc = baseline_cells(x, f, cells, &n, err);
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
        double vals[MAX_WINDOW], effect;
        int k = 0;
        for (int i = 0; i < n; i++) {
            double v = mlk_runs_cell_figure(x->db, cells[i], f->step, (mlk_metric)m);
            if (!isnan(v))
                vals[k++] = v;
        }
        if (!k)
            continue;
        const char *name = mlk_metric_name(m);
        double base;
        int dir = mlk_alert_level_runs(&x->floors, name, f->v[m], vals, k, &base, &effect);
        if (dir)
            rc = finding_named(x, f, name, dir, f->v[m], base, effect, NAN, NULL, err);
        else
            print_ok(x, f, name, base, f->v[m], NULL);
    }
    if (!rc && !strcmp(f->step, "iteration"))
        rc = judge_series(x, f, cells, n, err);
    return rc ? rc : judge_latency(x, f, cells, n, err);
}

static void describe_baseline(const compare_ctx *x, char *desc, size_t len)
{
    if (x->a->baseline_engine)
        snprintf(desc, len, "engine %s in the same run", x->a->baseline_engine);
    else if (x->pinned_run)
        snprintf(desc, len, "run %lld (pinned)", (long long)x->pinned_run);
    else
        snprintf(desc, len, "rolling median of up to %d runs on %s", x->a->window,
                 x->a->branch ? x->a->branch : x->run.branch[0] ? x->run.branch : "any branch");
}

/* The JSON document of the comparison (db/alerts.schema.json). */
static int emit_json(compare_ctx *x, const char *desc, const mlk_alert *al, int na, int failing, mlk_error *err)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b, "{\"schema\":\"memleak-alerts/1\",\"command\":\"compare\",\"run\":{\"id\":%lld,\"uuid\":",
                   (long long)x->run.id);
    mlk_buf_json(&b, x->run.uuid);
    mlk_buf_printf(&b, ",\"scenario\":");
    mlk_buf_json(&b, x->run.scenario);
    mlk_buf_printf(&b, ",\"commit\":");
    mlk_buf_json(&b, x->run.commit);
    mlk_buf_printf(&b, ",\"branch\":");
    mlk_buf_json(&b, x->run.branch);
    mlk_buf_printf(&b, "},\"baseline\":");
    mlk_buf_json(&b, desc);
    mlk_buf_printf(&b, ",");
    mlk_floors_json(&b, &x->floors, x->a->ao.gate);
    mlk_buf_printf(&b, ",\"cell_steps\":%d,\"without_baseline\":%d,\"failing\":%d,\"exit_code\":%d,",
                   x->n_compared, x->n_no_baseline, failing, failing ? 1 : 0);
    mlk_alerts_json(&b, al, na, x->found.v, x->a->ao.gate);
    mlk_buf_printf(&b, "}");
    int rc = mlk_alerts_json_emit(&x->a->ao, &b, err);
    mlk_buf_free(&b);
    return rc;
}

/* Compare every row, then the alerts; *failing how many fail the gate. */
static int run_compare(compare_ctx *x, int *failing, mlk_error *err)
{
    mlk_step_figures *rows = NULL;
    int n = 0, rc = mlk_runs_figures(x->db, x->run.id, &rows, &n, err);
    if (rc)
        return rc;
    char desc[256], floors[640];
    int selected = 0;
    for (int i = 0; i < n; i++)
        selected += !x->a->filter || mlk_filter_match(x->a->filter, rows[i].label);
    if (n && !selected) { /* before the comparison is stored: a typo stores nothing */
        rc = mlk_fail(err, MLK_E_USAGE, "--filter %s selects none of the run's cells (e.g. %s)", x->a->filter,
                      rows[0].label);
        free(rows);
        return rc;
    }
    describe_baseline(x, desc, sizeof desc);
    if ((rc = db_begin_comparison(x->db, x->run.id, desc, &x->comparison_id, err))) {
        free(rows);
        return rc;
    }
    snprintf(x->where, sizeof x->where, "run %lld", (long long)x->run.id);
    mlk_alert_floors_text(&x->floors, floors, sizeof floors);
    if (x->out) {
        fprintf(x->out, "compare run %lld (", (long long)x->run.id);
        mlk_cmd_text(x->out, x->run.scenario);
        mlk_fprintf_safe(x->out, ", commit %.12s) against ", x->run.commit[0] ? x->run.commit : "?");
        mlk_cmd_text(x->out, desc);
        fprintf(x->out, "\nfloors: %s\n", floors);
    }
    for (int i = 0; i < n && !rc; i++)
        if (!x->a->filter || mlk_filter_match(x->a->filter, rows[i].label))
            rc = compare_row(x, &rows[i], err);
    int rows_n = n;
    free(rows);
    mlk_alert *al = NULL;
    int na = 0;
    if (rc || (rc = mlk_alerts_build(x->found.v, x->found.n, &al, &na, err)))
        return rc;
    *failing = 0;
    for (int i = 0; i < na; i++)
        *failing += mlk_alert_fails(&al[i], x->found.v, x->a->ao.gate);
    if (x->out) {
        mlk_alerts_print(x->out, al, na, x->found.v, x->a->ao.gate);
        if (!x->n_compared)
            fprintf(x->out, "no baseline yet: none of the run's %d cell steps has a finished run to compare with\n",
                    rows_n);
        else
            fprintf(x->out, "%d alert(s) from %d finding(s) over %d cell steps (%d without a baseline)\n", na,
                    x->found.n, x->n_compared, x->n_no_baseline);
    }
    if (x->a->ao.json || x->a->ao.json_path)
        rc = emit_json(x, desc, al, na, *failing, err);
    free(al);
    return rc;
}

int mlk_cmd_compare(int argc, char **argv)
{
    compare_args a;
    mlk_error err = {0};
    int rc = parse(argc, argv, &a);
    if (!rc && (rc = mlk_filter_check(a.filter, "--filter", &err)))
        mlk_fprintf_safe(stderr, "memleak-run compare: %s\n", err.msg);
    if (rc)
        return rc > 0 ? 0 : 2;
    compare_ctx x = {.a = &a, .out = a.ao.json ? NULL : stdout};
    mlk_scenario *s = NULL;
    int code = 3, failing = 0;
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
    x.repetitions = s->engine && !strcmp(s->engine, "gbench");
    mlk_alert_floors_init(&x.floors, s);
    if (a.ao.floor_spec && (rc = mlk_alert_floors_parse(&x.floors, a.ao.floor_spec, &err)))
        goto out;
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
    if (!(rc = run_compare(&x, &failing, &err)))
        code = failing ? 1 : 0;
out:
    if (rc) {
        mlk_fprintf_safe(stderr, "memleak-run compare: %s\n", err.msg);
        code = rc == MLK_E_NOTFOUND || rc == MLK_E_USAGE || rc == MLK_E_PARSE ? 2 : 3;
    }
    mlk_findings_free(&x.found);
    mlk_scenario_free(s);
    db_close(x.db);
    return code;
}
