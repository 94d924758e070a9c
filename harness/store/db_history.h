/* db_history.h: the store's side of `memleak-run history`: config keys matching what the user typed, every
 * (config, step) measured, and change points stored once. It must never store a change point twice: they are
 * keyed by (config, step, metric, first bad run), and a known one is left as it is. */
#ifndef MLK_DB_HISTORY_H
#define MLK_DB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "store.h"

#define DB_KEY_LEN 1024 /* room for a config key, as mlk_step_figures.config_key */

/* The config keys equal to part or containing it: the exact one first, then the others in order; at most max
 * of them into keys. MLK_E_DB. */
int db_configs_matching(db_store *db, const char *part, char (*keys)[DB_KEY_LEN], int max, int *n,
                        mlk_error *err);

/* The axes of config_key's newest cell as "k=v k=v" into out (the config key itself when it has none). MLK_E_DB. */
int db_config_label(db_store *db, const char *config_key, char *out, size_t len, mlk_error *err);

/* One config and step with step statistics in some run. */
typedef struct db_config_step {
    char config_key[DB_KEY_LEN];
    char step[64];
} db_config_step;

/* Every distinct (config, step) of step_stats, ordered by both. *out is malloc'd (never NULL on success).
 * MLK_E_DB, MLK_E_NOMEM. */
int db_config_steps(db_store *db, db_config_step **out, int *n, mlk_error *err);

/* A level change of a config's metric, at its first run on the new level. */
typedef struct db_change_point {
    const char *config_key, *step, *metric;
    const char *run_uuid, *commit_sha; /* the first run on the new level and its commit (may be NULL) */
    double before, after;              /* the levels' means */
    double t_stat;                     /* not finite: stored NULL */
} db_change_point;

/* Store cp unless that (config, step, metric, run) is stored already; *is_new says which. MLK_E_DB. */
int db_change_point_store(db_store *db, const db_change_point *cp, bool *is_new, mlk_error *err);

#endif
