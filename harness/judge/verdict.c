/* verdict.c: picks the series to judge (exact heap bytes, else RssAnon), runs the chosen detector, and computes
 * per-step peaks, growth, heap deltas and latency quantiles. It must never mix phases: measured samples only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantile.h"
#include "verdict.h"

double mlk_slope_or_nan(const double *y, int n)
{
    double s;
    return n >= 2 && mlk_theil_sen(y, n, &s) == 0 ? s : NAN;
}

int mlk_judge(const mlk_scenario *s, const mlk_sample *samples, int n, mlk_detect_result *res, const char **metric)
{
    double *y = malloc(sizeof *y * (size_t)(n ? n : 1));
    if (!y)
        return -1;
    int k = 0;
    bool heap = true;
    for (int i = 0; i < n; i++)
        if (samples[i].phase == MLK_PHASE_MEASURE && samples[i].step == MLK_STEP_ITERATION)
            heap &= samples[i].m.have_heap;
    for (int i = 0; i < n; i++) {
        const mlk_sample *x = &samples[i];
        if (x->phase != MLK_PHASE_MEASURE || x->step != MLK_STEP_ITERATION)
            continue;
        y[k++] = heap ? (double)x->m.heap.live_bytes : (double)x->m.rss_anon_kib * 1024.0;
    }
    *metric = heap ? "heap_live_bytes" : "rss_anon_bytes";
    int rc;
    if (s->detector == MLK_DETECTOR_OPENVINO) {
        rc = mlk_detect_openvino(y, k, 0.10, res);
    } else {
        mlk_detect_opts o;
        mlk_detect_opts_init(&o);
        o.floor_per_iter = (double)s->leak_bytes_per_iter;
        o.quantum = heap ? 1.0 : 4096.0;
        rc = mlk_detect_leak(y, k, &o, res);
    }
    free(y);
    return rc;
}

static int step_slot(const int *steps, int n, int step)
{
    for (int i = 0; i < n; i++)
        if (steps[i] == step)
            return i;
    return -1;
}

/* Collect one step's figures into the scratch arrays; returns how many samples it had. */
static int gather(const mlk_sample *samples, int n, int step, double *rss, double *heap, double *delta,
                  double *rdelta, double *wall, double *cpu, int64_t *peak, bool *have_heap)
{
    int k = 0;
    *peak = -1;
    *have_heap = true;
    for (int i = 0; i < n; i++) {
        const mlk_sample *x = &samples[i];
        if (x->phase != MLK_PHASE_MEASURE || x->step != step)
            continue;
        rss[k] = (double)x->m.vm_rss_kib * 1024.0;
        heap[k] = (double)x->m.heap.live_bytes;
        if (step == MLK_STEP_ITERATION) {
            /* The iteration as a whole: its steps' time summed, its peak the highest of their peaks. */
            int64_t wall_ns = 0, cpu_ns = 0;
            for (int j = i - 1; j >= 0 && samples[j].iteration == x->iteration; j--) {
                wall_ns += samples[j].wall_ns;
                cpu_ns += samples[j].cpu_ns;
                if (samples[j].m.vm_hwm_kib > *peak)
                    *peak = samples[j].m.vm_hwm_kib;
            }
            delta[k] = rdelta[k] = 0.0;
            *have_heap &= x->m.have_heap;
            wall[k] = (double)wall_ns / 1e6;
            cpu[k] = (double)cpu_ns / 1e6;
            k++;
            continue;
        }
        /* The heap change across the step: after it, minus after whatever came just before it. */
        delta[k] = i > 0 ? (double)(x->m.heap.live_bytes - samples[i - 1].m.heap.live_bytes) : 0.0;
        rdelta[k] = i > 0 ? (double)(x->m.vm_rss_kib - samples[i - 1].m.vm_rss_kib) * 1024.0 : 0.0;
        wall[k] = (double)x->wall_ns / 1e6;
        cpu[k] = (double)x->cpu_ns / 1e6;
        *have_heap &= x->m.have_heap && i > 0 && samples[i - 1].m.have_heap;
        if (x->m.vm_hwm_kib > *peak)
            *peak = x->m.vm_hwm_kib;
        k++;
    }
    return k;
}

int mlk_step_stats(const mlk_sample *samples, int n, db_step_stats *out)
{
    /* Every step of the measured phase, and the end-of-iteration sample last (the cell as a whole). */
    int steps[MLK_STEP_ANY_COUNT], n_steps = 0;
    for (int i = 0; i < n; i++) {
        const mlk_sample *x = &samples[i];
        if (x->phase == MLK_PHASE_MEASURE && x->step != MLK_STEP_ITERATION && step_slot(steps, n_steps, x->step) < 0)
            steps[n_steps++] = x->step;
    }
    for (int i = 0; i < n; i++)
        if (samples[i].phase == MLK_PHASE_MEASURE && samples[i].step == MLK_STEP_ITERATION) {
            steps[n_steps++] = MLK_STEP_ITERATION;
            break;
        }
    size_t bytes = sizeof(double) * (size_t)(n ? n : 1);
    double *rss = malloc(bytes), *heap = malloc(bytes), *delta = malloc(bytes), *rdelta = malloc(bytes),
           *wall = malloc(bytes), *cpu = malloc(bytes);
    int written = 0;
    for (int s = 0; rss && heap && delta && rdelta && wall && cpu && s < n_steps; s++) {
        int64_t peak;
        bool have_heap;
        int k = gather(samples, n, steps[s], rss, heap, delta, rdelta, wall, cpu, &peak, &have_heap);
        db_step_stats *o = &out[written++];
        o->step = steps[s];
        o->n = k;
        o->peak_kib = peak;
        o->rss_growth = mlk_slope_or_nan(rss, k);
        o->heap_growth = have_heap ? mlk_slope_or_nan(heap, k) : NAN;
        o->heap_delta_median = have_heap ? mlk_median(delta, k) : NAN;
        o->rss_delta_median = mlk_median(rdelta, k);
        o->wall_ms_median = mlk_median(wall, k);
        o->wall_ms_p90 = mlk_quantile(wall, k, 0.9);
        o->cpu_ms_median = mlk_median(cpu, k);
        o->final_rss_kib = o->final_anon_kib = o->final_heap_bytes = -1;
        for (int i = n - 1; i >= 0; i--)
            if (samples[i].phase == MLK_PHASE_MEASURE && samples[i].step == steps[s]) {
                o->final_rss_kib = samples[i].m.vm_rss_kib;
                o->final_anon_kib = samples[i].m.rss_anon_kib;
                o->final_heap_bytes = samples[i].m.have_heap ? samples[i].m.heap.live_bytes : -1;
                break;
            }
    }
    free(rss);
    free(heap);
    free(delta);
    free(rdelta);
    free(wall);
    free(cpu);
    return written;
}
