/* report_text.c: the report's summary.md (short enough for a PR comment: alert summaries, then leaks and failures,
 * then one line of passing cells) and junit.xml (one testcase per cell, cells with alerts first; leaks, failures and
 * alerts that fail the gate fail).
 * It must never write a figure without its unit, nor XML that does not parse, whatever the db holds. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "files.h"
#include "report.h"

#define MD_MAX_ITEMS 15 /* per list; the rest is counted and left to index.html */

/* "+64.0 KiB/iter on heap_live_bytes" or the crash signal, for a failing cell. */
static void cell_numbers(char *out, size_t len, const mlk_rep_cell *c)
{
    char slope[48], growth[48];
    if (c->status && !strcmp(c->status, "crashed") && c->signal > 0) {
        snprintf(out, len, "signal %d (%s)", c->signal, strsignal(c->signal));
    } else if (!isnan(c->slope)) {
        mlk_fmt_bytes(slope, sizeof slope, c->slope, true);
        mlk_fmt_bytes(growth, sizeof growth, c->growth, true);
        snprintf(out, len, "slope %s/iter (%.0f B per iteration) on %s, grew %s", slope, c->slope,
                 c->metric ? c->metric : "?", growth);
    } else {
        snprintf(out, len, "%s", c->error ? c->error : c->detail ? c->detail : "no figures");
    }
}

/* A link never holds a space or parenthesis: plot names are [A-Za-z0-9_-], anchors fixed, the base escaped. */
static void md_link_target(FILE *f, const mlk_report *r, int plot, const char *anchor)
{
    for (const char *p = r->link_base ? r->link_base : ""; *p; p++) {
        if (*p == ' ' || *p == '(' || *p == ')' || (unsigned char)*p < 0x20)
            fprintf(f, "%%%02X", (unsigned char)*p);
        else
            fputc(*p, f);
    }
    if (plot >= 0 && r->plots[plot].png)
        fprintf(f, "plots/%s.png", r->plots[plot].base);
    else
        fprintf(f, "index.html#%s", anchor);
}

/* The cell's judged signals in one line: "heap leak +24 B/iter, anon pass, fds pass, ...". Only those that are not
 * pass unless all is set; "" when the cell has none. */
static void series_line(char *out, size_t len, const mlk_rep_cell *c, bool all)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < c->n_series && used < len; k++) {
        const db_series_row *s = &c->series[k];
        bool pass = !strcmp(s->verdict, "pass");
        if (pass && !all)
            continue;
        char v[48] = "";
        bool bytes = !strcmp(s->unit, "bytes");
        double x = !strcmp(s->verdict, "leak") ? s->late_slope : s->growth;
        if (!pass && !isnan(x)) {
            if (bytes)
                mlk_fmt_bytes(v, sizeof v, x, true);
            else
                snprintf(v, sizeof v, "%+.2f", x);
            if (!strcmp(s->verdict, "leak"))
                strncat(v, "/iter", sizeof v - strlen(v) - 1);
        }
        used += (size_t)snprintf(out + used, len - used, "%s%s %s%s%s", used ? ", " : "", s->series, s->verdict,
                                 v[0] ? " " : "", v);
    }
}

static void md_failures(FILE *f, const mlk_report *r)
{
    int n = 0, shown = 0;
    int expected = 0;
    for (int i = 0; i < r->n_cells; i++) {
        n += mlk_rep_cell_fails(&r->cells[i]);
        expected += r->cells[i].expected != NULL;
    }
    if (expected) { /* known, reported, never failing */
        fprintf(f, "Expected by the scenario (%d, not failing):", expected);
        for (int i = 0, k = 0; i < r->n_cells; i++) {
            const mlk_rep_cell *c = &r->cells[i];
            if (!c->expected)
                continue;
            fputs(k++ ? "; " : " ", f);
            mlk_rep_md(f, c->label);
            fputs(" ", f);
            mlk_rep_md(f, c->status);
            if (*c->expected) {
                fputs(" (", f);
                mlk_rep_md(f, c->expected);
                fputs(")", f);
            }
        }
        fputs("\n\n", f);
    }
    if (!n)
        return;
    fprintf(f, "**Leaks and failures (%d)**:\n", n);
    for (int i = 0; i < r->n_cells && shown < MD_MAX_ITEMS; i++) {
        const mlk_rep_cell *c = &r->cells[i];
        if (!mlk_rep_cell_fails(c))
            continue;
        char nums[512], anchor[32];
        cell_numbers(nums, sizeof nums, c);
        snprintf(anchor, sizeof anchor, "cell-%d", c->idx);
        fputs("- **", f);
        mlk_rep_md(f, c->status);
        fputs("** ", f);
        mlk_rep_md(f, c->label);
        fputs(": ", f);
        mlk_rep_md(f, nums);
        fputs(" ([plot](", f);
        md_link_target(f, r, c->memory_plot, anchor);
        fputs("))\n", f);
        char sig[512];
        series_line(sig, sizeof sig, c, false);
        if (sig[0]) { /* which signal is red, and by how much */
            fputs("  - signals: ", f);
            mlk_rep_md(f, sig);
            fputc('\n', f);
        }
        shown++;
    }
    if (n > shown)
        fprintf(f, "- ... and %d more in index.html\n", n - shown);
    fputc('\n', f);
}

int mlk_rep_write_summary(const mlk_report *r, const char *path, mlk_error *err)
{
    FILE *f = NULL;
    if (mlk_create_file(path, "report file", &f, err))
        return mlk_fail_prefix(err, "report: ");
    fputs("### memleak: ", f);
    mlk_rep_md(f, r->scenario);
    fprintf(f, ", run %lld", (long long)r->run_id);
    if (r->commit) {
        fputs(", commit ", f);
        mlk_rep_md(f, r->commit);
    }
    if (r->branch) {
        fputs(" on ", f);
        mlk_rep_md(f, r->branch);
    }
    fputs("\n\n", f);
    mlk_rep_alerts_md(f, r);
    md_failures(f, r);
    int pass = 0, plateau = 0, unfinished = 0;
    for (int i = 0; i < r->n_cells; i++) {
        const char *s = r->cells[i].status ? r->cells[i].status : "";
        pass += !strcmp(s, "pass") || !strcmp(s, "plateau");
        plateau += !strcmp(s, "plateau");
        unfinished += !strcmp(s, "pending") || !strcmp(s, "running");
    }
    fprintf(f, "%d of %d cells pass", pass, r->n_cells);
    if (plateau)
        fprintf(f, " (%d of them plateau)", plateau);
    if (unfinished)
        fprintf(f, ", %d unfinished", unfinished);
    fputs(". Full report: [index.html](", f);
    md_link_target(f, r, -1, "cells");
    fputs(")\n", f);
    if (r->plot_error) {
        fputs("\nPlots missing: ", f);
        mlk_rep_md(f, r->plot_error);
        fputc('\n', f);
    }
    return mlk_rep_close(f, path, err);
}

/* ---- junit.xml ---- */

typedef struct {
    char message[1024];
    const char *type;
} failure;

static void add_message(failure *fl, const char *type, const char *text)
{
    size_t n = strlen(fl->message);
    if (!fl->type)
        fl->type = type;
    snprintf(fl->message + n, sizeof fl->message - n, "%s%s: %s", n ? "; " : "", type, text);
}

/* The failure of cell i (its verdict, then its headline regression), empty when it passes. */
static failure cell_failure(const mlk_report *r, int i)
{
    failure fl = {{0}, NULL};
    const mlk_rep_cell *c = &r->cells[i];
    if (mlk_rep_cell_fails(c)) {
        char nums[512];
        cell_numbers(nums, sizeof nums, c);
        add_message(&fl, c->status, nums);
    }
    int a = mlk_rep_cell_alert(r, i);
    if (a >= 0 && mlk_rep_alert_fails(r, a)) {
        char what[800];
        mlk_alert_headline(what, sizeof what, &r->alerts[a], r->alert_findings);
        add_message(&fl, "regression", what);
    }
    return fl;
}

/* Every finding of cell i's alert, one per line (failing or not: the gate decides only where it goes). */
static void alert_lines(FILE *f, const mlk_report *r, int i)
{
    int a = mlk_rep_cell_alert(r, i);
    for (int k = a >= 0 ? r->alerts[a].first : 0; a >= 0 && k < r->alerts[a].first + r->alerts[a].n; k++) {
        char what[512];
        mlk_finding_text(what, sizeof what, &r->alert_findings[k]);
        fprintf(f, "\nregression (%s): ", mlk_family_name(mlk_metric_family(r->alert_findings[k].metric)));
        mlk_rep_xml(f, what);
    }
}

static void testcase(FILE *f, const mlk_report *r, int i)
{
    const mlk_rep_cell *c = &r->cells[i];
    fputs("    <testcase classname=\"", f);
    mlk_rep_xml(f, r->scenario);
    fputs("\" name=\"", f);
    mlk_rep_xml(f, c->label);
    fprintf(f, "\" time=\"%.3f\">\n", isnan(c->seconds) ? 0.0 : c->seconds);
    failure fl = cell_failure(r, i);
    const char *s = c->status ? c->status : "";
    if (fl.type) {
        fputs("      <failure type=\"", f);
        mlk_rep_xml(f, fl.type);
        fputs("\" message=\"", f);
        mlk_rep_xml(f, fl.message);
        fputs("\">", f);
        mlk_rep_xml(f, c->detail);
        if (c->error) {
            fputs("\nerror: ", f);
            mlk_rep_xml(f, c->error);
        }
        char sig[768];
        series_line(sig, sizeof sig, c, true);
        if (sig[0]) {
            fputs("\nsignals: ", f);
            mlk_rep_xml(f, sig);
        }
        alert_lines(f, r, i);
        fputs("</failure>\n", f);
    } else if (c->expected) {
        fputs("      <skipped message=\"expected ", f);
        mlk_rep_xml(f, s);
        if (*c->expected) {
            fputs(": ", f);
            mlk_rep_xml(f, c->expected);
        }
        fputs("\"/>\n", f);
    } else if (!strcmp(s, "pending") || !strcmp(s, "running")) {
        fprintf(f, "      <skipped message=\"not finished: %s (run interrupted?)\"/>\n", s);
    } else if (c->detail) {
        fputs("      <system-out>", f);
        mlk_rep_xml(f, s);
        fputs(": ", f);
        mlk_rep_xml(f, c->detail);
        char sig[768];
        series_line(sig, sizeof sig, c, true);
        if (sig[0]) {
            fputs("\nsignals: ", f);
            mlk_rep_xml(f, sig);
        }
        alert_lines(f, r, i);
        fputs("</system-out>\n", f);
    }
    fputs("    </testcase>\n", f);
}

int mlk_rep_write_junit(const mlk_report *r, const char *path, mlk_error *err)
{
    FILE *f = NULL;
    if (mlk_create_file(path, "report file", &f, err))
        return mlk_fail_prefix(err, "report: ");
    int failures = 0, skipped = 0;
    double seconds = 0;
    for (int i = 0; i < r->n_cells; i++) {
        failures += cell_failure(r, i).type != NULL;
        const char *s = r->cells[i].status ? r->cells[i].status : "";
        skipped += !strcmp(s, "pending") || !strcmp(s, "running") ||
                   (r->cells[i].expected && !cell_failure(r, i).type);
        seconds += isnan(r->cells[i].seconds) ? 0 : r->cells[i].seconds;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"memleak\" tests=\"%d\" "
               "failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n  <testsuite name=\"",
            r->n_cells, failures, skipped, seconds);
    mlk_rep_xml(f, r->scenario);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\" timestamp=\"", r->n_cells,
            failures, skipped, seconds);
    mlk_rep_xml(f, r->started_at);
    fputs("\" hostname=\"", f);
    mlk_rep_xml(f, r->host ? r->host : "");
    fputs("\">\n    <properties>\n", f);
    const char *names[] = {"run_uuid", "commit", "branch", "baseline"};
    const char *vals[] = {r->uuid, r->commit, r->branch, r->baseline};
    for (int i = 0; i < 4; i++) {
        if (!vals[i])
            continue;
        fprintf(f, "      <property name=\"%s\" value=\"", names[i]);
        mlk_rep_xml(f, vals[i]);
        fputs("\"/>\n", f);
    }
    fputs("    </properties>\n", f);
    /* the cells with alerts lead, in the alerts' rank, then the others in their order */
    for (int a = 0; a < r->n_alerts; a++) {
        const mlk_finding *lead = &r->alert_findings[r->alerts[a].first];
        int c = lead->ref >= 0 ? r->findings[lead->ref].cell : -1;
        if (c >= 0 && mlk_rep_cell_alert(r, c) == a)
            testcase(f, r, c);
    }
    for (int i = 0; i < r->n_cells; i++)
        if (mlk_rep_cell_alert(r, i) < 0)
            testcase(f, r, i);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return mlk_rep_close(f, path, err);
}
