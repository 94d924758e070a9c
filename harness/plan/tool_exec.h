/* tool_exec.h: running a cell under a memory tool: finding valgrind, the AddressSanitizer worker and the keep
 * library before anything runs, and each tool cell's argument prefix, environment and private output folder.
 * It must never run a tool through a shell, and never leave a tool cell's folder behind unless asked to. */
#ifndef MLK_TOOL_EXEC_H
#define MLK_TOOL_EXEC_H

#include <limits.h>
#include <stdbool.h>

#include "names.h"
#include "status.h"

struct mlk_plan;
struct mlk_cell;


/* What a plan's tool cells need, found before anything runs. Every module stays mapped until a tool cell's
 * worker exits (libmemleak_keep.so, or the lsan worker's --wrap=dlclose): the tools read stacks at exit, and an
 * engine's global caches stay "still reachable" as in a process that keeps the engine loaded. */
typedef struct mlk_tool_paths {
    char *valgrind;       /* memcheck, massif: the valgrind executable (from PATH) */
    char *supp;           /* memcheck: the suppressions file (ci/valgrind.supp) */
    char *keep;           /* memcheck, massif: libmemleak_keep.so, preloaded (dlclose does nothing: tool_keep.c) */
    char *lsan_worker;    /* lsan: memleak-worker-lsan */
    char **lsan_engines;  /* lsan: engine_<name>_lsan.so for each of mlk_plan.engines (NULL when unused) */
    int n_engines;
} mlk_tool_paths;

/* Find what the plan's tool cells need (*out stays NULL when no cell uses a tool). Fails, as an input error
 * that names what to install or build: MLK_E_NOTFOUND for valgrind missing (Debian package valgrind), the
 * suppressions file, libmemleak_keep.so, or the AddressSanitizer worker and engine (-DMLK_LSAN_WORKER=ON);
 * MLK_E_USAGE for valgrind asked from an AddressSanitizer build of memleak-run, which valgrind cannot run.
 * Lookups: $MLK_VALGRIND_SUPP, then ../share/memleak/valgrind.supp and ../../ci/valgrind.supp from self_dir;
 * $MLK_LSAN_WORKER, then self_dir/memleak-worker-lsan; the lsan engine next to the engine's plugin. */
int mlk_tool_resolve(const struct mlk_plan *p, const char *self_dir, mlk_tool_paths **out, mlk_error *err);
void mlk_tool_paths_free(mlk_tool_paths *t);

/* One tool cell's files: a private folder under $TMPDIR holding the tool's output. */
typedef struct mlk_tool_run {
    int tool;                      /* mlk_tool */
    char dir[PATH_MAX];
    char out[PATH_MAX + 32];       /* memcheck.xml, massif.out, or LSan's log_path prefix "DIR/lsan" */
    char log[PATH_MAX + 32];       /* valgrind's own text messages */
    char arg_out[PATH_MAX + 64], arg_log[PATH_MAX + 64], arg_supp[PATH_MAX + 64];
    char env_asan[PATH_MAX + 256], env_lsan[64], env_preload[PATH_MAX + 16];
} mlk_tool_run;

/* Create cell c's folder (c must run under a tool). MLK_E_IO names the folder. */
int mlk_tool_run_begin(const struct mlk_plan *p, const struct mlk_cell *c, mlk_tool_run *t, mlk_error *err);
/* Remove what mlk_tool_run_begin and the tool created; keep_reason non-NULL keeps them and says why on stderr. */
void mlk_tool_run_end(mlk_tool_run *t, const char *keep_reason);

/* The arguments that go in front of the worker's own (valgrind and its options), borrowed from p and t; returns
 * how many were stored in v (at most max; 0 for lsan, which needs none). */
int mlk_tool_argv(const struct mlk_plan *p, const mlk_tool_run *t, const char **v, int max);
/* The worker program and engine plugin of tool cell c: memleak-worker-lsan and engine_<name>_lsan.so for lsan,
 * self and the cell's plugin otherwise. Borrowed from p. */
const char *mlk_tool_worker(const struct mlk_plan *p, const struct mlk_cell *c, const char *self);
const char *mlk_tool_engine_lib(const struct mlk_plan *p, const struct mlk_cell *c);
/* Environment entries the tool needs ("KEY=VALUE", borrowed from t): LD_PRELOAD of libmemleak_keep.so for
 * valgrind, ASAN_OPTIONS and LSAN_OPTIONS for lsan. Returns how many (at most max). */
int mlk_tool_env(const mlk_tool_run *t, const char **v, int max);
/* What tool cell c runs, for the record (malloc'd; NULL when out of memory): *program the executable (valgrind's
 * own binary, never Debian's sh wrapper; the lsan worker), *args the tool's arguments before the worker's own, one
 * a line. */
int mlk_tool_describe(const struct mlk_plan *p, const struct mlk_cell *c, const mlk_tool_run *t, const char *self,
                      char **program, char **args);
/* The entries of env (a worker's final environment) that a tool, the loader or the allocator reads (LD_*,
 * VALGRIND_*, ASAN_/LSAN_/UBSAN_OPTIONS, GLIBCXX_/GLIBCPP_FORCE_NEW, MALLOC_*, GLIBC_TUNABLES), one a line,
 * malloc'd; nothing else of the environment (tokens, paths) is ever recorded. NULL when out of memory. */
char *mlk_tool_env_record(char *const *env);
/* True for an inherited environment entry the tool cell sets or must not pass on (LD_PRELOAD, ASAN_OPTIONS, ...). */
bool mlk_tool_env_controlled(const char *entry);

#endif
