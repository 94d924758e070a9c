/* tool_html.c: a tool cell's findings (leak records with their stacks, or the heap peak and its sites) as an HTML
 * fragment for the report. It must never print a db string into HTML unescaped. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "tool.h"

#define HTML_RECORDS 30

/* ---- HTML ----------------------------------------------------------------------------------------------- */

static void html_frames(FILE *f, sqlite3_stmt *fr, const char *source, int64_t cell_id, int seq)
{
    sqlite3_reset(fr);
    sqlite3_bind_int64(fr, 1, cell_id);
    sqlite3_bind_text(fr, 2, source, -1, SQLITE_STATIC);
    sqlite3_bind_int(fr, 3, seq);
    fputs("<td><code>", f);
    int shown = 0;
    while (sqlite3_step(fr) == SQLITE_ROW) {
        mlk_frame fm = {(char *)sqlite3_column_text(fr, 0), (char *)sqlite3_column_text(fr, 1),
                        (char *)sqlite3_column_text(fr, 3), sqlite3_column_int(fr, 2)};
        if (!strcmp(source, "leak") && !shown && mlk_frame_is_allocator(&fm))
            continue;
        char one[1024];
        mlk_tool_frame_str(&fm, one, sizeof one);
        fputs(shown++ ? "<br>" : "", f);
        mlk_rep_xml(f, one);
        if (fm.obj && fm.file) {
            fputs(" <small>", f);
            mlk_rep_xml(f, mlk_base_name(fm.obj));
            fputs("</small>", f);
        }
    }
    fputs(shown ? "</code></td>" : "-</code></td>", f);
}

static bool has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    bool yes = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
                                  NULL) == SQLITE_OK &&
               sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static void html_text(FILE *f, const unsigned char *s)
{
    mlk_rep_xml(f, s ? (const char *)s : "-");
}

static int html_leaks(FILE *f, sqlite3 *db, sqlite3_stmt *fr, int64_t cell_id, int *rows)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT seq, tool, kind, bytes, total_bytes, blocks, in_engine FROM leaks "
                               "WHERE cell_id = ?1 ORDER BY CASE kind WHEN 'definitely' THEN 0 WHEN 'indirectly' "
                               "THEN 1 WHEN 'possibly' THEN 2 ELSE 3 END, total_bytes DESC, seq", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if ((*rows)++ == 0)
            fputs("<table class=\"leaks\">\n<tr><th>tool</th><th>kind</th><th>bytes</th><th>with indirect</th>"
                  "<th>blocks</th><th>engine</th><th>stack (innermost first)</th></tr>\n", f);
        if (*rows > HTML_RECORDS)
            continue;
        const unsigned char *kind = sqlite3_column_text(st, 2);
        bool definite = kind && !strcmp((const char *)kind, "definitely");
        fputs("<tr><td>", f);
        html_text(f, sqlite3_column_text(st, 1));
        fprintf(f, "</td><td%s>", definite ? " class=\"leak\"" : "");
        html_text(f, kind);
        fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td>%s</td>",
                (long long)sqlite3_column_int64(st, 3), (long long)sqlite3_column_int64(st, 4),
                (long long)sqlite3_column_int64(st, 5), sqlite3_column_int(st, 6) ? "yes" : "no");
        html_frames(f, fr, "leak", cell_id, sqlite3_column_int(st, 0));
        fputs("</tr>\n", f);
    }
    if (*rows > HTML_RECORDS)
        fprintf(f, "<tr><td colspan=\"7\">... and %d more records (table leaks of the db)</td></tr>\n",
                *rows - HTML_RECORDS);
    if (*rows)
        fputs("</table>\n", f);
    sqlite3_finalize(st);
    return 0;
}

static int html_peak(FILE *f, sqlite3 *db, sqlite3_stmt *fr, int64_t cell_id, int *rows)
{
    sqlite3_stmt *st = NULL, *sites = NULL;
    int bad = sqlite3_prepare_v2(db, "SELECT peak_bytes, heap_bytes, heap_extra_bytes, snapshot, n_snapshots FROM "
                                     "heap_peaks WHERE cell_id = ?1", -1, &st, NULL) != SQLITE_OK ||
              sqlite3_prepare_v2(db, "SELECT seq, bytes FROM heap_peak_sites WHERE cell_id = ?1 ORDER BY seq", -1,
                                 &sites, NULL) != SQLITE_OK;
    if (!bad) {
        sqlite3_bind_int64(st, 1, cell_id);
        sqlite3_bind_int64(sites, 1, cell_id);
    }
    if (!bad && sqlite3_step(st) == SQLITE_ROW) {
        char peak[32];
        mlk_fmt_bytes(peak, sizeof peak, (double)sqlite3_column_int64(st, 0), false);
        fprintf(f, "<p>massif: peak heap <strong>%s</strong> (%lld B asked for + %lld B allocator overhead), "
                   "snapshot %d of %d.</p>\n", peak, (long long)sqlite3_column_int64(st, 1),
                (long long)sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int(st, 4));
        (*rows)++;
        int n = 0;
        for (; sqlite3_step(sites) == SQLITE_ROW; n++) {
            char b[32];
            mlk_fmt_bytes(b, sizeof b, (double)sqlite3_column_int64(sites, 1), false);
            if (!n)
                fputs("<table class=\"peak\">\n<tr><th>bytes at the peak</th><th>allocated from (innermost first)"
                      "</th></tr>\n", f);
            fprintf(f, "<tr><td class=\"num\">%s</td>", b);
            html_frames(f, fr, "peak_site", cell_id, sqlite3_column_int(sites, 0));
            fputs("</tr>\n", f);
        }
        if (n)
            fputs("</table>\n", f);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(sites);
    return bad ? -1 : 0;
}

int mlk_tool_html(sqlite3 *db, int64_t cell_id, char **out, mlk_error *err)
{
    *out = NULL;
    if (!has_table(db, "leaks") || !has_table(db, "heap_peaks") || !has_table(db, "tool_frames"))
        return MLK_OK;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    sqlite3_stmt *fr = NULL;
    int rows = 0, bad = sqlite3_prepare_v2(db, "SELECT fn, file, line, obj FROM tool_frames WHERE cell_id = ?1 AND "
                                               "source = ?2 AND seq = ?3 ORDER BY depth", -1, &fr, NULL) != SQLITE_OK;
    bad = bad || html_leaks(f, db, fr, cell_id, &rows) || html_peak(f, db, fr, cell_id, &rows);
    sqlite3_finalize(fr);
    bool nomem = fclose(f) != 0;
    if (bad || nomem || !rows) {
        free(buf);
        return bad ? mlk_fail(err, MLK_E_DB, "report: reading the tool findings of cell %lld: %s", (long long)cell_id,
                              sqlite3_errmsg(db))
                   : nomem ? mlk_fail(err, MLK_E_NOMEM, "report: out of memory") : MLK_OK;
    }
    *out = buf;
    return MLK_OK;
}
