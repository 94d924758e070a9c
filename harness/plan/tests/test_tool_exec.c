/* test_tool_exec.c: tool cells before they run: the scenario keys (tool:, the tool axis, tool_iterations), the
 * argument vector and environment of valgrind and lsan cells, their output folder, and what a plan's tool cells
 * need (valgrind, the suppressions file, the lsan worker) with errors that say what to install or build.
 * It must never run valgrind or a worker. */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlk_check.h"
#include "plan.h"
#include "tool.h"
#include "tool_exec.h"
#include "tool_test.h"

#define HEAD "name: t\nengine: ref\nmodel: m.onnx\npipeline: [compile_model, release_compiled]\n"

static mlk_scenario *parse(const char *text, mlk_error *err)
{
    mlk_scenario *s = NULL;
    if (mlk_scenario_parse(text, strlen(text), "t.yaml", &s, err))
        return NULL;
    return s;
}

static void scenario_keys(void)
{
    mlk_error err = {0};
    mlk_scenario *s = parse(HEAD, &err);
    CHECK(s && !s->tool && s->tool_iterations == MLK_DEFAULT_TOOL_ITERATIONS);
    mlk_scenario_free(s);
    s = parse(HEAD "tool: memcheck\ntool_iterations: 5\n", &err);
    CHECK(s && str_eq(s->tool, "memcheck") && s->tool_iterations == 5 && s->tool_loc.line == 5);
    mlk_scenario_free(s);
    s = parse(HEAD "tool: none\n", &err);
    CHECK(s && !s->tool);
    mlk_scenario_free(s);
    s = parse(HEAD "matrix:\n  tool: [none, memcheck, massif, lsan]\n", &err);
    CHECK(s && s->n_axes == 1 && s->axes[0].n_values == 4 && mlk_scenario_is_harness_axis("tool"));
    mlk_scenario_free(s);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {HEAD "tool: valgrind\n", "t.yaml:5:7: tool: expected none, memcheck, massif or lsan, got 'valgrind'"},
        {HEAD "tool: [memcheck]\n", "t.yaml:5:7: tool: expected none, memcheck, massif or lsan, got a list"},
        {HEAD "matrix:\n  tool: [memcheck, helgrind]\n", "t.yaml:6:20: matrix.tool: expected none, memcheck, massif or lsan"},
        {HEAD "tool: lsan\nmatrix:\n  tool: [memcheck]\n", "t.yaml:7:3: matrix.tool: tool is also set at 5:7"},
        {HEAD "tool_iterations: 0\n", "t.yaml:5:18: tool_iterations"},
        {HEAD "matrix:\n  tool: [{name: x}]\n", "t.yaml:6:10: matrix.tool: expected scalar values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mlk_error e = {0};
        s = parse(bad[i].text, &e);
        CHECK(!s);
        if (!strstr(e.msg, bad[i].msg))
            fprintf(stderr, "case %zu: '%s', expected '%s'\n", i, e.msg, bad[i].msg);
        CHECK(strstr(e.msg, bad[i].msg) != NULL);
        mlk_scenario_free(s);
    }
}

static bool has(const char *const *v, int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (str_eq(v[i], want))
            return true;
    return false;
}

static bool has_prefix(const char *const *v, int n, const char *prefix)
{
    for (int i = 0; i < n; i++)
        if (v[i] && !strncmp(v[i], prefix, strlen(prefix)))
            return true;
    return false;
}

/* A plan with one cell per tool, hand-built: what cellrun asks of tool_exec. */
static void commands(void)
{
    mlk_scenario s = {.path = "t.yaml", .engine = "ref"};
    char *engines[] = {"ref"}, *libs[] = {"/x/lib/engine_ref.so"}, *lsan_engines[] = {"/x/lib/engine_ref_lsan.so"};
    mlk_tool_paths tp = {.valgrind = "/usr/bin/valgrind", .supp = "/src/ci/valgrind.supp",
                         .keep = "/x/lib/libmemleak_keep.so", .lsan_worker = "/x/bin/memleak-worker-lsan",
                         .lsan_engines = lsan_engines, .n_engines = 1};
    mlk_cell cells[4] = {{.idx = 0, .tool = MLK_TOOL_NONE}, {.idx = 1, .tool = MLK_TOOL_MEMCHECK},
                         {.idx = 2, .tool = MLK_TOOL_MASSIF}, {.idx = 3, .tool = MLK_TOOL_LSAN}};
    for (int i = 0; i < 4; i++) {
        cells[i].engine = "ref";
        cells[i].engine_lib = libs[0];
    }
    mlk_plan p = {.s = &s, .engines = engines, .engine_libs = libs, .n_engines = 1, .cells = cells, .n_cells = 4,
                  .tools = &tp};
    mlk_error err = {0};
    mlk_tool_run t;
    CHECK(mlk_tool_run_begin(&p, &cells[0], &t, &err) == MLK_E_INTERNAL);
    p.tools = NULL; /* never run a tool cell without its tool */
    CHECK(mlk_tool_run_begin(&p, &cells[1], &t, &err) == MLK_E_INTERNAL && strstr(err.msg, "not resolved"));
    p.tools = &tp;

    CHECK_OK(mlk_tool_run_begin(&p, &cells[1], &t, &err), &err);
    struct stat st;
    CHECK(stat(t.dir, &st) == 0 && S_ISDIR(st.st_mode) && strstr(t.dir, "mlk-memcheck-cell1-"));
    const char *v[32], *e[8];
    int n = mlk_tool_argv(&p, &t, v, 32);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "--xml-file=%s/memcheck.xml", t.dir);
    CHECK(n > 8 && str_eq(v[0], "/usr/bin/valgrind") && has(v, n, "--tool=memcheck") && has(v, n, "--xml=yes"));
    CHECK(has(v, n, want) && has(v, n, "--leak-check=full") && has(v, n, "--show-leak-kinds=all"));
    CHECK(has(v, n, "--suppressions=/src/ci/valgrind.supp") && has(v, n, "--num-callers=30"));
    CHECK(has_prefix(v, n, "--log-file=") && !has(v, n, ""));
    int ne = mlk_tool_env(&t, e, 8);
    CHECK(ne == 1 && str_eq(e[0], "LD_PRELOAD=/x/lib/libmemleak_keep.so"));
    CHECK(str_eq(mlk_tool_worker(&p, &cells[1], "/x/bin/memleak-run"), "/x/bin/memleak-run"));
    CHECK(str_eq(mlk_tool_engine_lib(&p, &cells[1]), "/x/lib/engine_ref.so"));
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", t.dir);
    FILE *f = fopen(t.out, "w"); /* what valgrind would leave there */
    if (f)
        fclose(f);
    mlk_tool_run_end(&t, NULL);
    CHECK(access(dir, F_OK) != 0);

    CHECK_OK(mlk_tool_run_begin(&p, &cells[2], &t, &err), &err);
    n = mlk_tool_argv(&p, &t, v, 32);
    snprintf(want, sizeof want, "--massif-out-file=%s/massif.out", t.dir);
    CHECK(n >= 4 && has(v, n, "--tool=massif") && has(v, n, want) && !has(v, n, "--xml=yes"));
    mlk_tool_run_end(&t, NULL);

    CHECK_OK(mlk_tool_run_begin(&p, &cells[3], &t, &err), &err);
    CHECK(mlk_tool_argv(&p, &t, v, 32) == 0);
    ne = mlk_tool_env(&t, e, 8);
    snprintf(want, sizeof want, "log_path=%s/lsan:", t.dir);
    CHECK(ne == 2 && !strncmp(e[0], "ASAN_OPTIONS=", 13) && strstr(e[0], want) && strstr(e[0], "detect_leaks=1"));
    CHECK(ne == 2 && strstr(e[0], MLK_LSAN_FRAME_FORMAT) && str_eq(e[1], "LSAN_OPTIONS=exitcode=0"));
    CHECK(str_eq(mlk_tool_worker(&p, &cells[3], "/x/bin/memleak-run"), "/x/bin/memleak-worker-lsan"));
    CHECK(str_eq(mlk_tool_engine_lib(&p, &cells[3]), "/x/lib/engine_ref_lsan.so"));
    mlk_tool_run_end(&t, NULL);

    CHECK(mlk_tool_env_controlled("LD_PRELOAD=/x.so") && mlk_tool_env_controlled("ASAN_OPTIONS=a=1"));
    CHECK(mlk_tool_env_controlled("VALGRIND_OPTS=--xml=no") && !mlk_tool_env_controlled("HOME=/root"));
}

/* What the plan needs, found or named: valgrind missing, lsan parts missing. */
static void resolve(void)
{
    mlk_scenario s = {.path = "t.yaml", .engine = "ref"};
    char *engines[] = {"ref"}, *libs[] = {"/nonexistent/lib/engine_ref.so"};
    mlk_cell cells[1] = {{.idx = 0, .tool = MLK_TOOL_NONE, .engine = "ref", .engine_lib = libs[0]}};
    mlk_plan p = {.s = &s, .engines = engines, .engine_libs = libs, .n_engines = 1, .cells = cells, .n_cells = 1};
    static mlk_tool_paths sentinel;
    mlk_tool_paths *tp = &sentinel; /* must be overwritten */
    mlk_error err = {0};
    CHECK_OK(mlk_tool_resolve(&p, "/nonexistent/bin", &tp, &err), &err);
    CHECK(tp == NULL); /* no tool cell: nothing to find */

    char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent", 1);
    cells[0].tool = MLK_TOOL_MEMCHECK;
    int rc = mlk_tool_resolve(&p, "/nonexistent/bin", &tp, &err);
    if (dlsym(RTLD_DEFAULT, "__asan_init")) /* this test is itself an ASan build */
        CHECK(rc == MLK_E_USAGE && strstr(err.msg, "AddressSanitizer build, which valgrind cannot run"));
    else
        CHECK(rc == MLK_E_NOTFOUND && strstr(err.msg, "t.yaml: tool memcheck needs valgrind") &&
              strstr(err.msg, "Debian package valgrind"));
    if (path)
        setenv("PATH", path, 1);
    free(path);

    cells[0].tool = MLK_TOOL_LSAN;
    setenv("MLK_LSAN_WORKER", "/nonexistent/memleak-worker-lsan", 1);
    CHECK(mlk_tool_resolve(&p, "/nonexistent/bin", &tp, &err) == MLK_E_NOTFOUND);
    CHECK(strstr(err.msg, "tool lsan needs memleak-worker-lsan") && strstr(err.msg, "-DMLK_LSAN_WORKER=ON"));
    setenv("MLK_LSAN_WORKER", "/bin/sh", 1); /* any executable: now the engine twin is what is missing */
    CHECK(mlk_tool_resolve(&p, "/nonexistent/bin", &tp, &err) == MLK_E_NOTFOUND);
    CHECK(strstr(err.msg, "/nonexistent/lib/engine_ref_lsan.so next to /nonexistent/lib/engine_ref.so") != NULL);
    unsetenv("MLK_LSAN_WORKER");
}

int main(void)
{
    scenario_keys();
    commands();
    resolve();
    return check_summary();
}
