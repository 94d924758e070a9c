/* tool_html.c: a tool cell's findings (leak records with their stacks, or the heap peak and its sites), as the
 * store reads them back, as an HTML fragment for the report. It must never print a stored string into HTML
 * unescaped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "tool.h"

#define HTML_RECORDS 30

/* One stack as a table cell; a leak's allocator frames on top are left out (they say malloc, not who called it). */
static void html_frames(FILE *f, const mlk_frame *frames, int n, bool leak)
{
    fputs("<td><code>", f);
    int shown = 0;
    for (int i = 0; i < n; i++) {
        const mlk_frame *fm = &frames[i];
        if (leak && !shown && mlk_frame_is_allocator(fm))
            continue;
        char one[1024];
        mlk_tool_frame_str(fm, one, sizeof one);
        fputs(shown++ ? "<br>" : "", f);
        mlk_rep_xml(f, one);
        if (fm->obj && fm->file) {
            fputs(" <small>", f);
            mlk_rep_xml(f, mlk_base_name(fm->obj));
            fputs("</small>", f);
        }
    }
    fputs(shown ? "</code></td>" : "-</code></td>", f);
}

static void html_leaks(FILE *f, const db_report_tool *t)
{
    if (!t->n_leaks)
        return;
    fputs("<table class=\"leaks\">\n<tr><th>tool</th><th>kind</th><th>bytes</th><th>with indirect</th>"
          "<th>blocks</th><th>engine</th><th>stack (innermost first)</th></tr>\n", f);
    for (int i = 0; i < t->leaks.n && i < HTML_RECORDS; i++) {
        const mlk_leak *l = &t->leaks.leaks[i];
        fputs("<tr><td>", f);
        mlk_rep_xml(f, t->tool[0] ? t->tool : "-");
        fprintf(f, "</td><td%s>", l->kind == MLK_LEAK_DEFINITELY ? " class=\"leak\"" : "");
        mlk_rep_xml(f, mlk_leak_kind_name(l->kind));
        fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td>%s</td>",
                (long long)l->bytes, (long long)l->total_bytes, (long long)l->blocks, l->in_engine ? "yes" : "no");
        html_frames(f, l->frames, l->n_frames, true);
        fputs("</tr>\n", f);
    }
    if (t->n_leaks > HTML_RECORDS)
        fprintf(f, "<tr><td colspan=\"7\">... and %d more records (table leaks of the db)</td></tr>\n",
                t->n_leaks - HTML_RECORDS);
    fputs("</table>\n", f);
}

static void html_peak(FILE *f, const mlk_heap_peak *p)
{
    if (!p->found)
        return;
    char peak[32];
    mlk_fmt_bytes(peak, sizeof peak, (double)(p->heap_bytes + p->extra_bytes), false);
    fprintf(f, "<p>massif: peak heap <strong>%s</strong> (%lld B asked for + %lld B allocator overhead), "
               "snapshot %d of %d.</p>\n", peak, (long long)p->heap_bytes, (long long)p->extra_bytes, p->snapshot,
            p->n_snapshots);
    for (int i = 0; i < p->n_sites; i++) {
        char b[32];
        mlk_fmt_bytes(b, sizeof b, (double)p->sites[i].bytes, false);
        if (!i)
            fputs("<table class=\"peak\">\n<tr><th>bytes at the peak</th><th>allocated from (innermost first)"
                  "</th></tr>\n", f);
        fprintf(f, "<tr><td class=\"num\">%s</td>", b);
        html_frames(f, p->sites[i].frames, p->sites[i].n_frames, false);
        fputs("</tr>\n", f);
    }
    if (p->n_sites)
        fputs("</table>\n", f);
}

int mlk_tool_html(const db_report_tool *t, char **out, mlk_error *err)
{
    *out = NULL;
    if (!t->n_leaks && !t->peak.found)
        return MLK_OK;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    html_leaks(f, t);
    html_peak(f, &t->peak);
    if (fclose(f)) {
        free(buf);
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    }
    *out = buf;
    return MLK_OK;
}

int mlk_tool_html_cell(db_store *db, int64_t cell_id, char **out, mlk_error *err)
{
    db_report_tool t;
    int rc = db_report_tool_load(db, cell_id, HTML_RECORDS, &t, err);
    char *html = NULL;
    if (!rc && !(rc = mlk_tool_html(&t, &html, err)))
        *out = html;
    db_report_tool_deinit(&t);
    return rc;
}
