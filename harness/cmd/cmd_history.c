/* cmd_history.c: "memleak-run history": a config's metric across runs, with its change points (windowed Welch t-test,
 * regress.h), each stored once at its first bad run. It must never report the same step change twice: change points
 * are keyed by (config, step, metric, first bad run) and only new ones are announced as new. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h"
#include "commands.h"
#include "db_history.h"
#include "regress.h"

typedef struct {
    const char *db_path, *config, *metric, *step;
    bool all, quiet;
} history_args;

static void usage(FILE *f)
{
    fprintf(f, "usage: memleak-run history --config KEY --metric M [--step S] [--db PATH]\n"
               "       memleak-run history --all [--quiet] [--db PATH]\n"
               "  Prints a config's metric over every finished run (oldest first) and its change points: a level that\n"
               "  changes and stays is reported once, at its first run, with that run's commit; a single odd night is not.\n"
               "  KEY may be any unique part of a config key (memleak-run's cells.config_key). Metrics: %s.\n"
               "  --step defaults to 'iteration' (the whole iteration). --all scans every config, step and metric and\n"
               "  prints the change points only (--quiet: only the new ones).\n",
            mlk_metric_names());
}

/* Defaults per metric: memory levels move little night to night; latency much more. */
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

/* Insert unless known; *is_new says which. */
static int store_cp(db_store *db, const char *key, const char *step, mlk_metric m, const mlk_series *s,
                    const mlk_change_point *cp, bool *is_new, mlk_error *err)
{
    db_change_point c = {.config_key = key, .step = step, .metric = mlk_metric_name(m), .run_uuid = s->uuid[cp->index],
                         .commit_sha = s->commit[cp->index], .before = cp->before, .after = cp->after, .t_stat = cp->t};
    return db_change_point_store(db, &c, is_new, err);
}

/* Detect and store the change points of one series; print them (and the series when verbose). */
static int one_series(db_store *db, const char *key, const char *step, mlk_metric m, bool verbose, bool quiet,
                      int *n_new, mlk_error *err)
{
    mlk_series s;
    int rc = mlk_runs_series(db, key, step, m, &s, err);
    if (rc)
        return rc;
    mlk_cp_opts o;
    cp_opts_for(m, &o);
    mlk_change_point cps[64];
    int n = s.n ? mlk_change_points(s.v, s.n, &o, cps, 64) : 0;
    bool *at = calloc((size_t)s.n + 1, sizeof *at); /* at[i]: run i starts a change point */
    if (!at) {
        mlk_series_free(&s);
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        at[cps[i].index] = true;
    if (verbose) {
        printf("%s\nstep %s, metric %s, %d runs\n%-5s %-14s %-24s %16s\n", key, step, mlk_metric_name(m), s.n, "#",
               "commit", "started", "value");
        for (int i = 0; i < s.n; i++)
            printf("%-5d %-14.12s %-24s %16.6g%s\n", i + 1, s.commit[i][0] ? s.commit[i] : "-", s.started[i], s.v[i],
                   at[i] ? "   <- change point" : "");
    }
    for (int i = 0; i < n && !rc; i++) {
        /* A level seen in fewer runs than the fore window may still be one bad night: show it, store nothing. */
        if (cps[i].index > s.n - o.fore_window) {
            if (!quiet)
                printf("provisional change point: %s %s at run %d (commit %.12s): %.6g -> %.6g, %d run(s) so far\n",
                       step, mlk_metric_name(m), cps[i].index + 1,
                       s.commit[cps[i].index][0] ? s.commit[cps[i].index] : "?", cps[i].before, cps[i].after,
                       s.n - cps[i].index);
            continue;
        }
        bool is_new = false;
        rc = store_cp(db, key, step, m, &s, &cps[i], &is_new, err);
        *n_new += is_new;
        if (!rc && (!quiet || is_new))
            printf("%s change point: %s %s at run %d (commit %.12s): %.6g -> %.6g (%+.1f%%, t=%.1f)%s%s\n",
                   is_new ? "new" : "known", step, mlk_metric_name(m), cps[i].index + 1,
                   s.commit[cps[i].index][0] ? s.commit[cps[i].index] : "?", cps[i].before, cps[i].after,
                   cps[i].before ? 100 * (cps[i].after - cps[i].before) / fabs(cps[i].before) : 0.0, cps[i].t,
                   verbose ? "" : "\n    config ", verbose ? "" : key);
    }
    free(at);
    mlk_series_free(&s);
    return rc;
}

/* An exact config key, or the one key that contains part. */
static int resolve_config(db_store *db, const char *part, char *key, size_t len, mlk_error *err)
{
    char first[2][DB_KEY_LEN];
    int n = 0, rc = db_configs_matching(db, part, first, 2, &n, err);
    if (rc)
        return rc;
    bool exact = n > 0 && !strcmp(first[0], part);
    if (!n)
        return mlk_fail(err, MLK_E_NOTFOUND, "no config matches '%s'", part);
    if (n > 1 && !exact)
        return mlk_fail(err, MLK_E_USAGE, "'%s' matches several configs, e.g. %s and %s", part, first[0], first[1]);
    snprintf(key, len, "%s", first[0]);
    return MLK_OK;
}

static int scan_all(db_store *db, bool quiet, int *n_new, mlk_error *err)
{
    db_config_step *v = NULL;
    int n = 0, rc = db_config_steps(db, &v, &n, err);
    for (int i = 0; i < n && !rc; i++)
        for (int m = 0; m < MLK_M_COUNT && !rc; m++)
            rc = one_series(db, v[i].config_key, v[i].step, (mlk_metric)m, false, quiet, n_new, err);
    free(v);
    return rc;
}

int mlk_cmd_history(int argc, char **argv)
{
    history_args a = {.db_path = "memleak.db", .step = "iteration"};
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = !strcmp(k, "--db")       ? &a.db_path
                            : !strcmp(k, "--config") ? &a.config
                            : !strcmp(k, "--metric") ? &a.metric
                            : !strcmp(k, "--step")   ? &a.step
                                                     : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(k, "--all") || !strcmp(k, "--quiet")) {
            *(k[2] == 'a' ? &a.all : &a.quiet) = true;
        } else if (slot && v) {
            *slot = v;
            i++;
        } else {
            usage(stderr);
            return 2;
        }
    }
    int m = a.metric ? mlk_metric_from_name(a.metric) : -1;
    if (!a.all && (!a.config || m < 0)) {
        if (a.metric && m < 0)
            fprintf(stderr, "memleak-run history: unknown metric '%s' (expected one of: %s)\n", a.metric,
                    mlk_metric_names());
        else
            usage(stderr);
        return 2;
    }
    mlk_error err = {0};
    db_store *db = NULL;
    int n_new = 0, rc = db_open_db(a.db_path, &db, &err);
    char key[1024];
    if (!rc && a.all)
        rc = scan_all(db, a.quiet, &n_new, &err);
    else if (!rc && !(rc = resolve_config(db, a.config, key, sizeof key, &err)))
        rc = one_series(db, key, a.step, (mlk_metric)m, true, false, &n_new, &err);
    db_close(db);
    if (rc) {
        fprintf(stderr, "memleak-run history: %s\n", err.msg);
        return rc == MLK_E_NOTFOUND || rc == MLK_E_USAGE || rc == MLK_E_PARSE ? 2 : 3;
    }
    if (a.all)
        printf("%d new change point(s)\n", n_new);
    return 0;
}
