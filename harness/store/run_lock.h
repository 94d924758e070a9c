/* run_lock.h: one live process per run (issue 25): a claim recorded in run_owners, checked and taken in one
 * IMMEDIATE transaction, released at the run's end; a dead owner's claim is found stale and dropped by the next.
 * It must never let two live processes run the same cell of one run, nor let a dead one keep it. */
#ifndef MLK_RUN_LOCK_H
#define MLK_RUN_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "procid.h"
#include "store.h"

/* Claim run_id's cells of shard index/count (count 0: every cell) for process me. Stale claims of the run are
 * deleted first. Fails with MLK_E_USAGE, naming the owner's pid, host and since when, when a live process (or one
 * on another host or pid namespace, which cannot be checked, that beat within 10 minutes) holds cells this claim
 * would run too; MLK_E_DB.
 * check_only (--dry-run): the same checks, nothing written. */
int db_run_claim(db_store *db, int64_t run_id, const mlk_proc_id *me, int shard_index, int shard_count,
                 bool check_only, mlk_error *err);

/* How often a running owner renews its claim (db_run_beat): what lets a claim that cannot be checked by its process
 * (another host or pid namespace) go stale, after ten missed beats. */
#define DB_RUN_BEAT_S 60

/* Renew me's claim on run_id: its last sign of life is now. MLK_E_DB. */
int db_run_beat(db_store *db, int64_t run_id, const mlk_proc_id *me, mlk_error *err);

/* Drop me's claim on run_id. MLK_E_DB. */
int db_run_release(db_store *db, int64_t run_id, const mlk_proc_id *me, mlk_error *err);

#endif
