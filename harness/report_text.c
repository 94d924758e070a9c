/* report_text.c: the report's summary.md (short enough for a PR comment: regressions, then leaks and failures,
 * then one line of passing cells) and junit.xml (one testcase per cell; leaks, failures and regressions fail).
 * It must never write a figure without its unit, nor XML that does not parse, whatever the db holds. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define MD_MAX_ITEMS 15 /* per list; the rest is counted and left to index.html */

static void finding_text(char *out, size_t len, const mlk_rep_finding *x)
{
    char cur[48], base[48], delta[32] = "";
    mlk_rep_fmt_metric(cur, sizeof cur, x->metric, x->current);
    mlk_rep_fmt_metric(base, sizeof base, x->metric, x->baseline);
    if (!isnan(x->delta_rel))
        snprintf(delta, sizeof delta, " (%+.1f%%)", x->delta_rel * 100);
    snprintf(out, len, "%s %s: %s vs baseline %s%s", x->step, mlk_rep_metric_name(x->metric), cur, base, delta);
}

/* "+64.0 KiB/iter on heap_live_bytes" or the crash signal, for a failing cell. */
static void cell_numbers(char *out, size_t len, const mlk_rep_cell *c)
{
    char slope[48], growth[48];
    if (c->status && !strcmp(c->status, "crashed") && c->signal > 0) {
        snprintf(out, len, "signal %d (%s)", c->signal, strsignal(c->signal));
    } else if (!isnan(c->slope)) {
        mlk_rep_fmt_bytes(slope, sizeof slope, c->slope, true);
        mlk_rep_fmt_bytes(growth, sizeof growth, c->growth, true);
        snprintf(out, len, "slope %s/iter (%.0f B per iteration) on %s, grew %s", slope, c->slope,
                 c->metric ? c->metric : "?", growth);
    } else {
        snprintf(out, len, "%s", c->error ? c->error : c->detail ? c->detail : "no figures");
    }
}

static void md_link_target(FILE *f, const mlk_report *r, int plot, const char *anchor)
{
    if (plot >= 0 && r->plots[plot].png)
        fprintf(f, "plots/%s.png", r->plots[plot].base);
    else
        fprintf(f, "index.html#%s", anchor);
}

static void md_regressions(FILE *f, const mlk_report *r)
{
    int n = 0;
    for (int i = 0; i < r->n_findings; i++)
        n += !strcmp(r->findings[i].kind, "regression");
    if (!r->baseline) {
        fputs("Not compared with a baseline.\n\n", f);
        return;
    }
    if (!n) {
        fputs("No regressions against ", f);
        mlk_rep_md(f, r->baseline);
        fputs(".\n\n", f);
        return;
    }
    fprintf(f, "**Regressions (%d)** against ", n);
    mlk_rep_md(f, r->baseline);
    fputs(":\n", f);
    int shown = 0;
    for (int i = 0; i < r->n_findings && shown < MD_MAX_ITEMS; i++) {
        const mlk_rep_finding *x = &r->findings[i];
        if (strcmp(x->kind, "regression"))
            continue;
        char what[256], anchor[32];
        finding_text(what, sizeof what, x);
        snprintf(anchor, sizeof anchor, "regressions");
        fputs("- [", f);
        mlk_rep_md(f, x->cell >= 0 ? r->cells[x->cell].label : "(another run's cell)");
        fputs(": ", f);
        mlk_rep_md(f, what);
        fputs("](", f);
        md_link_target(f, r, x->plot, anchor);
        fputs(")\n", f);
        shown++;
    }
    if (n > shown)
        fprintf(f, "- ... and %d more in index.html\n", n - shown);
    fputc('\n', f);
}

static void md_failures(FILE *f, const mlk_report *r)
{
    int n = 0, shown = 0;
    for (int i = 0; i < r->n_cells; i++)
        n += mlk_rep_status_fails(r->cells[i].status);
    if (!n)
        return;
    fprintf(f, "**Leaks and failures (%d)**:\n", n);
    for (int i = 0; i < r->n_cells && shown < MD_MAX_ITEMS; i++) {
        const mlk_rep_cell *c = &r->cells[i];
        if (!mlk_rep_status_fails(c->status))
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
        shown++;
    }
    if (n > shown)
        fprintf(f, "- ... and %d more in index.html\n", n - shown);
    fputc('\n', f);
}

int mlk_rep_write_summary(const mlk_report *r, const char *path, mlk_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return mlk_fail(err, MLK_E_IO, "report: cannot create %s: %m", path);
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
    md_regressions(f, r);
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
    fputs(". Full report: [index.html](index.html)\n", f);
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

/* The failure of cell i (its verdict, then its regressions), empty when it passes. */
static failure cell_failure(const mlk_report *r, int i)
{
    failure fl = {{0}, NULL};
    const mlk_rep_cell *c = &r->cells[i];
    if (mlk_rep_status_fails(c->status)) {
        char nums[512];
        cell_numbers(nums, sizeof nums, c);
        add_message(&fl, c->status, nums);
    }
    for (int k = 0; k < r->n_findings; k++) {
        const mlk_rep_finding *x = &r->findings[k];
        if (x->cell != i || strcmp(x->kind, "regression"))
            continue;
        char what[256];
        finding_text(what, sizeof what, x);
        add_message(&fl, "regression", what);
    }
    return fl;
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
        for (int k = 0; k < r->n_findings; k++)
            if (r->findings[k].cell == i && !strcmp(r->findings[k].kind, "regression") && r->findings[k].detail) {
                fputs("\nregression: ", f);
                mlk_rep_xml(f, r->findings[k].detail);
            }
        fputs("</failure>\n", f);
    } else if (!strcmp(s, "pending") || !strcmp(s, "running")) {
        fprintf(f, "      <skipped message=\"not finished: %s (run interrupted?)\"/>\n", s);
    } else if (c->detail) {
        fputs("      <system-out>", f);
        mlk_rep_xml(f, s);
        fputs(": ", f);
        mlk_rep_xml(f, c->detail);
        fputs("</system-out>\n", f);
    }
    fputs("    </testcase>\n", f);
}

int mlk_rep_write_junit(const mlk_report *r, const char *path, mlk_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return mlk_fail(err, MLK_E_IO, "report: cannot create %s: %m", path);
    int failures = 0, skipped = 0;
    double seconds = 0;
    for (int i = 0; i < r->n_cells; i++) {
        failures += cell_failure(r, i).type != NULL;
        const char *s = r->cells[i].status ? r->cells[i].status : "";
        skipped += !strcmp(s, "pending") || !strcmp(s, "running");
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
    for (int i = 0; i < r->n_cells; i++)
        testcase(f, r, i);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return mlk_rep_close(f, path, err);
}
