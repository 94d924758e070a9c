/* cmd_report.c: `memleak-run report [--run ID] --out DIR`: plots (gnuplot), index.html, summary.md and junit.xml
 * for one run. It must never exit() itself nor write to the db: it opens it through db_report_open, whose
 * connection refuses writes. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "files.h"
#include "guide.h"
#include "report.h"
#include "text.h"

enum { EXIT_OK = 0, EXIT_INPUT = 2, EXIT_INTERNAL = 3 };

typedef struct {
    const char *run, *db, *out, *step, *plots_dir, *link_base, *gate;
    int no_plots, guide;
} report_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: memleak-run report [--run ID] --out DIR [options]\n"
            "       memleak-run report --guide [--run ID] [--db PATH]\n\n"
            "Writes a report of one run into DIR: plots/ (PNG and SVG, drawn by gnuplot from the TSV files in\n"
            "data/), index.html (static, no network references), summary.md (for a PR comment) and junit.xml,\n"
            "and guide.md when the run tests recommendations of OpenVINO's memory guide (scenarios/openvino-guide.yaml).\n"
            "--guide prints only that section (Markdown) on stdout and writes nothing.\n\n"
            "options:\n"
            "  --run ID          run id, uuid or 'latest' (default: the newest run)\n"
            "  --db PATH         results database (default ./memleak.db)\n"
            "  --out DIR         output folder, created when missing (required)\n"
            "  --step STEP       the step of the matrix plot (default: infer when the run has it, else iteration)\n"
            "  --plots-dir DIR   where memory.gp, trend.gp and matrix.gp are (default: $MLK_PLOTS_DIR, then\n"
            "                    ../share/memleak/plots and ../../plots next to the executable)\n"
            "  --link-base URL   prefix of the links in summary.md, for a PR comment: where CI publishes DIR,\n"
            "                    ending in '/' (default: links relative to DIR; index.html is always offline)\n"
            "  --gate G          which alerts of the run's newest comparison fail junit.xml's cases: memory\n"
            "                    (default), latency, all or none (the same as compare's --gate)\n"
            "  --no-plots        write the data, html, summary and junit without running gnuplot\n"
            "  --guide           print the guide section: each recommendation of OpenVINO's memory guide, the\n"
            "                    cells that test it, their figures and a verdict; memleak's detector beside\n"
            "                    detector: openvino per cell\n"
            "  --help\n\n"
            "gnuplot comes from the Debian package gnuplot-nox ($MLK_GNUPLOT names another program).\n"
            "exit status: 0 written, 2 usage or input error (no such db or run), 3 internal error (including\n"
            "             plots that could not be rendered: the html, summary and junit are still written)\n");
}

/* Returns 0, 1 for --help, -1 on a usage error (reported on stderr). */
static int parse_args(int argc, char **argv, report_args *a)
{
    memset(a, 0, sizeof *a);
    a->db = "memleak.db";
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **slot = !strcmp(k, "--run")         ? &a->run
                            : !strcmp(k, "--db")        ? &a->db
                            : !strcmp(k, "--out")       ? &a->out
                            : !strcmp(k, "--step")      ? &a->step
                            : !strcmp(k, "--plots-dir") ? &a->plots_dir
                            : !strcmp(k, "--link-base") ? &a->link_base
                            : !strcmp(k, "--gate")      ? &a->gate
                                                        : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(k, "--no-plots")) {
            a->no_plots = 1;
        } else if (!strcmp(k, "--guide")) {
            a->guide = 1;
        } else if (slot) {
            if (!v || !*v) {
                fprintf(stderr, "memleak-run report: %s needs a value\n", k);
                return -1;
            }
            *slot = v;
            i++;
        } else {
            fprintf(stderr, "memleak-run report: unknown %s %s (see --help)\n", k[0] == '-' ? "option" : "argument",
                    k);
            return -1;
        }
    }
    if (!a->out && !a->guide) {
        fprintf(stderr, "memleak-run report: --out DIR is required (see --help)\n");
        return -1;
    }
    if (a->gate && mlk_gate_from_name(a->gate) < 0) {
        fprintf(stderr, "memleak-run report: --gate: expected memory, latency, all or none\n");
        return -1;
    }
    return 0;
}

/* mkdir -p path: a FIFO or a file in the way is the user's input (exit 2). */
static int make_dirs(const char *path, mlk_error *err)
{
    int rc = mlk_mkdirs(path, err);
    return rc ? mlk_fail_prefix(err, "report: ") : MLK_OK;
}

static bool starts_with(const char *s, const char *head)
{
    return !strncmp(s, head, strlen(head));
}

/* Files a previous report left in DIR/sub: only names this command writes, so a stale plot of another run is
 * never linked, and nothing else in the folder is touched. */
static void remove_stale(const char *dir, const char *sub, const char *ext)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name, *dot = strrchr(n, '.');
        if (!(starts_with(n, "memory-cell-") || starts_with(n, "trend-") || starts_with(n, "matrix-") ||
              starts_with(n, "engines-")) || !dot ||
            !strstr(ext, dot))
            continue;
        char file[PATH_MAX];
        if (snprintf(file, sizeof file, "%s/%s", path, n) < (int)sizeof file)
            unlink(file);
    }
    closedir(d);
}

/* The folder holding the gnuplot scripts: explicit, environment, install tree, build tree (bin/ in a build
 * folder directly under the source tree). */
static int find_plots_dir(const char *given, char *out, size_t len, mlk_error *err)
{
    const char *env = getenv("MLK_PLOTS_DIR");
    if (given || (env && *env)) {
        snprintf(out, len, "%s", given ? given : env);
        struct stat st; /* the user's folder: something else there is their input's error */
        if (!stat(out, &st) && !S_ISDIR(st.st_mode))
            return mlk_fail(err, MLK_E_PARSE, "report: %s %s is not a folder", given ? "--plots-dir" : "MLK_PLOTS_DIR",
                            out);
        return MLK_OK;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        const char *rel[] = {"../share/memleak/plots", "../../plots"};
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
            char probe[PATH_MAX + 64];
            snprintf(probe, sizeof probe, "%s/%s/memory.gp", self, rel[i]);
            if (access(probe, R_OK) == 0 && snprintf(out, len, "%s/%s", self, rel[i]) < (int)len)
                return MLK_OK;
        }
    }
    return mlk_fail(err, MLK_E_NOTFOUND, "report: gnuplot scripts (memory.gp, ...) not found next to the "
                                         "executable: give --plots-dir DIR or set MLK_PLOTS_DIR");
}

static int exit_for(int code)
{
    return code == MLK_E_USAGE || code == MLK_E_NOTFOUND || code == MLK_E_PARSE ? EXIT_INPUT : EXIT_INTERNAL;
}

static int write_outputs(const mlk_report *r, const char *dir, mlk_error *err)
{
    char path[PATH_MAX + 32];
    int rc;
    snprintf(path, sizeof path, "%s/index.html", dir);
    if ((rc = mlk_rep_write_html(r, path, err)))
        return rc;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    if ((rc = mlk_rep_write_summary(r, path, err)))
        return rc;
    snprintf(path, sizeof path, "%s/junit.xml", dir);
    return mlk_rep_write_junit(r, path, err);
}

/* The guide section of run_id into f (what names it in messages), or into what/guide.md when f is NULL; with
 * only_if_tested, nothing when the run varies none of the guide's knobs. */
static int write_guide(db_store *db, int64_t run_id, FILE *f, const char *what, bool only_if_tested, mlk_error *err)
{
    db_guide_run *gr = NULL;
    mlk_guide *g = NULL;
    int rc = db_guide_load(db, run_id, &gr, err);
    if (!rc)
        rc = mlk_guide_build(gr, &g, err);
    if (!rc && (!only_if_tested || mlk_guide_n_tested(g) > 0)) {
        FILE *out = f ? f : NULL;
        char path[PATH_MAX + 16];
        if (!out) {
            snprintf(path, sizeof path, "%s/guide.md", what);
            if (!(out = fopen(path, "w")))
                rc = mlk_fail(err, MLK_E_IO, "report: cannot write %s: %s", path, strerror(errno));
        }
        if (!rc)
            rc = mlk_guide_write_md(g, out, f ? what : path, err);
        if (!f && out) {
            int crc = mlk_rep_close(out, path, err);
            rc = rc ? rc : crc;
            if (!rc)
                printf("OpenVINO's memory guide, measured: %s\n", path);
        }
    }
    mlk_guide_free(g);
    db_guide_free(gr);
    return rc;
}

static int guide_only(const report_args *a, mlk_error *err)
{
    db_store *db = NULL;
    int64_t run_id = 0;
    int rc = db_report_open(a->db, &db, err);
    if (!rc && !(rc = db_report_find_run(db, a->run, &run_id, err)))
        rc = write_guide(db, run_id, stdout, "stdout", false, err);
    db_close(db);
    return rc;
}

static int report(const report_args *a, mlk_error *err)
{
    db_store *db = NULL;
    mlk_report *r = NULL;
    char dir[PATH_MAX], plots_dir[PATH_MAX] = "", sub[PATH_MAX + 16];
    int64_t run_id = 0;
    int rc, plot_rc = MLK_OK;
    if ((rc = db_report_open(a->db, &db, err)) || (rc = db_report_find_run(db, a->run, &run_id, err)) ||
        (rc = mlk_rep_load(db, run_id, &r, err)))
        goto out;
    r->link_base = a->link_base;
    r->gate = a->gate ? mlk_gate_from_name(a->gate) : MLK_GATE_MEMORY;
    if (!a->no_plots && (rc = find_plots_dir(a->plots_dir, plots_dir, sizeof plots_dir, err)))
        goto out;
    if ((rc = make_dirs(a->out, err)))
        goto out;
    /* Absolute from here: gnuplot must never see a path it could read as '<command' or '|command'. */
    if (!realpath(a->out, dir)) {
        rc = mlk_fail(err, MLK_E_IO, "report: %s: %s", a->out, strerror(errno));
        goto out;
    }
    snprintf(sub, sizeof sub, "%s/data", dir);
    if ((rc = make_dirs(sub, err)))
        goto out;
    snprintf(sub, sizeof sub, "%s/plots", dir);
    if ((rc = make_dirs(sub, err)))
        goto out;
    remove_stale(dir, "data", ".tsv");
    remove_stale(dir, "plots", ".png.svg");
    if ((rc = mlk_rep_export(db, r, dir, a->step, err)))
        goto out;
    mlk_error perr = {0};
    if (!a->no_plots)
        plot_rc = mlk_rep_render(r, dir, plots_dir, &perr);
    if ((rc = write_outputs(r, dir, err)))
        goto out;
    mlk_error gerr = {0};
    snprintf(sub, sizeof sub, "%s/guide.md", dir);
    unlink(sub); /* a previous report's: this run may test none of the guide */
    if (write_guide(db, run_id, NULL, dir, true, &gerr)) /* the rest of the report stands without it */
        fprintf(stderr, "memleak-run report: no guide.md: %s\n", gerr.msg);
    printf("report of run %lld (%s) written to %s/index.html\n", (long long)r->run_id, r->scenario, dir);
    if (plot_rc) /* the rest of the report is written: still an error, the plots are missing */
        rc = mlk_fail(err, plot_rc == MLK_E_PARSE ? MLK_E_PARSE : MLK_E_INTERNAL, /* a FIFO as a script: input */
                      "report: %.900s (index.html, summary.md and junit.xml were written)", perr.msg);
out:
    mlk_rep_free(r);
    db_close(db);
    return rc;
}

int mlk_cmd_report(int argc, char **argv)
{
    report_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc)
        return prc > 0 ? EXIT_OK : EXIT_INPUT;
    mlk_error err = {0};
    int rc = a.guide ? guide_only(&a, &err) : report(&a, &err);
    if (!rc)
        return EXIT_OK;
    mlk_fprintf_safe(stderr, "memleak-run %s\n", err.msg);
    return exit_for(rc);
}
