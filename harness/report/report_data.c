/* report_data.c: what a report shows about one run, taken from the store's structs (db_report_load): the run, its
 * cells and verdicts, the findings of its newest comparison and its configs' change points, each tied to the cell
 * it is about. It must never treat NULL as 0, and never touch the db but through db_report.h. */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "text.h"

static char *take(char **s)
{
    char *v = *s;
    *s = NULL;
    return v;
}

static int cell_index(const mlk_report *r, int64_t cell_id)
{
    for (int i = 0; i < r->n_cells; i++)
        if (r->cells[i].id == cell_id)
            return i;
    return -1;
}

static int cell_of_config(const mlk_report *r, const char *key)
{
    for (int i = 0; i < r->n_cells; i++)
        if (key && r->cells[i].config_key && !strcmp(r->cells[i].config_key, key))
            return i;
    return -1;
}

/* Cell d's figures into c, its strings moved; a cell without axes is named by its index. -1 out of memory. */
static int take_cell(mlk_rep_cell *c, db_report_cell *d)
{
    *c = (mlk_rep_cell){.id = d->id, .idx = d->idx, .signal = d->signal, .exit_code = d->exit_code,
                        .slope = d->slope, .late_slope = d->late_slope, .growth = d->growth, .seconds = d->seconds,
                        .memory_plot = -1, .signals_plot = -1};
    c->label = take(&d->label), c->axes_json = take(&d->axes_json), c->config_key = take(&d->config_key);
    c->allocator = take(&d->allocator), c->status = take(&d->status), c->metric = take(&d->metric);
    c->detail = take(&d->detail), c->error = take(&d->error);
    if (!c->label || !*c->label) {
        free(c->label);
        if (!(c->label = malloc(24)))
            return -1;
        snprintf(c->label, 24, "cell %d", c->idx);
    }
    return 0;
}

/* Everything of d into r (allocated as d's arrays), strings moved, findings and change points tied to cells. */
static int take_run(mlk_report *r, db_report_run *d, mlk_error *err)
{
    r->run_id = d->id;
    r->uuid = take(&d->uuid), r->scenario = take(&d->scenario), r->commit = take(&d->commit);
    r->branch = take(&d->branch), r->host = take(&d->host), r->started_at = take(&d->started_at);
    r->finished_at = take(&d->finished_at), r->status = take(&d->status), r->baseline = take(&d->baseline);
    if ((d->n_cells && !(r->cells = calloc((size_t)d->n_cells, sizeof *r->cells))) ||
        (d->n_findings && !(r->findings = calloc((size_t)d->n_findings, sizeof *r->findings))) ||
        (d->n_cps && !(r->cps = calloc((size_t)d->n_cps, sizeof *r->cps))))
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    for (int i = 0; i < d->n_cells; i++)
        if (take_cell(&r->cells[r->n_cells++], &d->cells[i]))
            return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    for (int i = 0; i < d->n_findings; i++) {
        db_report_finding *s = &d->findings[i];
        r->findings[r->n_findings++] = (mlk_rep_finding){
            .cell = cell_index(r, s->cell_id), .step = take(&s->step), .metric = take(&s->metric),
            .kind = take(&s->kind), .detail = take(&s->detail), .current = s->current, .baseline = s->baseline,
            .delta_rel = s->delta_rel, .delta_abs = s->delta_abs, .p_value = s->p_value, .plot = -1};
    }
    for (int i = 0; i < d->n_cps; i++) {
        db_report_cp *s = &d->cps[i];
        mlk_rep_cp *c = &r->cps[r->n_cps++];
        *c = (mlk_rep_cp){.cell = cell_of_config(r, s->config_key), .step = take(&s->step),
                          .metric = take(&s->metric), .run_uuid = take(&s->run_uuid),
                          .commit_sha = take(&s->commit_sha), .before = s->before, .after = s->after, .t = s->t,
                          .plot = -1};
        c->this_run = c->run_uuid && r->uuid && !strcmp(c->run_uuid, r->uuid);
    }
    return MLK_OK;
}

int mlk_rep_load(db_store *db, int64_t run_id, mlk_report **out, mlk_error *err)
{
    db_report_run *d = NULL;
    mlk_report *r = NULL;
    int rc = db_report_load(db, run_id, &d, err);
    if (rc)
        return rc;
    if (!(r = calloc(1, sizeof *r)))
        rc = mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    else
        rc = take_run(r, d, err);
    db_report_free(d);
    for (int i = 0; r && i < r->n_cells && !rc; i++) { /* tool cells' findings (issue 6), every series' verdict */
        if (!mlk_rep_cell_ran(&r->cells[i]))
            continue;
        rc = mlk_tool_html_cell(db, r->cells[i].id, &r->cells[i].tool_html, err);
        if (!rc)
            rc = db_series_results_load(db, r->cells[i].id, &r->cells[i].series, &r->cells[i].n_series, err);
    }
    for (int i = 0; r && i < r->n_cells && !rc; i++) /* where plain cells grew (issue 9) */
        rc = !mlk_rep_cell_ran(&r->cells[i]) ? MLK_OK : mlk_sites_html_cell(db, r->cells[i].id, &r->cells[i].sites_html,
                                                                            &r->cells[i].sites_brief, err);
    if (r && !rc)
        rc = mlk_rep_alerts_build(db, r, err);
    if (rc) {
        mlk_rep_free(r);
        return rc;
    }
    *out = r;
    return MLK_OK;
}

void mlk_rep_free(mlk_report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_cells; i++) {
        mlk_rep_cell *c = &r->cells[i];
        free(c->sites_html), free(c->sites_brief), free(c->expected);
        char *s[] = {c->label,  c->axes_json, c->config_key, c->allocator, c->status,
                     c->metric, c->detail,    c->error,      c->tool_html};
        for (size_t k = 0; k < sizeof s / sizeof *s; k++)
            free(s[k]);
        free(c->series);
    }
    for (int i = 0; i < r->n_findings; i++) {
        mlk_rep_finding *f = &r->findings[i];
        free(f->step), free(f->metric), free(f->kind), free(f->detail);
    }
    for (int i = 0; i < r->n_cps; i++) {
        mlk_rep_cp *c = &r->cps[i];
        free(c->step), free(c->metric), free(c->run_uuid), free(c->commit_sha);
    }
    for (int i = 0; i < r->n_plots; i++) {
        mlk_rep_plot *p = &r->plots[i];
        free(p->base), free(p->title), free(p->step), free(p->metric), free(p->ylabel);
    }
    char *s[] = {r->uuid, r->scenario, r->commit, r->branch, r->host, r->started_at, r->finished_at, r->status,
                 r->baseline, r->plot_error};
    for (size_t k = 0; k < sizeof s / sizeof *s; k++)
        free(s[k]);
    free(r->cells);
    free(r->findings);
    free(r->alert_findings);
    free(r->alerts);
    free(r->cps);
    free(r->plots);
    free(r);
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

int mlk_rep_add_plot(mlk_report *r, int kind, const char *base, const char *title, int cell, const char *step,
                     const char *metric, mlk_error *err)
{
    if (r->n_plots % 16 == 0) {
        mlk_rep_plot *p = realloc(r->plots, (size_t)(r->n_plots + 16) * sizeof *p);
        if (!p)
            return mlk_fail(err, MLK_E_NOMEM, "report: out of memory adding plot %s", base);
        r->plots = p;
    }
    mlk_rep_plot *p = &r->plots[r->n_plots];
    memset(p, 0, sizeof *p);
    bool oom = false;
    p->kind = kind;
    p->cell = cell;
    p->base = dup_or_null(base, &oom);
    char shown[1024]; /* gnuplot draws it into PNG and SVG: no control character, UTF-8 only (text.h) */
    p->title = dup_or_null(title ? mlk_text_safe(title, shown, sizeof shown, 0) : NULL, &oom);
    p->step = dup_or_null(step, &oom);
    p->metric = dup_or_null(metric, &oom);
    if (oom) {
        free(p->base), free(p->title), free(p->step), free(p->metric);
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory adding plot %s", base);
    }
    return r->n_plots++;
}

int mlk_rep_find_trend(const mlk_report *r, int cell, const char *step, const char *metric)
{
    if (cell < 0 || !step || !metric)
        return -1;
    const char *key = r->cells[cell].config_key;
    for (int i = 0; i < r->n_plots; i++) {
        const mlk_rep_plot *p = &r->plots[i];
        if (p->kind == MLK_REP_TREND && !strcmp(p->step, step) && !strcmp(p->metric, metric) &&
            !strcmp(r->cells[p->cell].config_key, key))
            return i;
    }
    return -1;
}
