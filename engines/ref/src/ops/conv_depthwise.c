/* conv_depthwise.c: direct depthwise convolution (one input channel per group, any channel multiplier), parallel over
 * output planes: 1-D/2-D planes with equal strides read in place under lane masks where AVX-512 and the shape allow
 * (conv_depthwise_inplace_avx2.c), else flattened over zero-padded phase planes; other shapes row by row with clipped
 * taps. It must never read outside the input, nor allocate: padded and phase planes live in the caller's scratch. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../alloc.h"
#include "conv_ops.h"

#define DW_MAX_KX REF_CONV_DW_MAX_KX
#define DW_MAX_ROWS REF_CONV_DW_MAX_ROWS
#define DW_FLAT_MAX_TAPS 64

typedef float dw_v4 __attribute__((vector_size(16)));
typedef int dw_i4 __attribute__((vector_size(16)));

/* The row tables on the stack (xr/wr, off/lo/hi) hold DW_MAX_ROWS and DW_MAX_KX entries: each kernel dim is
 * bounded before the product, which a crafted kernel could otherwise wrap around to a small number. */
bool ref_conv_is_depthwise(const ref_conv_geom *g)
{
    return !g->transpose && g->group > 1 && g->cin_g == 1 && g->group == g->cin && g->k[2] <= DW_MAX_KX &&
           g->k[0] <= DW_MAX_ROWS && g->k[1] <= DW_MAX_ROWS && g->k[0] * g->k[1] <= DW_MAX_ROWS;
}

#define DW_ROW_FN dw_row_portable
#define DW_FLAT_FN dw_flat_portable
#define DW_ROW_LINKAGE static
#include "conv_depthwise_row.h"

typedef void (*dw_row_fn)(float *yrow, float bias, const float *const *xr, const float *const *wr, int n_rows,
                          int64_t kw, const int64_t *off, const int64_t *lo, const int64_t *hi, int64_t s,
                          int64_t out_w);
typedef void (*dw_flat_fn)(float *z, int64_t len, float bias, const float *const *tp, const float *w, int ntaps);

static atomic_int force_portable;

void ref_conv_force_portable(bool on) { atomic_store(&force_portable, on ? 1 : 0); }

static bool use_avx2(void)
{
    __builtin_cpu_init();
    return !atomic_load(&force_portable) && __builtin_cpu_supports("avx2");
}

static bool use_avx512(void)
{
    __builtin_cpu_init();
    return !atomic_load(&force_portable) && __builtin_cpu_supports("avx512f");
}

/* ---- 1-D/2-D planes with equal strides: flattened over padded phase planes --------------------------- */

/* The padded input (what the taps of every output reach, from -pad_lo) is hp x wp. With stride s it is
 * split into s*s phase planes, phase (py, px) holding pad[r*s + py][c*s + px] as an hh x wh plane (plus a
 * slack row the flattened run reads past the last row's garbage columns): a tap then reads one phase plane
 * at a fixed offset, as in a stride-1 convolution. z holds out_h rows of wh. */
typedef struct flat_dims {
    int64_t s, hh, wh, phase, len;
} flat_dims;

static bool dw_flat(const ref_conv_geom *g)
{
    return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->stride[1] == g->stride[2] &&
           g->stride[2] <= REF_CONV_DW_MAX_KX && g->k[1] <= DW_FLAT_MAX_TAPS && g->k[2] <= DW_FLAT_MAX_TAPS &&
           g->k[1] * g->k[2] <= DW_FLAT_MAX_TAPS;
}

/* A flat plane the AVX-512 form reads in place (ref_conv_dw_taps_avx512), as tap geometry t and per-tap offsets toff
 * (from the plane, or from its four phase planes): 1 stride 1 with output rows as wide as the input's, 2 stride 2 on
 * an even-sided plane with output rows half as wide; 0 none. Flat indices, with the taps' reach and a block of slack,
 * must fit int32 (the lanes' index type). */
static int dw_inplace(const ref_conv_geom *g, ref_dw_taps *t, int64_t *toff)
{
    int64_t s = g->stride[2];
    bool same = s == 1 && g->out[2] == g->in[2];
    bool ph2 = s == 2 && g->in[1] % 2 == 0 && g->in[2] % 2 == 0 && 2 * g->out[2] == g->in[2];
    int64_t reach = (g->in[1] + g->out[1] + g->pad_lo[1] + g->k[1] * g->dil[1] + 2) * g->in[2] + 128;
    if ((!same && !ph2) || reach >= INT32_MAX || g->k[1] > REF_DW_TAPS_MAX || g->k[2] > REF_DW_TAPS_MAX)
        return 0;
    *t = (ref_dw_taps){.len = g->out_size, .h = g->in[1] / s, .w = g->in[2] / s, .kh = g->k[1], .kw = g->k[2]};
    int64_t py[REF_DW_TAPS_MAX], px[REF_DW_TAPS_MAX], plane = t->h * t->w;
    /* a reach r = s*q + p (0 <= p < s) is row q of phase p: floor division, the reach may be negative */
    for (int64_t ky = 0; ky < t->kh; ky++) {
        int64_t r = ky * g->dil[1] - g->pad_lo[1];
        py[ky] = ((r % s) + s) % s;
        t->dy[ky] = (r - py[ky]) / s;
    }
    for (int64_t kx = 0; kx < t->kw; kx++) {
        int64_t r = kx * g->dil[2] - g->pad_lo[2];
        px[kx] = ((r % s) + s) % s;
        t->dx[kx] = (r - px[kx]) / s;
    }
    for (int64_t ky = 0; ky < t->kh; ky++)
        for (int64_t kx = 0; kx < t->kw; kx++)
            toff[ky * t->kw + kx] = (py[ky] * s + px[kx]) * plane + t->dy[ky] * t->w + t->dx[kx];
    return same ? 1 : 2;
}

/* The in-place form's mask table, ahead of the per-thread slices in scratch (room kept whatever the CPU). */
static size_t table_bytes(const ref_dw_taps *t)
{
    return ref_align_up(sizeof(uint16_t) * ref_conv_dw_taps_mask_count(t), REF_ALIGN);
}

static size_t inplace_table_bytes(const ref_conv_geom *g)
{
    ref_dw_taps t;
    int64_t toff[DW_FLAT_MAX_TAPS];
    return dw_inplace(g, &t, toff) ? table_bytes(&t) : 0;
}

static void flat_dims_of(const ref_conv_geom *g, flat_dims *d)
{
    d->s = g->stride[2];
    int64_t hp = (g->out[1] - 1) * d->s + (g->k[1] - 1) * g->dil[1] + 1;
    int64_t wp = (g->out[2] - 1) * d->s + (g->k[2] - 1) * g->dil[2] + 1;
    d->hh = (hp + d->s - 1) / d->s;
    d->wh = (wp + d->s - 1) / d->s;
    d->phase = (d->hh + 1) * d->wh;
    d->len = g->out[1] * d->wh;
}

/* A thread's slice: the phase planes and output plane of the flat form, or the four phase planes of the in-place
 * form at stride 2 (no larger, but said so). */
static size_t flat_slice_bytes(const ref_conv_geom *g, const flat_dims *d)
{
    size_t flat = ref_align_up(sizeof(float) * (size_t)(d->phase * d->s * d->s), REF_ALIGN) +
                  ref_align_up(sizeof(float) * (size_t)d->len, REF_ALIGN);
    size_t ph = ref_align_up(sizeof(float) * (size_t)g->in_size, REF_ALIGN);
    return flat > ph ? flat : ph;
}

size_t ref_conv_depthwise_scratch_bytes(const ref_conv_geom *g, int n_threads)
{
    if (!dw_flat(g))
        return 0;
    flat_dims d;
    flat_dims_of(g, &d);
    return inplace_table_bytes(g) + flat_slice_bytes(g, &d) * (size_t)(n_threads < 1 ? 1 : n_threads);
}

/* Row r of phase planes (py, 0..s-1): padded columns C = c*s + px, from input row iy, zero outside the
 * image. The input row is read once, in order, and dealt to the s phase rows. */
static void fill_phase_row(const ref_conv_geom *g, const flat_dims *d, const float *xrow, float *const *rows)
{
    int64_t s = d->s, w = s * d->wh, pl = g->pad_lo[2];
    int64_t c0 = pl < w ? pl : w, c1 = pl + g->in[2] < w ? pl + g->in[2] : w;
    if (s == 1) {
        memset(rows[0], 0, sizeof(float) * (size_t)c0);
        memcpy(rows[0] + c0, xrow + c0 - pl, sizeof(float) * (size_t)(c1 - c0));
        memset(rows[0] + c1, 0, sizeof(float) * (size_t)(w - c1));
        return;
    }
    if (s == 2) {
        float *r0 = rows[0], *r1 = rows[1];
        /* [ca, cb): both columns 2c and 2c+1 inside the image, dealt 4 pairs at a time by shuffles */
        int64_t ca = (c0 + 1) / 2, cb = c1 >= 2 ? (c1 - 2) / 2 + 1 : 0, c = 0;
        cb = cb > ca ? cb : ca;
        for (; c < ca; c++) {
            r0[c] = 2 * c >= c0 && 2 * c < c1 ? xrow[2 * c - pl] : 0.0f;
            r1[c] = 2 * c + 1 >= c0 && 2 * c + 1 < c1 ? xrow[2 * c + 1 - pl] : 0.0f;
        }
        for (; c + 4 <= cb; c += 4) {
            /* 128-bit vectors: this file is built for baseline x86-64, where they are one shufps each */
            dw_v4 lo, hi;
            memcpy(&lo, xrow + 2 * c - pl, sizeof lo);
            memcpy(&hi, xrow + 2 * c - pl + 4, sizeof hi);
            dw_v4 ev = DW_SHUFFLE(lo, hi, dw_i4, 0, 2, 4, 6);
            dw_v4 od = DW_SHUFFLE(lo, hi, dw_i4, 1, 3, 5, 7);
            memcpy(r0 + c, &ev, sizeof ev);
            memcpy(r1 + c, &od, sizeof od);
        }
        for (; c < d->wh; c++) {
            r0[c] = 2 * c >= c0 && 2 * c < c1 ? xrow[2 * c - pl] : 0.0f;
            r1[c] = 2 * c + 1 >= c0 && 2 * c + 1 < c1 ? xrow[2 * c + 1 - pl] : 0.0f;
        }
        return;
    }
    for (int64_t C = 0; C < w; C++)
        rows[C % s][C / s] = C >= c0 && C < c1 ? xrow[C - pl] : 0.0f;
}

static void fill_phases(const ref_conv_geom *g, const flat_dims *d, const float *xp, float *phases)
{
    float *rows[REF_CONV_DW_MAX_KX];
    for (int64_t py = 0; py < d->s; py++) {
        for (int64_t r = 0; r < d->hh; r++) {
            for (int64_t px = 0; px < d->s; px++)
                rows[px] = phases + (py * d->s + px) * d->phase + r * d->wh;
            int64_t iy = r * d->s + py - g->pad_lo[1];
            if (iy >= 0 && iy < g->in[1])
                fill_phase_row(g, d, xp + iy * g->in[2], rows);
            else
                for (int64_t px = 0; px < d->s; px++)
                    memset(rows[px], 0, sizeof(float) * (size_t)d->wh);
        }
        for (int64_t px = 0; px < d->s; px++)
            memset(phases + (py * d->s + px) * d->phase + d->hh * d->wh, 0, sizeof(float) * (size_t)d->wh);
    }
}

/* Returns whether the kernel also clamped (the AVX-512 form does). */
static bool dw_plane_flat(const ref_conv_geom *g, dw_flat_fn flat, bool flat512, const float *xp, const float *wm,
                          float b, float *yp, char *slice)
{
    flat_dims d;
    flat_dims_of(g, &d);
    float *phases = (float *)slice;
    float *z = (float *)(slice + ref_align_up(sizeof(float) * (size_t)(d.phase * d.s * d.s), REF_ALIGN));
    fill_phases(g, &d, xp, phases);
    /* taps kx outer, the order the in-place form (ref_conv_dw_taps_avx512) needs to keep its masks in registers */
    const float *tp[DW_FLAT_MAX_TAPS];
    float wt[DW_FLAT_MAX_TAPS];
    int nt = 0;
    for (int64_t kx = 0; kx < g->k[2]; kx++)
        for (int64_t ky = 0; ky < g->k[1]; ky++) {
            int64_t ry = ky * g->dil[1], rx = kx * g->dil[2];
            const float *ph = phases + ((ry % d.s) * d.s + rx % d.s) * d.phase;
            wt[nt] = wm[ky * g->k[2] + kx];
            tp[nt++] = ph + (ry / d.s) * d.wh + rx / d.s;
        }
    float clamp[2] = {g->act_lo, g->act_hi};
    if (flat512)
        ref_conv_dw_flat_avx512(z, d.len, b, tp, wt, nt, g->act ? clamp : NULL);
    else
        flat(z, d.len, b, tp, wt, nt);
    for (int64_t oy = 0; oy < g->out[1]; oy++)
        memcpy(yp + oy * g->out[2], z + oy * d.wh, sizeof(float) * (size_t)g->out[2]);
    return flat512;
}

/* ---- everything else: row by row, taps clipped to the image ---------------------------------------- */

static void dw_plane_rows(const ref_conv_geom *g, dw_row_fn row, const float *xp, const float *wm, float b,
                          float *yp)
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

/* ---- driver -------------------------------------------------------------------------------------- */

typedef struct dw_job {
    const ref_conv_geom *g;
    const float *x, *w, *bias;
    float *y;
    dw_row_fn row;
    dw_flat_fn flat; /* NULL: row by row */
    bool flat512;    /* the flat kernel's AVX-512 form (ref_conv_dw_flat_avx512) */
    int inplace;     /* the AVX-512 in-place form (dw_inplace: 1 from the plane, 2 from its phase planes), or 0 */
    ref_dw_taps taps; /* its geometry, per-tap offsets and lane masks, made once for every plane */
    int64_t toff[DW_FLAT_MAX_TAPS];
    const uint16_t *masks;
    char *scratch;
    size_t slice;
} dw_job;

static void dw_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const dw_job *j = arg;
    const ref_conv_geom *g = j->g;
    for (int64_t p = begin; p < end; p++) {
        int64_t n = p / g->cout, m = p % g->cout, ci = m / g->cout_g;
        const float *xp = j->x + (n * g->cin + ci) * g->in_size, *wm = j->w + m * g->k_size;
        float b = j->bias ? j->bias[m] : 0.0f, *yp = j->y + p * g->out_size;
        bool clamped = false;
        if (j->inplace) {
            float clamp[2] = {g->act_lo, g->act_hi};
            const float *src = xp;
            if (j->inplace == 2) {
                float *ph = (float *)(j->scratch + (size_t)tid * j->slice);
                ref_conv_dw_phases2(xp, g->in[1], g->in[2], ph);
                src = ph;
            }
            ref_conv_dw_taps_avx512(yp, &j->taps, src, j->toff, b, wm, j->masks, g->act ? clamp : NULL);
            clamped = true;
        } else if (j->flat)
            clamped = dw_plane_flat(g, j->flat, j->flat512, xp, wm, b, yp, j->scratch + (size_t)tid * j->slice);
        else
            dw_plane_rows(g, j->row, xp, wm, b, yp);
        if (!clamped)
            ref_conv_act(g, yp, g->out_size);
    }
}

int ref_conv_depthwise(const ref_conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                       ref_pool *pool, void *scratch, size_t scratch_bytes, ref_error *err)
{
    bool avx2 = use_avx2();
    dw_job j = {.g = g, .x = x, .w = w, .bias = bias, .y = y, .scratch = scratch,
                .row = avx2 ? ref_conv_dw_row_avx2 : dw_row_portable};
    if (dw_flat(g)) {
        size_t need = ref_conv_depthwise_scratch_bytes(g, ref_pool_threads(pool));
        if (scratch_bytes < need)
            return ref_fail(err, REF_E_INVALID, "depthwise scratch of %zu bytes, %zu needed", scratch_bytes, need);
        flat_dims d;
        flat_dims_of(g, &d);
        j.slice = flat_slice_bytes(g, &d);
        j.flat = avx2 ? ref_conv_dw_flat_avx2 : dw_flat_portable;
        j.flat512 = avx2 && use_avx512();
        /* the mask table's room is kept whatever the CPU (the scratch was sized by the geometry alone) */
        int form = dw_inplace(g, &j.taps, j.toff);
        j.inplace = j.flat512 ? form : 0;
        j.scratch = (char *)scratch + (form ? table_bytes(&j.taps) : 0);
        j.masks = (const uint16_t *)scratch;
        if (j.inplace)
            ref_conv_dw_taps_masks(&j.taps, (uint16_t *)scratch);
    }
    /* a fifth of a GEMM share: these FLOP run at about a fifth of GEMM's rate (they wait on loads) */
    int64_t per_plane = 2 * g->out_size * g->k_size, share = (int64_t)(REF_POOL_SHARE_FLOPS / 5);
    int64_t grain = per_plane > share ? 1 : share / (per_plane + 1) + 1;
    ref_parallel_for(pool, g->batch * g->cout, grain, dw_task, &j);
    return REF_OK;
}
