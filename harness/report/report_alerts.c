/* report_alerts.c: the report's alert summaries (issue 22): the newest comparison's findings grouped per cell and
 * ranked as compare ranks them (alert.h), and the sections that lead summary.md and index.html, and which cells the
 * gate fails in junit.xml. It must never show a finding outside its alert, nor a figure without its unit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_compare.h"
#include "report.h"

#define MD_MAX_ALERTS 15 /* summary.md stays short enough for a PR comment; index.html lists all */
#define MD_MAX_LINES 6   /* findings shown under an alert in summary.md */

int mlk_rep_alerts_build(db_store *db, mlk_report *r, mlk_error *err)
{
    mlk_alert_floors floors;
    mlk_scenario *s = NULL;
    /* the run's own thresholds rank the findings as compare did; a run without a readable scenario uses defaults */
    if (db_run_scenario(db, r->run_id, &s, err))
        s = NULL;
    mlk_alert_floors_init(&floors, s);
    for (int i = 0; i < r->n_cells; i++) {
        const mlk_expect *ex = mlk_scenario_expected(s, r->cells[i].label, r->cells[i].status);
        if (ex && !(r->cells[i].expected = strdup(ex->reason ? ex->reason : ""))) {
            mlk_scenario_free(s);
            return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
        }
    }
    mlk_scenario_free(s);
    if (r->n_findings && !(r->alert_findings = calloc((size_t)r->n_findings, sizeof *r->alert_findings)))
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    char where[64];
    snprintf(where, sizeof where, "run %lld", (long long)r->run_id);
    for (int i = 0; i < r->n_findings; i++) {
        const mlk_rep_finding *x = &r->findings[i];
        const mlk_rep_cell *c = x->cell >= 0 ? &r->cells[x->cell] : NULL;
        int dir = !strcmp(x->kind, "regression") ? 1 : -1;
        mlk_finding *v = &r->alert_findings[r->n_alert_findings++];
        mlk_finding_set(v, c ? c->config_key : "(a cell of another run)", c ? c->label : "(a cell of another run)",
                        where, x->step, x->metric, dir, x->current, x->baseline,
                        mlk_alert_effect(&floors, x->metric, x->current, x->baseline));
        v->p = x->p_value;
        v->ref = i;
        v->expected = c && c->expected;
        const char *note = x->detail ? strstr(x->detail, "); ") : NULL; /* compare's detail: "... (+5.0%); note" */
        if (note)
            snprintf(v->note, sizeof v->note, "%s", note + 3);
        else if (!strncmp(x->metric, "series.", 7))
            snprintf(v->note, sizeof v->note, "%s", dir > 0 ? "leaks now" : "no longer leaks");
    }
    return mlk_alerts_build(r->alert_findings, r->n_alert_findings, &r->alerts, &r->n_alerts, err);
}

bool mlk_rep_alert_fails(const mlk_report *r, int a)
{
    return mlk_alert_fails(&r->alerts[a], r->alert_findings, (mlk_gate)r->gate);
}

int mlk_rep_cell_alert(const mlk_report *r, int cell)
{
    for (int a = 0; a < r->n_alerts; a++) {
        const mlk_finding *lead = &r->alert_findings[r->alerts[a].first];
        if (r->alerts[a].dir > 0 && lead->ref >= 0 && r->findings[lead->ref].cell == cell)
            return a;
    }
    return -1;
}

static int n_regressions(const mlk_report *r, int *failing)
{
    int n = 0;
    *failing = 0;
    for (int a = 0; a < r->n_alerts; a++)
        if (r->alerts[a].dir > 0) {
            n++;
            *failing += mlk_rep_alert_fails(r, a);
        }
    return n;
}

static const char *gate_name(int g)
{
    static const char *names[] = {"memory", "latency", "all", "none"};
    return g >= 0 && g < 4 ? names[g] : "?";
}

/* ---- summary.md ---- */

void mlk_rep_alerts_md(FILE *f, const mlk_report *r)
{
    if (!r->baseline) {
        fputs("Not compared with a baseline.\n\n", f);
        return;
    }
    int failing, n = n_regressions(r, &failing), shown = 0;
    if (!n) {
        fputs("**No alerts** against ", f);
        mlk_rep_md(f, r->baseline);
        fputs(".\n\n", f);
    } else {
        fprintf(f, "**Alerts: %d** (%d failing the %s gate) against ", n, failing, gate_name(r->gate));
        mlk_rep_md(f, r->baseline);
        fputs(":\n\n", f);
    }
    for (int a = 0; a < r->n_alerts && shown < MD_MAX_ALERTS; a++) {
        const mlk_alert *al = &r->alerts[a];
        if (al->dir <= 0)
            continue;
        const mlk_finding *lead = &r->alert_findings[al->first];
        fprintf(f, "%d. **%s %s**%s: ", ++shown, "REGRESSION", mlk_family_name(al->family),
                mlk_rep_alert_fails(r, a) ? " (fails the gate)" : "");
        mlk_rep_md(f, lead->cell);
        fputc('\n', f);
        for (int i = al->first; i < al->first + al->n && i < al->first + MD_MAX_LINES; i++) {
            char what[512];
            mlk_finding_text(what, sizeof what, &r->alert_findings[i]);
            fputs("   - ", f);
            mlk_rep_md(f, what);
            fputc('\n', f);
        }
        if (al->n > MD_MAX_LINES)
            fprintf(f, "   - ... and %d more in index.html\n", al->n - MD_MAX_LINES);
    }
    if (n > shown)
        fprintf(f, "\n... and %d more alerts in index.html\n", n - shown);
    int imp = r->n_alerts - n;
    if (imp)
        fprintf(f, "\n%d improvement%s (apart, never failing): see index.html\n", imp, imp == 1 ? "" : "s");
    fputc('\n', f);
}

/* ---- index.html ---- */

static void html_alert(FILE *f, const mlk_report *r, int a)
{
    const mlk_alert *al = &r->alerts[a];
    const mlk_finding *lead = &r->alert_findings[al->first];
    const char *kind = al->dir > 0 ? "regression" : "improvement";
    fprintf(f, "<li><span class=\"%s\">%s %s</span>%s: ", kind, al->dir > 0 ? "REGRESSION" : "improvement",
            mlk_family_name(al->family), al->dir > 0 && mlk_rep_alert_fails(r, a) ? " <b>(fails the gate)</b>" : "");
    int cell = lead->ref >= 0 ? r->findings[lead->ref].cell : -1;
    if (cell >= 0)
        fprintf(f, "<a href=\"#cell-%d\">", r->cells[cell].idx);
    mlk_rep_xml(f, lead->cell);
    fputs(cell >= 0 ? "</a>\n<ul>\n" : "\n<ul>\n", f);
    for (int i = al->first; i < al->first + al->n; i++) {
        char what[512];
        mlk_finding_text(what, sizeof what, &r->alert_findings[i]);
        fputs("<li>", f);
        mlk_rep_xml(f, what);
        int ref = r->alert_findings[i].ref, plot = ref >= 0 ? r->findings[ref].plot : -1;
        if (plot >= 0 && r->plots[plot].png)
            fprintf(f, " (<a href=\"#plot-%d\">trend</a>)", plot);
        fputs("</li>\n", f);
    }
    fputs("</ul></li>\n", f);
}

void mlk_rep_alerts_html(FILE *f, const mlk_report *r)
{
    fputs("<h2 id=\"alerts\">Alerts</h2>\n", f);
    if (!r->baseline) {
        fputs("<p>This run has not been compared with a baseline (<code>memleak-run compare</code>).</p>\n", f);
        return;
    }
    int failing, n = n_regressions(r, &failing);
    if (!n)
        fputs("<p class=\"pass\">No alerts.</p>\n", f);
    else
        fprintf(f, "<p>%d alert%s, %d failing the %s gate; one per cell, every step and figure that moved with it "
                   "inside, memory first, largest effect first.</p>\n<ol>\n",
                n, n == 1 ? "" : "s", failing, gate_name(r->gate));
    for (int a = 0; a < r->n_alerts; a++)
        if (r->alerts[a].dir > 0)
            html_alert(f, r, a);
    if (n)
        fputs("</ol>\n", f);
    if (r->n_alerts > n) {
        fputs("<h3>Improvements (apart, never failing)</h3>\n<ol>\n", f);
        for (int a = 0; a < r->n_alerts; a++)
            if (r->alerts[a].dir < 0)
                html_alert(f, r, a);
        fputs("</ol>\n", f);
    }
}
