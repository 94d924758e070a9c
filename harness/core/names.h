/* names.h: every set of names the harness shares (pipeline steps, phases, tools, allocators, compared metrics),
 * each as one X-macro table, so adding a name is one line. It must never hold behaviour: only names and labels. */
#ifndef MLK_NAMES_H
#define MLK_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Pipeline steps, in the order a full pipeline runs them: X(ENUM, "name"). */
#define MLK_STEP_LIST(X)                          \
    X(LOAD_ENGINE, "load_engine")                 \
    X(READ_MODEL, "read_model")                   \
    X(COMPILE_MODEL, "compile_model")             \
    X(CREATE_REQUEST, "create_request") /* and set its inputs */ \
    X(INFER, "infer")                             \
    X(RELEASE_REQUEST, "release_request")         \
    X(RELEASE_COMPILED, "release_compiled")       \
    X(RELEASE_MODEL, "release_model")             \
    X(UNLOAD_ENGINE, "unload_engine")

typedef enum mlk_step {
#define MLK_X_(e, n) MLK_STEP_##e,
    MLK_STEP_LIST(MLK_X_)
#undef MLK_X_
    MLK_STEP_COUNT
} mlk_step;

/* Samples taken besides the pipeline's steps: the allocator's release call and the end-of-iteration sample. */
#define MLK_STEP_TRIM ((int)MLK_STEP_COUNT)
#define MLK_STEP_ITERATION ((int)MLK_STEP_COUNT + 1)
#define MLK_STEP_ANY_COUNT ((int)MLK_STEP_COUNT + 2)

/* "load_engine", ...; NULL for an out-of-range value. */
const char *mlk_step_name(mlk_step s);
/* -1 when name is not a pipeline step (NULL included). */
int mlk_step_from_name(const char *name);
/* The longest step list (setup, pipeline or teardown) a scenario may give: the parser refuses more, with the
 * list's file:line:col, so a worker never meets a list it cannot hold. */
#define MLK_MAX_STEPS 64

/* "load_engine, read_model, ..." (static). */
const char *mlk_step_names(void);
/* Steps, "malloc_trim" and "iteration"; "?" out of range. */
const char *mlk_any_step_name(int step);
int mlk_any_step_from_name(const char *name);

#define MLK_PHASE_LIST(X) X(SETUP, "setup") X(WARMUP, "warmup") X(MEASURE, "measure") X(TEARDOWN, "teardown")
typedef enum {
#define MLK_X_(e, n) MLK_PHASE_##e,
    MLK_PHASE_LIST(MLK_X_)
#undef MLK_X_
    MLK_PHASE_COUNT
} mlk_phase;
const char *mlk_phase_name(int phase); /* "?" out of range */
int mlk_phase_from_name(const char *name);

/* Memory tools a cell can run under (`tool:`). */
#define MLK_TOOL_LIST(X) X(NONE, "none") X(MEMCHECK, "memcheck") X(MASSIF, "massif") X(LSAN, "lsan")
typedef enum {
#define MLK_X_(e, n) MLK_TOOL_##e,
    MLK_TOOL_LIST(MLK_X_)
#undef MLK_X_
    MLK_TOOL_COUNT
} mlk_tool;
/* NULL out of range. */
const char *mlk_tool_name(int tool);
/* -1 when name is none of them; NULL is "none". */
int mlk_tool_from_name(const char *name);

/* Debian's multiarch library folder, where the allocators' packages put their libraries. */
#define MLK_LIBDIR "/usr/lib/x86_64-linux-gnu/"
/* The allocators memleak sweeps: X(ENUM, "name", Debian package, the library to preload or NULL,
 * a symbol only it exports or NULL, what `malloc_trim: on` calls in it). */
#define MLK_ALLOC_LIST(X)                                                                                        \
    X(GLIBC, "glibc", "libc6", NULL, NULL, "malloc_trim(0)")                                                     \
    X(JEMALLOC, "jemalloc", "libjemalloc2", MLK_LIBDIR "libjemalloc.so.2", "mallctl", "mallctl(\"arena.4096.purge\")")       \
    X(TCMALLOC, "tcmalloc", "libtcmalloc-minimal4", MLK_LIBDIR "libtcmalloc_minimal.so.4", "tc_version",                    \
      "MallocExtension_ReleaseFreeMemory()")                                                                     \
    X(MIMALLOC, "mimalloc", "libmimalloc2.0", MLK_LIBDIR "libmimalloc.so.2", "mi_version", "mi_collect(true)")
typedef enum {
#define MLK_X_(e, n, pkg, lib, marker, release) MLK_ALLOC_##e,
    MLK_ALLOC_LIST(MLK_X_)
#undef MLK_X_
    MLK_ALLOC_COUNT,
    MLK_ALLOC_CUSTOM = MLK_ALLOC_COUNT /* a scenario's own library (allocator: {name, preload}) */
} mlk_alloc_kind;
/* NULL out of range. */
const char *mlk_alloc_name(int kind);
/* -1 when unknown. */
int mlk_alloc_from_name(const char *name);
/* "glibc, jemalloc, tcmalloc, mimalloc" (static). */
const char *mlk_alloc_names(void);

/* The figures compare and history judge per step, as the store keeps them: X(ENUM, "name", "label", "unit").
 * Units: "kib", "bytes", "bytes/iter", "ms". */
#define MLK_METRIC_LIST(X)                                                 \
    X(PEAK, "peak_kib", "peak HWM", "kib")                                 \
    X(FINAL_RSS, "final_rss_kib", "final RSS", "kib")                      \
    X(FINAL_ANON, "final_anon_kib", "final RssAnon", "kib")                \
    X(FINAL_HEAP, "final_heap_bytes", "final live heap", "bytes")          \
    X(GROWTH, "growth", "growth per iteration", "bytes/iter")              \
    X(WALL, "wall_ms", "median latency", "ms")                             \
    X(REQ_HEAP, "heap_peak_bytes", "requested heap peak", "bytes")         \
    X(REQ_MAPPED, "mapped_peak_bytes", "requested mapped peak", "bytes")
typedef enum {
#define MLK_X_(e, n, label, unit) MLK_M_##e,
    MLK_METRIC_LIST(MLK_X_)
#undef MLK_X_
    MLK_M_COUNT
} mlk_metric;
const char *mlk_metric_name(int m);         /* "?" out of range */
int mlk_metric_from_name(const char *name); /* -1 when unknown */
const char *mlk_metric_names(void);         /* comma-separated list (static) */
/* "peak HWM", ... for a metric name; the name itself when unknown, "?" for NULL. */
const char *mlk_metric_label(const char *name);
const char *mlk_metric_unit(int m);

/* The series a cell is judged on, each with its own detector settings (harness/judge/series.c):
 * X(ENUM, "name", "label", "unit"). */
#define MLK_SERIES_LIST(X)                                                        \
    X(HEAP, "heap", "live heap", "bytes")                                         \
    X(ANON, "anon", "anonymous memory beyond the heap", "bytes")                  \
    X(MAPPED, "mapped", "mapped memory beyond the allocator (VmSize)", "bytes")   \
    X(FDS, "fds", "open file descriptors", "count")                               \
    X(THREADS, "threads", "threads", "count")                                     \
    X(MAPPINGS, "mappings", "mmap'd regions", "count")
typedef enum {
#define MLK_X_(e, n, label, unit) MLK_SERIES_##e,
    MLK_SERIES_LIST(MLK_X_)
#undef MLK_X_
    MLK_SERIES_COUNT
} mlk_series_kind;
const char *mlk_series_name(int s);  /* NULL out of range */
const char *mlk_series_label(int s); /* NULL out of range */
const char *mlk_series_unit(int s);  /* "bytes" or "count"; NULL out of range */
int mlk_series_from_name(const char *name);
const char *mlk_series_names(void);  /* "heap, anon, ..." (static) */

/* Index of name in a NULL-free table of n names, or -1. */
int mlk_name_index(const char *const *table, int n, const char *name);

#endif
