/* cmd_conformance.c: "refengine conformance DIR...": runs ONNX backend test cases, each in its own child
 * process so a crash or hang is one failed case, and ends with "N passed, N failed, N skipped".
 * It must never exit 0 when any case failed. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "conformance.h"

#define MAX_REASONS 64

typedef struct {
    ref_case_opts opts;
    int timeout_s;
    bool fork_each, quiet;
    int passed, failed, skipped;
    struct {
        char text[160];
        int n;
    } reasons[MAX_REASONS]; /* skips grouped by reason, printed before the summary */
    int n_reasons;
} conf_run;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: refengine conformance [options] DIR...\n"
            "  Runs ONNX backend test cases: each DIR is a case (holding model.onnx) or a folder of cases.\n"
            "  Prints a line per failing or skipped case, the skips counted by reason, then\n"
            "  \"N passed, N failed, N skipped\".\n"
            "  The cases listed in engines/ref/cli/conformance_within.h (ill-conditioned or rounded reference\n"
            "  outputs, each with its reason) have their float outputs judged by the fraction of values within a\n"
            "  tolerance of the output's scale instead of element by element; each prints a \"within\" line\n"
            "  with that fraction and the mean and max difference, passed or failed.\n"
            "  Exit status: 0 when nothing failed, 1 otherwise, 2 on usage errors.\n\n"
            "  --rtol X, --atol X   tolerances (default 1e-3, 1e-5)\n"
            "  --iterations N       infers per data set (default 1)\n"
            "  --timeout S          seconds per case before it counts as failed (default 120)\n"
            "  --no-fork            run cases in this process (for debuggers)\n"
            "  --declared-shapes    compile for the declared input shapes, not the data's (default: the data's)\n"
            "  --quiet              do not print skipped cases\n\n%s",
            ref_cli_engine_help);
}

static bool is_case(const char *dir)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/model.onnx", dir) >= sizeof path)
        return false;
    return access(path, R_OK) == 0;
}

/* A skip's reason without the names that differ between cases: the text after the last "): " or ": " (the
 * engine's own words), with quoted names replaced by '*'. */
static void reason_of(const char *msg, char *out, size_t len)
{
    const char *r = msg;
    if (!strstr(msg, "contradicts"))
        for (const char *q = msg; (q = strstr(q, ": ")); q += 2)
            r = q + 2;
    size_t n = 0;
    /* A quote opens a name only after a space or parenthesis (not in "spec's"), and the next one closes it. */
    for (bool quoted = false; *r && n + 2 < len; r++) {
        bool opens = !quoted && *r == '\'' && (r == msg || r[-1] == ' ' || r[-1] == '(');
        if (opens || (quoted && *r == '\'')) {
            if (opens)
                out[n++] = '*';
            quoted = opens;
            continue;
        }
        if (!quoted)
            out[n++] = *r;
    }
    out[n] = '\0';
}

static void count_reason(conf_run *run, const char *msg)
{
    char key[160];
    reason_of(msg, key, sizeof key);
    for (int i = 0; i < run->n_reasons; i++)
        if (!strcmp(run->reasons[i].text, key)) {
            run->reasons[i].n++;
            return;
        }
    int i = run->n_reasons < MAX_REASONS ? run->n_reasons++ : MAX_REASONS - 1;
    if (i == MAX_REASONS - 1 && run->reasons[i].n)
        snprintf(key, sizeof key, "(other reasons)");
    snprintf(run->reasons[i].text, sizeof run->reasons[i].text, "%s", key);
    run->reasons[i].n++;
}

static void report(conf_run *run, const char *name, const ref_case_result *res)
{
    if (res->verdict == REF_CASE_PASS) {
        run->passed++;
        if (res->msg[0]) /* a declared statistical case: its numbers, passed or not, quiet or not */
            printf("within %s: %s\n", name, res->msg);
    } else if (res->verdict == REF_CASE_SKIP) {
        run->skipped++;
        count_reason(run, res->msg);
        if (!run->quiet)
            printf("skip %s: %s\n", name, res->msg);
    } else {
        run->failed++;
        printf("FAIL %s: %s\n", name, res->msg);
    }
    fflush(stdout);
}

/* Run one case in a child; a signal, timeout or lost result is a failure. */
static void run_forked(conf_run *run, const char *dir, ref_case_result *res)
{
    int fds[2];
    if (pipe(fds)) {
        res->verdict = REF_CASE_FAIL;
        snprintf(res->msg, sizeof res->msg, "pipe failed");
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm((unsigned)run->timeout_s);
        ref_case_run(dir, &run->opts, res);
        ssize_t w = write(fds[1], res, sizeof *res);
        _exit(w == (ssize_t)sizeof *res ? 0 : 3);
    }
    close(fds[1]);
    ssize_t got = pid > 0 ? read(fds[0], res, sizeof *res) : -1;
    close(fds[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (got == (ssize_t)sizeof *res)
        return;
    res->verdict = REF_CASE_FAIL;
    if (pid < 0)
        snprintf(res->msg, sizeof res->msg, "fork failed");
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(res->msg, sizeof res->msg, "timed out after %d s", run->timeout_s);
    else if (WIFSIGNALED(status))
        snprintf(res->msg, sizeof res->msg, "crashed with signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(res->msg, sizeof res->msg, "child exited with status %d and no result", WEXITSTATUS(status));
}

static void run_case(conf_run *run, const char *dir)
{
    ref_case_result res = {0};
    if (run->fork_each)
        run_forked(run, dir, &res);
    else
        ref_case_run(dir, &run->opts, &res);
    /* Name the case by its last two path components, e.g. node/test_add. */
    const char *name = dir + strlen(dir);
    for (int slashes = 0; name > dir; name--)
        if (name[-1] == '/' && ++slashes == 2)
            break;
    report(run, name, &res);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every case directly under dir, in name order. */
static int run_folder(conf_run *run, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "refengine conformance: cannot open %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            char **p = realloc(names, cap * sizeof *p);
            if (!p)
                break;
            names = p;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) < sizeof path && is_case(path))
            run_case(run, path);
        free(names[i]);
    }
    free(names);
    return 0;
}

int ref_cli_conformance(int argc, char **argv)
{
    conf_run run = {.timeout_s = 120, .fork_each = true};
    ref_options_init(&run.opts.engine);
    run.opts.rtol = 1e-3;
    run.opts.atol = 1e-5;
    run.opts.iterations = 1;
    run.opts.shapes_from_data = true;
    int first_dir = argc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = ref_cli_engine_option("conformance", argc, argv, &i, &run.opts.engine);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-fork")) {
            run.fork_each = false;
        } else if (!strcmp(a, "--declared-shapes")) {
            run.opts.shapes_from_data = false;
        } else if (!strcmp(a, "--quiet")) {
            run.quiet = true;
        } else if ((!strcmp(a, "--rtol") || !strcmp(a, "--atol") || !strcmp(a, "--iterations") ||
                    !strcmp(a, "--timeout")) && i + 1 < argc) {
            double v = atof(argv[++i]);
            if (a[2] == 'r')
                run.opts.rtol = v;
            else if (a[2] == 'a')
                run.opts.atol = v;
            else if (a[2] == 'i')
                run.opts.iterations = v < 1 ? 1 : (int)v;
            else
                run.timeout_s = v < 1 ? 1 : (int)v;
        } else if (a[0] == '-') {
            fprintf(stderr, "refengine conformance: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else {
            first_dir = i;
            break;
        }
    }
    if (first_dir >= argc) {
        usage(stderr);
        return 2;
    }
    int bad_dirs = 0;
    for (int i = first_dir; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "refengine conformance: %s is not a folder\n", argv[i]);
            bad_dirs++;
        } else if (is_case(argv[i])) {
            run_case(&run, argv[i]);
        } else if (run_folder(&run, argv[i])) {
            bad_dirs++;
        }
    }
    if (run.n_reasons)
        printf("skipped, by reason:\n");
    for (int i = 0; i < run.n_reasons; i++)
        printf("  %3d  %s\n", run.reasons[i].n, run.reasons[i].text);
    printf("%d passed, %d failed, %d skipped\n", run.passed, run.failed, run.skipped);
    return run.failed || bad_dirs ? 1 : 0;
}
