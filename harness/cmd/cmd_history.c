/* cmd_history.c: "memleak-run history": configs' figures across runs, their change points (windowed Welch t-test,
 * regress.h) kept only past the alert floors (alert.h), a step and its recovery told as one finding, and the findings
 * of one config at one commit collapsed into one alert summary. It must never report the same step change twice:
 * change points are stored keyed by (config, step, metric, first bad run) and only new ones are announced as new. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"
#include "cmd_alerts.h"
#include "cmd_util.h"
#include "commands.h"
#include "db_history.h"
#include "regress.h"
#include "text.h"

#define MAX_CONFIGS 256 /* configs one --config may name */
#define MAX_CPS 64

typedef struct {
    const char *db_path, *config, *metric, *step;
    bool all, quiet;
    mlk_alert_opts ao;
} history_args;

typedef struct {
    db_store *db;
    const history_args *a;
    mlk_alert_floors floors;
    FILE *out;          /* text, NULL under --format json */
    mlk_findings found;
    int n_new, n_series, n_cps;
} history_ctx;

static void usage(FILE *f)
{
    fprintf(f, "usage: memleak-run history [--config KEY] [--metric M] [--step S] [--db PATH] [--quiet]\n"
               "                           [--gate G] [--floor K=V,...] [--format text|json] [--json FILE]\n"
               "  Every finished run of a config, oldest first, and its alerts: a level that changes and stays (a\n"
               "  windowed t-test over runs; a single odd night is not one) and moves past the floors of its family\n"
               "  (memory max(5%%, 1 MiB), growth 1 KiB/iter, latency 10%%: the scenario's thresholds, --floor over them)\n"
               "  is a finding at its first run and commit; a later step back to the old level is its recovery, named in\n"
               "  the same finding. Findings of one config at one commit (every step and metric that moved) are one alert.\n"
               "  --config KEY: the configs whose key contains KEY (e.g. threads=1), each printed with its series of\n"
               "  --metric (default peak_kib; metrics: %s) at --step (default iteration); alerts cover every step and\n"
               "  metric of those configs. Without --config (or with --all): every config, alerts only.\n"
               "  --quiet: only change points not seen by an earlier history.\n" MLK_ALERT_OPTS_USAGE
               "  exit status: 0 (alerts are reported, compare gates), 2 usage error, 3 internal error\n",
            mlk_metric_names());
}

/* Change-point windows per metric: memory levels move little night to night; latency much more. */
static void cp_opts_for(mlk_metric m, mlk_cp_opts *o)
{
    if (m == MLK_M_WALL) {
        mlk_cp_opts_init_latency(o);
        return;
    }
    mlk_cp_opts_init(o);
    if (m == MLK_M_GROWTH)
        o->min_abs = 64; /* bytes per iteration: below that a slope is noise, not a level */
}

/* A figure without an exponent: integers whole, others with enough digits. */
static void raw_num(char *out, size_t len, double v)
{
    if ((v == floor(v) && fabs(v) < 1e18) || fabs(v) >= 1e10)
        snprintf(out, len, "%.0f", v);
    else if (fabs(v) >= 1e-4)
        snprintf(out, len, "%.10g", v); /* %g writes no exponent in [1e-4, 1e10) */
    else
        snprintf(out, len, "%.9f", v);
}

static void print_series(history_ctx *x, const char *key, const char *label, const char *step, mlk_metric m,
                         const mlk_series *s, const bool *at)
{
    const char *name = mlk_metric_name(m);
    mlk_cmd_text(x->out, label);
    fputs("\n  config ", x->out);
    mlk_cmd_text(x->out, key);
    fprintf(x->out, "\n  step %s, metric %s (%s), %d runs\n%-5s %-14s %-24s %14s %16s\n", step, name,
            mlk_metric_label(name), s->n, "#", "commit", "started", "value", "raw");
    for (int i = 0; i < s->n; i++) {
        char v[40], raw[40];
        mlk_fmt_metric_value(v, sizeof v, name, s->v[i]);
        raw_num(raw, sizeof raw, s->v[i]);
        mlk_fprintf_safe(x->out, "%-5d %-14.12s %-24s %14s %16s%s\n", i + 1, s->commit[i][0] ? s->commit[i] : "-",
                         s->started[i], v, raw, at[i] ? "   <- change point" : "");
    }
}

/* "commit abc123 (run 6)" for point i of s. */
static void where_of(const mlk_series *s, int i, char *out, size_t len)
{
    if (s->commit[i][0])
        snprintf(out, len, "commit %.12s (run %d of %d)", s->commit[i], i + 1, s->n);
    else
        snprintf(out, len, "run %.8s (run %d of %d)", s->uuid[i], i + 1, s->n);
}

/* The first run after change point cp from which two runs in a row are back at the level before it (within the
 * floor of that level, nearer it than the new one), or -1. Two, as the change-point test wants two runs of a new
 * level: one night back is not a recovery. The t-test alone misses a short excursion's way back (its before-window
 * mixes both levels), hence this look at the runs themselves. */
static int recovery(const history_ctx *x, const char *metric, const mlk_series *s, const mlk_change_point *cp)
{
    for (int j = cp->index + 1; j + 1 < s->n; j++) {
        bool back = true;
        for (int k = j; k <= j + 1 && back; k++) {
            double e;
            back = fabs(s->v[k] - cp->before) < fabs(s->v[k] - cp->after) &&
                   !mlk_alert_step(&x->floors, metric, cp->before, s->v[k], &e);
        }
        if (back)
            return j;
    }
    return -1;
}

/* Each change point past the floors as a finding; one whose level came back names its recovery, and a change point
 * at that recovery (the way back) is not a finding of its own. */
static int add_findings(history_ctx *x, const char *key, const char *label, const char *step, mlk_metric m,
                        const mlk_series *s, const mlk_change_point *cps, int *dirs, const double *effects, int n,
                        int fore, mlk_error *err)
{
    const char *name = mlk_metric_name(m);
    for (int i = 0; i < n; i++) {
        if (!dirs[i])
            continue;
        mlk_finding *f = mlk_findings_add(&x->found);
        if (!f)
            return mlk_fail(err, MLK_E_NOMEM, "out of memory");
        char where[160];
        where_of(s, cps[i].index, where, sizeof where);
        mlk_finding_set(f, key, label, where, step, name, dirs[i], cps[i].after, cps[i].before, effects[i]);
        int back = recovery(x, name, s, &cps[i]);
        if (back >= 0) {
            char at[160];
            where_of(s, back, at, sizeof at);
            snprintf(f->note, sizeof f->note, "recovered at %.140s", at);
            for (int j = i + 1; j < n; j++) /* the way back, found by the t-test too */
                if (dirs[j] == -dirs[i] && abs(cps[j].index - back) < fore)
                    dirs[j] = 0;
        } else if (cps[i].index > s->n - fore) {
            snprintf(f->note, sizeof f->note, "provisional: %d run(s) on the new level so far", s->n - cps[i].index);
        }
    }
    return MLK_OK;
}

/* Detect the change points of one series and keep those past the floors; print_only: print the series with them,
 * else store the lasting ones and collect the findings. */
static int one_series(history_ctx *x, const char *key, const char *label, const char *step, mlk_metric m,
                      bool print_only, mlk_error *err)
{
    mlk_series s;
    int rc = mlk_runs_series(x->db, key, step, m, &s, err);
    if (rc)
        return rc;
    mlk_cp_opts o;
    cp_opts_for(m, &o);
    mlk_change_point cps[MAX_CPS];
    int dirs[MAX_CPS];
    double effects[MAX_CPS];
    int n = s.n ? mlk_change_points(s.v, s.n, &o, cps, MAX_CPS) : 0;
    bool *at = calloc((size_t)s.n + 1, sizeof *at); /* at[i]: run i starts a change point past the floors */
    if (!at) {
        mlk_series_free(&s);
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    x->n_series += !print_only;
    for (int i = 0; i < n; i++) {
        dirs[i] = mlk_alert_step(&x->floors, mlk_metric_name(m), cps[i].before, cps[i].after, &effects[i]);
        at[cps[i].index] = dirs[i] != 0;
    }
    if (print_only && x->out)
        print_series(x, key, label, step, m, &s, at);
    for (int i = 0; i < n && !rc && !print_only; i++) {
        /* a level seen in fewer runs than the fore window may still be one bad night: stored once it lasts */
        if (!dirs[i] || cps[i].index > s.n - o.fore_window)
            continue;
        db_change_point c = {.config_key = key, .step = step, .metric = mlk_metric_name(m),
                             .run_uuid = s.uuid[cps[i].index], .commit_sha = s.commit[cps[i].index],
                             .before = cps[i].before, .after = cps[i].after, .t_stat = cps[i].t};
        bool is_new = false;
        rc = db_change_point_store(x->db, &c, &is_new, err);
        x->n_new += is_new;
        x->n_cps++;
        if (!is_new && x->a->quiet)
            dirs[i] = 0; /* --quiet: known ones are not news */
    }
    if (!rc && !print_only)
        rc = add_findings(x, key, label, step, m, &s, cps, dirs, effects, n, o.fore_window, err);
    free(at);
    mlk_series_free(&s);
    return rc;
}

/* Every step and metric of one config (steps from the db). */
static int scan_config(history_ctx *x, const char *key, const db_config_step *steps, int n_steps, mlk_error *err)
{
    char label[256];
    int rc = db_config_label(x->db, key, label, sizeof label, err);
    for (int i = 0; i < n_steps && !rc; i++)
        if (!strcmp(steps[i].config_key, key))
            for (int m = 0; m < MLK_M_COUNT && !rc; m++)
                rc = one_series(x, key, label, steps[i].step, (mlk_metric)m, false, err);
    return rc;
}

/* The configs to look at: those matching --config (each with its series printed), or all. */
static int scan(history_ctx *x, mlk_metric m, mlk_error *err)
{
    db_config_step *steps = NULL;
    int n_steps = 0, rc = db_config_steps(x->db, &steps, &n_steps, err);
    if (rc)
        return rc;
    if (!x->a->config) {
        for (int i = 0; i < n_steps && !rc; i++)
            if (!i || strcmp(steps[i].config_key, steps[i - 1].config_key))
                rc = scan_config(x, steps[i].config_key, steps, n_steps, err);
        free(steps);
        return rc;
    }
    char(*keys)[DB_KEY_LEN] = malloc(sizeof *keys * MAX_CONFIGS);
    int n = 0;
    if (!keys)
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    else if (!(rc = db_configs_matching(x->db, x->a->config, keys, MAX_CONFIGS, &n, err)) && !n)
        rc = mlk_fail(err, MLK_E_NOTFOUND, "no config matches '%s'", x->a->config);
    /* an exact key names one config; a part names every config that holds it */
    if (!rc && !strcmp(keys[0], x->a->config))
        n = 1;
    for (int i = 0; i < n && !rc; i++) {
        char label[256];
        if (!(rc = db_config_label(x->db, keys[i], label, sizeof label, err)))
            rc = one_series(x, keys[i], label, x->a->step, m, true, err);
        if (!rc && x->out)
            fputc('\n', x->out);
    }
    /* the alerts cover every step and metric of those configs */
    for (int i = 0; i < n && !rc; i++)
        rc = scan_config(x, keys[i], steps, n_steps, err);
    free(keys);
    free(steps);
    return rc;
}

static int parse(int argc, char **argv, history_args *a, mlk_metric *m)
{
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = !strcmp(k, "--db")       ? &a->db_path
                            : !strcmp(k, "--config") ? &a->config
                            : !strcmp(k, "--metric") ? &a->metric
                            : !strcmp(k, "--step")   ? &a->step
                                                     : NULL;
        int took = mlk_alert_opt("history", argc, argv, &i, &a->ao);
        if (took < 0)
            return -1;
        if (took)
            continue;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(k, "--all") || !strcmp(k, "--quiet")) {
            *(k[2] == 'a' ? &a->all : &a->quiet) = true;
        } else if (slot && v) {
            *slot = v;
            i++;
        } else {
            return mlk_cmd_usage("history", slot ? "an option needs a value" : "unknown argument (see --help)");
        }
    }
    int mi = mlk_metric_from_name(a->metric ? a->metric : "peak_kib");
    if (mi < 0) {
        fprintf(stderr, "memleak-run history: unknown metric '%s' (expected one of: %s)\n", a->metric,
                mlk_metric_names());
        return -1;
    }
    if (a->all)
        a->config = NULL;
    *m = (mlk_metric)mi;
    return 0;
}

static int emit_json(history_ctx *x, const mlk_alert *al, int na, mlk_error *err)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b, "{\"schema\":\"memleak-alerts/1\",\"command\":\"history\",\"config\":");
    if (x->a->config)
        mlk_buf_json(&b, x->a->config);
    else
        mlk_buf_printf(&b, "null");
    mlk_buf_printf(&b, ",");
    mlk_floors_json(&b, &x->floors, x->a->ao.gate);
    mlk_buf_printf(&b, ",\"series\":%d,\"change_points\":%d,\"new_change_points\":%d,\"exit_code\":0,", x->n_series,
                   x->n_cps, x->n_new);
    mlk_alerts_json(&b, al, na, x->found.v, x->a->ao.gate);
    mlk_buf_printf(&b, "}");
    int rc = mlk_alerts_json_emit(&x->a->ao, &b, err);
    mlk_buf_free(&b);
    return rc;
}

int mlk_cmd_history(int argc, char **argv)
{
    history_args a = {.db_path = "memleak.db", .step = "iteration"};
    mlk_metric m = MLK_M_PEAK;
    int rc = parse(argc, argv, &a, &m);
    if (rc)
        return rc > 0 ? 0 : 2;
    mlk_error err = {0};
    history_ctx x = {.a = &a, .out = a.ao.json ? NULL : stdout};
    /* history spans runs of many scenarios: the default thresholds, --floor over them */
    mlk_alert_floors_init(&x.floors, NULL);
    mlk_alert *al = NULL;
    int na = 0;
    if (!(rc = a.ao.floor_spec ? mlk_alert_floors_parse(&x.floors, a.ao.floor_spec, &err) : MLK_OK) &&
        !(rc = db_open_db(a.db_path, &x.db, &err)) && !(rc = scan(&x, m, &err)))
        rc = mlk_alerts_build(x.found.v, x.found.n, &al, &na, &err);
    if (!rc && x.out) {
        char floors[640];
        mlk_alert_floors_text(&x.floors, floors, sizeof floors);
        fprintf(x.out, "floors: %s\n", floors);
        mlk_alerts_print(x.out, al, na, x.found.v, a.ao.gate);
        fprintf(x.out, "%d alert(s) from %d finding(s) over %d series; %d lasting change point(s) past the floors, %d "
                       "new\n",
                na, x.found.n, x.n_series, x.n_cps, x.n_new);
    }
    if (!rc && (a.ao.json || a.ao.json_path))
        rc = emit_json(&x, al, na, &err);
    free(al);
    mlk_findings_free(&x.found);
    db_close(x.db);
    if (rc) {
        mlk_fprintf_safe(stderr, "memleak-run history: %s\n", err.msg);
        return rc == MLK_E_NOTFOUND || rc == MLK_E_USAGE || rc == MLK_E_PARSE ? 2 : 3;
    }
    return 0;
}
