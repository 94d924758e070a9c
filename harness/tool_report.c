/* tool_report.c: reads a tool cell's report (memcheck XML, LeakSanitizer logs, massif's file), stores it, judges
 * the cell by it, and writes the findings for the final table and the HTML report. It must never judge a tool
 * cell by RSS, and never print a db string into HTML unescaped. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "store_tools.h"
#include "tool_report.h"

/* Sites and records beyond these are stored (sites: up to MAX_SITES) but not listed. */
#define MAX_SITES 20
#define TABLE_RECORDS 5
#define TABLE_FRAMES 4
#define HTML_RECORDS 30

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

void mlk_tool_frame_str(const mlk_frame *f, char *out, size_t len)
{
    const char *fn = f->fn ? f->fn : "???";
    if (f->file && f->line > 0)
        snprintf(out, len, "%s (%s:%d)", fn, base_name(f->file), f->line);
    else if (f->file)
        snprintf(out, len, "%s (%s)", fn, base_name(f->file));
    else if (f->obj)
        snprintf(out, len, "%s (in %s)", fn, base_name(f->obj));
    else
        snprintf(out, len, "%s", fn);
}

/* The stack without its allocator frames, "a (x.c:1) < b (y.c:2) ...", at most max frames. */
static void stack_str(const mlk_frame *f, int n, int max, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    int shown = 0, k = 0;
    while (k < n - 1 && mlk_frame_is_allocator(&f[k]))
        k++;
    const char *obj = NULL;
    for (; k < n && shown < max && used < len; k++, shown++) {
        char one[512];
        mlk_tool_frame_str(&f[k], one, sizeof one);
        if (!obj && f[k].obj)
            obj = f[k].obj;
        used += (size_t)snprintf(out + used, len - used, "%s%s", shown ? " < " : "", one);
    }
    if (k < n && used < len)
        used += (size_t)snprintf(out + used, len - used, " < ...");
    if (obj && used < len)
        snprintf(out + used, len - used, " [%s]", base_name(obj));
}

static void append(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, fmt, a, b);
}

/* ---- memcheck and lsan ---------------------------------------------------------------------------------- */

static int cmp_leak(const void *a, const void *b)
{
    const mlk_leak *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->total_bytes < y->total_bytes ? 1 : x->total_bytes > y->total_bytes ? -1 : 0;
}

static void leaks_table(const mlk_leak_report *r, char *out, size_t len)
{
    mlk_leak *sorted = r->n ? malloc(sizeof *sorted * (size_t)r->n) : NULL;
    if (!sorted)
        return;
    memcpy(sorted, r->leaks, sizeof *sorted * (size_t)r->n);
    qsort(sorted, (size_t)r->n, sizeof *sorted, cmp_leak);
    static const char *const kind_text[] = {"definitely lost", "indirectly lost", "possibly lost", "still reachable"};
    for (int i = 0; i < r->n && i < TABLE_RECORDS; i++) {
        const mlk_leak *l = &sorted[i];
        char head[160], stack[1200];
        snprintf(head, sizeof head, "%s %lld B in %lld block%s", kind_text[l->kind], (long long)l->bytes,
                 (long long)l->blocks, l->blocks == 1 ? "" : "s");
        stack_str(l->frames, l->n_frames, TABLE_FRAMES, stack, sizeof stack);
        append(out, len, "      %s at %s\n", head, stack);
    }
    if (r->n > TABLE_RECORDS) {
        char more[64];
        snprintf(more, sizeof more, "%d", r->n - TABLE_RECORDS);
        append(out, len, "      ... and %s more record%s (memleak-run report lists them all)\n", more,
               r->n - TABLE_RECORDS == 1 ? "" : "s");
    }
    free(sorted);
}

static void judge_leaks(const char *tool, const mlk_leak_report *r, bool finished, mlk_tool_result *res)
{
    int64_t bytes[MLK_LEAK_KIND_COUNT], blocks[MLK_LEAK_KIND_COUNT], engine = 0;
    mlk_leaks_sum(r, bytes, blocks, &engine);
    const char *verdict = !finished || r->complete ? engine > 0 ? "leak" : "pass" : "error";
    snprintf(res->status, sizeof res->status, "%s", verdict);
    int n = snprintf(res->detail, sizeof res->detail,
                     "%s: definitely lost %lld B in %lld blocks (%lld B by the engine), indirectly lost %lld B", tool,
                     (long long)bytes[0], (long long)blocks[0], (long long)engine, (long long)bytes[1]);
    /* LeakSanitizer reports neither kind: not measured, so not printed as 0 */
    if (strcmp(tool, "lsan") && n < (int)sizeof res->detail)
        n += snprintf(res->detail + n, sizeof res->detail - (size_t)n, ", possibly lost %lld B, still reachable %lld B",
                      (long long)bytes[2], (long long)bytes[3]);
    if (r->n_other_errors && n < (int)sizeof res->detail)
        n += snprintf(res->detail + n, sizeof res->detail - (size_t)n, "; %lld other error%s, the first: %.200s",
                      (long long)r->n_other_errors, r->n_other_errors == 1 ? "" : "s", r->first_error);
    if (!r->complete && n < (int)sizeof res->detail)
        n += snprintf(res->detail + n, sizeof res->detail - (size_t)n, "; its report stops early");
    if (n < (int)sizeof res->detail)
        snprintf(res->detail + n, sizeof res->detail - (size_t)n, ": %s", verdict);
    snprintf(res->table, sizeof res->table, "      %s\n", res->detail);
    leaks_table(r, res->table, sizeof res->table);
}

static int collect_leaks(db_store *db, int64_t cell_id, const mlk_cell *c, const mlk_tool_run *t,
                         const char *const *harness, bool finished, mlk_tool_result *res, mlk_error *err)
{
    mlk_leak_report r;
    mlk_error perr = {0};
    const char *tool = mlk_tool_name(c->tool);
    const char *slash = strrchr(t->out, '/');
    int rc = c->tool == MLK_TOOL_MEMCHECK ? mlk_memcheck_parse(t->out, &r, &perr)
                                          : mlk_lsan_parse_logs(t->dir, slash ? slash + 1 : t->out, &r, &perr);
    if (rc) {
        snprintf(res->detail, sizeof res->detail, "%s: its report could not be read: %.600s", tool, perr.msg);
        mlk_leak_report_free(&r);
        return db_tool_clear(db, cell_id, err);
    }
    mlk_leaks_attribute(&r, harness);
    res->have = true;
    judge_leaks(tool, &r, finished, res);
    rc = db_leaks_store(db, cell_id, tool, &r, err);
    mlk_leak_report_free(&r);
    return rc;
}

/* ---- massif --------------------------------------------------------------------------------------------- */

static int collect_massif(db_store *db, int64_t cell_id, const mlk_tool_run *t, mlk_tool_result *res, mlk_error *err)
{
    mlk_heap_peak pk;
    mlk_error perr = {0};
    if (mlk_massif_parse(t->out, &pk, &perr)) {
        snprintf(res->detail, sizeof res->detail, "massif: its output could not be read: %.600s", perr.msg);
        mlk_heap_peak_free(&pk);
        return db_tool_clear(db, cell_id, err);
    }
    res->have = true;
    snprintf(res->status, sizeof res->status, "pass");
    if (!pk.found) {
        snprintf(res->detail, sizeof res->detail, "massif: no peak snapshot in %d snapshots (nothing allocated?)",
                 pk.n_snapshots);
    } else {
        snprintf(res->detail, sizeof res->detail,
                 "massif: peak heap %lld B (%lld B asked for + %lld B allocator overhead) at snapshot %d of %d",
                 (long long)(pk.heap_bytes + pk.extra_bytes), (long long)pk.heap_bytes, (long long)pk.extra_bytes,
                 pk.snapshot, pk.n_snapshots);
    }
    snprintf(res->table, sizeof res->table, "      %s\n", res->detail);
    for (int i = 0; i < pk.n_sites && i < 3; i++) {
        char bytes[32], stack[1200];
        mlk_rep_fmt_bytes(bytes, sizeof bytes, (double)pk.sites[i].bytes, false);
        stack_str(pk.sites[i].frames, pk.sites[i].n_frames, TABLE_FRAMES, stack, sizeof stack);
        append(res->table, sizeof res->table, "      %s at %s\n", bytes, stack);
    }
    int rc = db_heap_peak_store(db, cell_id, &pk, MAX_SITES, err);
    mlk_heap_peak_free(&pk);
    return rc;
}

int mlk_tool_collect(db_store *db, int64_t cell_id, const mlk_plan *p, const mlk_cell *c, const mlk_tool_run *t,
                     const char *self_exe, bool finished, mlk_tool_result *res, mlk_error *err)
{
    memset(res, 0, sizeof *res);
    const char *harness[] = {self_exe, p->tools ? p->tools->lsan_worker : NULL, "memleak-run", "memleak-worker-lsan",
                             NULL};
    if (!harness[1])
        harness[1] = "memleak-worker-lsan";
    switch (c->tool) {
    case MLK_TOOL_MEMCHECK:
    case MLK_TOOL_LSAN: return collect_leaks(db, cell_id, c, t, harness, finished, res, err);
    case MLK_TOOL_MASSIF: return collect_massif(db, cell_id, t, res, err);
    default: return MLK_OK;
    }
}

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
            mlk_rep_xml(f, base_name(fm.obj));
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
        mlk_rep_fmt_bytes(peak, sizeof peak, (double)sqlite3_column_int64(st, 0), false);
        fprintf(f, "<p>massif: peak heap <strong>%s</strong> (%lld B asked for + %lld B allocator overhead), "
                   "snapshot %d of %d.</p>\n", peak, (long long)sqlite3_column_int64(st, 1),
                (long long)sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int(st, 4));
        (*rows)++;
        int n = 0;
        for (; sqlite3_step(sites) == SQLITE_ROW; n++) {
            char b[32];
            mlk_rep_fmt_bytes(b, sizeof b, (double)sqlite3_column_int64(sites, 1), false);
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
