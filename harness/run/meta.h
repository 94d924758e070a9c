/* meta.h: facts about the machine and the code under test, stored with every run so it can be reproduced.
 * It must never fail a run for a missing fact: unknown ones stay NULL. */
#ifndef MLK_META_H
#define MLK_META_H

#include "store.h"

typedef struct mlk_meta {
    char commit[64], branch[128], host[128], cpu[160], kernel[128], glibc[32];
} mlk_meta;

/* commit/branch: the given ones, else $MLK_COMMIT/$MLK_BRANCH, $GITHUB_SHA/$GITHUB_REF_NAME, else git. */
void mlk_meta_collect(mlk_meta *m, const char *commit, const char *branch);
/* 32 random hex digits and a NUL into out (getrandom; time and pid if that fails). */
void mlk_random_uuid(char out[33]);

/* Point the run record's fields at m's strings (empty ones become NULL). */
void mlk_meta_fill(const mlk_meta *m, db_run_meta *out);

#endif
