/* run_lock.c: run_owners: claim a run (or a shard of it) for this process, dropping the claims of processes that
 * are gone, refusing one a live process holds; release it. It must never decide liveness from a pid alone: a claim
 * names pid, start time and boot (procid.h), so a reused pid does not keep a dead owner's run. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db_col.h"
#include "run_lock.h"

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Whether shard i of a and shard j of b can hold one cell: some idx with idx % a == i and idx % b == j exists when
 * i and j agree modulo gcd(a, b) (the Chinese remainder theorem). A count of 0 holds every cell. */
static bool shards_meet(int64_t i, int64_t a, int64_t j, int64_t b)
{
    if (a <= 0 || b <= 0)
        return true;
    int64_t g = gcd(a, b);
    return i % g == j % g;
}

/* A claim that cannot be checked by its process (another host or pid namespace) is stale after this long without a
 * beat: the owner renews it about every DB_RUN_BEAT_S while it runs, so this is ten missed beats. */
enum { SILENT_STALE_S = 600 };

typedef struct {
    mlk_proc_id id;
    int64_t shard_index, shard_count;
    double silent_s; /* since its last beat */
    char since[40];
} owner_row;

static void read_owner(sqlite3_stmt *st, owner_row *o)
{
    memset(o, 0, sizeof *o);
    o->id.pid = sqlite3_column_int64(st, 0);
    o->id.start_ticks = sqlite3_column_int64(st, 1);
    db_col_copy(st, 2, o->id.boot, sizeof o->id.boot);
    db_col_copy(st, 3, o->id.host, sizeof o->id.host);
    o->shard_index = sqlite3_column_int64(st, 4);
    o->shard_count = sqlite3_column_int64(st, 5);
    db_col_copy(st, 6, o->since, sizeof o->since);
    o->silent_s = sqlite3_column_double(st, 7);
}

static int delete_owner(db_store *db, int64_t run_id, const mlk_proc_id *id, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), "DELETE FROM run_owners WHERE run_id = ?1 AND pid = ?2 AND "
                           "start_ticks = ?3 AND boot = ?4", -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "releasing a run");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, id->pid);
    sqlite3_bind_int64(st, 3, id->start_ticks);
    sqlite3_bind_text(st, 4, id->boot, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "releasing a run");
    sqlite3_finalize(st);
    return rc;
}

static int refuse(int64_t run_id, const owner_row *o, mlk_proc_state state, mlk_error *err)
{
    char shard[48] = "";
    if (o->shard_count > 0)
        snprintf(shard, sizeof shard, " (shard %lld/%lld)", (long long)o->shard_index, (long long)o->shard_count);
    return mlk_fail(err, MLK_E_USAGE, "run %lld is being run by memleak-run pid %lld on %s%s since %s%s: one "
                    "process per run; wait for it to end, or stop it (then --resume)", (long long)run_id,
                    (long long)o->id.pid, o->id.host[0] ? o->id.host : "?", shard, o->since,
                    state == MLK_PROC_UNKNOWN ? " (on another host or pid namespace: it cannot be checked from "
                                                "here; it counts as alive until it has been silent for 10 minutes)"
                                              : "");
}

/* Within the transaction: drop stale owners, find a live one in the way. */
static int check_owners(db_store *db, int64_t run_id, int shard_index, int shard_count, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT pid, start_ticks, boot, host, shard_index, shard_count, claimed_at, "
                           "(julianday('now') - julianday(beat_at)) * 86400 FROM run_owners WHERE run_id = ?1 "
                           "ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading the run's owners");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = MLK_OK, n_stale = 0;
    owner_row stale[16];
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        owner_row o;
        read_owner(st, &o);
        mlk_proc_state state = mlk_proc_alive(&o.id);
        if (state == MLK_PROC_UNKNOWN && o.silent_s > SILENT_STALE_S)
            state = MLK_PROC_GONE;
        if (state == MLK_PROC_GONE) {
            if (n_stale < (int)(sizeof stale / sizeof *stale))
                stale[n_stale++] = o; /* the rest go with the next claim */
        } else if (shards_meet(o.shard_index, o.shard_count, shard_index, shard_count)) {
            rc = refuse(run_id, &o, state, err);
        }
    }
    sqlite3_finalize(st);
    for (int i = 0; !rc && i < n_stale; i++)
        rc = delete_owner(db, run_id, &stale[i].id, err);
    return rc;
}

int db_run_claim(db_store *db, int64_t run_id, const mlk_proc_id *me, int shard_index, int shard_count,
                 bool check_only, mlk_error *err)
{
    int rc = db_exec(db, "BEGIN IMMEDIATE", err); /* check and claim as one: no second process between them */
    if (rc)
        return rc;
    rc = check_owners(db, run_id, shard_index, shard_count, err);
    sqlite3_stmt *st = NULL;
    if (check_only)
        return db_exec(db, "ROLLBACK", rc ? NULL : err) ? (rc ? rc : MLK_E_DB) : rc;
    if (!rc && sqlite3_prepare_v2(db_sqlite(db), "INSERT INTO run_owners(run_id, pid, start_ticks, boot, host, "
                                  "shard_index, shard_count, claimed_at, beat_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                                  "strftime('%Y-%m-%dT%H:%M:%SZ','now'), strftime('%Y-%m-%dT%H:%M:%SZ','now'))", -1, &st, NULL) != SQLITE_OK)
        rc = db_fail_sql(db, err, "claiming the run");
    if (!rc) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int64(st, 2, me->pid);
        sqlite3_bind_int64(st, 3, me->start_ticks);
        sqlite3_bind_text(st, 4, me->boot, -1, SQLITE_TRANSIENT);
        db_bind_text(st, 5, me->host[0] ? me->host : NULL);
        sqlite3_bind_int(st, 6, shard_index);
        sqlite3_bind_int(st, 7, shard_count);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_fail_sql(db, err, "claiming the run");
    }
    sqlite3_finalize(st);
    if (!rc)
        rc = db_exec(db, "COMMIT", err);
    if (rc)
        db_exec(db, "ROLLBACK", NULL);
    return rc;
}

int db_run_beat(db_store *db, int64_t run_id, const mlk_proc_id *me, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), "UPDATE run_owners SET beat_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') "
                           "WHERE run_id = ?1 AND pid = ?2 AND start_ticks = ?3 AND boot = ?4", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail_sql(db, err, "renewing the run's claim");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, me->pid);
    sqlite3_bind_int64(st, 3, me->start_ticks);
    sqlite3_bind_text(st, 4, me->boot, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "renewing the run's claim");
    sqlite3_finalize(st);
    return rc;
}

int db_run_release(db_store *db, int64_t run_id, const mlk_proc_id *me, mlk_error *err)
{
    return delete_owner(db, run_id, me, err);
}
