/* db_json.c: JSON read through SQLite's json_valid, json_type and json_each (db_json.h). It must never keep a
 * pointer into the text it reads, nor touch a table: every string is copied, and the queries name no table. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db_col.h"
#include "db_json.h"

static db_json_type type_of(const unsigned char *t)
{
    static const char *const names[] = {"null", "true", "false", "integer", "real", "text", "array", "object"};
    for (int i = 0; t && i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp((const char *)t, names[i]))
            return (db_json_type)(DB_JSON_NULL + i);
    return DB_JSON_ABSENT;
}

int db_json_type_at(db_store *db, const char *json, const char *path, db_json_type *out, mlk_error *err)
{
    sqlite3_stmt *st;
    /* json_type fails on text that is not JSON: ask only when json_valid says it is. */
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT json_valid(?1), CASE WHEN json_valid(?1) THEN json_type(?1, ?2) END",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading JSON");
    sqlite3_bind_text(st, 1, json ? json : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    int rc = MLK_OK;
    if (sqlite3_step(st) != SQLITE_ROW)
        rc = db_fail_sql(db, err, "reading JSON");
    else if (!sqlite3_column_int(st, 0))
        rc = mlk_fail(err, MLK_E_PARSE, "not valid JSON");
    else
        *out = type_of(sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    return rc;
}

void db_json_items_free(db_json_item *v, int n)
{
    for (int i = 0; v && i < n; i++) {
        free(v[i].key);
        free(v[i].text);
        free(v[i].json);
    }
    free(v);
}

/* Row of json_each into it; false when out of memory (it holds what was copied: free it). */
static bool read_item(sqlite3_stmt *st, db_json_item *it)
{
    bool oom = false;
    memset(it, 0, sizeof *it);
    it->key = db_col_dup(st, 0, &oom);
    if (!it->key && !oom)
        it->key = strdup("");
    it->type = type_of(sqlite3_column_text(st, 1));
    it->text = db_col_dup(st, 2, &oom);
    it->json = db_col_dup(st, 3, &oom);
    it->num = db_col_num(st, 2);
    return it->key && !oom;
}

int db_json_items(db_store *db, const char *json, const char *path, db_json_item **out, int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT key, type, value, CASE WHEN type IN ('object', 'array') THEN NULL "
                           "ELSE json_quote(value) END FROM json_each(?1, ?2) ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading JSON");
    sqlite3_bind_text(st, 1, json ? json : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    db_json_item *v = NULL;
    int k = 0, cap = 0, rc = MLK_OK, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        db_json_item *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            rc = mlk_fail(err, MLK_E_NOMEM, "reading JSON: out of memory");
            break;
        }
        v = p;
        if (!read_item(st, &v[k++])) {
            rc = mlk_fail(err, MLK_E_NOMEM, "reading JSON: out of memory");
            break;
        }
    }
    if (!rc && step != SQLITE_DONE)
        rc = mlk_fail(err, MLK_E_PARSE, "not valid JSON (%s)", sqlite3_errmsg(db_sqlite(db)));
    sqlite3_finalize(st);
    if (!rc && !v && !(v = malloc(sizeof *v)))
        rc = mlk_fail(err, MLK_E_NOMEM, "reading JSON: out of memory");
    if (rc) {
        db_json_items_free(v, k);
        return rc;
    }
    *out = v;
    *n = k;
    return MLK_OK;
}

const db_json_item *db_json_find(const db_json_item *v, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].key, key))
            return &v[i];
    return NULL;
}
