/* db_open_ro.h: opening an existing memleak db for reading (report, compare's reads, merge's inputs), and naming why
 * one cannot be read: a read-only folder, no file descriptors left, not SQLite, not memleak's. It must never write. */
#ifndef MLK_DB_OPEN_RO_H
#define MLK_DB_OPEN_RO_H

#include <sqlite3.h>

#include "status.h"

/* A read-only URI for path (the caller frees it): "file:" and the path percent-encoded. Without a -wal file beside
 * it no connection has the db open (memleak dbs are in WAL mode, and the last connection to close removes it) and
 * every row is in the main file: then immutable=1, so reading makes no -wal and -shm files and works in a read-only
 * folder. With a -wal file (a run killed, or still running), mode=ro, which reads the WAL too. */
char *db_ro_uri(const char *path);

/* Open path read-only (it must be a regular file: files.h) and read its schema once, so that a failure to open its
 * -wal or -shm files, running out of descriptors, or a file that is not SQLite shows here with its cause:
 * MLK_E_PARSE (not SQLite, a folder, a FIFO, a read-only folder holding a -wal file), MLK_E_NOTFOUND, MLK_E_IO
 * (descriptors, I/O). *out is closed by the caller (sqlite3_close). */
int db_sqlite_open_ro(const char *path, sqlite3 **out, mlk_error *err);

/* Why h (a connection to path) failed its last call, in a few words that name the cause: "the folder is read-only,
 * so SQLite cannot make PATH-shm", "no file descriptor left (EMFILE; ulimit -n)", else SQLite's message. */
const char *db_cause(sqlite3 *h, const char *path, char *buf, size_t len);

/* err = "PATH: doing: cause" for the last failed call on h (NULL: out of memory), with the code of the cause:
 * MLK_E_PARSE when it is the file or its folder (not SQLite, read-only, no permission), else MLK_E_IO. */
int db_fail_cause(sqlite3 *h, const char *path, const char *doing, mlk_error *err);

/* A memleak db: a schema_version table with a version this build reads (older ones are migrated by db_open only),
 * and runs with memleak's columns. MLK_E_PARSE naming what is missing, in a line (never the schema's SQL). */
int db_check_memleak(sqlite3 *h, const char *path, mlk_error *err);

/* 1 when table has column, or has no columns at all (no such table: the schema makes it). Names are ours. A reader of
 * a db an older memleak-run wrote (read-only, so not migrated) reads a later column as NULL where this says 0. */
int db_has_column(sqlite3 *h, const char *table, const char *column);

#endif
