/* table.c: prints the run's final table: one block per cell, one line per step.
 * It must never hide a cell: every cell appears, with its status, even when it did not run now. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "sample.h"
#include "table.h"
#include "text.h"

static void bytes_str(double b, char *out, size_t len) { mlk_fmt_bytes(out, len, b, true); }

#define TABLE_SITES 5

void mlk_table_sites(mlk_table_row *row, const db_site_report *r)
{
    size_t used = 0, cap = sizeof row->sites;
    row->sites[0] = '\0';
    for (int i = 0; i < r->n && i < TABLE_SITES && used < cap; i++) {
        char one[512];
        db_site_describe(&r->sites[i], one, sizeof one);
        int w = snprintf(row->sites + used, cap - used, "      %s %s\n", i ? "      " : "grows:", one);
        used += w > 0 ? (size_t)w : 0;
    }
    if (r->window_iterations > 0 && used < cap) { /* issue 23: what naming them exactly cost */
        int w = snprintf(row->sites + used, cap - used,
                         "      sites: heap sites measured exactly over %d more iterations (%.0f ms), not judged\n",
                         r->window_iterations, isfinite(r->window_ms) ? r->window_ms : 0.0);
        used += w > 0 ? (size_t)w : 0;
    }
    if (!r->n && used < cap && !strcmp(r->mode, "sample") && r->sample_bytes > 0)
        snprintf(row->sites + used, cap - used,
                 "      grows: no site named: sampling every %lld KiB names a site once it has grown by a few times "
                 "that (heap_sites: exact names any)\n", (long long)r->sample_bytes / 1024);
    else if (!r->n && used < cap)
        snprintf(row->sites + used, cap - used, "      grows: no growing site found (%s)\n", r->mode);
}

#define LABEL_W 44

/* The k-th line of label wrapped at LABEL_W columns, at spaces where it can ("" past the end): a cell's name is never
 * cut, its axes go on under it. */
static void label_line(const char *label, int k, char *out, size_t len)
{
    const char *p = label ? label : "";
    out[0] = '\0';
    for (int line = 0; *p; line++) {
        size_t n = strlen(p);
        if (n > LABEL_W) {
            n = LABEL_W;
            while (n > 0 && p[n] != ' ')
                n--;
            if (!n)
                n = LABEL_W; /* one word longer than the column: split it */
        }
        if (line == k) {
            snprintf(out, len, "%.*s", (int)n, p);
            return;
        }
        p += n;
        while (*p == ' ')
            p++;
    }
}

void mlk_table_print(FILE *f, const mlk_plan *p, const mlk_table_row *rows, int n)
{
    fprintf(f, "\n%-4s  %-44s  %-16s  %10s  %12s  %9s  %s\n", "cell", "config", "step", "peak MiB", "delta/call",
            "ms (med)", "verdict (growth/iter)");
    for (int i = 0; i < n; i++) {
        const mlk_table_row *r = &rows[i];
        const char *status = r->status[0] ? r->status : "not run";
        char lab[LABEL_W + 1];
        int line = 0;
        if (r->n_steps == 0) {
            label_line(p->cells[i].label, line++, lab, sizeof lab);
            fprintf(f, "%-4d  %-44s  %-16s  %10s  %14s  %9s  %s\n", i, lab, "-", "-", "-", "-", status);
            for (label_line(p->cells[i].label, line++, lab, sizeof lab); lab[0];
                 label_line(p->cells[i].label, line++, lab, sizeof lab))
                fprintf(f, "%-4s  %s\n", "", lab);
            mlk_fputs_safe(r->series_line, f, MLK_TEXT_KEEP_NL); /* why it ended before any measured step */
            mlk_fputs_safe(r->tool, f, MLK_TEXT_KEEP_NL);
            continue;
        }
        char verdict[64], slope[32];
        if (r->slope_counts)
            snprintf(slope, sizeof slope, "%+.2f", r->slope);
        else
            bytes_str(r->slope, slope, sizeof slope);
        const mlk_expect *ex = mlk_scenario_expected(p->s, p->cells[i].label, status);
        snprintf(verdict, sizeof verdict, isnan(r->slope) ? "%s%s" : "%s%s (%s)", status, ex ? ", expected" : "",
                 slope);
        for (int s = 0; s < r->n_steps; s++) {
            const db_step_stats *st = &r->steps[s];
            if (st->step == MLK_STEP_ITERATION)
                continue; /* the cell as a whole: its verdict says it */
            char growth[32], peak[32], ms[32], idx[16];
            snprintf(idx, sizeof idx, "%d", i);
            bytes_str(r->heap ? st->heap_delta_median : st->rss_delta_median, growth, sizeof growth);
            snprintf(peak, sizeof peak, st->peak_kib >= 0 ? "%.1f" : "-", st->peak_kib / 1024.0);
            snprintf(ms, sizeof ms, isnan(st->wall_ms_median) ? "-" : "%.3f", st->wall_ms_median);
            label_line(p->cells[i].label, line++, lab, sizeof lab);
            fprintf(f, "%-4s  %-44s  %-16s  %10s  %12s  %9s  %s\n", s ? "" : idx, lab, mlk_any_step_name(st->step),
                    peak, growth, ms, s ? "" : verdict);
        }
        for (label_line(p->cells[i].label, line++, lab, sizeof lab); lab[0];
             label_line(p->cells[i].label, line++, lab, sizeof lab))
            fprintf(f, "%-4s  %s\n", "", lab);
        if (ex)
            fprintf(f, "      expected by the scenario (expect: cells %s)%s%s: does not fail the run\n", ex->cells,
                    ex->reason ? ": " : "", ex->reason ? ex->reason : "");
        mlk_fputs_safe(r->series_line, f, MLK_TEXT_KEEP_NL); /* which signal leaks or plateaus, and how fast */
        mlk_fputs_safe(r->tool, f, MLK_TEXT_KEEP_NL);        /* a tool cell's findings, under its steps (issue 6) */
        if (strcmp(status, "pass"))
            mlk_fputs_safe(r->sites, f, MLK_TEXT_KEEP_NL); /* where it grew (issue 9); noise under a cell that passed */
    }
    fprintf(f, "\ndelta/call: median change of live heap bytes across the step (VmRSS without the heap shim): a leaking\n"
               "step shows it. growth/iter: Theil-Sen slope of the end-of-iteration series the verdict rests on; every\n"
               "signal is judged (live heap, anonymous memory beyond it, VmSize, descriptors, threads, mappings).\n");
}
