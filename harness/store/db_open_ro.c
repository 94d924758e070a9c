/* db_open_ro.c: an existing db opened for reading, with the cause of a failure named (db_open_ro.h). It must never
 * write to the db nor make files beside it when none are needed, and never print SQL in an error. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_open_ro.h"
#include "files.h"
#include "store.h"
#include "strbuf.h"

char *db_ro_uri(const char *path)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b, "%s-wal", path);
    struct stat sb;
    bool wal = b.s && stat(b.s, &sb) == 0;
    mlk_buf_free(&b);
    mlk_buf_printf(&b, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/._~-", *p))
            mlk_buf_printf(&b, "%c", *p);
        else
            mlk_buf_printf(&b, "%%%02X", *p);
    }
    mlk_buf_printf(&b, wal ? "?mode=ro" : "?mode=ro&immutable=1");
    return mlk_buf_take(&b);
}

/* A -wal file beside path, no -shm, and a folder the user cannot write: SQLite cannot read that db at all. */
static bool shm_unmakeable(const char *path)
{
    char wal[4200], shm[4200], dir[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    return !access(wal, F_OK) && access(shm, F_OK) && access(slash ? dir : ".", W_OK);
}

const char *db_cause(sqlite3 *h, const char *path, char *buf, size_t len)
{
    if (!h)
        return "out of memory";
    int code = sqlite3_extended_errcode(h), e = sqlite3_system_errno(h);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    if (access(path, F_OK) && errno == ENOENT && !access(slash ? dir : ".", F_OK) && access(slash ? dir : ".", W_OK))
        snprintf(buf, len, "it does not exist and cannot be made: the folder %s is not writable", slash ? dir : ".");
    else if (e == EMFILE || e == ENFILE)
        snprintf(buf, len, "no file descriptor left to open it or its -wal/-shm files (%s; see ulimit -n)",
                 strerror(e));
    else if (shm_unmakeable(path))
        snprintf(buf, len, "%s-wal is there and %s-shm cannot be made in a folder that is not writable: read it "
                 "where its folder is writable, or after the run that wrote it ended", path, path);
    else if ((code & 0xff) == SQLITE_READONLY || e == EACCES || e == EROFS || e == EPERM)
        snprintf(buf, len, "read-only (%s)", e ? strerror(e) : sqlite3_errmsg(h));
    else if ((code & 0xff) == SQLITE_NOTADB)
        snprintf(buf, len, "not a memleak db (not a SQLite file)");
    else if ((code & 0xff) == SQLITE_CANTOPEN || (code & 0xff) == SQLITE_IOERR)
        snprintf(buf, len, "%s%s%s", sqlite3_errmsg(h), e ? ": " : "", e ? strerror(e) : "");
    else
        snprintf(buf, len, "%s", sqlite3_errmsg(h));
    return buf;
}

int db_fail_cause(sqlite3 *h, const char *path, const char *doing, mlk_error *err)
{
    char why[512];
    int code = h ? sqlite3_extended_errcode(h) & 0xff : SQLITE_NOMEM, e = h ? sqlite3_system_errno(h) : 0;
    bool theirs = shm_unmakeable(path) || code == SQLITE_NOTADB || code == SQLITE_READONLY || code == SQLITE_PERM ||
                  code == SQLITE_AUTH || e == EACCES || e == EROFS || e == EPERM;
    bool missing = access(path, F_OK) != 0 || e == ENOENT;
    int status = code == SQLITE_NOMEM ? MLK_E_NOMEM : theirs ? MLK_E_PARSE : missing ? MLK_E_NOTFOUND : MLK_E_IO;
    return mlk_fail(err, status, "%s: %s: %s", path, doing, db_cause(h, path, why, sizeof why));
}

int db_sqlite_open_ro(const char *path, sqlite3 **out, mlk_error *err)
{
    int rc = mlk_check_regular(path, "db", false, err);
    if (rc)
        return rc;
    char *uri = db_ro_uri(path);
    if (!uri)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", path);
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int sql = sqlite3_open_v2(uri, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    /* SQLite opens lazily: the first read is where a missing -shm, EMFILE or a non-SQLite file shows */
    if (sql == SQLITE_OK && (sql = sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL)) ==
                                SQLITE_OK)
        sql = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(h);
    sqlite3_finalize(st);
    if (sql != SQLITE_OK) {
        rc = db_fail_cause(h, path, "cannot read it", err);
        sqlite3_close(h);
        return rc;
    }
    *out = h;
    return MLK_OK;
}

int db_has_column(sqlite3 *h, const char *table, const char *column)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(h, "SELECT count(*) = 0 OR sum(name = ?2) > 0 FROM pragma_table_info(?1)", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return found;
}

int db_check_memleak(sqlite3 *h, const char *path, mlk_error *err)
{
    char why[512];
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'",
                           -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        int rc = mlk_fail(err, MLK_E_PARSE, "%s: cannot read it: %s", path, db_cause(h, path, why, sizeof why));
        sqlite3_finalize(st);
        return rc;
    }
    bool has = sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (!has)
        return mlk_fail(err, MLK_E_PARSE, "%s: not a memleak db (no schema_version table)", path);
    if (sqlite3_prepare_v2(h, "SELECT max(version) FROM schema_version", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        int rc = mlk_fail(err, MLK_E_PARSE, "%s: not a memleak db (reading schema_version: %s)", path,
                          db_cause(h, path, why, sizeof why));
        sqlite3_finalize(st);
        return rc;
    }
    bool null = sqlite3_column_type(st, 0) == SQLITE_NULL;
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (null)
        return mlk_fail(err, MLK_E_PARSE, "%s: not a memleak db (schema_version is empty)", path);
    if (v > DB_SCHEMA_VERSION)
        return mlk_fail(err, MLK_E_PARSE, "%s: schema version %d is newer than this memleak-run's (%d): use a newer "
                        "memleak-run", path, v, DB_SCHEMA_VERSION);
    static const char *const need[][2] = {{"runs", "uuid"}, {"cells", "run_id"}, {"samples", "cell_id"}};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (!db_has_column(h, need[i][0], need[i][1]))
            return mlk_fail(err, MLK_E_PARSE, "%s: not a memleak db (table %s has no column %s)", path, need[i][0],
                            need[i][1]);
    return MLK_OK;
}
