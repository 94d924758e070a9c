/* test_gbench_shim.c: the C shim over Google Benchmark: C functions with a context run the iterations and repetitions
 * asked, args and counters (with their flags) reach the JSON report, errors are reported, bad calls refused.
 * It must never leave its report file behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "db_json.h"
#include "gbench.h"
#include "mlk_check.h"

typedef struct {
    int calls;
    int64_t last_iters;
} counts;

static void bm_count(mlk_gb_state *st, void *ctx)
{
    counts *n = ctx;
    n->calls++;
    int64_t loops = 0;
    while (mlk_gb_keep_running(st))
        loops++;
    n->last_iters = mlk_gb_iterations(st);
    mlk_gb_set_counter(st, "loops", (double)loops, MLK_GB_COUNTER_PLAIN);
    mlk_gb_set_counter(st, "eight_per_iter", 8.0 * (double)loops, MLK_GB_COUNTER_AVG_ITERS);
    mlk_gb_set_counter(st, "arg0", (double)mlk_gb_range(st, 0), MLK_GB_COUNTER_PLAIN);
    mlk_gb_set_counter(st, "arg1", (double)mlk_gb_range(st, 1), MLK_GB_COUNTER_PLAIN);
    mlk_gb_set_counter(st, "arg_out_of_range", (double)mlk_gb_range(st, 5), MLK_GB_COUNTER_PLAIN);
    mlk_gb_set_label(st, "a label");
}

static void bm_fail(mlk_gb_state *st, void *ctx)
{
    (*(int *)ctx)++;
    mlk_gb_skip_with_error(st, "planned failure");
}

static void bm_paused(mlk_gb_state *st, void *ctx)
{
    (void)ctx;
    while (mlk_gb_keep_running(st)) {
        mlk_gb_pause_timing(st);
        usleep(200); /* untimed: must not show in the reported time */
        mlk_gb_resume_timing(st);
    }
}

/* 1.7.1 writes NaN (not JSON) for a 0/0 such as the cv of a counter that is always 0: null it, note it. */
static int null_nans(char *json)
{
    int n = 0;
    for (char *p = json; (p = strstr(p, ": NaN")); n++)
        memcpy(p, ":null", 5);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* The report's "benchmarks", each entry as its members, read through the store's JSON reader (db_json.h). */
typedef struct {
    db_json_item *m;
    int n;
} entry;

typedef struct {
    entry *e;
    int n;
} entries;

static int entries_read(db_store *db, const char *json, entries *out, mlk_error *err)
{
    db_json_item *b = NULL;
    int nb = 0, rc = db_json_items(db, json, "$.benchmarks", &b, &nb, err);
    memset(out, 0, sizeof *out);
    if (!rc && !(out->e = calloc((size_t)nb + 1, sizeof *out->e)))
        rc = MLK_E_NOMEM;
    for (int i = 0; !rc && i < nb; i++)
        if (b[i].type == DB_JSON_OBJECT && !(rc = db_json_items(db, b[i].text, "$", &out->e[out->n].m,
                                                                &out->e[out->n].n, err)))
            out->n++;
    db_json_items_free(b, nb);
    return rc;
}

static void entries_free(entries *x)
{
    for (int i = 0; i < x->n; i++)
        db_json_items_free(x->e[i].m, x->e[i].n);
    free(x->e);
}

/* A member's text ("" when absent or null) and number (NaN when absent or not a number). */
static const char *str_of(const entry *e, const char *key)
{
    const db_json_item *it = db_json_find(e->m, e->n, key);
    return it && it->text ? it->text : "";
}

static double num_of(const entry *e, const char *key)
{
    const db_json_item *it = db_json_find(e->m, e->n, key);
    return it ? it->num : NAN;
}

static bool is_count_rep(const entry *e)
{
    return !strncasecmp(str_of(e, "run_name"), "BM_count/", 9) && !strcmp(str_of(e, "run_type"), "iteration");
}

/* The entry named name, or NULL. */
static const entry *named(const entries *x, const char *name)
{
    for (int i = 0; i < x->n; i++)
        if (!strcmp(str_of(&x->e[i], "name"), name))
            return &x->e[i];
    return NULL;
}

static void check_report(const char *json)
{
    mlk_error err = {0};
    db_store *db = NULL;
    /* Only lends SQLite's JSON functions; a file, as db_open refuses ":memory:" (results kept nowhere). */
    char dbp[] = "/tmp/mlk-gbench-db-XXXXXX";
    int fd = mkstemp(dbp);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    CHECK_OK(db_open(dbp, &db, &err), &err);
    if (!db) {
        unlink(dbp);
        return;
    }
    db_json_type t;
    CHECK(db_json_type_at(db, json, "$", &t, &err) == MLK_OK);
    entries x;
    CHECK_OK(entries_read(db, json, &x, &err), &err);
    /* 2 instances x 3 repetitions of BM_count, each with exactly 50 iterations and its counters. */
    int reps = 0, full = 0, medians = 0;
    for (int i = 0; i < x.n; i++) {
        const entry *e = &x.e[i];
        reps += is_count_rep(e);
        full += is_count_rep(e) && num_of(e, "iterations") == 50 && num_of(e, "loops") == 50 &&
                num_of(e, "eight_per_iter") == 8 && !strcmp(str_of(e, "label"), "a label") &&
                num_of(e, "arg_out_of_range") == 0;
        medians += !strcmp(str_of(e, "run_type"), "aggregate") && !strcmp(str_of(e, "aggregate_name"), "median");
    }
    CHECK(reps == 6);
    CHECK(full == 6);
    const entry *e73 = named(&x, "BM_count/7/3/iterations:50/repeats:3");
    const entry *e94 = named(&x, "BM_count/9/4/iterations:50/repeats:3");
    CHECK(e73 && num_of(e73, "arg0") * 100 + num_of(e73, "arg1") == 703);
    CHECK(e94 && num_of(e94, "arg0") == 9);
    CHECK(e94 && num_of(e94, "repetitions") == 3);
    /* Aggregates over the repetitions, as compare.py and import-gbench read them. */
    CHECK(medians == 2);
    const entry *fail = named(&x, "BM_fail");
    CHECK(fail && num_of(fail, "error_occurred") == 1);
    CHECK(fail && !strcmp(str_of(fail, "error_message"), "planned failure"));
    /* 20 x 200 us paused per run: the time per iteration stays far below the 200 us slept. */
    const entry *paused = named(&x, "BM_paused/iterations:20");
    CHECK(paused && num_of(paused, "real_time") < 100 && !strcmp(str_of(paused, "time_unit"), "us"));
    entries_free(&x);
    db_close(db);
    char side[64];
    snprintf(side, sizeof side, "%s-wal", dbp);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", dbp);
    unlink(side);
    unlink(dbp);
}

static void check_refusals(void)
{
    mlk_error err = {0};
    CHECK(mlk_gb_register(NULL, bm_paused, NULL, &err) == NULL && err.code == MLK_E_USAGE);
    CHECK(mlk_gb_register("", bm_paused, NULL, &err) == NULL && err.code == MLK_E_USAGE);
    CHECK(mlk_gb_register("BM_nofn", NULL, NULL, &err) == NULL && err.code == MLK_E_USAGE);
    CHECK(mlk_gb_set_unit(NULL, MLK_GB_MS) == MLK_E_USAGE);
    CHECK(mlk_gb_set_counter(NULL, "x", 1, 0) == MLK_E_USAGE);
    CHECK(mlk_gb_set_label(NULL, "x") == MLK_E_USAGE);
    CHECK(!mlk_gb_keep_running(NULL));
    CHECK(mlk_gb_range(NULL, 0) == 0 && mlk_gb_iterations(NULL) == 0);
    mlk_gb_skip_with_error(NULL, "ignored");
    mlk_gb_pause_timing(NULL);
    mlk_gb_resume_timing(NULL);
}

int main(void)
{
    char path[] = "/tmp/mlk-gbench-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    check_refusals();

    mlk_error err = {0};
    counts n = {0};
    int fails = 0;
    mlk_gb_bench *b = mlk_gb_register("BM_count", bm_count, &n, &err);
    CHECK(b != NULL);
    CHECK_OK(mlk_gb_set_iterations(b, 50), NULL);
    CHECK_OK(mlk_gb_set_repetitions(b, 3), NULL);
    CHECK_OK(mlk_gb_add_args(b, (const int64_t[]){7, 3}, 2), NULL);
    CHECK_OK(mlk_gb_add_args(b, (const int64_t[]){9, 4}, 2), NULL);
    CHECK(mlk_gb_add_args(b, (const int64_t[]){1}, 1) == MLK_E_USAGE); /* a family's instances share the arity */
    CHECK(mlk_gb_set_iterations(b, 0) == MLK_E_USAGE);
    CHECK(mlk_gb_set_repetitions(b, 0) == MLK_E_USAGE);
    CHECK(mlk_gb_set_min_time(b, 0) == MLK_E_USAGE);
    CHECK(mlk_gb_set_unit(b, 7) == MLK_E_USAGE);
    mlk_gb_bench *f = mlk_gb_register("BM_fail", bm_fail, &fails, &err);
    CHECK(f != NULL);
    mlk_gb_bench *p = mlk_gb_register("BM_paused", bm_paused, NULL, &err);
    CHECK(p != NULL && mlk_gb_set_iterations(p, 20) == 0 && mlk_gb_set_unit(p, MLK_GB_US) == 0);

    /* 1.7.1 refuses a min_time with a unit: the run is refused as a whole, nothing runs. */
    char a0[] = "test_gbench_shim", bad[] = "--benchmark_min_time=0.5s";
    char *argv1[] = {a0, bad, NULL};
    int argc1 = 2;
    CHECK(mlk_gb_run(&argc1, argv1, &err) == MLK_E_USAGE);
    CHECK(strstr(err.msg, "0.5s") != NULL);
    CHECK(n.calls == 0 && fails == 0);
    /* Values 1.7.1 would answer with its help and exit(0): refused before the library sees them. */
    char badfmt[] = "--benchmark_format=yaml", badunit[] = "--benchmark_time_unit=min";
    char *argv3[] = {a0, badfmt, NULL}, *argv4[] = {a0, badunit, NULL};
    int argc3 = 2, argc4 = 2;
    CHECK(mlk_gb_run(&argc3, argv3, &err) == MLK_E_USAGE && strstr(err.msg, "yaml"));
    CHECK(mlk_gb_run(&argc4, argv4, &err) == MLK_E_USAGE && strstr(err.msg, "min"));
    CHECK(n.calls == 0);

    char out[64], fmt[] = "--benchmark_out_format=json";
    snprintf(out, sizeof out, "--benchmark_out=%s", path);
    char *argv2[] = {a0, out, fmt, NULL};
    int argc2 = 3;
    int rc = mlk_gb_run(&argc2, argv2, &err);
    CHECK(rc == 4); /* BM_count/7/3, BM_count/9/4, BM_fail, BM_paused */
    CHECK(argc2 == 1);
    CHECK(n.calls == 6 && n.last_iters == 50);
    CHECK(fails == 1);
    char *json = slurp(path);
    CHECK(json != NULL);
    CHECK(json && null_nans(json) == 2); /* arg_out_of_range's cv, once per instance */
    if (json)
        check_report(json);
    free(json);
    unlink(path);
    mlk_gb_clear();
    return check_summary();
}
