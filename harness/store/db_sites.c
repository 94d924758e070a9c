/* db_sites.c: a cell's site report (issue 9) into site_reports, growth_sites and growth_site_frames, one IMMEDIATE
 * transaction per cell, and back out. It must never leave a transaction open on return, nor read a table an older db
 * lacks. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db_col.h"
#include "db_sites.h"
#include "fmt.h"

static const char *const clear_sql[] = {"DELETE FROM growth_site_frames WHERE cell_id = ?1",
                                        "DELETE FROM growth_sites WHERE cell_id = ?1",
                                        "DELETE FROM site_reports WHERE cell_id = ?1",
                                        "DELETE FROM site_windows WHERE cell_id = ?1"};

static int exec_cell(sqlite3 *h, const char *sql, int64_t cell_id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    int done = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    return done ? 0 : -1;
}

static void bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
    db_bind_opt_int(st, i, v, true);
}

static int report_row(sqlite3 *h, int64_t cell_id, const db_site_report *r)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "INSERT INTO site_reports(cell_id, mode, sample_bytes, n_checkpoints, first_iteration, "
                              "last_iteration, n_sites, sampled_allocs, dropped_sites, dropped_blocks, "
                              "dropped_mappings, unwind_ns, symbolize_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_text(st, 2, r->mode, -1, SQLITE_STATIC);
    bind_opt(st, 3, r->sample_bytes);
    sqlite3_bind_int(st, 4, r->n_checkpoints);
    sqlite3_bind_int(st, 5, r->first_iteration);
    sqlite3_bind_int(st, 6, r->last_iteration);
    bind_opt(st, 7, r->n_sites);
    bind_opt(st, 8, r->stacks);
    bind_opt(st, 9, r->dropped_sites);
    bind_opt(st, 10, r->dropped_blocks);
    bind_opt(st, 11, r->dropped_mappings);
    db_bind_real(st, 12, r->unwind_ns);
    db_bind_real(st, 13, r->symbolize_ms);
    int bad = sqlite3_step(st) != SQLITE_DONE;
    sqlite3_finalize(st);
    if (bad || r->window_iterations <= 0)
        return bad ? -1 : 0;
    if (sqlite3_prepare_v2(h, "INSERT INTO site_windows(cell_id, iterations, wall_ms, stacks) VALUES (?,?,?,?)", -1,
                           &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int(st, 2, r->window_iterations);
    sqlite3_bind_double(st, 3, r->window_ms);
    bind_opt(st, 4, r->window_stacks);
    bad = sqlite3_step(st) != SQLITE_DONE;
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

static int site_rows(sqlite3 *h, int64_t cell_id, const db_site_report *r)
{
    sqlite3_stmt *site = NULL, *frame = NULL;
    int bad = sqlite3_prepare_v2(h, "INSERT INTO growth_sites(cell_id, seq, kind, bytes_per_iter, blocks_per_iter, "
                                    "growth_bytes, live_bytes, live_blocks, path) VALUES (?,?,?,?,?,?,?,?,?)",
                                 -1, &site, NULL) != SQLITE_OK ||
              sqlite3_prepare_v2(h, "INSERT INTO growth_site_frames(cell_id, seq, depth, fn, file, line, obj, offset) "
                                    "VALUES (?,?,?,?,?,?,?,?)", -1, &frame, NULL) != SQLITE_OK;
    for (int i = 0; !bad && i < r->n; i++) {
        const db_growth_site *s = &r->sites[i];
        sqlite3_reset(site);
        sqlite3_bind_int64(site, 1, cell_id);
        sqlite3_bind_int(site, 2, i);
        sqlite3_bind_text(site, 3, s->kind, -1, SQLITE_STATIC);
        sqlite3_bind_double(site, 4, s->bytes_per_iter);
        db_bind_real(site, 5, s->blocks_per_iter);
        sqlite3_bind_int64(site, 6, s->growth_bytes);
        sqlite3_bind_int64(site, 7, s->live_bytes);
        bind_opt(site, 8, s->live_blocks);
        db_bind_text(site, 9, s->path);
        bad = sqlite3_step(site) != SQLITE_DONE;
        for (int d = 0; !bad && d < s->n_frames; d++) {
            const db_site_frame *f = &s->frames[d];
            sqlite3_reset(frame);
            sqlite3_bind_int64(frame, 1, cell_id);
            sqlite3_bind_int(frame, 2, i);
            sqlite3_bind_int(frame, 3, d);
            db_bind_text(frame, 4, f->fn);
            db_bind_text(frame, 5, f->file);
            db_bind_opt_int(frame, 6, f->line, f->line > 0);
            db_bind_text(frame, 7, f->obj);
            bind_opt(frame, 8, f->offset);
            bad = sqlite3_step(frame) != SQLITE_DONE;
        }
    }
    sqlite3_finalize(site);
    sqlite3_finalize(frame);
    return bad ? -1 : 0;
}

int db_sites_store(db_store *db, int64_t cell_id, const db_site_report *r, mlk_error *err)
{
    if (!r->have)
        return MLK_OK;
    sqlite3 *h = db_sqlite(db);
    if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "storing the growing sites");
    int bad = 0;
    for (size_t i = 0; !bad && i < sizeof clear_sql / sizeof *clear_sql; i++)
        bad = exec_cell(h, clear_sql[i], cell_id);
    bad = bad || report_row(h, cell_id, r) || site_rows(h, cell_id, r);
    if (bad || sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int rc = mlk_fail(err, MLK_E_DB, "db: storing the growing sites of cell %lld: %s", (long long)cell_id,
                          sqlite3_errmsg(h));
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    return MLK_OK;
}

/* ------------------------------------------------------------------ reading */

static bool has_tables(sqlite3 *h)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('site_reports', "
                              "'growth_sites', 'growth_site_frames')", -1, &st, NULL) != SQLITE_OK)
        return false;
    bool all = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 3;
    sqlite3_finalize(st);
    return all;
}

static int load_report(sqlite3 *h, int64_t cell_id, db_site_report *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT mode, sample_bytes, n_checkpoints, first_iteration, last_iteration, n_sites, "
                              "sampled_allocs, dropped_sites, dropped_blocks, dropped_mappings, unwind_ns, "
                              "symbolize_ms FROM site_reports WHERE cell_id = ?1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->have = true;
        db_col_copy(st, 0, out->mode, sizeof out->mode);
        out->sample_bytes = db_col_int_or(st, 1, -1);
        out->n_checkpoints = (int)db_col_int_or(st, 2, 0);
        out->first_iteration = (int)db_col_int_or(st, 3, 0);
        out->last_iteration = (int)db_col_int_or(st, 4, 0);
        out->n_sites = db_col_int_or(st, 5, -1);
        out->stacks = db_col_int_or(st, 6, -1);
        out->dropped_sites = db_col_int_or(st, 7, -1);
        out->dropped_blocks = db_col_int_or(st, 8, -1);
        out->dropped_mappings = db_col_int_or(st, 9, -1);
        out->unwind_ns = db_col_real(st, 10);
        out->symbolize_ms = db_col_real(st, 11);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW &&
        sqlite3_prepare_v2(h, "SELECT iterations, wall_ms, stacks FROM site_windows WHERE cell_id = ?1", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, cell_id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            out->window_iterations = (int)db_col_int_or(st, 0, 0);
            out->window_ms = db_col_real(st, 1);
            out->window_stacks = db_col_int_or(st, 2, -1);
        }
        sqlite3_finalize(st);
    }
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int load_sites(sqlite3 *h, int64_t cell_id, int max_sites, db_site_report *out, bool *oom)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT kind, bytes_per_iter, blocks_per_iter, growth_bytes, live_bytes, live_blocks, "
                              "path FROM growth_sites WHERE cell_id = ?1 ORDER BY seq LIMIT ?2", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int(st, 2, max_sites);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && !*oom) {
        db_growth_site *v = db_grow(out->sites, out->n, &out->cap, sizeof *v);
        if (!v) {
            *oom = true;
            break;
        }
        out->sites = v;
        db_growth_site *s = &v[out->n++];
        memset(s, 0, sizeof *s);
        db_col_copy(st, 0, s->kind, sizeof s->kind);
        s->bytes_per_iter = db_col_real(st, 1);
        s->blocks_per_iter = db_col_real(st, 2);
        s->growth_bytes = db_col_int_or(st, 3, 0);
        s->live_bytes = db_col_int_or(st, 4, 0);
        s->live_blocks = db_col_int_or(st, 5, -1);
        s->path = db_col_dup(st, 6, oom);
    }
    sqlite3_finalize(st);
    if (*oom || (rc != SQLITE_DONE && rc != SQLITE_ROW))
        return *oom ? 0 : -1;
    if (sqlite3_prepare_v2(h, "SELECT seq, fn, file, line, obj, offset FROM growth_site_frames WHERE cell_id = ?1 "
                              "AND seq < ?2 ORDER BY seq, depth", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int(st, 2, out->n);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && !*oom) {
        int seq = sqlite3_column_int(st, 0);
        if (seq < 0 || seq >= out->n)
            continue;
        db_growth_site *s = &out->sites[seq];
        db_site_frame *v = db_grow(s->frames, s->n_frames, &s->cap_frames, sizeof *v);
        if (!v) {
            *oom = true;
            break;
        }
        s->frames = v;
        db_site_frame *f = &v[s->n_frames++];
        f->fn = db_col_dup(st, 1, oom);
        f->file = db_col_dup(st, 2, oom);
        f->line = (int)db_col_int_or(st, 3, 0);
        f->obj = db_col_dup(st, 4, oom);
        f->offset = db_col_int_or(st, 5, -1);
    }
    sqlite3_finalize(st);
    return *oom || rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

int db_sites_load(db_store *db, int64_t cell_id, int max_sites, db_site_report *out, mlk_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3 *h = db_sqlite(db);
    if (!has_tables(h))
        return MLK_OK;
    bool oom = false;
    if (load_report(h, cell_id, out) || (out->have && load_sites(h, cell_id, max_sites, out, &oom))) {
        db_site_report_free(out);
        return db_fail_sql(db, err, "reading the growing sites");
    }
    if (oom) {
        db_site_report_free(out);
        return mlk_fail(err, MLK_E_NOMEM, "db: out of memory reading the growing sites");
    }
    return MLK_OK;
}

void db_site_report_free(db_site_report *r)
{
    for (int i = 0; i < r->n; i++) {
        db_growth_site *s = &r->sites[i];
        for (int d = 0; d < s->n_frames; d++) {
            free(s->frames[d].fn);
            free(s->frames[d].file);
            free(s->frames[d].obj);
        }
        free(s->frames);
        free(s->path);
    }
    free(r->sites);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ one line per site */

static bool runtime_object(const char *obj)
{
    static const char *const prefixes[] = {"libc.so", "libstdc++.so", "libgcc_s.so", "libm.so", "ld-linux",
                                           "libpthread.so", "libc++.so", "libc++abi.so"};
    const char *b = obj ? mlk_base_name(obj) : "";
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

const db_site_frame *db_site_frame_pick(const db_growth_site *s)
{
    for (int i = 0; i < s->n_frames; i++)
        if (!runtime_object(s->frames[i].obj))
            return &s->frames[i];
    return s->n_frames ? &s->frames[0] : NULL;
}

void db_site_describe(const db_growth_site *s, char *out, size_t len)
{
    char rate[32];
    mlk_fmt_bytes(rate, sizeof rate, s->bytes_per_iter, true);
    const db_site_frame *f = db_site_frame_pick(s);
    char where[700] = "";
    if (f) {
        char fn[300];
        snprintf(fn, sizeof fn, "%s", f->fn ? f->fn : "??");
        if (strlen(fn) > 120) /* a C++ signature: its name is enough */
            snprintf(fn + 117, sizeof fn - 117, "...");
        int n = snprintf(where, sizeof where, "%s", fn);
        if (f->file && n >= 0 && (size_t)n < sizeof where)
            n += snprintf(where + n, sizeof where - (size_t)n, " (%s:%d)", mlk_base_name(f->file), f->line);
        if (f->obj && n >= 0 && (size_t)n < sizeof where)
            n += snprintf(where + n, sizeof where - (size_t)n, " in %s", mlk_base_name(f->obj));
        /* The runtimes are named without lines on purpose; anything else without one was built without -g. */
        if (!f->file && f->obj && !runtime_object(f->obj) && n >= 0 && (size_t)n < sizeof where)
            snprintf(where + n, sizeof where - (size_t)n, " (no file:line: %s has no debug info; build it with -g)",
                     mlk_base_name(f->obj));
    }
    if (!strcmp(s->kind, "maps"))
        snprintf(out, len, "%s/iter  %s  [mapping, no stack]", rate, s->path ? s->path : "[anon]");
    else if (!strcmp(s->kind, "mmap"))
        snprintf(out, len, "%s/iter  mmap of %s from %s", rate, s->path ? s->path : "[anon]", f ? where : "?");
    else
        snprintf(out, len, "%s/iter  %s", rate, f ? where : "? (no stack)");
}
