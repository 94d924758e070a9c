/* conv_im2col.c: im2col into the sgemm packed-B layout through a fixed staging row per tap (no column matrix), and
 * col2im for ConvTranspose. It must never read outside the input image: out-of-range taps are zeros. */
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "conv_ops.h"
#include "sgemm.h"

#define NR REF_SGEMM_NR

/* Columns staged contiguously per tap before they are dealt into NR-wide panels: an image row then lands in one copy
 * (not in chunks split at panel edges, a third of ResNet's infer went to that bookkeeping) and each panel in one
 * fixed-size move. A multiple of NR, on the stack: its size depends on nothing the model gives. */
#define STAGE (128 * NR)

/* n values src[0], src[s], ... into d. */
static void copy_run(float *d, const float *src, int64_t n, int64_t s)
{
    if (s == 1) {
        memcpy(d, src, sizeof(float) * (size_t)n);
        return;
    }
    int64_t t = 0;
#if defined(__SSE__)
    if (s == 2) /* the even lanes of two vectors; never reads past src[2n - 1] */
        for (; t + 4 <= n; t += 4)
            _mm_storeu_ps(d + t, _mm_shuffle_ps(_mm_loadu_ps(src + 2 * t), _mm_loadu_ps(src + 2 * t + 4),
                                                _MM_SHUFFLE(2, 0, 2, 0)));
#endif
    for (; t < n; t++)
        d[t] = src[t * s];
}

/* One row of the column matrix, tap (ci, kz, ky, kx), over output columns [col0, col0+ncols), into row. */
static void im2col_row(const ref_conv_geom *g, const float *xc, const int64_t *kk, int64_t col0, int64_t ncols,
                       float *row)
{
    int64_t ox = col0 % g->out[2], oy = col0 / g->out[2] % g->out[1], oz = col0 / g->out[2] / g->out[1];
    int64_t off = kk[2] * g->dil[2] - g->pad_lo[2], s2 = g->stride[2], in2 = g->in[2];
    /* output x range whose tap lands inside the row: [xlo, xhi) */
    int64_t xlo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
    int64_t xhi = in2 - 1 - off < 0 ? 0 : (in2 - 1 - off) / s2 + 1;
    for (int64_t j = 0; j < ncols;) {
        int64_t end = g->out[2] - ox < ncols - j ? g->out[2] : ox + (ncols - j);
        int64_t iz = oz * g->stride[0] - g->pad_lo[0] + kk[0] * g->dil[0];
        int64_t iy = oy * g->stride[1] - g->pad_lo[1] + kk[1] * g->dil[1];
        float *d = row + j;
        int64_t a = ox > xlo ? ox : xlo, b = end < xhi ? end : xhi;
        if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1] || a >= b) {
            memset(d, 0, sizeof(float) * (size_t)(end - ox));
        } else {
            const float *src = xc + (iz * g->in[1] + iy) * in2;
            memset(d, 0, sizeof(float) * (size_t)(a - ox));
            copy_run(d + (a - ox), src + a * s2 + off, b - a, s2);
            memset(d + (b - ox), 0, sizeof(float) * (size_t)(end - b));
        }
        j += end - ox;
        ox = 0;
        if (++oy == g->out[1]) {
            oy = 0;
            oz++;
        }
    }
}

void ref_conv_im2col_packed(const ref_conv_geom *g, const float *x_g, int64_t col0, int64_t ncols, int64_t np,
                            int64_t p0, float *dst)
{
    int64_t K = g->cin_g * g->k_size, kcb = ref_sgemm_kc(K), Np = np;
    float stage[STAGE] __attribute__((aligned(64)));
    for (int64_t k = 0; k < K; k++) {
        int64_t pc = k / kcb * kcb, kc = K - pc < kcb ? K - pc : kcb;
        int64_t ci = k / g->k_size, r = k % g->k_size;
        int64_t kk[3] = {r / (g->k[1] * g->k[2]), r / g->k[2] % g->k[1], r % g->k[2]};
        float *panel = dst + pc * Np + p0 * NR * kc + (k - pc) * NR; /* this tap's row in panel p0; NR * kc apart */
        int64_t mine = (ncols + NR - 1) / NR * NR; /* this range's panels */
        for (int64_t c = 0; c < mine; c += STAGE) {
            int64_t n = ncols - c < STAGE ? ncols - c : STAGE, whole = (n > 0 ? n : 0) / NR * NR;
            if (n > 0)
                im2col_row(g, x_g + ci * g->in_size, kk, col0 + c, n, stage);
            for (int64_t q = 0; q < whole; q += NR, panel += NR * kc)
                memcpy(panel, stage + q, sizeof(float) * NR); /* constant size: one move */
            if (whole < (mine - c < STAGE ? mine - c : STAGE)) { /* the last panel, partial: zero padding */
                int64_t rest = n > whole ? n - whole : 0;
                memcpy(panel, stage + whole, sizeof(float) * (size_t)rest);
                memset(panel + rest, 0, sizeof(float) * (size_t)(NR - rest));
                panel += NR * kc;
            }
        }
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
