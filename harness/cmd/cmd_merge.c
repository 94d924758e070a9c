/* cmd_merge.c: memleak-run merge OUT.db IN.db...: shard dbs (or any memleak dbs) combined into one, for compare and
 * report. It must never write to an input, nor create OUT when an input is not a memleak db; never exit() itself. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "merge_db.h"
#include "store.h"
#include "text.h"

enum { EXIT_OK = 0, EXIT_INPUT = 2, EXIT_INTERNAL = 3 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memleak-run merge [--quiet] OUT.db IN.db...\n\n"
            "Merges memleak dbs (the shards of a batch run with --shard I/N --run-key KEY, or any others) into OUT.db,\n"
            "created if missing. Runs match by uuid, cells by (run uuid, idx); samples, metrics, step stats,\n"
            "comparisons, findings, baselines and change points come along, renumbered. Merging the same input\n"
            "again adds nothing, and the order of inputs does not change the result. Inputs are opened read-only.\n"
            "A run is done once every cell of its matrix is there and finished.\n\n"
            "exit status: 0 merged, 2 usage error or an input that is not a memleak db (named), 3 internal error\n");
}

static int exit_for(int code)
{
    switch (code) {
    case MLK_E_USAGE: case MLK_E_PARSE: case MLK_E_NOTFOUND: case MLK_E_IO: return EXIT_INPUT;
    default: return EXIT_INTERNAL;
    }
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Every input checked before OUT is opened, so a bad one leaves OUT as it was (or absent). */
static int check_inputs(const char *out, char **in, int n)
{
    int code = EXIT_OK;
    for (int i = 0; i < n; i++) {
        mlk_error err = {0};
        int rc = same_file(in[i], out) ? mlk_fail(&err, MLK_E_USAGE, "%s: is the output db itself", in[i])
                                       : mlk_merge_check(in[i], &err);
        if (rc) {
            mlk_fprintf_safe(stderr, "memleak-run merge: %s\n", err.msg);
            code = exit_for(rc);
        }
    }
    return code;
}

static void print_counts(const char *path, const mlk_merge_counts *c)
{
    printf("%s: %lld new run(s), %lld joined; %lld cell(s) added, %lld replaced; %lld samples, %lld metrics, "
           "%lld step stats; %lld baseline(s), %lld comparison(s), %lld finding(s), %lld change point(s)\n",
           path, (long long)c->runs_new, (long long)c->runs_joined, (long long)c->cells_new,
           (long long)c->cells_replaced, (long long)c->samples, (long long)c->metrics, (long long)c->step_stats,
           (long long)c->baselines, (long long)c->comparisons, (long long)c->findings, (long long)c->change_points);
}

int mlk_cmd_merge(int argc, char **argv)
{
    bool quiet = false;
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
            usage(stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[first], "--quiet")) {
            quiet = true;
        } else if (!strcmp(argv[first], "--")) {
            first++;
            break;
        } else {
            fprintf(stderr, "memleak-run merge: unknown option %s (see --help)\n", argv[first]);
            return EXIT_INPUT;
        }
    }
    if (argc - first < 2) {
        fprintf(stderr, "memleak-run merge: give the output db and at least one input db (see --help)\n");
        return EXIT_INPUT;
    }
    const char *out = argv[first];
    char **in = argv + first + 1;
    int n_in = argc - first - 1;
    mlk_merge_setup();
    int code = check_inputs(out, in, n_in);
    if (code)
        return code;
    mlk_error err = {0};
    db_store *db = NULL;
    if (db_open(out, &db, &err)) {
        mlk_fprintf_safe(stderr, "memleak-run merge: %s\n", err.msg);
        return EXIT_INPUT;
    }
    for (int i = 0; i < n_in; i++) {
        mlk_merge_counts c;
        int rc = mlk_merge_db(db, in[i], &c, &err);
        if (rc) {
            /* The others still merge: each input is its own transaction, and this one left nothing behind. */
            mlk_fprintf_safe(stderr, "memleak-run merge: %s (nothing of it merged)\n", err.msg);
            if (exit_for(rc) > code)
                code = exit_for(rc);
        } else if (!quiet) {
            print_counts(in[i], &c);
        }
    }
    db_close(db);
    return code;
}
