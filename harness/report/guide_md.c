/* guide_md.c: the guide report as Markdown: one row per recommendation of OpenVINO's memory guide with its figures and
 * verdict, the thresholds, every cell's figures, and memleak's detector beside `detector: openvino`. It must never
 * print a figure that was not measured as a number (it prints "n/a"), nor compute a verdict: guide.c does. */
#include <math.h>
#include <string.h>

#include "guide_internal.h"
#include "report.h"

static const char *mib(double kib, char *buf, size_t len)
{
    if (isnan(kib))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.1f MiB", kib / 1024.0);
    return buf;
}

static const char *ms(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, v < 10 ? "%.2f ms" : "%.1f ms", v);
    return buf;
}

/* "first -> stable level (from compile #k) -> last", or why there is none. */
static const char *rss_path(const guide_fig *f, char *buf, size_t len)
{
    char a[32], b[32], c[32];
    if (isnan(f->rss_first_kib))
        snprintf(buf, len, "n/a");
    else if (f->stable_at)
        snprintf(buf, len, "%s -> %s from #%d of %d -> %s", mib(f->rss_first_kib, a, sizeof a),
                 mib(f->rss_stable_kib, b, sizeof b), f->stable_at, f->n_compiles, mib(f->rss_last_kib, c, sizeof c));
    else
        snprintf(buf, len, "%s -> no stable point in %d -> %s", mib(f->rss_first_kib, a, sizeof a), f->n_compiles,
                 mib(f->rss_last_kib, c, sizeof c));
    return buf;
}

/* One figure of a pair as "recommended vs compared". */
static void pair_fig(FILE *o, const char *t, const char *b)
{
    fprintf(o, " %s vs %s |", t, b);
}

static void row_pair(FILE *o, const mlk_guide *g, int row, const guide_row *r)
{
    const guide_fig *t = &g->figs[r->pairs[0].test], *b = &g->figs[r->pairs[0].base];
    char x[160], y[160];
    fprintf(o, " ");
    mlk_rep_md(o, t->label);
    fprintf(o, " vs ");
    mlk_rep_md(o, b->label);
    if (r->n_pairs > 1)
        fprintf(o, " (+%d more pairs)", r->n_pairs - 1);
    fprintf(o, " |");
    pair_fig(o, mib(t->compile_hwm_kib, x, sizeof x), mib(b->compile_hwm_kib, y, sizeof y));
    pair_fig(o, mib(t->compile_req_bytes / 1024.0, x, sizeof x), mib(b->compile_req_bytes / 1024.0, y, sizeof y));
    if (row == MLK_GUIDE_MMAP)
        fprintf(o, " RssAnon %s vs %s |", mib(t->anon_kib, x, sizeof x), mib(b->anon_kib, y, sizeof y));
    else if (row == MLK_GUIDE_THREADS)
        fprintf(o, " compile %s vs %s |", ms(t->compile_ms, x, sizeof x), ms(b->compile_ms, y, sizeof y));
    else
        pair_fig(o, rss_path(t, x, sizeof x), rss_path(b, y, sizeof y));
    char a[32], c[32], d[32], e[32];
    fprintf(o, " %s / %s vs %s / %s |", ms(t->infer_first_ms, a, sizeof a), ms(t->infer_steady_ms, c, sizeof c),
            ms(b->infer_first_ms, d, sizeof d), ms(b->infer_steady_ms, e, sizeof e));
}

static void row_cell(FILE *o, const guide_fig *f, int n_cells)
{
    char x[160], a[32], b[32], c[32], d[32];
    fprintf(o, " ");
    mlk_rep_md(o, f->label);
    if (n_cells > 1)
        fprintf(o, " (+%d more cells)", n_cells - 1);
    fprintf(o, " | %s | %s | %s | %s / %s |", mib(f->compile_hwm_kib, a, sizeof a),
            mib(f->compile_req_bytes / 1024.0, b, sizeof b), rss_path(f, x, sizeof x),
            ms(f->infer_first_ms, c, sizeof c), ms(f->infer_steady_ms, d, sizeof d));
}

static void row_peak(FILE *o, const guide_fig *f, int n_cells)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(o, " ");
    mlk_rep_md(o, f->label);
    if (n_cells > 1)
        fprintf(o, " (+%d more cells)", n_cells - 1);
    char r[32];
    fprintf(o, " | %s, +%s above VmRSS before it (next: %s +%s) | %s | n/a | %s / %s |",
            mib(f->compile_hwm_kib, a, sizeof a), mib(f->compile_rise_kib, r, sizeof r), f->other_step,
            mib(f->other_peak_kib, b, sizeof b), mib(f->compile_req_bytes / 1024.0, c, sizeof c),
            ms(f->infer_first_ms, d, sizeof d), ms(f->infer_steady_ms, e, sizeof e));
}

static void row_latency(FILE *o, const mlk_guide *g, const guide_row *r)
{
    fprintf(o, " ");
    for (int i = 0; i < r->n_pairs; i++) {
        fprintf(o, "%s", i ? "; " : "");
        mlk_rep_md(o, g->figs[r->pairs[i].test].label);
    }
    fprintf(o, " | | | | ");
    for (int i = 0; i < r->n_pairs; i++) {
        const guide_fig *t = &g->figs[r->pairs[i].test], *b = &g->figs[r->pairs[i].base];
        char a[32], c[32];
        fprintf(o, "%s%s vs %s, %.2fx vs %.2fx steady", i ? "; " : "", ms(t->infer_first_ms, a, sizeof a),
                ms(b->infer_first_ms, c, sizeof c), t->infer_first_ratio, b->infer_first_ratio);
    }
    fprintf(o, " |");
}

static void table(FILE *o, const mlk_guide *g)
{
    fprintf(o, "| # | the guide says | cells: recommended vs compared | compile VmHWM | requested peak (heap + mmap) "
               "| VmRSS after compile: first -> stable level from compile #k -> last | infer: first / steady | "
               "verdict |\n|---|---|---|---|---|---|---|---|\n");
    for (int row = 0; row < MLK_GUIDE_N_ROWS; row++) {
        const guide_row *r = &g->rows[row];
        fprintf(o, "| %d | %s |", row + 1, mlk_guide_claims[row]);
        if (r->v == GV_UNTESTED && r->unmeasured[0]) {
            fprintf(o, " ");
            mlk_rep_md(o, r->unmeasured);
            fprintf(o, " | | | | | **not measured** (a cell did not finish) |\n");
        } else if (r->v == GV_UNTESTED)
            fprintf(o, " no cell of this run tests it | | | | | not tested |\n");
        else {
            if (row == MLK_GUIDE_LATENCY)
                row_latency(o, g, r);
            else if (mlk_guide_keys[row])
                row_pair(o, g, row, r);
            else if (row == MLK_GUIDE_COMPILE_PEAK)
                row_peak(o, &g->figs[r->cells[0]], r->n_cells);
            else
                row_cell(o, &g->figs[r->cells[0]], r->n_cells);
            fprintf(o, " **%s**", mlk_guide_verdict_name(r->v));
            if (r->verdict_text[0])
                fprintf(o, " %s", strchr(r->verdict_text, '(') ? strchr(r->verdict_text, '(') : "");
            fprintf(o, " |\n");
        }
    }
}

static void thresholds(FILE *o)
{
    fprintf(o, "\nVerdicts are computed from the figures above: a memory figure is *lower* when it drops by at least "
               "%.0f%% and %d MiB; VmRSS after compile is *stable* from the first compile after which it stays within "
               "max(%.0f%%, %d MiB) of its final level (the median of the last quarter), and has no stable point when "
               "that comes only in the last quarter; a latency *costs* when it rises by at least %.0f%% and %.2f ms. "
               "The two figures of each row: mmap, compile VmHWM and RssAnon after compile lower; threads, compile "
               "VmHWM and requested peak lower; each allocator remedy, VmRSS after compile settling lower and no "
               "later; the stable point, one found after a rise of at least 1 MiB, with memleak's detector finding no "
               "leak; the compile peak, compile's VmHWM above VmRSS before it at least every other step's (each "
               "step's own need: later steps find the compiled model resident). A remedy *costs* first-inference "
               "latency when its first inference over its own steady ones rises by 10%% against the compared "
               "cell's (cells run one after another, so load moves whole cells). A row holds when every pair (or "
               "cell) it tests shows both, holds partly when some figure does, does not hold here when none does. "
               "The loop rows want >= %d recompilations per cell.\n",
            MLK_GUIDE_LOWER_REL * 100, MLK_GUIDE_LOWER_ABS_KIB / 1024, MLK_GUIDE_STABLE_REL * 100,
            MLK_GUIDE_STABLE_ABS_KIB / 1024, MLK_GUIDE_LATENCY_REL * 100, MLK_GUIDE_LATENCY_ABS_MS,
            MLK_GUIDE_MIN_RECOMPILES);
}

static void cells(FILE *o, const mlk_guide *g)
{
    fprintf(o, "\n### Cells\n\n| cell | allocator | compile VmHWM | requested peak | compile | weights mapped | "
               "RssAnon after compile | VmRSS after compile | infer: first / steady | memleak |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < g->n_figs; i++) {
        const guide_fig *f = &g->figs[i];
        char a[32], b[32], c[32], d[32], e[32], h[32], x[160];
        fprintf(o, "| %d ", f->c->idx);
        mlk_rep_md(o, f->label);
        fprintf(o, " | %s | %s | %s | %s | %s | %s | %s | %s / ",
                f->c->allocator_active ? f->c->allocator_active : f->allocator, mib(f->compile_hwm_kib, a, sizeof a),
                mib(f->compile_req_bytes / 1024.0, b, sizeof b), ms(f->compile_ms, c, sizeof c),
                mib(f->weights_mapped_bytes / 1024.0, d, sizeof d), mib(f->anon_kib, e, sizeof e),
                rss_path(f, x, sizeof x), ms(f->infer_first_ms, h, sizeof h));
        fprintf(o, "%s | %s |\n", ms(f->infer_steady_ms, a, sizeof a), f->c->status ? f->c->status : "n/a");
    }
}

/* ---- memleak's detector beside `detector: openvino` (issue 21 item 5) ---- */

static const char *bytes(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "n/a");
    else if (fabs(v) >= 1048576.0)
        snprintf(buf, len, "%+.1f MiB", v / 1048576.0);
    else
        snprintf(buf, len, "%+.1f KiB", v / 1024.0);
    return buf;
}

/* Why the two disagree, from the figures each detector computed. */
static void why(const guide_fig *f, char *out, size_t len)
{
    const mlk_detect_result *ov = &f->ov.s[f->ov.deciding].r;
    const char *series = mlk_series_name(f->ov.deciding);
    char g[32], ref[32];
    double pct = ov->ov_ref > 0 ? 100.0 * ov->growth / ov->ov_ref : NAN;
    snprintf(ref, sizeof ref, "%.1f MiB", ov->ov_ref / 1048576.0);
    if (f->mem.verdict == MLK_VERDICT_LEAK)
        snprintf(out, len,
                 "openvino: the %s series' last window is %s (%.1f%% of its reference %s), %d window(s) above the "
                 "10%% bound of %d judged (it fails on more than 5); memleak: %s",
                 series, bytes(ov->growth, g, sizeof g), pct, ref, ov->ov_outliers, ov->ov_windows, f->mem.detail);
    else
        snprintf(out, len,
                 "openvino: %d of %d windows of %s above its reference %s + 10%% (last window %s), %d retake(s); "
                 "memleak: %s",
                 ov->ov_outliers, ov->ov_windows, series, ref, bytes(ov->growth, g, sizeof g), ov->ov_retakes,
                 f->mem.detail);
}

static void detectors(FILE *o, const mlk_guide *g)
{
    int n = 0, agree = 0;
    for (int i = 0; i < g->n_figs; i++) {
        const guide_fig *f = &g->figs[i];
        if (!f->judged)
            continue;
        n++;
        agree += (f->mem.verdict == MLK_VERDICT_LEAK) == (f->ov.verdict == MLK_VERDICT_LEAK);
    }
    fprintf(o, "\n### memleak's detector and `detector: openvino` on the same samples\n\n"
               "Both judge each cell's stored end-of-iteration samples of this run; `detector: openvino` is OpenVINO's "
               "memleaks rule (5-iteration windows, reference at iteration 30, +10%% bound, more than 5 outliers "
               "fail) on the series memleak would judge first (live heap, else anonymous memory); the last column "
               "applies their rule to VmRSS, as their memleaks tests do. They agree on leak or no leak in %d of %d "
               "cells.\n\n| cell | memleak | detector: openvino | openvino rule on VmRSS | why they disagree |\n"
               "|---|---|---|---|---|\n",
            agree, n);
    for (int i = 0; i < g->n_figs; i++) {
        const guide_fig *f = &g->figs[i];
        if (!f->judged)
            continue;
        char reason[900] = "";
        if ((f->mem.verdict == MLK_VERDICT_LEAK) != (f->ov.verdict == MLK_VERDICT_LEAK))
            why(f, reason, sizeof reason);
        fprintf(o, "| %d ", f->c->idx);
        mlk_rep_md(o, f->label);
        fprintf(o, " | %s | %s | %s | ", mlk_verdict_name(f->mem.verdict), mlk_verdict_name(f->ov.verdict),
                f->ov_rss_ok ? mlk_verdict_name(f->ov_rss.verdict) : "n/a");
        mlk_rep_md(o, reason[0] ? reason : "agree");
        fprintf(o, " |\n");
    }
}

int mlk_guide_write_md(const mlk_guide *g, FILE *o, const char *what, mlk_error *err)
{
    const db_guide_run *r = g->run;
    fprintf(o, "## OpenVINO's memory guide, measured (run %lld, %s%s%s)\n\n", (long long)r->id,
            r->scenario_name ? r->scenario_name : "?", r->commit ? ", commit " : "", r->commit ? r->commit : "");
    table(o, g);
    thresholds(o);
    cells(o, g);
    detectors(o, g);
    if (fflush(o) || ferror(o))
        return mlk_fail(err, MLK_E_IO, "guide: cannot write %s", what);
    return MLK_OK;
}
