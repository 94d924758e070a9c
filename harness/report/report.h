/* report.h: what `memleak-run report` knows about one run (read through the store's db_report.h) and the files it
 * writes from it: TSV data and gnuplot plots, index.html, summary.md, junit.xml. It must never write to the db nor
 * run a query of its own: reports read plain structs. */
#ifndef MLK_REPORT_H
#define MLK_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "alert.h"
#include "db_report.h"
#include "db_sites.h"
#include "fmt.h"
#include "names.h"
#include "status.h"
#include "store.h"

enum { MLK_REP_MEMORY, MLK_REP_TREND, MLK_REP_MATRIX, MLK_REP_SIGNALS }; /* and report_plot.c's scripts[] */

/* One plot: written as data/<base>.tsv (and more TSV for some kinds), rendered to plots/<base>.png and .svg. */
typedef struct mlk_rep_plot {
    int kind;
    char *base;          /* file name stem, safe characters only: "memory-cell-3", "trend-c3-iteration-peak_kib" */
    char *title;
    int cell;            /* index into mlk_report.cells of the cell (memory) or of a cell of the config (trend) */
    char *step, *metric; /* trend and matrix: what is plotted */
    char *ylabel;        /* trend: the unit of its y axis */
    /* Figures the script needs, by kind. memory: first measured iteration, first iteration of the late half,
     * last iteration, 1 when live heap was measured. trend: points, y min, y max, change points, flagged points,
     * points with a baseline band. matrix: series (bars per group), groups. */
    double a[6];
    bool png, svg;       /* the rendered files exist */
} mlk_rep_plot;

typedef struct mlk_rep_cell {
    int64_t id;
    int idx;
    char *label;         /* the axes as "k=v k=v" ("cell N" when there are none) */
    char *axes_json, *config_key, *allocator, *status, *metric, *detail, *error;
    int signal, exit_code; /* -1 when NULL */
    double slope, late_slope, growth, seconds; /* NaN when NULL */
    int memory_plot;     /* index into plots, -1 when none */
    int signals_plot;    /* every judged signal per iteration, one panel each (issue 9); -1 when none */
    char *tool_html;     /* tool cells (issue 6): their leaks with stacks, or heap peak, as HTML; NULL otherwise */
    char *sites_html, *sites_brief; /* plain cells (issue 9): where it grew, with stacks, and its top sites in a
                                       few lines; NULL when the worker sent no site report */
    db_series_row *series; /* every judged memory signal's verdict (issue 9), names.h's order; NULL for none */
    int n_series;
    char *expected;      /* the scenario expects this cell's verdict (expect:, issue 22): its reason ("" for none);
                            NULL when it does not */
} mlk_rep_cell;

/* A finding of the newest comparison of the run. */
typedef struct mlk_rep_finding {
    int cell;            /* index into cells, -1 when the finding's cell is not in this run */
    char *step, *metric, *kind, *detail;
    double current, baseline, delta_rel, delta_abs, p_value; /* NaN when NULL */
    int plot;            /* trend plot index, -1 when none */
} mlk_rep_finding;

/* A change point of a config of the run (any run of its history). */
typedef struct mlk_rep_cp {
    int cell;            /* a cell of this run with the config */
    char *step, *metric, *run_uuid, *commit_sha;
    double before, after, t;
    bool this_run;       /* detected at the reported run */
    int plot;
} mlk_rep_cp;

typedef struct mlk_report {
    int64_t run_id;
    char *uuid, *scenario, *commit, *branch, *host, *started_at, *finished_at, *status;
    mlk_rep_cell *cells;
    int n_cells;
    char *baseline;      /* the newest comparison's baseline, NULL when the run was never compared */
    mlk_rep_finding *findings;
    int n_findings;
    mlk_rep_cp *cps;
    int n_cps;
    mlk_rep_plot *plots;
    int n_plots;
    char *plot_error;    /* why plots are missing (gnuplot not installed, ...), NULL when all rendered */
    const char *link_base; /* borrowed: prefix of summary.md's links (where CI publishes DIR), "" for relative */
    /* The findings as alert summaries (issue 22): alert_findings[i].ref is the index into findings. */
    mlk_finding *alert_findings;
    int n_alert_findings;
    mlk_alert *alerts;
    int n_alerts;
    int gate;            /* mlk_gate: which alerts fail junit.xml's cases; MLK_GATE_MEMORY by default */
} mlk_report;

/* ---- report_data.c ---- */
/* Load the run, its cells (with their tool findings as HTML), the findings of its newest comparison and its
 * configs' change points from the store (db_report_load) into a new report (*out, freed with mlk_rep_free).
 * The run is found with db_report_find_run. MLK_E_NOTFOUND, MLK_E_DB, MLK_E_NOMEM. */
int mlk_rep_load(db_store *db, int64_t run_id, mlk_report **out, mlk_error *err);
void mlk_rep_free(mlk_report *r);
/* Append a plot (strings copied); returns its index or a negative status. */
int mlk_rep_add_plot(mlk_report *r, int kind, const char *base, const char *title, int cell, const char *step,
                     const char *metric, mlk_error *err);
/* The trend plot of (config of cell, step, metric), or -1. */
int mlk_rep_find_trend(const mlk_report *r, int cell, const char *step, const char *metric);

/* ---- report_alerts.c ---- */
/* Group r's findings into ranked alerts (alert.h), their effects from the run's stored thresholds, and mark the
 * cells whose verdict its expect: covers. MLK_E_NOMEM. */
int mlk_rep_alerts_build(db_store *db, mlk_report *r, mlk_error *err);
/* Whether alert a fails r->gate. */
bool mlk_rep_alert_fails(const mlk_report *r, int a);
/* The regression alert of cell (index into cells), or -1. */
int mlk_rep_cell_alert(const mlk_report *r, int cell);
/* The alerts section that leads summary.md / index.html. */
void mlk_rep_alerts_md(FILE *f, const mlk_report *r);
void mlk_rep_alerts_html(FILE *f, const mlk_report *r);

/* ---- report_export.c ---- */
/* Write every plot's data, read from the store, under dir/data/ (dir absolute) and register the plots in r. */
int mlk_rep_export(db_store *db, mlk_report *r, const char *dir, const char *matrix_step, mlk_error *err);

/* ---- report_plot.c ---- */
/* Render every registered plot with gnuplot (program: $MLK_GNUPLOT or "gnuplot") and the scripts in plots_dir,
 * one process per plot, arguments as a vector. Marks which files exist. A missing gnuplot is MLK_E_NOTFOUND,
 * with r->plot_error set. */
int mlk_rep_render(mlk_report *r, const char *dir, const char *plots_dir, mlk_error *err);

/* ---- report_html.c, report_text.c ---- */
int mlk_rep_write_html(const mlk_report *r, const char *path, mlk_error *err);
int mlk_rep_write_summary(const mlk_report *r, const char *path, mlk_error *err);
int mlk_rep_write_junit(const mlk_report *r, const char *path, mlk_error *err);

/* ---- report_fmt.c: escaping and number formatting shared by the writers ---- */
/* Write s escaped for XML and HTML text and attribute values: & < > " ' as entities, control characters shown as
 * text.h does ("\e", "\x01", "\u009b"), invalid UTF-8 as U+FFFD, so the output always parses. NULL writes nothing. */
void mlk_rep_xml(FILE *f, const char *s);
/* Write s for Markdown text: punctuation that would start markup is backslash-escaped, newlines and tabs become
 * spaces, other control characters and invalid UTF-8 are shown as text.h does. */
void mlk_rep_md(FILE *f, const char *s);
/* Copy s into out (size len) for a TSV field gnuplot reads: tabs and control characters shown as text.h does,
 * double quotes replaced, never cut mid-character. */
void mlk_rep_tsv_field(char *out, size_t len, const char *s);
/* A metric's value in readable units: kib and bytes as KiB/MiB, wall_ms as ms, growth as B/iter. */
void mlk_rep_fmt_metric(char *out, size_t len, const char *metric, double v);
/* The failing verdicts: leak, crashed, timeout, oom, error. */
bool mlk_rep_status_fails(const char *status);
/* Whether the cell ran to an end: a pending cell (never started) or a running one (an attempt killed with memleak-run)
 * has no samples, findings or sites of its own, so the report neither queries nor writes anything per such cell: a
 * 100,000-cell run interrupted early costs what its finished cells cost. */
static inline bool mlk_rep_cell_ran(const mlk_rep_cell *c)
{
    return c->status && strcmp(c->status, "pending") && strcmp(c->status, "running");
}
/* A cell whose verdict fails and that the scenario does not expect. */
bool mlk_rep_cell_fails(const mlk_rep_cell *c);
/* Close f, turning any write error into MLK_E_IO naming path. */
int mlk_rep_close(FILE *f, const char *path, mlk_error *err);

/* ---- tool_html.c ---- */
/* A tool cell's findings as an HTML fragment (a table of leak records with their stacks, or the heap peak and
 * its sites), every stored string escaped; *out is malloc'd, or NULL when there are none. MLK_E_NOMEM. */
int mlk_tool_html(const db_report_tool *t, char **out, mlk_error *err);
/* The same for cell_id, read from the store (as many records as the fragment lists). MLK_E_DB, MLK_E_NOMEM. */
int mlk_tool_html_cell(db_store *db, int64_t cell_id, char **out, mlk_error *err);

/* ---- sites_html.c ---- */
/* Where a plain cell's memory grew (issue 9): how sites were recorded and each growing site with its stack (*html),
 * and its top sites in a few lines for the cells table (*brief); every stored string escaped, both malloc'd, NULL
 * when the cell has no site report. MLK_E_NOMEM. */
int mlk_sites_html(const db_site_report *r, char **html, char **brief, mlk_error *err);
/* The same for cell_id, read from the store. MLK_E_DB, MLK_E_NOMEM. */
int mlk_sites_html_cell(db_store *db, int64_t cell_id, char **html, char **brief, mlk_error *err);

#endif
