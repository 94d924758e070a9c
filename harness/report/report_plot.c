/* report_plot.c: renders the report's plots by running gnuplot on the scripts in plots/, one process per plot.
 * It must never build a gnuplot command string: every path and title travels as its own argv element
 * (gnuplot -c script ARG1 ARG2 ...), so no quote, space or newline in them can change what gnuplot runs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "files.h"
#include "spawn.h"

/* Whether prog would be found by execvp. */
static bool runnable(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char full[4096];
        if (n && n + strlen(prog) + 2 <= sizeof full) {
            snprintf(full, sizeof full, "%.*s/%s", (int)n, path, prog);
            struct stat sb;
            if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode) && access(full, X_OK) == 0)
                return true;
        }
        path += n + (path[n] == ':');
    }
    return false;
}

static bool nonempty(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

static void num_arg(char *out, size_t len, double v)
{
    if (isnan(v))
        snprintf(out, len, "NaN");
    else
        snprintf(out, len, "%.9g", v);
}

static int set_plot_error(mlk_report *r, const char *msg, int code, mlk_error *err)
{
    free(r->plot_error);
    r->plot_error = strdup(msg);
    return mlk_fail(err, code, "%s", msg);
}

/* One script per plot kind, in report.h's order. */
static const char *const scripts[] = {"memory.gp", "trend.gp", "matrix.gp", "signals.gp"};

/* Paths are absolute (dir is), so gnuplot never reads one as '<command' or '|command'. */
static int render_one(const mlk_report *r, mlk_rep_plot *p, const char *dir, const char *plots_dir,
                      const char *prog, mlk_error *err)
{
    char script[4096], data[4096], data2[4096], out[4096], a[6][32], counts[100];
    snprintf(script, sizeof script, "%s/%s", plots_dir, scripts[p->kind]);
    snprintf(out, sizeof out, "%s/plots/%s", dir, p->base);
    for (int i = 0; i < 6; i++)
        num_arg(a[i], sizeof a[i], p->a[i]);
    snprintf(counts, sizeof counts, "%s %s %s", a[3], a[4], a[5]); /* trend: one argument, three words */
    const char *argv[16] = {prog, "-c", script};
    int n = 3;
    if (p->kind == MLK_REP_MATRIX) {
        snprintf(data, sizeof data, "%s/data/%s-peak.tsv", dir, p->base);
        snprintf(data2, sizeof data2, "%s/data/%s-latency.tsv", dir, p->base);
        const char *rest[] = {data, data2, out, p->title, a[0], a[1]};
        for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
            argv[n++] = rest[i];
    } else {
        snprintf(data, sizeof data, "%s/data/%s.tsv", dir, p->base);
        const char *kind_arg = p->kind == MLK_REP_MEMORY ? r->cells[p->cell].status : p->ylabel;
        if (p->kind == MLK_REP_SIGNALS)
            kind_arg = p->metric; /* "heap=pass anon=leak ...": each panel's verdict */
        const char *last = p->kind == MLK_REP_TREND ? counts : a[3];
        const char *rest[] = {data, out, p->title, kind_arg ? kind_arg : "-", a[0], a[1], a[2], last};
        if (p->kind == MLK_REP_SIGNALS) /* ARG6: the panels' y ranges (report_export.c) */
            rest[5] = p->step;
        for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
            argv[n++] = rest[i];
    }
    argv[n] = NULL;
    int code = 0, rc = MLK_OK;
    char png[4200], svg[4200];
    snprintf(png, sizeof png, "%s.png", out);
    snprintf(svg, sizeof svg, "%s.svg", out);
    /* gnuplot would block writing into a FIFO left where a plot goes */
    if ((rc = mlk_check_regular(png, "plot", true, err)) || (rc = mlk_check_regular(svg, "plot", true, err)))
        return rc;
    rc = mlk_spawn(argv, NULL, 0, 0, &code, err);
    if (!rc && code != 0)
        rc = mlk_fail(err, MLK_E_CHILD, "gnuplot failed (exit %d) on %s for plots/%s", code, script, p->base);
    p->png = nonempty(png);
    p->svg = nonempty(svg);
    return rc;
}

int mlk_rep_render(mlk_report *r, const char *dir, const char *plots_dir, mlk_error *err)
{
    const char *prog = getenv("MLK_GNUPLOT");
    if (!prog || !*prog)
        prog = "gnuplot";
    char msg[1024];
    if (!runnable(prog)) {
        snprintf(msg, sizeof msg,
                 "gnuplot not found (%s): install the Debian package gnuplot-nox (apt-get install gnuplot-nox); "
                 "the plots were not rendered", prog);
        return set_plot_error(r, msg, MLK_E_NOTFOUND, err);
    }
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", plots_dir, scripts[i]);
        mlk_error why = {0};
        int rc = mlk_check_regular(path, "gnuplot script", false, &why); /* gnuplot would block on a FIFO */
        if (rc) {
            snprintf(msg, sizeof msg, "%.800s (give --plots-dir DIR, or set MLK_PLOTS_DIR)", why.msg);
            return set_plot_error(r, msg, rc == MLK_E_PARSE ? MLK_E_PARSE : MLK_E_NOTFOUND, err);
        }
    }
    int first_rc = MLK_OK, failed = 0;
    mlk_error one = {0}, first = {0};
    for (int i = 0; i < r->n_plots; i++) {
        int rc = render_one(r, &r->plots[i], dir, plots_dir, prog, &one);
        if (rc && !failed++) {
            first_rc = rc;
            first = one;
        }
    }
    if (failed) {
        snprintf(msg, sizeof msg, "%d of %d plots failed to render; the first: %.900s", failed, r->n_plots,
                 first.msg);
        return set_plot_error(r, msg, first_rc, err);
    }
    return MLK_OK;
}
