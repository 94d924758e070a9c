/* stream.c: a cell's samples folded into bounded state (block-mean series, seeded reservoirs, exact peaks and
 * finals) as they arrive. It must never keep a sample, nor let its memory depend on how long the cell runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantile.h"
#include "series.h"
#include "stream.h"
#include "verdict.h"

/* ------------------------------------------------------------------ block series */

int mlk_block_series_push(mlk_block_series *b, double x)
{
    if (!b->v) {
        b->v = malloc(sizeof *b->v * MLK_STREAM_POINTS);
        if (!b->v)
            return -1;
        b->stride = 1;
    }
    b->pushed++;
    b->part_sum += x;
    if (++b->part_n < b->stride)
        return 0;
    b->v[b->n++] = b->part_sum / (double)b->part_n;
    b->part_sum = 0;
    b->part_n = 0;
    if (b->n == MLK_STREAM_POINTS) {
        /* Full: neighbours merge into blocks twice as long. Equal-sized blocks keep every point's weight and
         * spacing the same, which the detector's slopes and halves rely on. */
        for (int i = 0; i < MLK_STREAM_POINTS / 2; i++)
            b->v[i] = (b->v[2 * i] + b->v[2 * i + 1]) / 2;
        b->n = MLK_STREAM_POINTS / 2;
        b->stride *= 2;
    }
    return 0;
}

void mlk_block_series_clear(mlk_block_series *b)
{
    free(b->v);
    memset(b, 0, sizeof *b);
}

/* Theil-Sen slope per iteration over the whole blocks, NAN with fewer than 2. */
static double block_slope(const mlk_block_series *b)
{
    return b->n >= 2 ? mlk_slope_or_nan(b->v, b->n) / (double)b->stride : NAN;
}

/* ------------------------------------------------------------------ reservoir */

typedef struct reservoir {
    double *v;
    int n;
    int64_t seen;
    uint64_t rng;
} reservoir;

static uint64_t next_rng(uint64_t *s)
{
    /* xorshift64*: deterministic, so two runs of the same stream report the same quantiles */
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static int reservoir_push(reservoir *r, double x)
{
    if (!r->v && !(r->v = malloc(sizeof *r->v * MLK_STREAM_RESERVOIR)))
        return -1;
    r->seen++;
    if (r->n < MLK_STREAM_RESERVOIR) {
        r->v[r->n++] = x;
        return 0;
    }
    uint64_t j = next_rng(&r->rng) % (uint64_t)r->seen;
    if (j < MLK_STREAM_RESERVOIR)
        r->v[j] = x;
    return 0;
}

/* The q-quantile of what the reservoir holds, sorted in scratch (MLK_STREAM_RESERVOIR doubles). */
static double reservoir_quantile(const reservoir *r, double q, double *scratch)
{
    if (r->n == 0)
        return NAN;
    memcpy(scratch, r->v, sizeof *scratch * (size_t)r->n);
    return mlk_quantile(scratch, r->n, q);
}

/* ------------------------------------------------------------------ the cell */

typedef struct step_acc {
    bool used;
    int order;               /* first appearance in the measured phase */
    int64_t n, peak_kib;
    bool have_heap;
    mlk_block_series rss, heap;
    reservoir delta, rdelta, wall, cpu;
    int64_t final_rss, final_anon, final_heap;
    int64_t heap_peak, mapped_peak; /* requested within the step: the shim's peaks, -1 when never measured */
} step_acc;

struct mlk_cell_stream {
    step_acc steps[MLK_STEP_ANY_COUNT];
    int n_steps;
    mlk_block_series series[MLK_SERIES_COUNT];
    bool series_missing[MLK_SERIES_COUNT];
    /* Under a shape schedule, each series again without what it moved across iterations that met a set of shapes
     * for the first time (sample.h's shape above every earlier one): what is left grew on shapes met before. */
    mlk_block_series shaped[MLK_SERIES_COUNT];
    double shape_off[MLK_SERIES_COUNT], shape_prev[MLK_SERIES_COUNT];
    bool shape_have_prev[MLK_SERIES_COUNT];
    int max_shape, new_measured; /* shape sets met in all; met first in the measured phase */
    bool iter_new;               /* the iteration being received met its set first */
    mlk_sample last;
    int64_t count;
    bool failed;
    /* The iteration being received: its steps' time and peaks, for its end-of-iteration entry. */
    int64_t iter, iter_wall_ns, iter_cpu_ns, iter_peak_kib, iter_heap_peak, iter_mapped_peak;
};

mlk_cell_stream *mlk_cell_stream_new(void)
{
    mlk_cell_stream *c = calloc(1, sizeof *c);
    if (c)
        c->iter = INT64_MIN;
    return c;
}

void mlk_cell_stream_free(mlk_cell_stream *c)
{
    if (!c)
        return;
    for (int i = 0; i < MLK_STEP_ANY_COUNT; i++) {
        step_acc *a = &c->steps[i];
        mlk_block_series_clear(&a->rss);
        mlk_block_series_clear(&a->heap);
        free(a->delta.v);
        free(a->rdelta.v);
        free(a->wall.v);
        free(a->cpu.v);
    }
    for (int k = 0; k < MLK_SERIES_COUNT; k++) {
        mlk_block_series_clear(&c->series[k]);
        mlk_block_series_clear(&c->shaped[k]);
    }
    free(c);
}

const mlk_sample *mlk_cell_stream_last(const mlk_cell_stream *c) { return c->count ? &c->last : NULL; }
int64_t mlk_cell_stream_count(const mlk_cell_stream *c) { return c->count; }
bool mlk_cell_stream_failed(const mlk_cell_stream *c) { return c->failed; }

const mlk_block_series *mlk_cell_stream_series(const mlk_cell_stream *c, int kind)
{
    if (kind < 0 || kind >= MLK_SERIES_COUNT || c->series_missing[kind] || !c->series[kind].pushed)
        return NULL;
    return &c->series[kind];
}

const mlk_block_series *mlk_cell_stream_shaped(const mlk_cell_stream *c, int kind)
{
    if (!mlk_cell_stream_series(c, kind) || !c->max_shape || c->shaped[kind].pushed != c->series[kind].pushed)
        return NULL;
    return &c->shaped[kind];
}

int mlk_cell_stream_shapes(const mlk_cell_stream *c, int *new_measured)
{
    if (new_measured)
        *new_measured = c->new_measured;
    return c->max_shape;
}

static step_acc *step_of(mlk_cell_stream *c, int step)
{
    if (step < 0 || step >= MLK_STEP_ANY_COUNT)
        return NULL;
    step_acc *a = &c->steps[step];
    if (!a->used) {
        a->used = true;
        a->order = c->n_steps++;
        a->peak_kib = -1;
        a->heap_peak = a->mapped_peak = -1;
        a->have_heap = true;
    }
    return a;
}

/* A series' value as its shaped twin follows it. Virtual memory there is taken beyond what the allocator holds: a cache
 * that keeps blocks per shape fragments the heap, so a request's transient buffers on a shape met before may extend
 * it; that is the cache's growth, and the allocator holds it. A mapping outside malloc is still counted whole. */
static double shaped_value(int kind, const mlk_sample *x, double v)
{
    /* mlk_series_value already leaves it out where the heap is judged */
    return kind == MLK_SERIES_MAPPED && x->m.alloc_held >= 0 && !mlk_series_held_out(x) ? v - (double)x->m.alloc_held
                                                                                       : v;
}

/* The end of an iteration: the cell as a whole, and every judged series. */
static int push_iteration(mlk_cell_stream *c, step_acc *a, const mlk_sample *x)
{
    int rc = 0;
    if (c->iter_peak_kib > a->peak_kib)
        a->peak_kib = c->iter_peak_kib;
    if (c->iter_heap_peak > a->heap_peak)
        a->heap_peak = c->iter_heap_peak;
    if (c->iter_mapped_peak > a->mapped_peak)
        a->mapped_peak = c->iter_mapped_peak;
    a->have_heap &= x->m.have_heap;
    rc |= reservoir_push(&a->delta, 0.0);
    rc |= reservoir_push(&a->rdelta, 0.0);
    rc |= reservoir_push(&a->wall, (double)c->iter_wall_ns / 1e6);
    rc |= reservoir_push(&a->cpu, (double)c->iter_cpu_ns / 1e6);
    for (int k = 0; k < MLK_SERIES_COUNT; k++) {
        double v = mlk_series_value(k, x);
        if (!isfinite(v)) {
            c->series_missing[k] = true;
        } else if (!c->series_missing[k]) {
            rc |= mlk_block_series_push(&c->series[k], v);
            if (x->shape > 0) {
                double sv = shaped_value(k, x, v);
                if (c->iter_new && c->shape_have_prev[k])
                    c->shape_off[k] += sv - c->shape_prev[k];
                c->shape_prev[k] = sv;
                c->shape_have_prev[k] = true;
                rc |= mlk_block_series_push(&c->shaped[k], sv - c->shape_off[k]);
            }
        }
    }
    return rc;
}

static int push_step(mlk_cell_stream *c, step_acc *a, const mlk_sample *x)
{
    /* The change across the step: after it, minus after whatever came just before it. */
    const mlk_sample *prev = c->count ? &c->last : NULL;
    double d = prev ? (double)(x->m.heap.live_bytes - prev->m.heap.live_bytes) : 0.0;
    double rd = prev ? (double)(x->m.vm_rss_kib - prev->m.vm_rss_kib) * 1024.0 : 0.0;
    a->have_heap &= x->m.have_heap && prev && prev->m.have_heap;
    if (x->m.vm_hwm_kib > a->peak_kib)
        a->peak_kib = x->m.vm_hwm_kib;
    if (x->m.have_heap && x->m.heap.peak_bytes > a->heap_peak)
        a->heap_peak = x->m.heap.peak_bytes;
    if (x->m.have_heap && x->m.heap.mapped_peak_bytes > a->mapped_peak)
        a->mapped_peak = x->m.heap.mapped_peak_bytes;
    int rc = reservoir_push(&a->delta, d);
    rc |= reservoir_push(&a->rdelta, rd);
    rc |= reservoir_push(&a->wall, (double)x->wall_ns / 1e6);
    rc |= reservoir_push(&a->cpu, (double)x->cpu_ns / 1e6);
    return rc;
}

int mlk_cell_stream_push(mlk_cell_stream *c, const mlk_sample *x)
{
    if (c->failed)
        return -1;
    if (x->iteration != c->iter) {
        c->iter = x->iteration;
        c->iter_wall_ns = c->iter_cpu_ns = 0;
        c->iter_peak_kib = c->iter_heap_peak = c->iter_mapped_peak = -1;
        c->iter_new = x->shape > c->max_shape;
        if (c->iter_new) {
            c->max_shape = x->shape;
            c->new_measured += x->phase == MLK_PHASE_MEASURE;
        }
    }
    int rc = 0;
    if (x->phase == MLK_PHASE_MEASURE) {
        step_acc *a = step_of(c, x->step);
        if (a) {
            a->n++;
            rc |= mlk_block_series_push(&a->rss, (double)x->m.vm_rss_kib * 1024.0);
            rc |= mlk_block_series_push(&a->heap, (double)x->m.heap.live_bytes);
            rc |= x->step == MLK_STEP_ITERATION ? push_iteration(c, a, x) : push_step(c, a, x);
            a->final_rss = x->m.vm_rss_kib;
            a->final_anon = x->m.rss_anon_kib;
            a->final_heap = x->m.have_heap ? x->m.heap.live_bytes : -1;
        }
    }
    if (x->step != MLK_STEP_ITERATION) {
        c->iter_wall_ns += x->wall_ns;
        c->iter_cpu_ns += x->cpu_ns;
        if (x->m.vm_hwm_kib > c->iter_peak_kib)
            c->iter_peak_kib = x->m.vm_hwm_kib;
        if (x->m.have_heap && x->m.heap.peak_bytes > c->iter_heap_peak)
            c->iter_heap_peak = x->m.heap.peak_bytes;
        if (x->m.have_heap && x->m.heap.mapped_peak_bytes > c->iter_mapped_peak)
            c->iter_mapped_peak = x->m.heap.mapped_peak_bytes;
    }
    c->last = *x;
    c->count++;
    if (rc)
        c->failed = true;
    return rc ? -1 : 0;
}

int mlk_cell_stream_step_stats(const mlk_cell_stream *c, db_step_stats *out)
{
    if (c->failed)
        return -1;
    double *scratch = malloc(sizeof *scratch * MLK_STREAM_RESERVOIR);
    if (!scratch)
        return -1;
    /* Pipeline steps in the order they first came, the end of iteration last (the cell as a whole). */
    int written = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int ord = 0; ord < c->n_steps; ord++)
            for (int step = 0; step < MLK_STEP_ANY_COUNT; step++) {
                const step_acc *a = &c->steps[step];
                if (!a->used || a->order != ord || (step == MLK_STEP_ITERATION) != (pass == 1))
                    continue;
                db_step_stats *o = &out[written++];
                o->step = step;
                o->n = (int)a->n;
                o->peak_kib = a->peak_kib;
                o->rss_growth = block_slope(&a->rss);
                o->heap_growth = a->have_heap ? block_slope(&a->heap) : NAN;
                o->heap_delta_median = a->have_heap ? reservoir_quantile(&a->delta, 0.5, scratch) : NAN;
                o->rss_delta_median = reservoir_quantile(&a->rdelta, 0.5, scratch);
                o->wall_ms_median = reservoir_quantile(&a->wall, 0.5, scratch);
                o->wall_ms_p90 = reservoir_quantile(&a->wall, 0.9, scratch);
                o->cpu_ms_median = reservoir_quantile(&a->cpu, 0.5, scratch);
                o->final_rss_kib = a->final_rss;
                o->final_anon_kib = a->final_anon;
                o->final_heap_bytes = a->final_heap;
                o->heap_peak_bytes = a->heap_peak;
                o->mapped_peak_bytes = a->mapped_peak;
            }
    free(scratch);
    return written;
}
