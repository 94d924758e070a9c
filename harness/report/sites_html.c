/* sites_html.c: where a plain cell's memory grew (issue 9), as the store reads it back: how sites were recorded and
 * each growing site with its stack, as an HTML fragment for the report next to the cell's verdict. It must never
 * print a stored string into HTML unescaped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_sites.h"
#include "report.h"

#define HTML_SITES 10
#define HTML_FRAMES 12

static void html_frames(FILE *f, const db_growth_site *s)
{
    fputs("<td><code>", f);
    const db_site_frame *pick = db_site_frame_pick(s);
    for (int i = 0; i < s->n_frames && i < HTML_FRAMES; i++) {
        const db_site_frame *fr = &s->frames[i];
        fputs(i ? "<br>" : "", f);
        fputs(fr == pick ? "<strong>" : "", f);
        mlk_rep_xml(f, fr->fn ? fr->fn : "??");
        fputs(fr == pick ? "</strong>" : "", f);
        if (fr->file) {
            char at[32];
            snprintf(at, sizeof at, ":%d", fr->line);
            fputs(" (", f);
            mlk_rep_xml(f, mlk_base_name(fr->file));
            fputs(at, f);
            fputs(")", f);
        }
        if (fr->obj) {
            fputs(" <small>", f);
            mlk_rep_xml(f, mlk_base_name(fr->obj));
            fputs("</small>", f);
        }
    }
    if (s->n_frames > HTML_FRAMES)
        fprintf(f, "<br>... %d more frames (growth_site_frames)", s->n_frames - HTML_FRAMES);
    fputs(s->n_frames ? "</code></td>" : "-</code></td>", f);
}

static void html_how(FILE *f, const db_site_report *r)
{
    fputs("<p class=\"sites\">Where it grew (", f);
    if (!strcmp(r->mode, "sample"))
        fprintf(f, "stacks of allocations sampled every %lld KiB on average", (long long)r->sample_bytes / 1024);
    else if (!strcmp(r->mode, "exact"))
        fputs("stacks of every allocation", f);
    else
        fputs("no stacks: /proc/self/maps diffed by path", f);
    fprintf(f, "; %d checkpoints over iterations %d to %d", r->n_checkpoints, r->first_iteration,
            r->last_iteration);
    if (r->n_sites >= 0)
        fprintf(f, "; %lld sites", (long long)r->n_sites);
    if (!isnan(r->unwind_ns))
        fprintf(f, ", %.1f &micro;s per stack", r->unwind_ns / 1000);
    if (r->dropped_sites > 0 || r->dropped_blocks > 0 || r->dropped_mappings > 0)
        fprintf(f, "; tables full: %lld stacks, %lld blocks, %lld mappings not attributed",
                (long long)(r->dropped_sites > 0 ? r->dropped_sites : 0),
                (long long)(r->dropped_blocks > 0 ? r->dropped_blocks : 0),
                (long long)(r->dropped_mappings > 0 ? r->dropped_mappings : 0));
    if (!isnan(r->symbolize_ms))
        fprintf(f, "; named in %.0f ms", r->symbolize_ms);
    fputs(").</p>\n", f);
}

#define BRIEF_SITES 3

/* The top sites in a line each, for the cells table next to the verdict. */
static int brief_lines(const db_site_report *r, char **out, mlk_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    for (int i = 0; i < r->n && i < BRIEF_SITES; i++) {
        char one[512];
        db_site_describe(&r->sites[i], one, sizeof one);
        fputs(i ? "<br>" : "<br>grows: ", f);
        mlk_rep_xml(f, one);
    }
    if (!r->n)
        fputs("<br>grows: no site named", f);
    if (fclose(f)) {
        free(buf);
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    }
    *out = buf;
    return MLK_OK;
}

int mlk_sites_html(const db_site_report *r, char **out, char **brief, mlk_error *err)
{
    *out = NULL;
    *brief = NULL;
    if (!r->have)
        return MLK_OK;
    int brc = brief_lines(r, brief, err);
    if (brc)
        return brc;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        free(*brief);
        *brief = NULL;
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    }
    html_how(f, r);
    if (!r->n)
        fputs("<p>No site grew in both halves of the measured iterations.</p>\n", f);
    else
        fputs("<table class=\"sites\">\n<tr><th>kind</th><th>growth/iter</th><th>blocks/iter</th><th>live at the "
              "end</th><th>file mapped</th><th>allocated from (innermost first)</th></tr>\n", f);
    for (int i = 0; i < r->n && i < HTML_SITES; i++) {
        const db_growth_site *s = &r->sites[i];
        char rate[32], live[32], blocks[32] = "-";
        mlk_fmt_bytes(rate, sizeof rate, s->bytes_per_iter, true);
        mlk_fmt_bytes(live, sizeof live, (double)s->live_bytes, false);
        if (!isnan(s->blocks_per_iter))
            snprintf(blocks, sizeof blocks, "%+.2f", s->blocks_per_iter);
        fputs("<tr><td>", f);
        mlk_rep_xml(f, s->kind);
        fputs("</td><td class=\"num leak\">", f);
        mlk_rep_xml(f, rate);
        fputs("</td><td class=\"num\">", f);
        mlk_rep_xml(f, blocks);
        fputs("</td><td class=\"num\">", f);
        mlk_rep_xml(f, live);
        fputs("</td><td>", f);
        mlk_rep_xml(f, s->path ? s->path : "-");
        fputs("</td>", f);
        html_frames(f, s);
        fputs("</tr>\n", f);
    }
    if (r->n)
        fputs("</table>\n", f);
    if (fclose(f)) {
        free(buf);
        free(*brief);
        *brief = NULL;
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    }
    *out = buf;
    return MLK_OK;
}

int mlk_sites_html_cell(db_store *db, int64_t cell_id, char **out, char **brief, mlk_error *err)
{
    db_site_report r;
    *out = NULL;
    *brief = NULL;
    int rc = db_sites_load(db, cell_id, HTML_SITES, &r, err);
    if (!rc)
        rc = mlk_sites_html(&r, out, brief, err);
    db_site_report_free(&r);
    return rc;
}
