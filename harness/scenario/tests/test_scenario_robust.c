/* test_scenario_robust.c: the scenario parser on broken input: every prefix and hundreds of byte mutations of a
 * valid file (a clean status, a located message, no leak), and an allocation-failure loop over every injection point.
 * It must never leak: LSan runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlk_check.h"
#include "scenario.h"

/* The smallest valid scenario, to build error cases on. */
#define MINIMAL       \
    "name: t\n"       \
    "engine: ref\n"   \
    "model: m.onnx\n" \
    "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"

/* The source tree, for the example scenarios: $MLK_SOURCE_DIR (ctest sets it), else relative to the build. */
static const char *source_dir(void)
{
    const char *s = getenv("MLK_SOURCE_DIR");
    return s && s[0] ? s : ".";
}

static const char robust_text[] =
    "# robustness input\n"
    "name: robust\n"
    "engine: ref\n"
    "model: {generate: transformer, layers: 2, hidden: 64, heads: 4, seq: 16, dynamic: on, inputs: [a.pb]}\n"
    "setup: [load_engine, read_model]\n"
    "pipeline:\n"
    "  - compile_model\n"
    "  - create_request\n"
    "  - infer\n"
    "  - release_request\n"
    "  - release_compiled\n"
    "teardown: [release_model, unload_engine]\n"
    "iterations: 12\n"
    "warmup: 2\n"
    "matrix:\n"
    "  threads: [1, 2]\n"
    "  allocator: [glibc, 'jemalloc']\n"
    "  malloc_trim: [off, on]\n"
    "  glibc_tunables: [\"\", \"glibc.malloc.arena_max=2\"]\n"
    "  fault:\n"
    "    - {name: none}\n"
    "    - {name: leak, inject_leak_bytes: 4096}\n"
    "engine_options: {planner: greedy, arena: on}\n"
    "thresholds: {leak_bytes_per_iter: 512}\n"
    "timeout_s: 30\n"
    "memory_limit_mb: 512\n"
    "detector: memleak\n"
    "heap: on\n";

/* A failed parse must say where: "name:LINE:COL: " with both numbers >= 1. */
static bool located(const char *msg, const char *name)
{
    size_t n = strlen(name);
    int line = 0, col = 0, used = 0;
    return !strncmp(msg, name, n) && sscanf(msg + n, ":%d:%d: %n", &line, &col, &used) == 2 && used > 0 && line >= 1 &&
           col >= 1;
}

static int try_parse(const char *text, size_t len, int *n_ok)
{
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    int rc = mlk_scenario_parse(text, len, "f.yaml", &s, &err);
    if (rc == MLK_OK) {
        ++*n_ok;
        mlk_scenario_free(s);
        return 0;
    }
    if (rc != MLK_E_PARSE || s || !located(err.msg, "f.yaml")) {
        fprintf(stderr, "unclean failure %d: %s\n", rc, err.msg);
        return 1;
    }
    return 0;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_fuzz(void)
{
    size_t len = sizeof robust_text - 1;
    int n_ok = 0, bad = 0;
    CHECK(try_parse(robust_text, len, &n_ok) == 0 && n_ok == 1);
    /* Every prefix, parsed from a buffer of exactly that size so ASan catches any read past it. */
    for (size_t k = 0; k <= len; k++) {
        char *p = malloc(k ? k : 1);
        memcpy(p, robust_text, k);
        bad += try_parse(p, k, &n_ok);
        free(p);
    }
    CHECK(bad == 0);
    CHECK(n_ok >= 2); /* the whole text, and prefixes cut after the last line's value */
    static const char interesting[] = "\0\t\n\r :-[]{},#&*!|>'\"%@`?~\\\x80\xff";
    int mutants = 0, mut_ok = 0;
    for (int i = 0; i < 600; i++) {
        char *p = malloc(len);
        memcpy(p, robust_text, len);
        int edits = 1 + (int)(rng() % 3);
        for (int e = 0; e < edits; e++) {
            size_t at = rng() % len;
            uint64_t r = rng();
            p[at] = (r & 1) ? interesting[(r >> 1) % (sizeof interesting - 1)] : (char)(r >> 8);
        }
        bad += try_parse(p, len, &mut_ok);
        free(p);
        mutants++;
    }
    CHECK(bad == 0);
    /* Some mutants land in comments or values and stay valid; most must not. */
    CHECK(mut_ok > 0 && mut_ok < mutants);
    printf("fuzz: %zu prefixes (%d valid), %d mutants (%d valid), %d unclean\n", len + 1, n_ok - 1, mutants, mut_ok,
           bad);
}

/* SQLite's OOM loop: fail the n-th allocation for n = 0, 1, ... until the parse succeeds; every failure must
 * be a clean MLK_E_NOMEM with *out untouched (LSan checks nothing leaked). */
static void test_alloc_failures(void)
{
    int n;
    bool clean = true;
    for (n = 0; n < 100000; n++) {
        mlk_scenario *s = NULL;
        mlk_error err = {0};
        mlk_scenario_fail_alloc_after(n);
        int rc = mlk_scenario_parse(robust_text, sizeof robust_text - 1, "f.yaml", &s, &err);
        mlk_scenario_fail_alloc_after(-1);
        if (rc == MLK_OK) {
            mlk_scenario_free(s);
            break;
        }
        if (rc != MLK_E_NOMEM || s || !strstr(err.msg, "out of memory")) {
            clean = false;
            fprintf(stderr, "allocation %d failed: %d %s\n", n, rc, err.msg);
        }
    }
    CHECK(clean);
    CHECK(n > 50 && n < 100000);
    printf("allocation failures: %d injection points, all clean\n", n);
    /* The same for errors: a failure injected while an error path builds must stay clean too. */
    static const char late_error[] = MINIMAL "matrix:\n  threads: [1, 2]\n  fault: [{name: a, x: 1}]\n"
                                             "engine_options: {threads: 3}\n";
    for (n = 0; n < 100000; n++) {
        mlk_scenario *s = NULL;
        mlk_error err = {0};
        mlk_scenario_fail_alloc_after(n);
        int rc = mlk_scenario_parse(late_error, sizeof late_error - 1, "f.yaml", &s, &err);
        mlk_scenario_fail_alloc_after(-1);
        if (rc == MLK_E_PARSE)
            break;
        CHECK(rc == MLK_E_NOMEM && !s);
    }
    CHECK(n > 10 && n < 100000);
    /* Reading the file fails cleanly too. */
    char path[1200];
    snprintf(path, sizeof path, "%s/scenarios/quickstart.yaml", source_dir());
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    mlk_scenario_fail_alloc_after(0);
    CHECK(mlk_scenario_load(path, &s, &err) == MLK_E_NOMEM && !s);
    mlk_scenario_fail_alloc_after(-1);
}

int main(void)
{
    test_fuzz();
    test_alloc_failures();
    return check_summary();
}
