/* cellrun.c: fork + execve of one worker (memleak-run --worker) with its preload and tunables in the environment,
 * RLIMIT_AS for memory_limit_mb, then a poll loop reading its lines until it ends or its deadline passes.
 * It must never go through a shell, and never leave the worker's process group alive. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocators.h"
#include "cellrun.h"
#include "heap_sites.h"
#include "runner.h"
#include "strbuf.h"
#include "table.h"
#include "text.h"
#include "tool_exec.h"
#include "worker.h"

extern char **environ;

#define MAX_ARGS (40 + 2 * MLK_CELL_MAX_OPTS + 2 * MLK_WORKER_MAX_INPUTS + 4096)

typedef struct {
    char *v[MAX_ARGS + 1];
    int n;
    char *owned[MAX_ARGS];
    int n_owned;
    bool failed; /* an entry could not be made (out of memory) or had no room: the vector must not be used */
} argvec;

static void push(argvec *a, const char *s)
{
    /* A NULL here would end the vector early: the worker would run with half its arguments, or without its
     * LD_PRELOAD (the torture suite's allocation loop found both). */
    if (!s || a->n >= MAX_ARGS) {
        a->failed = true;
        return;
    }
    a->v[a->n++] = (char *)s;
}

static void push_owned(argvec *a, char *s)
{
    if (!s || a->n_owned >= MAX_ARGS) {
        free(s);
        a->failed = true;
        return;
    }
    a->owned[a->n_owned++] = s;
    push(a, s);
}

static char *steps_csv(const mlk_step *st, int n)
{
    mlk_buf b = {0};
    mlk_buf_printf(&b, "%s", "");
    for (int i = 0; i < n; i++)
        mlk_buf_printf(&b, "%s%s", i ? "," : "", mlk_step_name(st[i]));
    return mlk_buf_take(&b);
}

/* a + sep + b, malloc'd (NULL when out of memory). */
static char *join(const char *a, const char *sep, const char *b)
{
    mlk_buf buf = {0};
    mlk_buf_printf(&buf, "%s%s%s", a, sep, b);
    return mlk_buf_take(&buf);
}

static void build_argv(const mlk_plan *p, const mlk_cell *c, const char *self, const mlk_tool_run *t, bool decide,
                       argvec *a)
{
    const mlk_scenario *s = p->s;
    char num[2][24];
    /* Tool cells (issue 6): valgrind's options in front, few iterations and no warmup (nothing is judged by the
     * series), and for lsan the AddressSanitizer builds of the worker and engine. */
    const char *prefix[32];
    int n_prefix = t ? mlk_tool_argv(p, t, prefix, 32) : 0;
    for (int i = 0; i < n_prefix; i++)
        push(a, prefix[i]);
    snprintf(num[0], sizeof num[0], "%d", t ? s->tool_iterations : s->iterations);
    snprintf(num[1], sizeof num[1], "%d", t ? 0 : s->warmup);
    push(a, t ? mlk_tool_worker(p, c, self) : self);
    push(a, "--worker");
    push(a, "--fd");
    push(a, "3");
    push(a, "--engine-lib");
    push(a, t ? mlk_tool_engine_lib(p, c) : c->engine_lib);
    push(a, "--model");
    const mlk_plan_model *m = &p->models[c->model];
    push(a, m->path);
    for (int i = 0; i < m->n_inputs; i++) {
        push(a, "--input");
        push(a, m->inputs[i]);
    }
    push(a, "--setup");
    push_owned(a, steps_csv(s->setup, s->n_setup));
    push(a, "--pipeline");
    push_owned(a, steps_csv(s->pipeline, s->n_pipeline));
    push(a, "--teardown");
    push_owned(a, steps_csv(s->teardown, s->n_teardown));
    push(a, "--iterations");
    push_owned(a, strdup(num[0]));
    push(a, "--warmup");
    push_owned(a, strdup(num[1]));
    if (!t && s->duration_s > 0) {
        char ms[24];
        snprintf(ms, sizeof ms, "%lld", (long long)(s->duration_s * 1000.0));
        push(a, "--duration-ms");
        push_owned(a, strdup(ms));
    }
    if (c->trim)
        push(a, "--trim");
    if (decide) { /* iterations: auto: the worker asks at each decision point, on descriptor 4 */
        char n[24];
        snprintf(n, sizeof n, "%d", s->auto_min);
        push(a, "--auto-min");
        push_owned(a, strdup(n));
        push(a, "--control-fd");
        push(a, "4");
    }
    for (int i = 0; s->shapes && i < s->shapes->n_dims; i++) {
        char spec[MLK_SHAPE_NAME_MAX + 16 + 21 * MLK_SHAPE_MAX_VALUES];
        push(a, "--shape");
        push_owned(a, mlk_shape_dim_format(&s->shapes->dims[i], spec, sizeof spec) > 0 ? strdup(spec) : NULL);
    }
    if (s->shapes) {
        char seed[24];
        snprintf(seed, sizeof seed, "%lld", (long long)s->shape_seed);
        push(a, "--shape-seed");
        push_owned(a, strdup(seed));
    }
    for (int i = 0; i < c->n_opts; i++) {
        push(a, "--opt");
        push_owned(a, join(c->opts[i].key, "=", c->opts[i].value));
    }
    a->v[a->n] = NULL;
}

/* True when env entry e ("KEY=...") sets one of the keys the cell controls. */
static bool controlled(const char *e, const mlk_cell *c)
{
    static const char *const keys[] = {"LD_PRELOAD=", "GLIBC_TUNABLES=", "MALLOC_CONF=", MLK_HEAP_SITES_ENV "=",
                                       MLK_HEAP_SITES_INTERVAL_ENV "=", MLK_HEAP_SITES_MAX_ENV "=", NULL};
    for (int i = 0; keys[i]; i++)
        if (!strncmp(e, keys[i], strlen(keys[i])))
            return true;
    if (c->allocator_env)
        for (const char *p = c->allocator_env; *p;) {
            while (*p == ' ')
                p++;
            const char *eq = strchr(p, '=');
            if (!eq)
                break;
            if (!strncmp(e, p, (size_t)(eq - p + 1)))
                return true;
            const char *sp = strchr(p, ' ');
            p = sp ? sp : p + strlen(p);
        }
    return false;
}

/* heap_sites: the shim's mode (off: the worker diffs /proc/self/maps instead) and its sampling interval. */
static void push_sites_env(const mlk_scenario *s, argvec *e)
{
    push(e, s->heap_sites == MLK_HEAP_SITES_EXACT    ? MLK_HEAP_SITES_ENV "=exact"
            : s->heap_sites == MLK_HEAP_SITES_SAMPLE ? MLK_HEAP_SITES_ENV "=sample"
                                                     : MLK_HEAP_SITES_ENV "=off");
    if (s->heap_sites == MLK_HEAP_SITES_SAMPLE) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "%s=%lld", MLK_HEAP_SITES_INTERVAL_ENV, (long long)s->heap_sites_interval_kib * 1024);
        push_owned(e, mlk_buf_take(&b));
    }
}

static void build_env(const mlk_scenario *s, const mlk_cell *c, const char *heap_shim, const mlk_tool_run *t,
                      argvec *e)
{
    for (char **p = environ; *p; p++)
        if (!controlled(*p, c) && !(t && mlk_tool_env_controlled(*p)))
            push(e, *p);
    if (t) { /* tool cells: no heap shim, no allocator preload (the tool replaces malloc), the tool's own settings */
        const char *v[8];
        for (int i = 0, n = mlk_tool_env(t, v, 8); i < n; i++)
            push(e, v[i]);
        e->v[e->n] = NULL;
        return;
    }
    mlk_error ignore = {0};
    const mlk_allocator_info *a = c->allocator_preload ? NULL : mlk_allocator_find(c->allocator, &ignore);
    const char *lib = c->allocator_preload ? c->allocator_preload : a ? a->preload : NULL;
    /* The shim comes first: it must see every call, then forward to the allocator after it. */
    if (heap_shim && lib) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "LD_PRELOAD=%s %s", heap_shim, lib);
        push_owned(e, mlk_buf_take(&b));
    } else if (heap_shim || lib) {
        push_owned(e, join("LD_PRELOAD", "=", heap_shim ? heap_shim : lib));
    }
    if (c->glibc_tunables && c->glibc_tunables[0])
        push_owned(e, join("GLIBC_TUNABLES", "=", c->glibc_tunables));
    push_sites_env(s, e); /* where memory grows (issue 9): for the shim and the worker alike */
    if (c->malloc_conf && c->malloc_conf[0])
        push_owned(e, join("MALLOC_CONF", "=", c->malloc_conf));
    if (c->allocator_env) {
        char *copy = strdup(c->allocator_env);
        e->failed |= !copy;
        for (char *save = NULL, *tok = copy ? strtok_r(copy, " ", &save) : NULL; tok; tok = strtok_r(NULL, " ", &save))
            push_owned(e, strdup(tok));
        free(copy);
    }
    e->v[e->n] = NULL;
}

static void free_vec(argvec *a)
{
    for (int i = 0; i < a->n_owned; i++)
        free(a->owned[i]);
}

/* Bytes execve copies for v (each string, its NUL, its pointer, the closing NULL); the longest string in *longest. */
static size_t vec_bytes(const argvec *v, size_t *longest, const char **which)
{
    size_t total = sizeof(char *);
    for (int i = 0; i < v->n; i++) {
        size_t n = strlen(v->v[i]) + 1;
        total += n + sizeof(char *);
        if (n > *longest) {
            *longest = n;
            *which = v->v[i];
        }
    }
    return total;
}

int mlk_cellrun_check_exec(const mlk_plan *p, const mlk_cell *c, const char *self, const char *heap_shim,
                           mlk_error *err)
{
    argvec *av = calloc(1, sizeof *av), *ev = calloc(1, sizeof *ev);
    int rc = MLK_OK;
    if (!av || !ev) {
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
        goto out;
    }
    build_argv(p, c, self, NULL, p->s->iterations_auto && p->s->duration_s <= 0, av);
    build_env(p->s, c, heap_shim, NULL, ev);
    if (av->failed || ev->failed) {
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory building the worker's %s", av->failed ? "arguments"
                                                                                              : "environment");
        goto out;
    }
    size_t longest = 0;
    const char *which = "";
    size_t total = vec_bytes(av, &longest, &which) + vec_bytes(ev, &longest, &which);
    long page = sysconf(_SC_PAGESIZE), arg_max = sysconf(_SC_ARG_MAX);
    size_t str_max = (size_t)(page > 0 ? page : 4096) * 32; /* MAX_ARG_STRLEN */
    if (longest > str_max)
        rc = mlk_fail(err, MLK_E_USAGE, "cell %d [%.80s]: the worker's %.40s... would be %zu bytes, longer than execve "
                      "takes in one string (%zu, MAX_ARG_STRLEN): it could not start", c->idx, c->label, which,
                      longest, str_max);
    else if (arg_max > 0 && total > (size_t)arg_max)
        rc = mlk_fail(err, MLK_E_USAGE, "cell %d [%.80s]: the worker's arguments and environment would take %zu bytes, "
                      "more than execve takes (%ld, ARG_MAX from the stack limit): it could not start; shorten the "
                      "scenario's environment values or memleak-run's own environment", c->idx, c->label, total,
                      arg_max);
out:
    if (av)
        free_vec(av);
    if (ev)
        free_vec(ev);
    free(av);
    free(ev);
    return rc;
}

/* In the child, after execve failed: say why on the protocol descriptor, as an "E" line the parent keeps as the
 * cell's error (E2BIG: an argument or the environment was too large), then exit 127 as a shell would. Only
 * write(2) and plain string copies: the child of a fork must not allocate. */
static _Noreturn void exec_failed(const char *path, int e)
{
    char line[1024];
    size_t n = 0;
    const char *parts[] = {"E\texec\t0\texecve ", path ? path : "?", ": ", strerror(e),
                           e == E2BIG ? " (the worker's arguments or environment are larger than the kernel takes)"
                                      : "",
                           "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *c = parts[i]; *c && n < sizeof line - 2; c++)
            line[n++] = *c;
    if (line[n - 1] != '\n')
        line[n++] = '\n';
    ssize_t w = write(3, line, n);
    (void)w;
    _exit(127);
}

static pid_t spawn(const mlk_plan *p, const mlk_cell *c, const mlk_cellrun_opts *o, int *rfd, int *cfd,
                   mlk_error *err)
{
    argvec *av = calloc(1, sizeof *av), *ev = calloc(1, sizeof *ev);
    int fds[2] = {-1, -1}, ctl[2] = {-1, -1};
    bool decide = o->on_decide && !o->tool && p->s->iterations_auto && p->s->duration_s <= 0;
    pid_t pid = -1;
    if (!av || !ev) {
        mlk_fail(err, MLK_E_NOMEM, "out of memory");
        goto out;
    }
    build_argv(p, c, o->self_exe, o->tool, decide, av);
    build_env(p->s, c, o->heap_shim, o->tool, ev);
    if (av->failed || ev->failed) {
        mlk_fail(err, MLK_E_NOMEM, "out of memory building the worker's %s", av->failed ? "arguments" : "environment");
        goto out;
    }
    if (pipe2(fds, O_CLOEXEC) || (decide && pipe2(ctl, O_CLOEXEC))) {
        mlk_fail(err, MLK_E_CHILD, "pipe: %s", strerror(errno));
        goto out;
    }
    /* valgrind and ASan reserve address space of their own: RLIMIT_AS would only break them (tool cells) */
    int64_t limit = o->tool ? 0 : p->s->memory_limit_mb;
    pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        if (decide && ctl[0] == 3) { /* out of the way of the sample descriptor first */
            int moved = fcntl(ctl[0], F_DUPFD_CLOEXEC, 5);
            ctl[0] = moved >= 0 ? moved : ctl[0];
        }
        if (fds[1] == 3)
            fcntl(3, F_SETFD, 0);
        else
            dup2(fds[1], 3);
        if (decide && ctl[0] == 4)
            fcntl(4, F_SETFD, 0);
        else if (decide)
            dup2(ctl[0], 4);
        if (limit > 0) {
            struct rlimit rl = {(rlim_t)limit << 20, (rlim_t)limit << 20};
            setrlimit(RLIMIT_AS, &rl);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execve(av->v[0], av->v, ev->v);
        exec_failed(av->v[0], errno);
    }
    if (pid < 0)
        mlk_fail(err, MLK_E_CHILD, "fork: %s", strerror(errno));
    else
        setpgid(pid, pid); /* also from here: no race with the child's own call */
out:
    if (fds[1] >= 0)
        close(fds[1]);
    if (ctl[0] >= 0)
        close(ctl[0]);
    if (pid > 0) {
        *rfd = fds[0];
        *cfd = ctl[1];
    } else {
        if (fds[0] >= 0)
            close(fds[0]);
        if (ctl[1] >= 0)
            close(ctl[1]);
    }
    if (av)
        free_vec(av);
    if (ev)
        free_vec(ev);
    free(av);
    free(ev);
    return pid;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

#define MAX_UNFLUSHED 8192 /* samples held before a hand-over, whatever the clock says */

static int add_sample(mlk_cellrun *r, const mlk_sample *s)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 1024;
        mlk_sample *v = realloc(r->samples, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        r->samples = v;
        r->cap = cap;
    }
    r->samples[r->n++] = *s;
    return 0;
}

/* One protocol line: S sample, A allocator, E error, D done. Unknown lines are ignored. */
static void handle_line(mlk_cellrun *r, char *line)
{
    mlk_sample s;
    if (line[0] == 'S') {
        if (!mlk_sample_decode(line, &s)) {
            r->lost |= add_sample(r, &s) != 0;
            r->last = s;
            r->n_total++;
        }
    } else if (line[0] == 'A' && line[1] == '\t') {
        char *f[3] = {NULL, NULL, NULL};
        char *save = NULL, *tok = strtok_r(line + 2, "\t", &save);
        for (int i = 0; tok && i < 3; i++, tok = strtok_r(NULL, "\t", &save))
            f[i] = tok;
        snprintf(r->alloc_active, sizeof r->alloc_active, "%s", f[0] ? f[0] : "");
        snprintf(r->alloc_lib, sizeof r->alloc_lib, "%s", f[1] ? f[1] : "");
        r->heap = f[2] && f[2][0] == '1';
    } else if (line[0] == 'E' && line[1] == '\t') {
        char *step = line + 2, *oom = strchr(step, '\t');
        char *msg = oom ? strchr(oom + 1, '\t') : NULL;
        if (oom && msg) {
            *oom = '\0';
            snprintf(r->error_step, sizeof r->error_step, "%s", step);
            r->error_oom = oom[1] == '1';
            snprintf(r->error, sizeof r->error, "%s", msg + 1);
        }
    } else if (line[0] == 'M' && line[1] == '\t' && r->n_total > 0) {
        char *name = line + 2, *tab = strchr(name, '\t');
        if (!tab)
            return;
        *tab = '\0';
        if (r->n_metrics == r->cap_metrics) {
            int cap = r->cap_metrics ? r->cap_metrics * 2 : 256;
            mlk_engine_metric *v = realloc(r->metrics, sizeof *v * (size_t)cap);
            if (!v) {
                r->lost = true;
                return;
            }
            r->metrics = v;
            r->cap_metrics = cap;
        }
        mlk_engine_metric *m = &r->metrics[r->n_metrics++];
        m->sample = (int)(r->n_total - 1);
        snprintf(m->name, sizeof m->name, "%s", name);
        m->value = strtoll(tab + 1, NULL, 10);
    } else if (line[0] == 'W' && line[1] == '\t') {
        mlk_cellrun_site_line(&r->sites, line);
    } else if (line[0] == 'P' && line[1] == '\t') {
        r->pause_at = atoi(line + 2);
    } else if (line[0] == 'D') {
        r->done = true;
    }
}

/* Feed new bytes; complete lines are handled, the partial tail stays in buf. */
static void consume(mlk_cellrun *r, char *buf, size_t *have)
{
    size_t start = 0;
    for (size_t i = 0; i < *have; i++)
        if (buf[i] == '\n') {
            buf[i] = '\0';
            handle_line(r, buf + start);
            start = i + 1;
        }
    memmove(buf, buf + start, *have - start);
    *have -= start;
}

/* Hand over new samples and the metrics of samples already handed over (a metric follows its sample). */
static int flush(mlk_cellrun *r, const mlk_cellrun_opts *o, int *flushed, int *flushed_metrics)
{
    int rc = 0, n_m = r->n_metrics - *flushed_metrics;
    if (o->on_batch && (r->n > *flushed || n_m > 0))
        rc = o->on_batch(o->arg, r->samples + *flushed, r->n - *flushed, r->metrics + *flushed_metrics, n_m);
    /* Handed over: the buffers start again (their capacity stays, so a steady run allocates nothing more). */
    r->n = r->n_metrics = 0;
    *flushed = *flushed_metrics = 0;
    return rc;
}

static void classify(mlk_cellrun *r, int status, bool timed_out, bool hung, bool interrupted, int64_t limit_mb)
{
    r->signal = -1;
    r->exit_code = -1;
    if (interrupted) {
        r->end = MLK_END_INTERRUPTED;
    } else if (hung) {
        r->end = MLK_END_HUNG;
    } else if (timed_out) {
        r->end = MLK_END_TIMEOUT;
    } else if (WIFSIGNALED(status)) {
        r->signal = WTERMSIG(status);
        /* Under memory_limit_mb, a process that dies near its limit ran out of memory (a C++ engine aborts
         * on bad_alloc); SIGKILL from outside us is the kernel's OOM killer. */
        int64_t vm = r->n_total ? r->last.m.vm_size_kib : 0;
        bool near = limit_mb > 0 && vm >= limit_mb * 1024 * 9 / 10;
        r->end = r->signal == SIGKILL || near ? MLK_END_OOM : MLK_END_CRASHED;
    } else {
        r->exit_code = WEXITSTATUS(status);
        if (r->exit_code == 0 && r->done)
            r->end = MLK_END_DONE;
        else if (r->exit_code == MLK_WORKER_EXIT_OOM || r->error_oom)
            r->end = MLK_END_OOM;
        else if (r->exit_code == MLK_WORKER_EXIT_STEP_FAILED)
            r->end = MLK_END_STEP_ERROR;
        else
            r->end = MLK_END_OTHER;
    }
}

/* A cell that ended in error always says why: a worker that exited without an "E" line gets the cause its exit
 * status tells (the worker's own stderr went to memleak-run's). */
static void name_cause(mlk_cellrun *r)
{
    if (r->error[0] || (r->end != MLK_END_OTHER && r->end != MLK_END_STEP_ERROR))
        return;
    if (r->exit_code == MLK_WORKER_EXIT_USAGE)
        snprintf(r->error, sizeof r->error, "the worker refused the arguments memleak-run gave it (exit %d): an "
                 "internal error, its reason is on memleak-run's stderr", r->exit_code);
    else if (r->exit_code == 127)
        snprintf(r->error, sizeof r->error, "the worker could not be started (exit 127)");
    else if (r->exit_code == 0)
        snprintf(r->error, sizeof r->error, "the worker exited 0 before it said it was done (%lld samples)",
                 (long long)r->n_total);
    else
        snprintf(r->error, sizeof r->error, "the worker exited with status %d without saying why (its stderr is "
                 "memleak-run's)", r->exit_code);
}

int mlk_cellrun_exec(const mlk_plan *p, const mlk_cell *c, const mlk_cellrun_opts *o, mlk_cellrun *r,
                     mlk_error *err)
{
    int rfd = -1, cfd = -1;
    pid_t pid = spawn(p, c, o, &rfd, &cfd, err);
    if (pid < 0)
        return MLK_E_CHILD;
    /* With duration:, timeout_s is what the cell may take beyond its duration (setup, warmup, teardown). */
    double budget_s = p->s->timeout_s + (o->tool ? 0.0 : p->s->duration_s);
    int64_t deadline = now_ms() + (int64_t)(budget_s * 1000.0), last_flush = now_ms(), last_data = now_ms();
    /* Liveness: a worker that sends nothing for stall_s is hung, whatever is left of its budget. Tool cells run
     * tens of times slower under valgrind and are left to their timeout. */
    int64_t stall_ms = o->tool || p->s->stall_s <= 0 ? INT64_MAX : (int64_t)(p->s->stall_s * 1000.0);
    char *buf = malloc(1 << 16);
    bool buf_ok = buf != NULL;
    if (!buf_ok) { /* nothing can be read: end the worker now rather than wait for it blind */
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    size_t have = 0;
    int flushed = 0, flushed_metrics = 0, rc = MLK_OK;
    bool timed_out = false, hung = false, interrupted = false, eof = false, killed = false;
    while (buf && !eof) {
        int64_t now = now_ms(), left = deadline - now;
        if (!killed && (mlk_run_interrupted || left <= 0 || rc || r->lost || now - last_data >= stall_ms)) {
            interrupted = mlk_run_interrupted || rc;
            hung = !interrupted && !r->lost && left > 0;
            timed_out = !interrupted && !hung && !r->lost;
            if (hung)
                r->stalled_s = (double)(now - last_data) / 1000.0;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            killed = true;
            deadline = INT64_MAX; /* now drain what it wrote before dying */
            left = INT64_MAX;
        }
        struct pollfd pf = {rfd, POLLIN, 0};
        int ready = poll(&pf, 1, (int)(left > 100 || left <= 0 ? 100 : left));
        if (ready > 0) {
            ssize_t n = read(rfd, buf + have, (1 << 16) - 1 - have);
            if (n == 0)
                eof = true;
            else if (n > 0) {
                last_data = now_ms();
                have += (size_t)n;
                consume(r, buf, &have);
                if (have == (1 << 16) - 1)
                    have = 0; /* a line longer than the buffer is garbage: drop it */
            }
        }
        /* iterations: auto: the worker waits at a decision point; it has sent nothing after its "P" line. */
        if (r->pause_at > 0) {
            if (!rc)
                rc = flush(r, o, &flushed, &flushed_metrics);
            last_flush = now_ms();
            bool stop = rc || o->on_decide(o->arg, r->pause_at);
            r->pause_at = 0;
            if (cfd >= 0 && write(cfd, stop ? "s" : "c", 1) != 1) {
                close(cfd); /* the worker is gone: its end is read from the sample pipe */
                cfd = -1;
            }
        }
        /* Every 250 ms, or sooner when a fast worker fills the buffer: the parent holds one batch at most. */
        if (now_ms() - last_flush >= 250 || r->n >= MAX_UNFLUSHED) {
            if (!rc)
                rc = flush(r, o, &flushed, &flushed_metrics);
            last_flush = now_ms();
            if (o->on_tick)
                o->on_tick(o->arg, r->n_total ? r->last.iteration : -1);
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    kill(-pid, SIGKILL); /* anything the worker left in its group goes too */
    close(rfd);
    if (cfd >= 0)
        close(cfd);
    free(buf);
    int frc = flush(r, o, &flushed, &flushed_metrics);
    classify(r, status, timed_out, hung, interrupted, o->tool ? 0 : p->s->memory_limit_mb);
    name_cause(r);
    /* memleak-run's own want of memory is not the cell's verdict: the run stops (exit 3), the cell stays unfinished
     * and --resume runs it again. */
    if (!rc && (r->lost || !buf_ok))
        return mlk_fail(err, MLK_E_NOMEM, "out of memory %s", buf_ok ? "keeping the worker's samples"
                                                                      : "for the worker's line buffer");
    return rc ? rc : frc ? MLK_E_DB : MLK_OK;
}

/* ------------------------------------------------------------------ "W" lines: where memory grew (issue 9) */

/* Split line at tabs in place, keeping empty fields; returns the number of fields (at most max). */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static int64_t opt_int(const char *s)
{
    return s && *s ? strtoll(s, NULL, 10) : -1;
}

static double opt_real(const char *s)
{
    return s && *s ? strtod(s, NULL) : NAN;
}

static char *opt_str(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

static int site_info(db_site_report *r, char **f, int n)
{
    if (n < 14 || (strcmp(f[2], "sample") && strcmp(f[2], "exact") && strcmp(f[2], "maps")))
        return -1;
    snprintf(r->mode, sizeof r->mode, "%s", f[2]);
    r->sample_bytes = opt_int(f[3]);
    r->n_checkpoints = atoi(f[4]);
    r->first_iteration = atoi(f[5]);
    r->last_iteration = atoi(f[6]);
    r->n_sites = opt_int(f[7]);
    r->stacks = opt_int(f[8]);
    r->dropped_sites = opt_int(f[9]);
    r->dropped_blocks = opt_int(f[10]);
    r->dropped_mappings = opt_int(f[11]);
    r->unwind_ns = opt_real(f[12]);
    r->symbolize_ms = opt_real(f[13]);
    r->window_iterations = n >= 17 ? atoi(f[14]) : 0; /* empty when no window ran */
    r->window_ms = n >= 17 ? opt_real(f[15]) : NAN;
    r->window_stacks = n >= 17 ? opt_int(f[16]) : -1;
    r->have = true;
    return 0;
}

static int site_site(db_site_report *r, char **f, int n)
{
    int seq = n >= 10 ? atoi(f[2]) : -1;
    if (seq != r->n || seq >= 1000 || (strcmp(f[3], "heap") && strcmp(f[3], "mmap") && strcmp(f[3], "maps")))
        return -1; /* sites come in order, each once */
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 16;
        db_growth_site *v = realloc(r->sites, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        r->sites = v;
        r->cap = cap;
    }
    db_growth_site *s = &r->sites[r->n];
    memset(s, 0, sizeof *s);
    snprintf(s->kind, sizeof s->kind, "%s", f[3]);
    s->bytes_per_iter = opt_real(f[4]);
    s->blocks_per_iter = opt_real(f[5]);
    s->growth_bytes = strtoll(f[6], NULL, 10);
    s->live_bytes = strtoll(f[7], NULL, 10);
    s->live_blocks = opt_int(f[8]);
    s->path = opt_str(f[9]);
    if (isnan(s->bytes_per_iter)) {
        free(s->path);
        return -1;
    }
    r->n++;
    return 0;
}

static int site_frame(db_site_report *r, char **f, int n)
{
    int seq = n >= 9 ? atoi(f[2]) : -1, depth = n >= 9 ? atoi(f[3]) : -1;
    if (seq < 0 || seq >= r->n || depth != r->sites[seq].n_frames || depth >= 256)
        return -1; /* frames come in order, after their site */
    db_growth_site *s = &r->sites[seq];
    if (s->n_frames == s->cap_frames) {
        int cap = s->cap_frames ? s->cap_frames * 2 : 16;
        db_site_frame *v = realloc(s->frames, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        s->frames = v;
        s->cap_frames = cap;
    }
    db_site_frame *fr = &s->frames[s->n_frames++];
    fr->offset = *f[4] ? (int64_t)strtoull(f[4], NULL, 16) : -1;
    fr->fn = opt_str(f[5]);
    fr->file = opt_str(f[6]);
    fr->line = atoi(f[7]);
    fr->obj = opt_str(f[8]);
    return 0;
}

int mlk_cellrun_site_line(db_site_report *r, char *line)
{
    char *f[20];
    int n = split_tabs(line, f, 20);
    if (n < 3 || strcmp(f[0], "W"))
        return -1;
    if (!strcmp(f[1], "info"))
        return site_info(r, f, n);
    if (!strcmp(f[1], "site"))
        return site_site(r, f, n);
    if (!strcmp(f[1], "frame"))
        return site_frame(r, f, n);
    return -1;
}

int mlk_cellrun_sites_finish(db_store *db, int64_t cell_id, const mlk_cellrun *r, mlk_table_row *row,
                             mlk_error *err)
{
    if (!r->sites.have)
        return MLK_OK;
    mlk_table_sites(row, &r->sites);
    char shown[sizeof row->sites]; /* function and file names of the engine, shown on a terminal */
    snprintf(row->sites, sizeof row->sites, "%s", mlk_text_safe(row->sites, shown, sizeof shown, MLK_TEXT_KEEP_NL));
    return db_sites_store(db, cell_id, &r->sites, err);
}

void mlk_cellrun_free(mlk_cellrun *r)
{
    db_site_report_free(&r->sites);
    free(r->samples);
    r->samples = NULL;
    r->n = r->cap = 0;
    free(r->metrics);
    r->metrics = NULL;
    r->n_metrics = r->cap_metrics = 0;
}

char *mlk_cellrun_tool_env(const mlk_plan *p, const mlk_cell *c, const mlk_tool_run *t)
{
    argvec *ev = calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    build_env(p->s, c, NULL, t, ev); /* tool cells get no heap shim */
    char *text = ev->failed ? NULL : mlk_tool_env_record(ev->v);
    free_vec(ev);
    free(ev);
    return text;
}
