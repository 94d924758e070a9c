/* cmd_import_gbench.c: "memleak-run import-gbench": store a Google Benchmark JSON report as a run (gbench_import.h),
 * so compare, history and report treat its benchmarks like any cell. It must never store the same report twice:
 * the run's uuid is derived from the file's content and the commit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_util.h"
#include "commands.h"
#include "files.h"
#include "gbench_import.h"
#include "meta.h"
#include "strbuf.h"
#include "text.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: memleak-run import-gbench FILE.json [--commit C] [--branch B] [--db PATH]\n"
               "  Stores a Google Benchmark JSON report (--benchmark_format=json or --benchmark_out=FILE.json; from\n"
               "  memleak-bench or any other program) as one run: a cell per benchmark (engine gbench), its time per\n"
               "  iteration (median over repetitions) as the latency of step 'iteration', one sample per repetition\n"
               "  for compare's Mann-Whitney test, and the user counters peak_rss_kib, heap_live_bytes,\n"
               "  heap_growth_per_iter (and a few synonyms) as memory figures. Then compare, history and report work\n"
               "  on it. Run with --benchmark_repetitions=5 or more: compare needs at least 3 samples per side.\n"
               "  The same file under the same commit is imported once; importing it again does nothing.\n"
               "  --commit, --branch default to $MLK_COMMIT/$MLK_BRANCH, $GITHUB_SHA/$GITHUB_REF_NAME, else git.\n"
               "  --db defaults to ./memleak.db (created if missing).\n"
               "  exit status: 0 imported (or already there), 2 usage or input error, 3 internal error\n");
}

static char *argv_text(int argc, char **argv)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b, "memleak-run");
    for (int i = 0; i < argc; i++)
        mlk_buf_printf(&b, " %s", argv[i]);
    return mlk_buf_take(&b);
}

typedef struct {
    const char *db_path, *commit, *branch, *file;
} import_args;

/* 0 go on, 1 help printed, -1 usage error (printed). */
static int parse(int argc, char **argv, import_args *a)
{
    memset(a, 0, sizeof *a);
    a->db_path = "memleak.db";
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = !strcmp(k, "--db")       ? &a->db_path
                            : !strcmp(k, "--commit") ? &a->commit
                            : !strcmp(k, "--branch") ? &a->branch
                                                     : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 1;
        } else if (slot) {
            if (!v)
                return mlk_cmd_usage("import-gbench", "an option needs a value");
            *slot = v;
            i++;
        } else if (k[0] == '-' && k[1]) {
            fprintf(stderr, "memleak-run import-gbench: unknown option %s (see --help)\n", k);
            return -1;
        } else if (a->file) {
            fprintf(stderr, "memleak-run import-gbench: one file at a time (got %s and %s)\n", a->file, k);
            return -1;
        } else {
            a->file = k;
        }
    }
    if (!a->file) {
        usage(stderr);
        return -1;
    }
    return 0;
}

int mlk_cmd_import_gbench(int argc, char **argv)
{
    import_args a;
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc > 0 ? 0 : 2;
    mlk_meta meta;
    mlk_meta_collect(&meta, a.commit, a.branch);
    char *cmd = argv_text(argc, argv);
    mlk_gbench_import_opts o = {meta.commit[0] ? meta.commit : NULL, meta.branch[0] ? meta.branch : NULL, cmd};
    mlk_gbench_import_result res;
    mlk_error err = {0};
    db_store *db = NULL;
    /* the file first: a FIFO or a folder creates no db */
    if (!(rc = mlk_check_regular(a.file, "report", false, &err)) && !(rc = db_open(a.db_path, &db, &err)))
        rc = mlk_gbench_import_file(db, a.file, &o, &res, &err);
    db_close(db);
    free(cmd);
    if (rc) {
        mlk_fprintf_safe(stderr, "memleak-run import-gbench: %s\n", err.msg);
        return rc == MLK_E_PARSE || rc == MLK_E_IO || rc == MLK_E_NOTFOUND ? 2 : 3;
    }
    if (res.existed) {
        mlk_fprintf_safe(stdout, "%s was imported before as run %lld (commit %s): nothing to do\n", a.file,
                         (long long)res.run_id, o.commit ? o.commit : "unknown");
        return 0;
    }
    mlk_fprintf_safe(stdout, "run %lld stored in %s: %s, %d benchmark(s)", (long long)res.run_id, a.db_path, res.name,
                     res.n_cells);
    if (res.n_failed)
        printf(", %d failed (error_occurred)", res.n_failed);
    if (res.n_skipped)
        printf(", %d skipped (complexity aggregates only)", res.n_skipped);
    printf(", %d repetition sample(s)\n", res.n_samples);
    return 0;
}
