/* cmd_repetitions.c: the aggregates of --repetitions N (cmd_repetitions.h): one line per config and metric of the
 * whole iteration, over the runs that measured it. It must never treat a figure that was not measured as 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"
#include "cmd_repetitions.h"
#include "quantile.h"
#include "runs.h"

static const int shown[] = {MLK_M_PEAK, MLK_M_FINAL_RSS, MLK_M_FINAL_HEAP, MLK_M_GROWTH, MLK_M_WALL};
#define N_SHOWN ((int)(sizeof shown / sizeof *shown))

typedef struct {
    double mean, median, stddev, cv;
    int n;
} agg;

/* v[0..n) (sorted in place) -> the aggregates; stddev with n - 1, cv = stddev / |mean| (NaN for a mean of 0). */
static agg aggregate(double *v, int n)
{
    agg a = {NAN, NAN, NAN, NAN, n};
    if (!n)
        return a;
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    a.mean = s / n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - a.mean) * (v[i] - a.mean);
    a.stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
    a.cv = a.mean != 0 ? a.stddev / fabs(a.mean) : NAN;
    a.median = mlk_median(v, n);
    return a;
}

static void json_num(mlk_buf *b, double v)
{
    if (isfinite(v))
        mlk_buf_printf(b, "%.15g", v);
    else
        mlk_buf_printf(b, "null");
}

/* One config's line per metric: the figure of its "iteration" step in each run. */
static void one_config(const mlk_step_figures *const *rows, const int *n_rows, int n, const mlk_step_figures *f,
                       FILE *out, mlk_buf *json, int *k_json)
{
    double v[256];
    for (int mi = 0; mi < N_SHOWN; mi++) {
        int m = shown[mi], k = 0;
        for (int r = 0; r < n && k < 256; r++)
            for (int i = 0; i < n_rows[r]; i++)
                if (!strcmp(rows[r][i].config_key, f->config_key) && !strcmp(rows[r][i].step, "iteration") &&
                    !isnan(rows[r][i].v[m]))
                    v[k++] = rows[r][i].v[m];
        agg a = aggregate(v, k);
        const char *name = mlk_metric_name(m);
        char mean[40], med[40], sd[40], cv[24];
        mlk_fmt_metric_value(mean, sizeof mean, name, a.mean);
        mlk_fmt_metric_value(med, sizeof med, name, a.median);
        mlk_fmt_metric_value(sd, sizeof sd, name, a.stddev);
        snprintf(cv, sizeof cv, isnan(a.cv) ? "-" : "%.1f%%", 100 * a.cv);
        if (out && !mi)
            fprintf(out, "%s\n", f->label); /* whole: a cell's name is never cut */
        if (out)
            fprintf(out, "  %-18s %14s %14s %14s %8s %3d\n", name, mean, med, sd, cv, a.n);
        if (json) {
            mlk_buf_printf(json, "%s{\"cell\":", (*k_json)++ ? "," : "");
            mlk_buf_json(json, f->label);
            mlk_buf_printf(json, ",\"config_key\":");
            mlk_buf_json(json, f->config_key);
            mlk_buf_printf(json, ",\"metric\":\"%s\",\"n\":%d,\"mean\":", name, a.n);
            json_num(json, a.mean);
            mlk_buf_printf(json, ",\"median\":");
            json_num(json, a.median);
            mlk_buf_printf(json, ",\"stddev\":");
            json_num(json, a.stddev);
            mlk_buf_printf(json, ",\"cv\":");
            json_num(json, a.cv);
            mlk_buf_printf(json, "}");
        }
    }
}

int mlk_reps_report(db_store *db, const int64_t *run_ids, int n, FILE *out, mlk_buf *json, mlk_error *err)
{
    mlk_step_figures **rows = calloc((size_t)n + 1, sizeof *rows);
    int *n_rows = calloc((size_t)n + 1, sizeof *n_rows), rc = MLK_OK, k_json = 0;
    if (!rows || !n_rows)
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    for (int r = 0; r < n && !rc; r++)
        rc = mlk_runs_figures(db, run_ids[r], &rows[r], &n_rows[r], err);
    if (!rc && out) {
        fprintf(out, "\nrepetitions: %d runs (", n);
        for (int r = 0; r < n; r++)
            fprintf(out, "%s%lld", r ? ", " : "", (long long)run_ids[r]);
        fprintf(out, "), the whole iteration of each cell\n  %-18s %14s %14s %14s %8s %3s\n", "metric", "mean",
                "median", "stddev", "cv", "n");
    }
    if (!rc && json)
        mlk_buf_printf(json, ",\"repetitions\":[");
    for (int i = 0; !rc && n > 0 && i < n_rows[0]; i++) /* the configs, in the first run's order */
        if (!strcmp(rows[0][i].step, "iteration"))
            one_config((const mlk_step_figures *const *)rows, n_rows, n, &rows[0][i], out, json, &k_json);
    if (!rc && json)
        mlk_buf_printf(json, "]");
    for (int r = 0; rows && r < n; r++)
        free(rows[r]);
    free(rows);
    free(n_rows);
    return rc;
}
