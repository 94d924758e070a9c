/* conv_depthwise.c: direct depthwise convolution (one input channel per group, any channel multiplier),
 * parallel over output planes. It must never read outside the input: tap ranges are clipped up front. */
#include "conv_ops.h"

bool ref_conv_is_depthwise(const ref_conv_geom *g)
{
    return !g->transpose && g->group > 1 && g->cin_g == 1 && g->group == g->cin;
}

typedef struct dw_job {
    const ref_conv_geom *g;
    const float *x, *w, *bias;
    float *y;
} dw_job;

/* yrow[ox] += wv * xrow[ox*s + off] for the ox whose tap lands inside [0, in). */
static void tap_row(float *yrow, const float *xrow, float wv, int64_t off, int64_t s, int64_t in, int64_t out)
{
    int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
    if (hi > out)
        hi = out;
    if (s == 1) {
        const float *xs = xrow + off;
        for (int64_t ox = lo; ox < hi; ox++)
            yrow[ox] += wv * xs[ox];
    } else {
        for (int64_t ox = lo; ox < hi; ox++)
            yrow[ox] += wv * xrow[ox * s + off];
    }
}

static void dw_plane(const ref_conv_geom *g, const float *xp, const float *wm, float b, float *yp)
{
    for (int64_t i = 0; i < g->out_size; i++)
        yp[i] = b;
    for (int64_t oz = 0; oz < g->out[0]; oz++)
        for (int64_t kz = 0; kz < g->k[0]; kz++) {
            int64_t iz = oz * g->stride[0] - g->pad_lo[0] + kz * g->dil[0];
            if (iz < 0 || iz >= g->in[0])
                continue;
            for (int64_t oy = 0; oy < g->out[1]; oy++) {
                float *yrow = yp + (oz * g->out[1] + oy) * g->out[2];
                for (int64_t ky = 0; ky < g->k[1]; ky++) {
                    int64_t iy = oy * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
                    if (iy < 0 || iy >= g->in[1])
                        continue;
                    const float *xrow = xp + (iz * g->in[1] + iy) * g->in[2];
                    const float *wr = wm + (kz * g->k[1] + ky) * g->k[2];
                    for (int64_t kx = 0; kx < g->k[2]; kx++)
                        tap_row(yrow, xrow, wr[kx], kx * g->dil[2] - g->pad_lo[2], g->stride[2], g->in[2],
                                g->out[2]);
                }
            }
        }
}

static void dw_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const dw_job *j = arg;
    const ref_conv_geom *g = j->g;
    for (int64_t p = begin; p < end; p++) {
        int64_t n = p / g->cout, m = p % g->cout, ci = m / g->cout_g;
        dw_plane(g, j->x + (n * g->cin + ci) * g->in_size, j->w + m * g->k_size, j->bias ? j->bias[m] : 0.0f,
                 j->y + p * g->out_size);
    }
}

void ref_conv_depthwise(const ref_conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                        ref_pool *pool)
{
    dw_job j = {.g = g, .x = x, .w = w, .bias = bias, .y = y};
    int64_t per_plane = g->out_size * g->k_size;
    int64_t grain = per_plane > 16384 ? 1 : 16384 / (per_plane + 1) + 1;
    ref_parallel_for(pool, g->batch * g->cout, grain, dw_task, &j);
}
