/* tool_exec.c: what a tool cell runs: valgrind (memcheck, massif) in front of the worker, or the AddressSanitizer
 * build of the worker and engine (lsan); where their output goes (a private folder per cell) and the environment
 * they need. It must never build a shell command: everything is an argument vector, and every path is found
 * before anything runs. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "plan.h"
#include "strbuf.h"
#include "tool.h"
#include "tool_exec.h"

static char *find_in_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path || !path[0])
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        mlk_buf b = {0};
        mlk_buf_printf(&b, "%.*s/%s", (int)n, n ? p : ".", prog);
        char *cand = mlk_buf_take(&b);
        if (cand && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        p += n + (colon ? 1 : 0);
    }
    return NULL;
}

/* path when it is a readable regular file (a FIFO would block the tool that reads or preloads it); else NULL, and
 * what is there goes into tried. */
static char *usable(char *path, mlk_buf *tried)
{
    mlk_error why = {0};
    if (path && access(path, R_OK) == 0 && !mlk_check_regular(path, "file", false, &why))
        return path;
    if (why.msg[0])
        mlk_buf_printf(tried, " (%s)", why.msg);
    free(path);
    return NULL;
}

/* The first readable regular file of: $env, then each of rel (relative to dir). */
static char *find_file(const char *env, const char *dir, const char *const *rel, mlk_buf *tried)
{
    if (getenv(env) && getenv(env)[0]) {
        mlk_buf_printf(tried, "$%s=%s", env, getenv(env));
        return usable(strdup(getenv(env)), tried);
    }
    for (int i = 0; rel[i]; i++) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "%s/%s", dir, rel[i]);
        char *cand = mlk_buf_take(&b);
        mlk_buf_printf(tried, "%s%s", i ? ", " : "", cand ? cand : "?");
        if ((cand = usable(cand, tried)))
            return cand;
    }
    return NULL;
}

/* engine_ref.so -> engine_ref_lsan.so, in the same folder. */
static char *lsan_twin(const char *lib)
{
    size_t n = strlen(lib);
    mlk_buf b = {0};
    if (n > 3 && !strcmp(lib + n - 3, ".so"))
        mlk_buf_printf(&b, "%.*s_lsan.so", (int)(n - 3), lib);
    else
        mlk_buf_printf(&b, "%s_lsan", lib);
    return mlk_buf_take(&b);
}

/* 1 when path starts with magic (its first n bytes), read without blocking (files.h). */
static int starts_with_bytes(const char *path, const char *magic, size_t n)
{
    int fd;
    int64_t size;
    mlk_error ignore = {0};
    char head[8] = {0};
    if (n > sizeof head || mlk_open_regular(path, "program", &fd, &size, &ignore))
        return 0;
    ssize_t got = read(fd, head, n);
    close(fd);
    return got == (ssize_t)n && !memcmp(head, magic, n);
}

/* The valgrind executable itself, never a script: Debian's /usr/bin/valgrind is a #!/bin/sh wrapper that appends
 * /usr/lib/debug to LD_LIBRARY_PATH and sets GLIBCXX_FORCE_NEW=1 and GLIBCPP_FORCE_NEW=1 for the measured process
 * before it execs $0.bin. Its $0.bin runs instead, so a tool cell's worker gets the environment every other cell
 * gets (the tool's own entries aside: mlk_tool_env), and nothing runs through a shell. $MLK_VALGRIND names it. */
static int real_valgrind(const mlk_plan *p, const char *found, char **out, mlk_error *err)
{
    char real[PATH_MAX], bin[PATH_MAX + 8];
    if (!realpath(found, real))
        return mlk_fail(err, MLK_E_NOTFOUND, "%s: valgrind %s: %s", p->s->path, found, strerror(errno));
    const char *use = real;
    if (!starts_with_bytes(real, "\177ELF", 4)) {
        snprintf(bin, sizeof bin, "%s.bin", real);
        if (!starts_with_bytes(real, "#!", 2) || !starts_with_bytes(bin, "\177ELF", 4) || access(bin, X_OK))
            return mlk_fail(err, MLK_E_NOTFOUND,
                            "%s: valgrind %s is not an executable file%s%s: set MLK_VALGRIND to valgrind's own "
                            "executable (Debian: /usr/bin/valgrind.bin)", p->s->path, found,
                            starts_with_bytes(real, "#!", 2) ? ", but a script without an executable " : "",
                            starts_with_bytes(real, "#!", 2) ? bin : "");
        use = bin;
    }
    return (*out = strdup(use)) ? MLK_OK : mlk_fail(err, MLK_E_NOMEM, "out of memory");
}

static int resolve_valgrind(const mlk_plan *p, mlk_tool_paths *t, const char *tool, mlk_error *err)
{
    /* An ASan build of memleak-run is also the worker valgrind would have to run: valgrind cannot run it. */
    if (dlsym(RTLD_DEFAULT, "__asan_init"))
        return mlk_fail(err, MLK_E_USAGE,
                        "%s: tool %s: this memleak-run is an AddressSanitizer build, which valgrind cannot run; use a "
                        "build configured without -DMLK_SANITIZE=ON",
                        p->s->path, tool);
    if (t->valgrind)
        return MLK_OK;
    const char *env = getenv("MLK_VALGRIND");
    char *found = env && env[0] ? strdup(env) : find_in_path("valgrind");
    if (!found)
        return mlk_fail(err, MLK_E_NOTFOUND,
                        "%s: tool %s needs valgrind, which is not in PATH: install the Debian package valgrind "
                        "(apt-get install valgrind)",
                        p->s->path, tool);
    int rc = real_valgrind(p, found, &t->valgrind, err);
    free(found);
    return rc;
}

static int resolve_supp(const mlk_plan *p, mlk_tool_paths *t, const char *self_dir, mlk_error *err)
{
    static const char *const rel[] = {"../share/memleak/valgrind.supp", "../../ci/valgrind.supp", NULL};
    mlk_buf tried = {0};
    t->supp = find_file("MLK_VALGRIND_SUPP", self_dir, rel, &tried);
    int rc = t->supp ? MLK_OK
                     : mlk_fail(err, MLK_E_NOTFOUND,
                                "%s: tool memcheck needs the suppressions file valgrind.supp (ci/valgrind.supp in the "
                                "source tree): not found in %s; set MLK_VALGRIND_SUPP",
                                p->s->path, tried.s ? tried.s : "?");
    mlk_buf_free(&tried);
    return rc;
}

static int resolve_keep(const mlk_plan *p, mlk_tool_paths *t, const char *self_dir, mlk_error *err)
{
    static const char *const rel[] = {"../lib/libmemleak_keep.so", NULL};
    mlk_buf tried = {0};
    t->keep = find_file("MLK_TOOL_KEEP", self_dir, rel, &tried);
    int rc = t->keep ? MLK_OK
                     : mlk_fail(err, MLK_E_NOTFOUND, "%s: valgrind cells need libmemleak_keep.so (looked for %s): "
                                "build the memleak_keep target", p->s->path, tried.s ? tried.s : "?");
    mlk_buf_free(&tried);
    return rc;
}

static int resolve_lsan(const mlk_plan *p, mlk_tool_paths *t, const char *self_dir, mlk_error *err)
{
    static const char *const rel[] = {"memleak-worker-lsan", NULL};
    static const char *const hint = "an AddressSanitizer build of the worker and engine: configure with "
                                    "-DMLK_LSAN_WORKER=ON (the default where the compiler supports it) and rebuild";
    mlk_buf tried = {0};
    t->lsan_worker = find_file("MLK_LSAN_WORKER", self_dir, rel, &tried);
    int rc = MLK_OK;
    if (!t->lsan_worker || access(t->lsan_worker, X_OK))
        rc = mlk_fail(err, MLK_E_NOTFOUND, "%s: tool lsan needs memleak-worker-lsan (looked for %s), %s", p->s->path,
                      tried.s ? tried.s : "?", hint);
    mlk_buf_free(&tried);
    if (!rc && !(t->lsan_engines = calloc((size_t)p->n_engines, sizeof *t->lsan_engines)))
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    t->n_engines = rc ? 0 : p->n_engines;
    for (int i = 0; i < p->n_cells && !rc; i++) {
        const mlk_cell *c = &p->cells[i];
        int e = 0;
        while (e < p->n_engines && strcmp(p->engines[e], c->engine))
            e++;
        if (c->tool != MLK_TOOL_LSAN || e == p->n_engines || t->lsan_engines[e])
            continue;
        if (!(t->lsan_engines[e] = lsan_twin(p->engine_libs[e])))
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
        else if (access(t->lsan_engines[e], R_OK))
            rc = mlk_fail(err, MLK_E_NOTFOUND, "%s: tool lsan needs %s next to %s, %s", p->s->path,
                          t->lsan_engines[e], p->engine_libs[e], hint);
        else if ((rc = mlk_check_regular(t->lsan_engines[e], "lsan engine plugin", false, err))) /* dlopen'ed */
            mlk_fail_prefix(err, "%s: ", p->s->path);
    }
    return rc;
}

int mlk_tool_resolve(const mlk_plan *p, const char *self_dir, mlk_tool_paths **out, mlk_error *err)
{
    bool used[MLK_TOOL_COUNT] = {false};
    for (int i = 0; i < p->n_cells; i++)
        if (p->cells[i].tool > MLK_TOOL_NONE && p->cells[i].tool < MLK_TOOL_COUNT)
            used[p->cells[i].tool] = true;
    if (!used[MLK_TOOL_MEMCHECK] && !used[MLK_TOOL_MASSIF] && !used[MLK_TOOL_LSAN]) {
        *out = NULL;
        return MLK_OK;
    }
    mlk_tool_paths *t = calloc(1, sizeof *t);
    if (!t)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    const char *dir = self_dir && self_dir[0] ? self_dir : ".";
    int rc = MLK_OK;
    for (int k = MLK_TOOL_MEMCHECK; k <= MLK_TOOL_MASSIF && !rc; k++)
        if (used[k])
            rc = resolve_valgrind(p, t, mlk_tool_name(k), err);
    if (!rc && used[MLK_TOOL_MEMCHECK])
        rc = resolve_supp(p, t, dir, err);
    if (!rc && (used[MLK_TOOL_MEMCHECK] || used[MLK_TOOL_MASSIF]))
        rc = resolve_keep(p, t, dir, err);
    if (!rc && used[MLK_TOOL_LSAN])
        rc = resolve_lsan(p, t, dir, err);
    if (rc) {
        mlk_tool_paths_free(t);
        return rc;
    }
    *out = t;
    return MLK_OK;
}

void mlk_tool_paths_free(mlk_tool_paths *t)
{
    if (!t)
        return;
    free(t->valgrind);
    free(t->supp);
    free(t->keep);
    free(t->lsan_worker);
    for (int i = 0; i < t->n_engines; i++)
        free(t->lsan_engines[i]);
    free(t->lsan_engines);
    free(t);
}

/* ---- one cell ------------------------------------------------------------------------------------------- */

int mlk_tool_run_begin(const mlk_plan *p, const mlk_cell *c, mlk_tool_run *t, mlk_error *err)
{
    memset(t, 0, sizeof *t);
    t->tool = c->tool;
    const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    static const char *const out_names[MLK_TOOL_COUNT] = {"", "memcheck.xml", "massif.out", "lsan"};
    if (c->tool <= MLK_TOOL_NONE || c->tool >= MLK_TOOL_COUNT)
        return mlk_fail(err, MLK_E_INTERNAL, "cell %d runs under no tool", c->idx);
    /* Never run a tool cell without its tool: the plan must have found it (mlk_tool_resolve). */
    const mlk_tool_paths *tp = p->tools;
    if (!tp || (c->tool == MLK_TOOL_LSAN ? !tp->lsan_worker : !tp->valgrind || !tp->keep))
        return mlk_fail(err, MLK_E_INTERNAL, "cell %d: %s was not resolved by the plan", c->idx, mlk_tool_name(c->tool));
    if (snprintf(t->dir, sizeof t->dir, "%s/mlk-%s-cell%d-XXXXXX", tmp, mlk_tool_name(c->tool), c->idx) >=
        (int)sizeof t->dir)
        return mlk_fail(err, MLK_E_IO, "TMPDIR %s: path too long", tmp);
    if (!mkdtemp(t->dir))
        return mlk_fail(err, MLK_E_IO, "cannot create a folder for %s's output under %s: %s", mlk_tool_name(c->tool),
                        tmp, strerror(errno));
    snprintf(t->out, sizeof t->out, "%s/%s", t->dir, out_names[c->tool]);
    snprintf(t->log, sizeof t->log, "%s/valgrind.log", t->dir);
    snprintf(t->arg_out, sizeof t->arg_out, "%s=%s",
             c->tool == MLK_TOOL_MEMCHECK ? "--xml-file" : "--massif-out-file", t->out);
    snprintf(t->arg_log, sizeof t->arg_log, "--log-file=%s", t->log);
    if (p->tools && p->tools->supp)
        snprintf(t->arg_supp, sizeof t->arg_supp, "--suppressions=%s", p->tools->supp);
    if (p->tools && p->tools->keep)
        snprintf(t->env_preload, sizeof t->env_preload, "LD_PRELOAD=%s", p->tools->keep);
    /* log_path writes PREFIX.PID; the frame format puts the function last, since C++ names hold spaces. LSan's
     * exit code on leaks (23, or ASan's 1) would hide how the worker itself ended: leaks are read from the log. */
    snprintf(t->env_asan, sizeof t->env_asan,
             "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:malloc_context_size=30:log_path=%s:"
             "stack_trace_format='%s'",
             t->out, MLK_LSAN_FRAME_FORMAT);
    snprintf(t->env_lsan, sizeof t->env_lsan, "LSAN_OPTIONS=exitcode=0");
    return MLK_OK;
}

void mlk_tool_run_end(mlk_tool_run *t, const char *keep_reason)
{
    if (!t->dir[0])
        return;
    if (keep_reason) {
        fprintf(stderr, "memleak-run: kept %s: %s\n", t->dir, keep_reason);
        t->dir[0] = '\0';
        return;
    }
    DIR *d = opendir(t->dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[PATH_MAX + 300];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            snprintf(path, sizeof path, "%s/%s", t->dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(t->dir);
    t->dir[0] = '\0';
}

int mlk_tool_argv(const mlk_plan *p, const mlk_tool_run *t, const char **v, int max)
{
    const mlk_tool_paths *tp = p->tools;
    const char *memcheck[] = {tp ? tp->valgrind : NULL, "--tool=memcheck", "--xml=yes", t->arg_out, t->arg_log,
                              "--leak-check=full", "--show-leak-kinds=all", t->arg_supp, "--num-callers=30",
                              /* the engine is dlclosed before the leak check: keep its symbols for the stacks */
                              "--keep-debuginfo=yes", "--child-silent-after-fork=yes", "--vgdb=no", NULL};
    /* --vgdb=no: no gdbserver FIFOs in TMPDIR, which a worker killed at its timeout would leave behind */
    const char *massif[] = {tp ? tp->valgrind : NULL, "--tool=massif", t->arg_out, t->arg_log, "--keep-debuginfo=yes",
                            "--child-silent-after-fork=yes", "--vgdb=no", NULL};
    const char **list = t->tool == MLK_TOOL_MEMCHECK ? memcheck : t->tool == MLK_TOOL_MASSIF ? massif : NULL;
    int n = 0;
    if (!list || !list[0])
        return 0;
    for (int i = 0; list[i] && n < max; i++)
        if (list[i][0]) /* an empty string would be taken for the program */
            v[n++] = list[i];
    return n;
}

const char *mlk_tool_worker(const mlk_plan *p, const mlk_cell *c, const char *self)
{
    return c->tool == MLK_TOOL_LSAN && p->tools && p->tools->lsan_worker ? p->tools->lsan_worker : self;
}

const char *mlk_tool_engine_lib(const mlk_plan *p, const mlk_cell *c)
{
    if (c->tool != MLK_TOOL_LSAN || !p->tools)
        return c->engine_lib;
    for (int e = 0; e < p->tools->n_engines; e++)
        if (!strcmp(p->engines[e], c->engine) && p->tools->lsan_engines[e])
            return p->tools->lsan_engines[e];
    return c->engine_lib;
}

int mlk_tool_env(const mlk_tool_run *t, const char **v, int max)
{
    if (t->tool == MLK_TOOL_LSAN && max >= 2) {
        v[0] = t->env_asan;
        v[1] = t->env_lsan;
        return 2;
    }
    if (t->tool != MLK_TOOL_LSAN && t->env_preload[0] && max >= 1) {
        v[0] = t->env_preload;
        return 1;
    }
    return 0;
}

bool mlk_tool_env_controlled(const char *entry)
{
    /* VALGRIND_OPTS could turn --xml off or change the output files under the parser's feet. */
    static const char *const keys[] = {"LD_PRELOAD=", "ASAN_OPTIONS=", "LSAN_OPTIONS=", "VALGRIND_OPTS=", NULL};
    for (int i = 0; keys[i]; i++)
        if (!strncmp(entry, keys[i], strlen(keys[i])))
            return true;
    return false;
}

int mlk_tool_describe(const mlk_plan *p, const mlk_cell *c, const mlk_tool_run *t, const char *self, char **program,
                      char **args)
{
    const char *v[32];
    int n = mlk_tool_argv(p, t, v, 32);
    mlk_buf prog = {0}, a = {0};
    mlk_buf_printf(&prog, "%s", n ? v[0] : mlk_tool_worker(p, c, self));
    mlk_buf_printf(&a, "%s", "");
    for (int i = 1; i < n; i++)
        mlk_buf_printf(&a, "%s%s", i > 1 ? "\n" : "", v[i]);
    *program = mlk_buf_take(&prog);
    *args = mlk_buf_take(&a);
    if (*program && *args)
        return MLK_OK;
    free(*program);
    free(*args);
    *program = *args = NULL;
    return MLK_E_NOMEM;
}

char *mlk_tool_env_record(char *const *env)
{
    static const char *const keys[] = {"LD_", "VALGRIND_", "ASAN_OPTIONS=", "LSAN_OPTIONS=", "UBSAN_OPTIONS=",
                                       "GLIBCXX_FORCE_NEW=", "GLIBCPP_FORCE_NEW=", "MALLOC_", "GLIBC_TUNABLES=",
                                       NULL};
    mlk_buf b = {0};
    mlk_buf_printf(&b, "%s", "");
    for (int i = 0; env && env[i]; i++)
        for (int k = 0; keys[k]; k++)
            if (!strncmp(env[i], keys[k], strlen(keys[k]))) {
                mlk_buf_printf(&b, "%s%s", b.len ? "\n" : "", env[i]);
                break;
            }
    return mlk_buf_take(&b);
}
