/* db_report_tool.c: a tool cell's findings read back from the store (leaks, heap_peaks, heap_peak_sites,
 * tool_frames) into the tools' own structs, for the report. It must never write to the db, and never invent a
 * frame's missing field: NULL stays NULL, a missing line 0. */
#include "db_col.h"
#include "db_report.h"

static bool has_table(db_store *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    bool yes = sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                                  -1, &st, NULL) == SQLITE_OK &&
               sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* The stack of (source, seq) through fr (cell bound), innermost first, into *frames. MLK_E_DB or MLK_E_NOMEM
 * (what was read is in *frames then, to be freed with its owner). */
static int read_frames(sqlite3_stmt *fr, const char *source, int seq, mlk_frame **frames, int *n)
{
    sqlite3_reset(fr);
    sqlite3_bind_text(fr, 2, source, -1, SQLITE_STATIC);
    sqlite3_bind_int(fr, 3, seq);
    int rc = SQLITE_DONE, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(fr)) == SQLITE_ROW) {
        mlk_frame *p = db_grow(*frames, *n, &cap, sizeof *p);
        if (!p)
            return MLK_E_NOMEM;
        *frames = p;
        mlk_frame *f = &p[(*n)++];
        f->fn = db_col_dup(fr, 0, &oom);
        f->file = db_col_dup(fr, 1, &oom);
        f->line = (int)db_col_int_or(fr, 2, 0);
        f->obj = db_col_dup(fr, 3, &oom);
    }
    return oom ? MLK_E_NOMEM : rc != SQLITE_DONE ? MLK_E_DB : MLK_OK;
}

static int kind_of(const unsigned char *name)
{
    for (int k = 0; name && k < MLK_LEAK_KIND_COUNT; k++)
        if (!strcmp((const char *)name, mlk_leak_kind_name(k)))
            return k;
    return MLK_LEAK_REACHABLE; /* the schema allows no other; the mildest if one appears */
}

static int read_leaks(db_store *db, sqlite3_stmt *fr, int64_t cell_id, int max, db_report_tool *t)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT seq, tool, kind, bytes, total_bytes, blocks, in_engine FROM leaks "
                                          "WHERE cell_id = ?1 ORDER BY CASE kind WHEN 'definitely' THEN 0 WHEN "
                                          "'indirectly' THEN 1 WHEN 'possibly' THEN 2 ELSE 3 END, total_bytes DESC, "
                                          "seq", -1, &st, NULL) != SQLITE_OK)
        return MLK_E_DB;
    sqlite3_bind_int64(st, 1, cell_id);
    int rc = SQLITE_DONE, bad = MLK_OK;
    while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (t->n_leaks++ == 0)
            db_col_copy(st, 1, t->tool, sizeof t->tool);
        if (max >= 0 && t->leaks.n >= max)
            continue; /* counted, not loaded */
        mlk_leak *l = db_grow(t->leaks.leaks, t->leaks.n, &t->leaks.cap, sizeof *l);
        if (!l) {
            bad = MLK_E_NOMEM;
            break;
        }
        t->leaks.leaks = l;
        l = &l[t->leaks.n++];
        *l = (mlk_leak){.kind = kind_of(sqlite3_column_text(st, 2)), .bytes = sqlite3_column_int64(st, 3),
                        .total_bytes = sqlite3_column_int64(st, 4), .blocks = sqlite3_column_int64(st, 5),
                        .in_engine = sqlite3_column_int(st, 6) != 0};
        bad = read_frames(fr, "leak", sqlite3_column_int(st, 0), &l->frames, &l->n_frames);
    }
    sqlite3_finalize(st);
    return bad ? bad : rc != SQLITE_DONE ? MLK_E_DB : MLK_OK;
}

static int read_sites(sqlite3_stmt *sites, sqlite3_stmt *fr, mlk_heap_peak *p)
{
    int rc = SQLITE_DONE, bad = MLK_OK, cap = 0;
    while (!bad && (rc = sqlite3_step(sites)) == SQLITE_ROW) {
        mlk_peak_site *s = db_grow(p->sites, p->n_sites, &cap, sizeof *s);
        if (!s)
            return MLK_E_NOMEM;
        p->sites = s;
        s = &s[p->n_sites++];
        *s = (mlk_peak_site){.bytes = sqlite3_column_int64(sites, 1)};
        bad = read_frames(fr, "peak_site", sqlite3_column_int(sites, 0), &s->frames, &s->n_frames);
    }
    return bad ? bad : rc != SQLITE_DONE ? MLK_E_DB : MLK_OK;
}

static int read_peak(db_store *db, sqlite3_stmt *fr, int64_t cell_id, mlk_heap_peak *p)
{
    sqlite3_stmt *st = NULL, *sites = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT heap_bytes, heap_extra_bytes, stacks_bytes, snapshot, n_snapshots, "
                                          "time, time_unit, below_threshold_bytes FROM heap_peaks WHERE cell_id = ?1",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db_sqlite(db), "SELECT seq, bytes FROM heap_peak_sites WHERE cell_id = ?1 ORDER BY seq", -1,
                           &sites, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return MLK_E_DB;
    }
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(sites, 1, cell_id);
    int step = sqlite3_step(st), rc = step == SQLITE_DONE ? MLK_OK : MLK_E_DB;
    if (step == SQLITE_ROW) {
        p->found = true;
        p->heap_bytes = sqlite3_column_int64(st, 0);
        p->extra_bytes = sqlite3_column_int64(st, 1);
        p->stacks_bytes = db_col_int_or(st, 2, 0);
        p->snapshot = sqlite3_column_int(st, 3);
        p->n_snapshots = sqlite3_column_int(st, 4);
        p->time = db_col_int_or(st, 5, -1);
        db_col_copy(st, 6, p->time_unit, sizeof p->time_unit);
        p->below_threshold_bytes = db_col_int_or(st, 7, 0);
        rc = read_sites(sites, fr, p);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(sites);
    return rc;
}

int db_report_tool_load(db_store *db, int64_t cell_id, int max_leaks, db_report_tool *out, mlk_error *err)
{
    memset(out, 0, sizeof *out);
    if (!has_table(db, "leaks") || !has_table(db, "heap_peaks") || !has_table(db, "tool_frames"))
        return MLK_OK; /* a db from before tool cells */
    sqlite3_stmt *fr = NULL;
    int rc = sqlite3_prepare_v2(db_sqlite(db), "SELECT fn, file, line, obj FROM tool_frames WHERE cell_id = ?1 AND "
                                               "source = ?2 AND seq = ?3 ORDER BY depth", -1, &fr, NULL) == SQLITE_OK
                 ? MLK_OK
                 : MLK_E_DB;
    if (!rc) {
        sqlite3_bind_int64(fr, 1, cell_id);
        if (!(rc = read_leaks(db, fr, cell_id, max_leaks, out)))
            rc = read_peak(db, fr, cell_id, &out->peak);
    }
    if (rc == MLK_E_NOMEM)
        mlk_fail(err, rc, "report: out of memory reading the tool findings of cell %lld", (long long)cell_id);
    else if (rc)
        mlk_fail(err, rc, "report: reading the tool findings of cell %lld: %s", (long long)cell_id,
                 sqlite3_errmsg(db_sqlite(db)));
    sqlite3_finalize(fr);
    return rc;
}

void db_report_tool_deinit(db_report_tool *t)
{
    if (!t)
        return;
    mlk_leak_report_free(&t->leaks);
    mlk_heap_peak_free(&t->peak);
    memset(t, 0, sizeof *t);
}
