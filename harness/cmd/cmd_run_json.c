/* cmd_run_json.c: a finished run as one JSON document (memleak-run --json FILE; db/run.schema.json): the run, each
 * cell's verdict, its judged series and its steps' figures, read back from the store. It must never write NaN (a
 * figure not measured is null) nor leave a partial file behind on failure. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run_json.h"
#include "db_report.h"
#include "runs.h"
#include "strbuf.h"

static void num(mlk_buf *b, double v)
{
    if (isfinite(v))
        mlk_buf_printf(b, "%.15g", v);
    else
        mlk_buf_printf(b, "null");
}

static void str(mlk_buf *b, const char *s)
{
    if (s)
        mlk_buf_json(b, s);
    else
        mlk_buf_printf(b, "null");
}

static void series_json(mlk_buf *b, const db_series_row *v, int n)
{
    mlk_buf_printf(b, "\"series\":[");
    for (int i = 0; i < n; i++) {
        mlk_buf_printf(b, "%s{\"series\":", i ? "," : "");
        str(b, v[i].series);
        mlk_buf_printf(b, ",\"unit\":");
        str(b, v[i].unit);
        mlk_buf_printf(b, ",\"verdict\":");
        str(b, v[i].verdict);
        mlk_buf_printf(b, ",\"late_slope_per_iter\":");
        num(b, v[i].late_slope);
        mlk_buf_printf(b, ",\"growth\":");
        num(b, v[i].growth);
        mlk_buf_printf(b, ",\"floor_per_iter\":");
        num(b, v[i].floor);
        mlk_buf_printf(b, ",\"detail\":");
        str(b, v[i].detail);
        mlk_buf_printf(b, "}");
    }
    mlk_buf_printf(b, "]");
}

/* The steps of cell id among the run's figures (rows sorted by cell). */
static void steps_json(mlk_buf *b, int64_t id, const mlk_step_figures *rows, int n)
{
    mlk_buf_printf(b, "\"steps\":[");
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (rows[i].cell_id != id)
            continue;
        mlk_buf_printf(b, "%s{\"step\":", k++ ? "," : "");
        str(b, rows[i].step);
        for (int m = 0; m < MLK_M_COUNT; m++) {
            mlk_buf_printf(b, ",\"%s\":", mlk_metric_name(m));
            num(b, rows[i].v[m]);
        }
        mlk_buf_printf(b, "}");
    }
    mlk_buf_printf(b, "]");
}

static int cell_json(db_store *db, mlk_buf *b, const db_report_cell *c, const mlk_step_figures *rows, int n,
                     mlk_error *err)
{
    db_series_row *sr = NULL;
    int ns = 0, rc = db_series_results_load(db, c->id, &sr, &ns, err);
    if (rc)
        return rc;
    mlk_buf_printf(b, "{\"index\":%d,\"cell\":", c->idx);
    str(b, c->label);
    mlk_buf_printf(b, ",\"config_key\":");
    str(b, c->config_key);
    mlk_buf_printf(b, ",\"allocator\":");
    str(b, c->allocator);
    mlk_buf_printf(b, ",\"status\":");
    str(b, c->status);
    mlk_buf_printf(b, ",\"metric\":");
    str(b, c->metric);
    mlk_buf_printf(b, ",\"slope_per_iter\":");
    num(b, c->slope);
    mlk_buf_printf(b, ",\"growth\":");
    num(b, c->growth);
    mlk_buf_printf(b, ",\"seconds\":");
    num(b, c->seconds);
    mlk_buf_printf(b, ",\"detail\":");
    str(b, c->detail);
    mlk_buf_printf(b, ",\"error\":");
    str(b, c->error);
    mlk_buf_printf(b, ",");
    series_json(b, sr, ns);
    mlk_buf_printf(b, ",");
    steps_json(b, c->id, rows, n);
    mlk_buf_printf(b, "}");
    free(sr);
    return MLK_OK;
}

int mlk_run_json_write(db_store *db, int64_t run_id, int exit_code, const char *extra, const char *path,
                       mlk_error *err)
{
    db_report_run *r = NULL;
    mlk_step_figures *rows = NULL;
    int n = 0, rc = db_report_load(db, run_id, &r, err);
    if (!rc)
        rc = mlk_runs_figures(db, run_id, &rows, &n, err);
    mlk_buf b = {0};
    if (!rc) {
        mlk_buf_printf(&b, "{\"schema\":\"memleak-run/1\",\"run\":{\"id\":%lld,\"uuid\":", (long long)r->id);
        str(&b, r->uuid);
        const char *keys[] = {"scenario", "commit", "branch", "host", "started_at", "finished_at", "status"};
        const char *vals[] = {r->scenario, r->commit, r->branch, r->host, r->started_at, r->finished_at, r->status};
        for (int i = 0; i < 7; i++) {
            mlk_buf_printf(&b, ",\"%s\":", keys[i]);
            str(&b, vals[i]);
        }
        mlk_buf_printf(&b, "},\"exit_code\":%d,\"cells\":[", exit_code);
        for (int i = 0; i < r->n_cells && !rc; i++) {
            if (i)
                mlk_buf_printf(&b, ",");
            rc = cell_json(db, &b, &r->cells[i], rows, n, err);
        }
        mlk_buf_printf(&b, "]%s}\n", extra ? extra : "");
    }
    if (!rc && b.failed)
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory writing %s", path);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f)
        rc = mlk_fail(err, MLK_E_IO, "cannot create %s: %s", path, strerror(errno));
    if (f) {
        fputs(b.s, f);
        int bad = ferror(f);
        if (fclose(f) || bad) {
            remove(path);
            rc = mlk_fail(err, MLK_E_IO, "cannot write %s", path);
        }
    }
    mlk_buf_free(&b);
    free(rows);
    db_report_free(r);
    return rc;
}
