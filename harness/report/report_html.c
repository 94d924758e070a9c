/* report_html.c: the report's index.html: the run, its regressions and change points, every cell's verdict with its
 * detail, and every plot (PNG inline, SVG and data linked). It must never reference the network (no URL, CDN or
 * web font: the page is read from CI artifacts offline), and escapes every string from the db. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "files.h"
#include "report.h"

static const char *style =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .5em;"
    "text-align:left;vertical-align:top}th{background:#f2f2f2}td.num{text-align:right;white-space:nowrap}"
    ".pass{color:#1a7f37}.plateau{color:#9a6700}.leak,.crashed,.timeout,.hung,.oom,.error{color:#c00;font-weight:bold}"
    ".pending,.running{color:#777}.regression{color:#c00}.improvement{color:#1a7f37}"
    ".note{background:#fff4ce;border:1px solid #e0c060;padding:.5em 1em}"
    "figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.9em}"
    "code{font-size:.9em}.detail{font-size:.9em;max-width:40em}";

static void text(FILE *f, const char *s)
{
    mlk_rep_xml(f, s ? s : "-");
}

static void metric_cell(FILE *f, const char *metric, double v)
{
    char buf[64];
    mlk_rep_fmt_metric(buf, sizeof buf, metric, v);
    fputs("<td class=\"num\">", f);
    text(f, buf);
    fputs("</td>", f);
}

/* A finding or change point's trend; step is theirs, and the plot may be the whole iteration's instead. */
static void plot_link(FILE *f, const mlk_report *r, int plot, const char *step)
{
    fputs("<td>", f);
    if (plot >= 0 && r->plots[plot].png)
        fprintf(f, "<a href=\"#plot-%d\">%s</a>", plot, strcmp(step, r->plots[plot].step) ? "iteration trend" : "trend");
    else
        fputs("-", f);
    fputs("</td>", f);
}

static void cell_link(FILE *f, const mlk_report *r, int cell)
{
    if (cell < 0) {
        fputs("(a cell of another run)", f);
        return;
    }
    fprintf(f, "<a href=\"#cell-%d\">", r->cells[cell].idx);
    text(f, r->cells[cell].label);
    fputs("</a>", f);
}

static void head(FILE *f, const mlk_report *r)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>memleak report: ", f);
    text(f, r->scenario);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>memleak report: ", style);
    text(f, r->scenario);
    fprintf(f, "</h1>\n<table>\n<tr><th>run</th><td>%lld <code>", (long long)r->run_id);
    text(f, r->uuid);
    const char *names[] = {"commit", "branch", "host", "started", "finished", "status"};
    const char *vals[] = {r->commit, r->branch, r->host, r->started_at, r->finished_at, r->status};
    fputs("</code></td></tr>\n", f);
    for (int i = 0; i < 6; i++) {
        fprintf(f, "<tr><th>%s</th><td>", names[i]);
        text(f, vals[i]);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (r->plot_error) {
        fputs("<p class=\"note\">Plots missing: ", f);
        text(f, r->plot_error);
        fputs("</p>\n", f);
    }
}

static void counts(FILE *f, const mlk_report *r)
{
    static const char *order[] = {"leak",    "inconclusive", "crashed", "timeout", "hung",   "oom",
                                  "error",   "plateau",      "pass",    "pending", "running"};
    fprintf(f, "<p>%d cell%s:", r->n_cells, r->n_cells == 1 ? "" : "s");
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        int n = 0;
        for (int i = 0; i < r->n_cells; i++)
            n += r->cells[i].status && !strcmp(r->cells[i].status, order[k]);
        if (n)
            fprintf(f, " <span class=\"%s\">%d %s</span>", order[k], n, order[k]);
    }
    fputs("</p>\n", f);
}

static void findings(FILE *f, const mlk_report *r)
{
    fputs("<h2 id=\"regressions\">Findings</h2>\n", f);
    if (!r->baseline) {
        fputs("<p>This run has not been compared with a baseline (<code>memleak-run compare</code>).</p>\n", f);
        return;
    }
    fputs("<p>Newest comparison, against ", f);
    text(f, r->baseline);
    fputs(".</p>\n", f);
    for (int pass = 0; pass < 2; pass++) {
        const char *kind = pass ? "improvement" : "regression";
        int n = 0;
        for (int i = 0; i < r->n_findings; i++) {
            const mlk_rep_finding *x = &r->findings[i];
            if (strcmp(x->kind, kind))
                continue;
            if (!n++)
                fprintf(f, "<table>\n<tr><th>%s</th><th>cell</th><th>step</th><th>metric</th><th>current</th>"
                           "<th>baseline</th><th>change</th><th>p</th><th>detail</th><th>plot</th></tr>\n",
                        kind);
            fprintf(f, "<tr><td class=\"%s\">%s</td><td>", kind, kind);
            cell_link(f, r, x->cell);
            fputs("</td><td>", f);
            text(f, x->step);
            fputs("</td><td>", f);
            text(f, mlk_metric_label(x->metric));
            fputs("</td>", f);
            metric_cell(f, x->metric, x->current);
            metric_cell(f, x->metric, x->baseline);
            if (isnan(x->delta_rel))
                fputs("<td class=\"num\">-</td>", f);
            else
                fprintf(f, "<td class=\"num\">%+.1f%%</td>", x->delta_rel * 100);
            if (isnan(x->p_value))
                fputs("<td class=\"num\">-</td><td class=\"detail\">", f);
            else
                fprintf(f, "<td class=\"num\">%.2g</td><td class=\"detail\">", x->p_value);
            text(f, x->detail);
            fputs("</td>", f);
            plot_link(f, r, x->plot, x->step);
            fputs("</tr>\n", f);
        }
        if (n)
            fputs("</table>\n", f);
        else if (!pass)
            fputs("<p class=\"pass\">No regression.</p>\n", f);
    }
}

static void change_points(FILE *f, const mlk_report *r)
{
    fputs("<h2 id=\"change-points\">Change points</h2>\n", f);
    if (!r->n_cps) {
        fputs("<p>None recorded for the configs of this run (<code>memleak-run history</code> finds them).</p>\n", f);
        return;
    }
    fputs("<table>\n<tr><th>cell</th><th>step</th><th>metric</th><th>first run of the new level</th><th>before</th>"
          "<th>after</th><th>t</th><th>plot</th></tr>\n", f);
    for (int i = 0; i < r->n_cps; i++) {
        const mlk_rep_cp *c = &r->cps[i];
        fputs("<tr><td>", f);
        cell_link(f, r, c->cell);
        fputs("</td><td>", f);
        text(f, c->step);
        fputs("</td><td>", f);
        text(f, mlk_metric_label(c->metric));
        fputs("</td><td><code>", f);
        text(f, c->commit_sha ? c->commit_sha : c->run_uuid);
        fputs(c->this_run ? "</code> <strong>(this run)</strong></td>" : "</code></td>", f);
        metric_cell(f, c->metric, c->before);
        metric_cell(f, c->metric, c->after);
        if (isnan(c->t))
            fputs("<td class=\"num\">-</td>", f);
        else
            fprintf(f, "<td class=\"num\">%.1f</td>", c->t);
        plot_link(f, r, c->plot, c->step);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* A plot: the PNG inline, the SVG and the data linked. Names are [A-Za-z0-9_-] only: no escaping needed. */
static void figure(FILE *f, const mlk_report *r, int i)
{
    const mlk_rep_plot *p = &r->plots[i];
    fprintf(f, "<figure id=\"plot-%d\">\n", i);
    if (p->png) {
        fprintf(f, "<img src=\"plots/%s.png\" alt=\"", p->base);
        text(f, p->title);
        fputs("\" loading=\"lazy\">\n", f);
    }
    fputs("<figcaption>", f);
    text(f, p->title);
    if (p->svg)
        fprintf(f, " &middot; <a href=\"plots/%s.svg\">SVG</a>", p->base);
    if (p->png)
        fprintf(f, " &middot; <a href=\"plots/%s.png\">PNG</a>", p->base);
    if (p->kind == MLK_REP_MATRIX)
        fprintf(f, " &middot; data: <a href=\"data/%s-peak.tsv\">peak</a>, <a href=\"data/%s-latency.tsv\">latency"
                   "</a>", p->base, p->base);
    else
        fprintf(f, " &middot; <a href=\"data/%s.tsv\">data</a>", p->base);
    if (!p->png)
        fputs(" (not rendered)", f);
    fputs("</figcaption>\n</figure>\n", f);
}

static void slope_cell(FILE *f, const mlk_rep_cell *c)
{
    char buf[64] = "-";
    if (!isnan(c->slope)) {
        mlk_fmt_bytes(buf, sizeof buf - 8, c->slope, true);
        strcat(buf, "/iter");
    }
    fputs("<td class=\"num\">", f);
    text(f, buf);
    fputs("</td>", f);
}

/* Every memory signal the cell was judged on: which leaks, which plateau, at what pace and against which floor. */
static void series_table(FILE *f, const mlk_rep_cell *c)
{
    if (!c->n_series)
        return;
    fputs("<table class=\"series\">\n<tr><th>signal</th><th>verdict</th><th>late slope/iter</th><th>growth</th>"
          "<th>floor/iter</th><th>why</th></tr>\n", f);
    for (int i = 0; i < c->n_series; i++) {
        const db_series_row *s = &c->series[i];
        bool bytes = !strcmp(s->unit, "bytes");
        char slope[32], growth[32], fl[32];
        if (bytes) {
            mlk_fmt_bytes(slope, sizeof slope, s->late_slope, true);
            mlk_fmt_bytes(growth, sizeof growth, s->growth, true);
            mlk_fmt_bytes(fl, sizeof fl, s->floor, false);
        } else {
            snprintf(slope, sizeof slope, isnan(s->late_slope) ? "-" : "%+.3g", s->late_slope);
            snprintf(growth, sizeof growth, isnan(s->growth) ? "-" : "%+.3g", s->growth);
            snprintf(fl, sizeof fl, isnan(s->floor) ? "-" : "%.3g", s->floor);
        }
        int k = mlk_series_from_name(s->series);
        fputs("<tr><td>", f);
        text(f, k >= 0 ? mlk_series_label(k) : s->series);
        fputs(" <small>(", f);
        text(f, s->series);
        fprintf(f, ")</small></td><td class=\"%s\">", !strcmp(s->verdict, "leak") ? "leak" : "");
        text(f, s->verdict);
        fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>", slope,
                growth, fl);
        text(f, s->detail);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void cells(FILE *f, const mlk_report *r)
{
    fputs("<h2 id=\"cells\">Cells</h2>\n<table>\n<tr><th>#</th><th>axes</th><th>allocator</th><th>verdict</th>"
          "<th>growth</th><th>detail</th></tr>\n", f);
    for (int i = 0; i < r->n_cells; i++) {
        const mlk_rep_cell *c = &r->cells[i];
        fprintf(f, "<tr><td class=\"num\"><a href=\"#cell-%d\">%d</a></td><td>", c->idx, c->idx);
        text(f, c->label);
        fputs("</td><td>", f);
        text(f, c->allocator);
        fputs("</td><td class=\"", f);
        text(f, c->status);
        fputs("\">", f);
        text(f, c->status);
        if (c->signal > 0)
            fprintf(f, " (signal %d)", c->signal);
        if (c->expected) {
            fputs(" (expected", f);
            if (*c->expected) {
                fputs(": ", f);
                text(f, c->expected);
            }
            fputs(")", f);
        }
        fputs("</td>", f);
        slope_cell(f, c);
        fputs("<td class=\"detail\">", f);
        text(f, c->detail);
        if (c->error) {
            fputs("<br>error: ", f);
            text(f, c->error);
        }
        if (c->tool_html) /* a tool cell's leaks and their stacks, next to its verdict (issue 6); escaped there */
            fprintf(f, "<br><a href=\"#cell-%d\">leaks and stacks</a>", c->idx);
        if (c->sites_brief && strcmp(c->status, "pass")) /* where it grew (issue 9); escaped there */
            fprintf(f, "%s<br><a href=\"#cell-%d\">growing sites and stacks</a>", c->sites_brief, c->idx);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    for (int i = 0; i < r->n_cells; i++) {
        const mlk_rep_cell *c = &r->cells[i];
        fprintf(f, "<h3 id=\"cell-%d\">cell %d: ", c->idx, c->idx);
        text(f, c->label);
        fputs(" &mdash; <span class=\"", f);
        text(f, c->status);
        fputs("\">", f);
        text(f, c->status);
        fputs("</span></h3>\n<p><code>", f);
        text(f, c->config_key);
        fputs("</code></p>\n", f);
        fputs(c->tool_html ? c->tool_html : "", f); /* built from db strings by tool_report.c, every one escaped */
        fputs(c->sites_html ? c->sites_html : "", f); /* where it grew (issue 9), escaped by sites_html.c */
        series_table(f, c);
        if (c->memory_plot >= 0)
            figure(f, r, c->memory_plot);
        else
            fputs("<p>No iteration was sampled.</p>\n", f);
        if (c->signals_plot >= 0)
            figure(f, r, c->signals_plot);
    }
}

static void plots_of_kind(FILE *f, const mlk_report *r, int kind, const char *heading, const char *id)
{
    int n = 0;
    for (int i = 0; i < r->n_plots; i++) {
        if (r->plots[i].kind != kind)
            continue;
        if (!n++)
            fprintf(f, "<h2 id=\"%s\">%s</h2>\n", id, heading);
        figure(f, r, i);
    }
}

int mlk_rep_write_html(const mlk_report *r, const char *path, mlk_error *err)
{
    FILE *f = NULL;
    if (mlk_create_file(path, "report file", &f, err))
        return mlk_fail_prefix(err, "report: ");
    head(f, r);
    counts(f, r);
    fputs("<p><a href=\"#alerts\">alerts</a> &middot; <a href=\"#regressions\">findings</a> &middot; "
          "<a href=\"#change-points\">change points</a> "
          "&middot; <a href=\"#cells\">cells</a> &middot; <a href=\"#matrix\">matrix</a> &middot; "
          "<a href=\"#trends\">trends</a> &middot; <a href=\"summary.md\">summary.md</a> &middot; "
          "<a href=\"junit.xml\">junit.xml</a></p>\n", f);
    mlk_rep_alerts_html(f, r);
    findings(f, r);
    change_points(f, r);
    cells(f, r);
    plots_of_kind(f, r, MLK_REP_MATRIX, "Matrix", "matrix");
    plots_of_kind(f, r, MLK_REP_TREND, "Trends across runs", "trends");
    fputs("</body>\n</html>\n", f);
    return mlk_rep_close(f, path, err);
}
