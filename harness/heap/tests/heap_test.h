/* heap_test.h: what the heap-shim test programs (C and C++) add to the one test kit: stats access, a check with a
 * formatted message, and the allocator behind the shim. It must never report success without the shim loaded and
 * the expected allocator active behind it. */
#ifndef MLK_HEAP_TEST_H
#define MLK_HEAP_TEST_H

#include "heap_shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shim's tests link nothing of the harness: no error record type, so CHECK_OK prints the code only. */
typedef struct heap_test_error {
    char msg[1];
} heap_test_error;
#define MLK_CHECK_ERROR heap_test_error
#include "mlk_check.h"

/* CHECK, with a printf-style explanation of what was seen. */
#define HT_CHECK(cond, ...)                                                                                  \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            check_passed_++;                                                                                 \
        } else {                                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            check_failed_++;                                                                                 \
        }                                                                                                    \
    } while (0)

static mlk_heap_get_stats_fn heap_test_get_stats;

static inline mlk_heap_stats heap_test_stats(void)
{
    mlk_heap_stats s;
    heap_test_get_stats(&s);
    return s;
}

/* The delta of every counter between two snapshots. */
static inline mlk_heap_stats heap_test_delta(mlk_heap_stats a, mlk_heap_stats b)
{
    mlk_heap_stats d;
    d.live_bytes = b.live_bytes - a.live_bytes;
    d.peak_bytes = b.peak_bytes - a.peak_bytes;
    d.n_allocs = b.n_allocs - a.n_allocs;
    d.n_frees = b.n_frees - a.n_frees;
    d.n_reallocs = b.n_reallocs - a.n_reallocs;
    d.total_bytes = b.total_bytes - a.total_bytes;
    return d;
}

/* Finds the shim and checks that MLK_HEAP_ALLOCATOR (set by run_under.sh) is the allocator really running,
 * by its marker symbol. Returns 0 when the test may go on, else the exit code (1). */
static inline int heap_test_setup(void)
{
    heap_test_get_stats = (mlk_heap_get_stats_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_STATS_SYMBOL);
    if (!heap_test_get_stats) {
        fprintf(stderr, "FAIL: %s not found: run this under run_under.sh (libmemleak_heap.so preloaded)\n",
                MLK_HEAP_STATS_SYMBOL);
        return 1;
    }
    const char *want = getenv("MLK_HEAP_ALLOCATOR");
    if (!want) {
        fprintf(stderr, "FAIL: MLK_HEAP_ALLOCATOR unset: run this under run_under.sh\n");
        return 1;
    }
    /* The registry's markers (harness/core/names.h, which the shim's tests may not include: heap comes first). */
    static const char *const names[] = {"jemalloc", "tcmalloc", "mimalloc"};
    static const char *const markers[] = {"mallctl", "tc_version", "mi_version"};
    for (int i = 0; i < 3; i++) {
        int present = dlsym(RTLD_DEFAULT, markers[i]) != NULL;
        int wanted = strcmp(want, names[i]) == 0;
        if (present != wanted) {
            fprintf(stderr, "FAIL: asked for %s, but %s's marker %s is %s\n", want, names[i], markers[i],
                    present ? "present" : "absent");
            return 1;
        }
    }
    printf("heap shim test under %s\n", want);
    fflush(stdout); /* stdout's buffer is allocated now, not in the middle of a measurement */
    return 0;
}

/* The allocator's own library (MLK_HEAP_ALLOCATOR_LIB), to call it past the shim; NULL if unreachable.
 * The caller dlcloses it. dlopen allocates: call this outside a measured window. */
static inline void *heap_test_allocator(void)
{
    const char *lib = getenv("MLK_HEAP_ALLOCATOR_LIB");
    return lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
}

/* Whoever defines operator new past the shim: the allocator, else libstdc++. NULL if neither is loaded. */
static inline void *heap_test_cxx_runtime(void)
{
    void *h = heap_test_allocator();
    if (h && dlsym(h, "_Znwm"))
        return h;
    if (h)
        dlclose(h);
    return dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
}

static inline int heap_test_finish(const char *name)
{
    printf("%s under %s: ", name, getenv("MLK_HEAP_ALLOCATOR"));
    return check_summary();
}

#endif
