/* cmd_baseline.c: "memleak-run baseline": pin a run as its branch's baseline, or list the pins.
 * It must never pin a run that is not finished: a baseline with missing cells would hide regressions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h"
#include "commands.h"
#include "text.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: memleak-run baseline pin RUN [--branch B] [--db PATH]\n"
               "       memleak-run baseline list [--db PATH]\n"
               "  pin: compare --baseline auto then judges runs of branch B (default: RUN's branch) against RUN\n"
               "  instead of the rolling median; the newest pin of a branch wins.\n");
}

static int pin(db_store *db, const char *spec, const char *branch, mlk_error *err)
{
    mlk_run_info r;
    int rc = mlk_runs_find(db, spec, &r, err);
    if (rc)
        return rc;
    if (strcmp(r.status, "done"))
        return mlk_fail(err, MLK_E_USAGE, "run %lld is %s, not done: only a finished run can be a baseline",
                        (long long)r.id, r.status);
    if (!branch)
        branch = r.branch[0] ? r.branch : "";
    rc = db_baseline_pin(db, r.uuid, branch, err);
    if (!rc)
        mlk_fprintf_safe(stdout, "run %lld (commit %.12s) is the baseline of branch '%s'\n", (long long)r.id, r.commit,
                         branch);
    return rc;
}

static int list(db_store *db, mlk_error *err)
{
    db_baseline *v = NULL;
    int n = 0, rc = db_baselines_list(db, &v, &n, err);
    if (rc)
        return rc;
    printf("%-24s %8s %-14s %s\n", "branch", "run", "commit", "pinned at");
    for (int i = 0; i < n; i++)
        mlk_fprintf_safe(stdout, "%-24s %8lld %-14.12s %s\n", v[i].branch, (long long)v[i].run_id,
                         v[i].commit[0] ? v[i].commit : "-", v[i].pinned_at);
    free(v);
    return MLK_OK;
}

int mlk_cmd_baseline(int argc, char **argv)
{
    const char *db_path = "memleak.db", *branch = NULL, *verb = NULL, *run = NULL;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(k, "--db") || !strcmp(k, "--branch")) && v) {
            *(k[2] == 'd' ? &db_path : &branch) = v;
            i++;
        } else if (!verb && k[0] != '-') {
            verb = k;
        } else if (verb && !strcmp(verb, "pin") && !run && k[0] != '-') {
            run = k;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!verb || (strcmp(verb, "pin") && strcmp(verb, "list")) || (!strcmp(verb, "pin") && !run)) {
        usage(stderr);
        return 2;
    }
    mlk_error err = {0};
    db_store *db = NULL;
    int rc = db_open_db(db_path, &db, &err);
    if (!rc)
        rc = !strcmp(verb, "pin") ? pin(db, run, branch, &err) : list(db, &err);
    db_close(db);
    if (rc)
        mlk_fprintf_safe(stderr, "memleak-run baseline: %s\n", err.msg);
    return rc == 0 ? 0 : rc == MLK_E_DB || rc == MLK_E_NOMEM ? 3 : 2;
}
