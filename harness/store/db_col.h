/* db_col.h: the store's internal SQLite helpers: a db_store's connection and path, errors naming both, binding
 * values that may be missing, reading columns that may be NULL. Included only by harness/store's .c files and
 * tests; it must never be included by a public header, so that sqlite3.h stays inside the store. */
#ifndef MLK_DB_COL_H
#define MLK_DB_COL_H

#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_open_ro.h"
#include "status.h"
#include "store.h"

/* The connection and the file of db, borrowed until db_close (store.c). The connection is NULL only while
 * db_open is failing. */
sqlite3 *db_sqlite(db_store *db);
const char *db_path(db_store *db);

/* Sets err to "PATH: what: SQLite's last message" and returns MLK_E_DB. */
static inline int db_fail_sql(db_store *db, mlk_error *err, const char *what)
{
    sqlite3 *h = db ? db_sqlite(db) : NULL;
    return mlk_fail(err, MLK_E_DB, "%s: %s: %s", db && db_path(db) ? db_path(db) : "db", what,
                    h ? sqlite3_errmsg(h) : "no handle");
}

/* Runs sql (no parameters, any number of statements); on failure err gives SQLite's reason whole, then the start
 * of the statement (never a whole schema: a message is one line). MLK_E_DB. */
static inline int db_exec(db_store *db, const char *sql, mlk_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &msg) == SQLITE_OK)
        return MLK_OK;
    size_t n = strcspn(sql, "\n");
    char why[512]; /* a -wal or -shm file that cannot be opened, no descriptor left: said, not just "unable to open" */
    mlk_fail(err, MLK_E_DB, "%s: %s (running %.*s%s)", db_path(db), db_cause(db_sqlite(db), db_path(db), why, sizeof why),
             n > 60 ? 60 : (int)n, sql, n > 60 || sql[n] ? "..." : "");
    sqlite3_free(msg);
    return MLK_E_DB;
}

/* ---- binding: a missing value binds NULL ("not measured" is NULL, never 0) ---- */

static inline void db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* NaN binds NULL. */
static inline void db_bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

/* NaN and infinities bind NULL (imported figures: a report's Infinity is no measurement). An INTEGER column
 * keeps a whole value as an integer. */
static inline void db_bind_finite(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* v when present and not negative (the harness's -1 for "not measured"), else NULL. */
static inline void db_bind_opt_int(sqlite3_stmt *st, int i, int64_t v, bool present)
{
    if (present && v >= 0)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* ---- reading: NULL reads as NaN, "" or NULL, never as 0 ---- */

/* The column as a double; NULL is NaN. */
static inline double db_col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* A number only: INTEGER or FLOAT as a double; NULL, TEXT and BLOB are NaN (JSON values, where "12" is text). */
static inline double db_col_num(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);
    return t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, i) : NAN;
}

/* The column as an integer; NULL is if_null. */
static inline int64_t db_col_int_or(sqlite3_stmt *st, int i, int64_t if_null)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? if_null : sqlite3_column_int64(st, i);
}

/* The column's text into out[len], cut to fit; NULL is "". */
static inline void db_col_copy(sqlite3_stmt *st, int i, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

/* The column's text, malloc'd; NULL for NULL. *oom is set when a non-NULL text could not be copied. */
static inline char *db_col_dup(sqlite3_stmt *st, int i, bool *oom)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    char *s = t ? strdup((const char *)t) : NULL;
    if (t && !s && oom)
        *oom = true;
    return s;
}

/* v (n used of *cap, each size bytes) with room for one more: v itself, or a larger copy (then *cap is updated,
 * the old block freed). NULL when out of memory, v and *cap untouched. */
static inline void *db_grow(void *v, int n, int *cap, size_t size)
{
    if (v && n < *cap)
        return v;
    int c = *cap > 0 ? *cap * 2 : 16;
    void *p = realloc(v, size * (size_t)c);
    if (p)
        *cap = c;
    return p;
}

#endif
