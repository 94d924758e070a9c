/* guide_cells.c: one cell's figures for the guide report: its compile step's peaks, VmRSS after every compile with
 * the iteration where it settles, its first and later infer latencies, and its verdicts by memleak's detector and by
 * `detector: openvino` on the same stored samples. It must never read anything but the cell it is given. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "guide_internal.h"
#include "quantile.h"

static double sum_known(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

static void step_figures(const db_guide_cell *c, guide_fig *f)
{
    f->compile_hwm_kib = f->compile_req_bytes = f->compile_ms = f->weights_mapped_bytes = NAN;
    f->other_peak_kib = f->compile_rise_kib = NAN;
    for (int i = 0; i < c->n_steps; i++) {
        const db_guide_step *s = &c->steps[i];
        if (!strcmp(s->step, "compile_model")) {
            f->compile_hwm_kib = s->peak_kib;
            f->compile_req_bytes = sum_known(s->heap_peak_bytes, s->mapped_peak_bytes);
            f->compile_ms = s->wall_ms_median;
            f->compile_rise_kib = s->rise_kib;
        } else if (!strcmp(s->step, "iteration") || !strcmp(s->step, "malloc_trim")) {
            continue;
        } else if (!isnan(s->rise_kib) && (isnan(f->other_peak_kib) || s->rise_kib > f->other_peak_kib)) {
            /* a step after compile finds the compiled model resident: its absolute VmHWM includes compile's
             * result, so steps are compared on what each needed beyond what it found */
            f->other_peak_kib = s->rise_kib;
            snprintf(f->other_step, sizeof f->other_step, "%s", s->step);
        }
        /* what is mapped while the model is read or compiled: with mmap on, the weights file */
        if ((!strcmp(s->step, "read_model") || !strcmp(s->step, "compile_model")) && !isnan(s->mapped_peak_bytes) &&
            (isnan(f->weights_mapped_bytes) || s->mapped_peak_bytes > f->weights_mapped_bytes))
            f->weights_mapped_bytes = s->mapped_peak_bytes;
    }
}

/* VmRSS after each compile: its final level (median of the last quarter) and the first compile from which it stays
 * within max(MLK_GUIDE_STABLE_REL, MLK_GUIDE_STABLE_ABS_KIB) of that level; none when that happens only in the last
 * quarter (MLK_GUIDE_STABLE_TAIL). */
static int stable_point(const db_guide_cell *c, guide_fig *f)
{
    int n = 0;
    double *v = malloc(sizeof *v * (size_t)(c->n_compiles ? c->n_compiles : 1));
    double *anon = malloc(sizeof *anon * (size_t)(c->n_compiles ? c->n_compiles : 1));
    if (!v || !anon) {
        free(v);
        free(anon);
        return MLK_E_NOMEM;
    }
    int n_anon = 0;
    for (int i = 0; i < c->n_compiles; i++) {
        if (!isnan(c->compiles[i].rss_kib))
            v[n++] = c->compiles[i].rss_kib;
        if (c->compiles[i].measured && !isnan(c->compiles[i].anon_kib))
            anon[n_anon++] = c->compiles[i].anon_kib;
    }
    f->n_compiles = n;
    f->anon_kib = n_anon ? mlk_median(anon, n_anon) : NAN;
    f->rss_first_kib = f->rss_stable_kib = f->rss_last_kib = NAN;
    f->stable_at = 0;
    if (n >= 4) {
        f->rss_first_kib = v[0];
        f->rss_last_kib = v[n - 1];
        int tail = n / 4 > 0 ? n / 4 : 1;
        memcpy(anon, v + n - tail, sizeof *v * (size_t)tail); /* anon is free from here on */
        double level = mlk_median(anon, tail);
        double band = fmax(MLK_GUIDE_STABLE_REL * level, MLK_GUIDE_STABLE_ABS_KIB);
        int from = n;
        while (from > 0 && fabs(v[from - 1] - level) <= band)
            from--;
        f->rss_stable_kib = level;
        f->stable_at = from < (int)(MLK_GUIDE_STABLE_TAIL * n) ? from + 1 : 0;
    }
    free(v);
    free(anon);
    return MLK_OK;
}

static int infer_latency(const db_guide_cell *c, guide_fig *f)
{
    double *first = malloc(sizeof *first * (size_t)(c->n_infers ? c->n_infers : 1));
    double *later = malloc(sizeof *later * (size_t)(c->n_infers ? c->n_infers : 1));
    int nf = 0, nl = 0;
    if (!first || !later) {
        free(first);
        free(later);
        return MLK_E_NOMEM;
    }
    for (int i = 0; i < c->n_infers; i++) {
        if (isnan(c->infers[i].wall_ms))
            continue;
        if (c->infers[i].first)
            first[nf++] = c->infers[i].wall_ms;
        else
            later[nl++] = c->infers[i].wall_ms;
    }
    f->infer_first_ms = nf ? mlk_median(first, nf) : NAN;
    f->infer_steady_ms = nl ? mlk_median(later, nl) : NAN;
    f->infer_first_ratio = f->infer_steady_ms > 0 ? f->infer_first_ms / f->infer_steady_ms : NAN;
    free(first);
    free(later);
    return MLK_OK;
}

static int64_t known(double v) { return isnan(v) ? -1 : (int64_t)v; }

/* The end-of-iteration samples as the judge streams them, rebuilt from the stored figures. */
static void iter_sample(const db_report_iter *it, mlk_sample *x)
{
    memset(x, 0, sizeof *x);
    x->phase = MLK_PHASE_MEASURE;
    x->iteration = it->iteration;
    x->step = MLK_STEP_ITERATION;
    x->m.vm_rss_kib = known(it->rss_kib);
    x->m.vm_hwm_kib = known(it->hwm_kib);
    x->m.rss_anon_kib = known(it->anon_kib);
    x->m.vm_size_kib = known(it->vm_size_kib);
    x->m.vm_peak_kib = x->m.rss_file_kib = x->m.rss_shmem_kib = -1;
    x->m.threads = known(it->threads);
    x->m.fds = known(it->fds);
    x->m.alloc_bytes = known(it->alloc_bytes);
    x->m.alloc_held = known(it->alloc_held);
    x->m.have_heap = !isnan(it->heap_bytes);
    x->m.heap.live_bytes = known(it->heap_bytes);
    x->m.heap.n_mappings = known(it->mappings);
    x->m.heap.shim_bytes = known(it->shim_bytes);
}

static int judge_both(const mlk_scenario *s, const db_guide_cell *c, guide_fig *f)
{
    mlk_sample *x = malloc(sizeof *x * (size_t)(c->n_iters ? c->n_iters : 1));
    double *rss = malloc(sizeof *rss * (size_t)(c->n_iters ? c->n_iters : 1));
    if (!x || !rss) {
        free(x);
        free(rss);
        return MLK_E_NOMEM;
    }
    int n = 0, n_rss = 0;
    for (int i = 0; i < c->n_iters; i++) {
        if (!c->iters[i].measured)
            continue;
        iter_sample(&c->iters[i], &x[n++]);
        if (!isnan(c->iters[i].rss_kib))
            rss[n_rss++] = c->iters[i].rss_kib * 1024.0;
    }
    mlk_scenario as = *s; /* a shallow copy: only the detector differs */
    as.detector = MLK_DETECTOR_MEMLEAK;
    int rc = mlk_judge_cell(&as, x, n, &f->mem);
    as.detector = MLK_DETECTOR_OPENVINO;
    if (!rc)
        rc = mlk_judge_cell(&as, x, n, &f->ov);
    f->judged = !rc && n > 0;
    f->ov_rss_ok = n_rss > 0 && mlk_detect_openvino(rss, n_rss, 0.10, &f->ov_rss) == 0;
    free(x);
    free(rss);
    return rc ? MLK_E_NOMEM : MLK_OK;
}

static void label_of(const mlk_scenario *s, const db_guide_cell *c, guide_fig *f)
{
    size_t len = 0;
    f->label[0] = '\0';
    for (int a = 0; a < s->n_axes && len < sizeof f->label; a++) {
        if (s->axes[a].n_values == 1)
            continue; /* the same in every cell: it tells no cell apart */
        const char *v = mlk_scenario_cell_value(s, c->idx, c->engine, s->axes[a].name);
        len += (size_t)snprintf(f->label + len, sizeof f->label - len, "%s%s=%s", len ? " " : "", s->axes[a].name,
                                v && *v ? v : "\"\"");
    }
    if (!f->label[0])
        snprintf(f->label, sizeof f->label, "cell %d", c->idx);
}

int mlk_guide_fig(const mlk_scenario *s, const db_guide_cell *c, guide_fig *f, mlk_error *err)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    label_of(s, c, f);
    f->mmap = mlk_scenario_cell_value(s, c->idx, c->engine, "mmap");
    f->compile_threads = mlk_scenario_cell_value(s, c->idx, c->engine, "compile_threads");
    f->malloc_trim = mlk_scenario_cell_value(s, c->idx, c->engine, "malloc_trim");
    f->tunables = mlk_scenario_cell_value(s, c->idx, c->engine, "glibc_tunables");
    f->allocator = c->allocator ? c->allocator : "glibc";
    step_figures(c, f);
    int rc = stable_point(c, f);
    if (!rc)
        rc = infer_latency(c, f);
    if (!rc)
        rc = judge_both(s, c, f);
    return rc ? mlk_fail(err, MLK_E_NOMEM, "guide: out of memory for cell %d", c->idx) : MLK_OK;
}
