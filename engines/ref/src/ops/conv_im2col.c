/* conv_im2col.c: im2col straight into the sgemm packed-B layout (one pass, no intermediate column matrix)
 * and col2im for ConvTranspose. It must never read outside the input image: out-of-range taps are zeros. */
#include <string.h>

#include "conv_ops.h"
#include "sgemm.h"

#define NR REF_SGEMM_NR

/* Writes a stream of values into packed-B order: NR lanes per panel row, panels pstride floats apart. */
typedef struct lane_writer {
    float *p;
    int64_t lane, pstride;
} lane_writer;

static inline void put(lane_writer *w, float v)
{
    w->p[w->lane] = v;
    if (++w->lane == NR) {
        w->lane = 0;
        w->p += w->pstride;
    }
}

/* One row of the column matrix: tap (ci, kz, ky, kx) over output columns [col0, col0+ncols). */
static void im2col_row(const ref_conv_geom *g, const float *xc, const int64_t *kk, int64_t col0, int64_t ncols,
                       lane_writer *w)
{
    int64_t ox = col0 % g->out[2], oy = col0 / g->out[2] % g->out[1], oz = col0 / g->out[2] / g->out[1];
    int64_t off_x = kk[2] * g->dil[2] - g->pad_lo[2], s2 = g->stride[2], in2 = g->in[2];
    for (int64_t j = 0; j < ncols;) {
        int64_t seg = g->out[2] - ox < ncols - j ? g->out[2] - ox : ncols - j;
        int64_t iz = oz * g->stride[0] - g->pad_lo[0] + kk[0] * g->dil[0];
        int64_t iy = oy * g->stride[1] - g->pad_lo[1] + kk[1] * g->dil[1];
        if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1]) {
            for (int64_t t = 0; t < seg; t++)
                put(w, 0.0f);
        } else {
            const float *src = xc + (iz * g->in[1] + iy) * in2;
            for (int64_t t = 0; t < seg; t++) {
                int64_t ix = (ox + t) * s2 + off_x;
                put(w, ix >= 0 && ix < in2 ? src[ix] : 0.0f);
            }
        }
        j += seg;
        ox = 0;
        if (++oy == g->out[1]) {
            oy = 0;
            oz++;
        }
    }
}

void ref_conv_im2col_packed(const ref_conv_geom *g, const float *x_g, int64_t col0, int64_t ncols, float *dst)
{
    int64_t K = g->cin_g * g->k_size, kcb = ref_sgemm_kc(K), Np = (ncols + NR - 1) / NR * NR;
    for (int64_t k = 0; k < K; k++) {
        int64_t pc = k / kcb * kcb, kc = K - pc < kcb ? K - pc : kcb;
        int64_t ci = k / g->k_size, r = k % g->k_size;
        int64_t kk[3] = {r / (g->k[1] * g->k[2]), r / g->k[2] % g->k[1], r % g->k[2]};
        lane_writer w = {.p = dst + pc * Np + (k - pc) * NR, .pstride = NR * kc};
        im2col_row(g, x_g + ci * g->in_size, kk, col0, ncols, &w);
        for (int64_t j = ncols; j < Np; j++)
            put(&w, 0.0f);
    }
}

void ref_conv_col2im(const ref_conv_geom *g, const float *col_c, float *y_c)
{
    for (int64_t kz = 0; kz < g->k[0]; kz++)
        for (int64_t ky = 0; ky < g->k[1]; ky++)
            for (int64_t kx = 0; kx < g->k[2]; kx++) {
                const float *cr = col_c + ((kz * g->k[1] + ky) * g->k[2] + kx) * g->in_size;
                int64_t off_x = kx * g->dil[2] - g->pad_lo[2];
                for (int64_t iz = 0; iz < g->in[0]; iz++) {
                    int64_t oz = iz * g->stride[0] - g->pad_lo[0] + kz * g->dil[0];
                    if (oz < 0 || oz >= g->out[0])
                        continue;
                    for (int64_t iy = 0; iy < g->in[1]; iy++) {
                        int64_t oy = iy * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
                        if (oy < 0 || oy >= g->out[1])
                            continue;
                        float *yr = y_c + (oz * g->out[1] + oy) * g->out[2];
                        const float *cs = cr + (iz * g->in[1] + iy) * g->in[2];
                        for (int64_t ix = 0; ix < g->in[2]; ix++) {
                            int64_t ox = ix * g->stride[2] + off_x;
                            if (ox >= 0 && ox < g->out[2])
                                yr[ox] += cs[ix];
                        }
                    }
                }
            }
}
