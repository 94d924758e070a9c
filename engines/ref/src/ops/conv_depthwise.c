/* conv_depthwise.c: direct depthwise convolution (one input channel per group, any channel multiplier),
 * parallel over output planes. It must never read outside the input: tap ranges are clipped up front. */
#include <stdatomic.h>

#include "conv_ops.h"

#define DW_MAX_KX REF_CONV_DW_MAX_KX
#define DW_MAX_ROWS REF_CONV_DW_MAX_ROWS

bool ref_conv_is_depthwise(const ref_conv_geom *g)
{
    return !g->transpose && g->group > 1 && g->cin_g == 1 && g->group == g->cin && g->k[2] <= DW_MAX_KX &&
           g->k[0] * g->k[1] <= DW_MAX_ROWS;
}


#define DW_ROW_FN dw_row_portable
#define DW_ROW_LINKAGE static
#include "conv_depthwise_row.h"

typedef void (*dw_row_fn)(float *yrow, float bias, const float *const *xr, const float *const *wr, int n_rows,
                          int64_t kw, const int64_t *off, const int64_t *lo, const int64_t *hi, int64_t s,
                          int64_t out_w);

static atomic_int force_portable;

void ref_conv_force_portable(bool on) { atomic_store(&force_portable, on ? 1 : 0); }

static dw_row_fn pick_row_fn(void)
{
    __builtin_cpu_init();
    if (!atomic_load(&force_portable) && __builtin_cpu_supports("avx2"))
        return ref_conv_dw_row_avx2;
    return dw_row_portable;
}

static void dw_plane(const ref_conv_geom *g, dw_row_fn row, const float *xp, const float *wm, float b, float *yp)
{
    /* Tap ranges depend on kx alone: computed once per plane, not per row (divisions are not cheap). */
    int64_t off[DW_MAX_KX], lo[DW_MAX_KX], hi[DW_MAX_KX], s = g->stride[2];
    for (int64_t kx = 0; kx < g->k[2]; kx++) {
        off[kx] = kx * g->dil[2] - g->pad_lo[2];
        lo[kx] = off[kx] >= 0 ? 0 : (-off[kx] + s - 1) / s;
        hi[kx] = g->in[2] - 1 - off[kx] < 0 ? 0 : (g->in[2] - 1 - off[kx]) / s + 1;
        if (hi[kx] > g->out[2])
            hi[kx] = g->out[2];
    }
    const float *xr[DW_MAX_ROWS], *wr[DW_MAX_ROWS];
    for (int64_t oz = 0; oz < g->out[0]; oz++)
        for (int64_t oy = 0; oy < g->out[1]; oy++) {
            int n = 0;
            for (int64_t kz = 0; kz < g->k[0]; kz++) {
                int64_t iz = oz * g->stride[0] - g->pad_lo[0] + kz * g->dil[0];
                if (iz < 0 || iz >= g->in[0])
                    continue;
                for (int64_t ky = 0; ky < g->k[1]; ky++) {
                    int64_t iy = oy * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
                    if (iy < 0 || iy >= g->in[1])
                        continue;
                    xr[n] = xp + (iz * g->in[1] + iy) * g->in[2];
                    wr[n++] = wm + (kz * g->k[1] + ky) * g->k[2];
                }
            }
            row(yp + (oz * g->out[1] + oy) * g->out[2], b, xr, wr, n, g->k[2], off, lo, hi, s, g->out[2]);
        }
}

typedef struct dw_job {
    const ref_conv_geom *g;
    const float *x, *w, *bias;
    float *y;
    dw_row_fn row;
} dw_job;

static void dw_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const dw_job *j = arg;
    const ref_conv_geom *g = j->g;
    for (int64_t p = begin; p < end; p++) {
        int64_t n = p / g->cout, m = p % g->cout, ci = m / g->cout_g;
        dw_plane(g, j->row, j->x + (n * g->cin + ci) * g->in_size, j->w + m * g->k_size, j->bias ? j->bias[m] : 0.0f,
                 j->y + p * g->out_size);
    }
}

void ref_conv_depthwise(const ref_conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                        ref_pool *pool)
{
    dw_job j = {.g = g, .x = x, .w = w, .bias = bias, .y = y, .row = pick_row_fn()};
    /* ~1 MFLOP a share (0.1 ms here) outweighs waking the pool */
    int64_t per_plane = 2 * g->out_size * g->k_size;
    int64_t grain = per_plane > 1000000 ? 1 : 1000000 / (per_plane + 1) + 1;
    ref_parallel_for(pool, g->batch * g->cout, grain, dw_task, &j);
}
