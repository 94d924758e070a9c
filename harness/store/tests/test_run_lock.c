/* test_run_lock.c: run_owners claims (run_lock.h) and the names db_open refuses: a live owner blocks exactly the
 * shards that share a cell with it (gcd rule), a claim whose process is gone or whose pid was reused is dropped, a
 * check-only claim writes nothing, release frees the run; "", ":memory:" and "file:" are refused and
 * db_open_existing creates nothing. It must never leave files behind. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_col.h"
#include "mlk_check.h"
#include "procid.h"
#include "run_lock.h"
#include "store.h"

static char path[64];

static int64_t scalar(db_store *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void check_names(void)
{
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK(db_open("", &db, &err) == MLK_E_USAGE && !db && strstr(err.msg, "not a file name"));
    CHECK(db_open(":memory:", &db, &err) == MLK_E_USAGE && !db);
    CHECK(db_open("file:x.db?mode=memory", &db, &err) == MLK_E_USAGE && !db);
    char missing[80];
    snprintf(missing, sizeof missing, "%s-missing", path);
    CHECK(db_open_existing(missing, &db, &err) == MLK_E_NOTFOUND && !db && strstr(err.msg, "no such db"));
    CHECK(access(missing, F_OK) != 0);
}

static void check_claims(void)
{
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(path, &db, &err), &err);
    if (!db)
        return;
    db_run_meta m = {.uuid = "u1", .scenario_name = "s", .scenario_text = "name: s"};
    int64_t run = 0;
    CHECK_OK(db_run_begin(db, &m, &run, &err), &err);
    mlk_proc_id me;
    CHECK(mlk_proc_self(&me) == 0 && me.start_ticks > 0);
    CHECK(mlk_proc_alive(&me) == MLK_PROC_ALIVE);
    /* A live owner of shard 0/2 (this process, by its real identity) ... */
    CHECK_OK(db_run_claim(db, run, &me, 0, 2, false, &err), &err);
    mlk_proc_id other = me;
    other.pid = me.pid + 1000000; /* no such pid: never alive */
    /* ... leaves shard 1/2 and 1/4 (odd cells) to others; 0/4 and 2/4 share its even cells; all cells too. */
    CHECK_OK(db_run_claim(db, run, &other, 1, 2, true, &err), &err);
    CHECK_OK(db_run_claim(db, run, &other, 1, 4, true, &err), &err);
    CHECK_OK(db_run_claim(db, run, &other, 3, 6, true, &err), &err);
    CHECK(db_run_claim(db, run, &other, 2, 4, true, &err) == MLK_E_USAGE);
    CHECK(db_run_claim(db, run, &other, 4, 6, true, &err) == MLK_E_USAGE);
    char want[64];
    snprintf(want, sizeof want, "pid %lld ", (long long)me.pid);
    CHECK(db_run_claim(db, run, &other, 0, 0, true, &err) == MLK_E_USAGE && strstr(err.msg, want) &&
          strstr(err.msg, "(shard 0/2)"));
    CHECK(scalar(db, "SELECT count(*) FROM run_owners") == 1); /* check-only claims wrote nothing */
    /* A claim of another host's process cannot be checked: it counts as alive. */
    mlk_proc_id far = me;
    snprintf(far.host, sizeof far.host, "elsewhere");
    snprintf(far.boot, sizeof far.boot, "another-boot/1");
    CHECK(mlk_proc_alive(&far) == MLK_PROC_UNKNOWN);
    /* This host's earlier boot: everything of then is gone. */
    snprintf(far.host, sizeof far.host, "%s", me.host);
    CHECK(mlk_proc_alive(&far) == MLK_PROC_GONE);
    CHECK_OK(db_run_release(db, run, &me, &err), &err);
    CHECK(scalar(db, "SELECT count(*) FROM run_owners") == 0);
    mlk_proc_id far2 = me;
    snprintf(far2.host, sizeof far2.host, "elsewhere");
    snprintf(far2.boot, sizeof far2.boot, "another-boot/1");
    /* Another host's claim keeps the run while it beats, and goes stale after 10 silent minutes. */
    CHECK_OK(db_run_claim(db, run, &far2, 0, 0, false, &err), &err);
    CHECK(db_run_claim(db, run, &other, 0, 0, true, &err) == MLK_E_USAGE && strstr(err.msg, "cannot be checked"));
    CHECK(sqlite3_exec(db_sqlite(db), "UPDATE run_owners SET beat_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', "
                       "'-9 minutes')", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(db_run_claim(db, run, &other, 0, 0, true, &err) == MLK_E_USAGE);
    CHECK(sqlite3_exec(db_sqlite(db), "UPDATE run_owners SET beat_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', "
                       "'-11 minutes')", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_OK(db_run_claim(db, run, &other, 0, 0, true, &err), &err);
    CHECK_OK(db_run_beat(db, run, &far2, &err), &err); /* a beat renews it */
    CHECK(db_run_claim(db, run, &other, 0, 0, true, &err) == MLK_E_USAGE);
    CHECK_OK(db_run_release(db, run, &far2, &err), &err);
    CHECK(scalar(db, "SELECT count(*) FROM run_owners") == 0);

    /* A child's claim outlives it: gone, and a reused pid (this process's pid with the child's start time) too.
     * Start times count clock ticks (10 ms): a child forked within this process's first tick would share its start
     * time, and the reused pid would look like this very process (in CI it did, the test taking 10 ms): let a few
     * ticks pass first. */
    usleep(50 * 1000);
    pid_t child = fork();
    if (child == 0) {
        mlk_error e = {0};
        db_store *d = NULL;
        mlk_proc_id id;
        mlk_proc_self(&id);
        _exit(db_open(path, &d, &e) || db_run_claim(d, run, &id, 0, 0, false, &e) ? 1 : 0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(scalar(db, "SELECT count(*) FROM run_owners") == 1);
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE run_owners SET pid = %lld", (long long)me.pid);
    CHECK(sqlite3_exec(db_sqlite(db), sql, NULL, NULL, NULL) == SQLITE_OK);
    CHECK_OK(db_run_claim(db, run, &me, 0, 0, false, &err), &err);
    CHECK(scalar(db, "SELECT count(*) FROM run_owners") == 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM run_owners WHERE start_ticks = %lld", (long long)me.start_ticks);
    CHECK(scalar(db, sql) == 1); /* the stale claim went, this one stayed */
    CHECK_OK(db_run_release(db, run, &me, &err), &err);
    db_close(db);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/mlk-run-lock-%d.db", (int)getpid());
    check_names();
    check_claims();
    char side[80];
    for (const char *sfx = ""; sfx; sfx = !*sfx ? "-wal" : !strcmp(sfx, "-wal") ? "-shm" : NULL) {
        snprintf(side, sizeof side, "%s%s", path, sfx);
        unlink(side);
    }
    return check_summary();
}
