/* conv_direct.c: convolutions without im2col: the GEMM reads its columns in place, through a tap table
 * (ref_sgemm_taps), from the zero-padded input split into stride phases, over "virtual" output columns that run along
 * the phase planes' rows (the few past an output row computed and dropped, or, with output rows whole kernel calls
 * wide, a GEMM per output row writing y in place); a 1x1 with few input channels straight from the input.
 * It must never allocate, nor give other bits than the im2col path (same K order, same K blocks). */
#include <stdatomic.h>
#include <string.h>

#include "../alloc.h"
#include "conv_ops.h"
#include "sgemm.h"

#define NP (2 * REF_SGEMM_NR) /* columns per kernel call */

/* One thread's slab of phase planes and its C tile, together, aim at L2 (the im2col path's tile size). */
#define DIRECT_TARGET_FLOATS (1024 * 1024 / 4)
/* Scratch a thread may take at most (slab and C tile); past it, im2col. */
#define DIRECT_MAX_BYTES ((size_t)8 << 20)
/* Stride phases a convolution may have (s0*s1*s2); more go through im2col. */
#define MAX_PHASES 64

static atomic_int force_im2col;
void ref_conv_force_im2col(bool on) { atomic_store(&force_im2col, on ? 1 : 0); }

static inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }
static inline int64_t cdiv(int64_t n, int64_t m) { return (n + m - 1) / m; }

/* The layout. The padded image is pd[0] x pd[1] x pd[2]; with strides s, its phase a = (a0, a1, a2) is the plane of
 * the points (z*s0 + a0, y*s1 + a1, x*s2 + a2), qd[0] x qd[1] x qd[2] (zeros past the padded image). Output
 * (z, y, x) is virtual column (z*qd[1] + y)*qd[2] + x, and tap (kz, ky, kx) reads, in phase (kd*dil mod s)d, that
 * column plus ((kz*dil0 / s0)*qd[1] + ky*dil1 / s1)*qd[2] + kx*dil2 / s2. Only the phases some tap reads are kept. */
typedef struct direct_plan {
    int64_t pd[3], qd[3], plane; /* padded dims, phase plane dims and size */
    int slot[MAX_PHASES];        /* phase -> its place among the kept ones, or -1 */
    int n_slots;
    int64_t nv, span;            /* virtual columns (through the last output); the widest tap's offset in a phase */
    int64_t tw, n_tiles;         /* columns per tile (a multiple of NP but the last), tiles per image */
    int64_t cs;                  /* floats per kept phase of a channel in a thread's slab */
    int64_t m_rows, m_blocks;    /* output rows per task and row blocks (rows split only when tiles are too few) */
    size_t slab_floats, c_floats, offs_bytes;
    bool rows;                   /* tiles of whole phase rows, each output row written by the GEMM straight into y */
} direct_plan;

static int64_t n_phases(const ref_conv_geom *g) { return g->stride[0] * g->stride[1] * g->stride[2]; }

/* The phase of tap (kz, ky, kx) and its offset within it. */
static void tap_of(const ref_conv_geom *g, const direct_plan *p, const int64_t *kk, int *phase, int64_t *off)
{
    int64_t a[3], f[3];
    for (int d = 0; d < 3; d++) {
        a[d] = kk[d] * g->dil[d] % g->stride[d];
        f[d] = kk[d] * g->dil[d] / g->stride[d];
    }
    *phase = (int)((a[0] * g->stride[1] + a[1]) * g->stride[2] + a[2]);
    *off = (f[0] * p->qd[1] + f[1]) * p->qd[2] + f[2];
}

static void direct_plan_of(const ref_conv_geom *g, int threads, direct_plan *p)
{
    memset(p, 0, sizeof *p);
    for (int d = 0; d < 3; d++) {
        p->pd[d] = g->in[d] + g->pad_lo[d] + g->pad_hi[d];
        p->qd[d] = cdiv(p->pd[d], g->stride[d]);
    }
    p->plane = p->qd[0] * p->qd[1] * p->qd[2];
    for (int a = 0; a < MAX_PHASES; a++)
        p->slot[a] = -1;
    for (int64_t kz = 0; kz < g->k[0]; kz++)
        for (int64_t ky = 0; ky < g->k[1]; ky++)
            for (int64_t kx = 0; kx < g->k[2]; kx++) {
                int64_t kk[3] = {kz, ky, kx}, off;
                int ph;
                tap_of(g, p, kk, &ph, &off);
                if (p->slot[ph] < 0)
                    p->slot[ph] = p->n_slots++;
                if (off > p->span)
                    p->span = off;
            }
    p->nv = ((g->out[0] - 1) * p->qd[1] + g->out[1] - 1) * p->qd[2] + g->out[2];
    int64_t per_col = g->cin_g * p->n_slots + g->cout_g;
    int64_t tw = (DIRECT_TARGET_FLOATS - g->cin_g * p->n_slots * p->span) / per_col / NP * NP;
    if (tw < NP)
        tw = NP;
    if (tw > round_up(p->nv, NP))
        tw = round_up(p->nv, NP);
    int64_t nt = cdiv(p->nv, tw), jobs = g->batch * g->group;
    /* more, narrower tiles when that lets every thread take the same number */
    for (int64_t t = nt; threads > 1 && (jobs * nt) % threads && jobs * t < 8 * threads; t++) {
        int64_t w = round_up(cdiv(p->nv, t), NP);
        if (w < NP * 2)
            break;
        if ((jobs * cdiv(p->nv, w)) % threads == 0) {
            tw = w;
            nt = cdiv(p->nv, w);
            break;
        }
    }
    tw = round_up(cdiv(p->nv, nt), NP);
    /* Output rows a whole number of 64-column kernel calls wide: a GEMM per output row into y costs no partial call,
     * skips the phase rows' columns past the output, and saves the C tile and its copy (2% of ISNet's time); not
     * when a row is much wider than a tile (a long 1-D signal), whose slab would then outgrow the cache */
    int64_t per = cdiv(tw, p->qd[2]); /* rounded up: the C tile's share of the cache goes to the slab */
    p->rows = g->out[2] % (2 * NP) == 0 && per * p->qd[2] <= 2 * tw;
    if (p->rows)
        tw = per * p->qd[2];
    p->tw = tw;
    p->n_tiles = cdiv(p->nv, tw);
    p->m_rows = g->cout_g;
    p->m_blocks = 1;
    if (threads > 1 && jobs * p->n_tiles < threads) {
        p->m_rows = round_up(cdiv(g->cout_g, threads), REF_SGEMM_MR);
        p->m_blocks = cdiv(g->cout_g, p->m_rows);
    }
    p->cs = round_up(tw + p->span, 16);
    p->slab_floats = (size_t)(g->cin_g * p->n_slots * p->cs);
    p->c_floats = p->rows ? 0 : (size_t)(g->cout_g * round_up(tw, 16));
    p->offs_bytes = ref_align_up(sizeof(int32_t) * (size_t)(g->cin_g * g->k_size), REF_ALIGN);
}

static size_t thread_bytes(const direct_plan *p)
{
    return ref_align_up(sizeof(float) * (p->slab_floats + p->c_floats), REF_ALIGN);
}

static bool pointwise(const ref_conv_geom *g)
{
    for (int d = 0; d < REF_CONV_SP; d++)
        if (g->k[d] != 1 || g->stride[d] != 1 || g->pad_lo[d] || g->pad_hi[d])
            return false;
    return true;
}

bool ref_conv_direct_ok(const ref_conv_geom *g)
{
    /* 1x1 stride 1: packing X is cheap and its panels are contiguous, while reading X in place strides a plane per k
     * (L1 set conflicts made ResNet-50 slower; with few planes, ref_conv_pointwise_inplace). One output channel: the
     * packed path's one-row kernel adds in another order. */
    if (atomic_load(&force_im2col) || !ref_sgemm_taps_available() || g->transpose || pointwise(g) ||
        g->cout_g == 1 || n_phases(g) > MAX_PHASES)
        return false;
    direct_plan p;
    direct_plan_of(g, 1, &p);
    /* A wide tap reach (a large dilated kernel) makes even one tile's slab big: then im2col, whose tile is bounded. */
    if (thread_bytes(&p) > DIRECT_MAX_BYTES)
        return false;
    /* offsets are int32: the largest is (cin_g * slots - 1) * cs + span, read up to a tile's width past it */
    return (double)g->cin_g * (double)p.n_slots * (double)(p.cs + p.tw) + (double)p.span < 2147483647.0;
}

size_t ref_conv_direct_scratch_bytes(const ref_conv_geom *g, int n_threads)
{
    direct_plan p;
    direct_plan_of(g, n_threads < 1 ? 1 : n_threads, &p);
    return p.offs_bytes + thread_bytes(&p) * (size_t)(n_threads < 1 ? 1 : n_threads);
}

typedef struct direct_job {
    const ref_conv_geom *g;
    const direct_plan *p;
    const float *x, *wp, *bias;
    size_t group_floats;
    float *y;
    const int32_t *offs;
    char *threads_scratch;
} direct_job;

/* Positions [q0, q1) of phase a of channel xc's padded image into dst (dst[0] is position q0). */
static void fill_phase(const ref_conv_geom *g, const direct_plan *p, const float *xc, const int64_t *a, int64_t q0,
                       int64_t q1, float *dst)
{
    int64_t w = p->qd[2], s2 = g->stride[2], pl = g->pad_lo[2];
    /* phase columns x whose point x*s2 + a2 - pl lies in the input row: [xlo, xhi) */
    int64_t xlo = pl - a[2] <= 0 ? 0 : cdiv(pl - a[2], s2);
    int64_t xhi = pl - a[2] + g->in[2] <= 0 ? 0 : cdiv(pl - a[2] + g->in[2], s2);
    for (int64_t r = q0 / w; r * w < q1; r++) {
        int64_t xa = q0 > r * w ? q0 - r * w : 0, xb = q1 - r * w < w ? q1 - r * w : w;
        float *d = dst + r * w + xa - q0;
        int64_t iz = r / p->qd[1] * g->stride[0] + a[0] - g->pad_lo[0];
        int64_t iy = r % p->qd[1] * g->stride[1] + a[1] - g->pad_lo[1];
        int64_t ca = xa > xlo ? xa : xlo, cb = xb < xhi ? xb : xhi;
        if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1] || ca >= cb) {
            memset(d, 0, sizeof(float) * (size_t)(xb - xa));
            continue;
        }
        const float *row = xc + (iz * g->in[1] + iy) * g->in[2];
        int64_t shift = a[2] - pl; /* phase column x is row[x*s2 + shift] */
        memset(d, 0, sizeof(float) * (size_t)(ca - xa));
        if (s2 == 1)
            memcpy(d + (ca - xa), row + ca + shift, sizeof(float) * (size_t)(cb - ca));
        else if (s2 == 2) /* this path runs only with AVX-512 (ref_sgemm_taps_available) */
            ref_conv_deal2(row + ca * 2 + shift, cb - ca, d + (ca - xa));
        else
            for (int64_t x = ca; x < cb; x++)
                d[x - xa] = row[x * s2 + shift];
        memset(d + (cb - xa), 0, sizeof(float) * (size_t)(xb - cb));
    }
}

/* The tile's virtual columns [v0, v0+n) of rows [m0, m1) from ct (row stride ldc) to their outputs in y_g. */
static void copy_out(const ref_conv_geom *g, const direct_plan *p, const float *ct, int64_t ldc, int64_t v0, int64_t n,
                     int64_t m0, int64_t m1, float *y_g)
{
    int64_t w = p->qd[2];
    for (int64_t r = v0 / w; r * w < v0 + n; r++) {
        int64_t oz = r / p->qd[1], oy = r % p->qd[1];
        if (oy >= g->out[1] || oz >= g->out[0])
            continue;
        int64_t a = v0 > r * w ? v0 - r * w : 0, b = v0 + n - r * w < w ? v0 + n - r * w : w;
        if (b > g->out[2])
            b = g->out[2];
        if (a >= b)
            continue;
        const float *s = ct + r * w + a - v0;
        float *d = y_g + (oz * g->out[1] + oy) * g->out[2] + a;
        for (int64_t m = m0; m < m1; m++)
            memcpy(d + m * g->out_size, s + m * ldc, sizeof(float) * (size_t)(b - a));
    }
}

static void direct_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const direct_job *j = arg;
    const ref_conv_geom *g = j->g;
    const direct_plan *p = j->p;
    float *slab = (float *)(j->threads_scratch + (size_t)tid * thread_bytes(p)), *ct = slab + p->slab_floats;
    int64_t K = g->cin_g * g->k_size, ldc = round_up(p->tw, 16);
    for (int64_t t = begin; t < end; t++) {
        int64_t mb = t % p->m_blocks, ti = t / p->m_blocks % p->n_tiles, jb = t / p->m_blocks / p->n_tiles;
        int64_t n = jb / g->group, gi = jb % g->group;
        int64_t v0 = ti * p->tw, ncols = p->nv - v0 < p->tw ? p->nv - v0 : p->tw;
        int64_t m0 = mb * p->m_rows, m1 = m0 + p->m_rows < g->cout_g ? m0 + p->m_rows : g->cout_g;
        const float *x_g = j->x + (n * g->cin + gi * g->cin_g) * g->in_size;
        float *y_g = j->y + (n * g->cout + gi * g->cout_g) * g->out_size;
        int64_t q1 = v0 + ncols + p->span < p->plane ? v0 + ncols + p->span : p->plane;
        for (int ph = 0; ph < n_phases(g); ph++) {
            if (p->slot[ph] < 0)
                continue;
            int64_t a[3] = {ph / (g->stride[1] * g->stride[2]), ph / g->stride[2] % g->stride[1], ph % g->stride[2]};
            for (int64_t ci = 0; ci < g->cin_g; ci++)
                fill_phase(g, p, x_g + ci * g->in_size, a, v0, q1, slab + (ci * p->n_slots + p->slot[ph]) * p->cs);
        }
        ref_sgemm_epilogue ep = {.bias = j->bias ? j->bias + gi * g->cout_g : NULL, .clamp = g->act,
                                 .lo = g->act_lo, .hi = g->act_hi};
        const float *wp = j->wp + (size_t)gi * j->group_floats;
        if (!p->rows) {
            ref_sgemm_taps(wp, g->cout_g, m0, m1, K, slab, j->offs, ncols, ct, ldc, &ep);
            copy_out(g, p, ct, ldc, v0, ncols, m0, m1, y_g);
            continue;
        }
        for (int64_t r = v0 / p->qd[2]; r * p->qd[2] < v0 + ncols; r++) { /* v0 is a row start */
            int64_t oz = r / p->qd[1], oy = r % p->qd[1];
            if (oy < g->out[1] && oz < g->out[0])
                ref_sgemm_taps(wp, g->cout_g, m0, m1, K, slab + (r * p->qd[2] - v0), j->offs, g->out[2],
                               y_g + (oz * g->out[1] + oy) * g->out[2], g->out_size, &ep);
        }
    }
}

int ref_conv_direct(const ref_conv_geom *g, const float *x, const float *wp, size_t group_floats, const float *bias,
                    float *y, ref_pool *pool, void *scratch, size_t scratch_bytes, ref_error *err)
{
    int threads = ref_pool_threads(pool);
    direct_plan p;
    direct_plan_of(g, threads, &p);
    size_t need = p.offs_bytes + thread_bytes(&p) * (size_t)threads;
    if (scratch_bytes < need)
        return ref_fail(err, REF_E_INVALID, "conv: scratch of %zu bytes, %zu needed", scratch_bytes, need);
    int32_t *offs = scratch;
    for (int64_t ci = 0, k = 0; ci < g->cin_g; ci++)
        for (int64_t kz = 0; kz < g->k[0]; kz++)
            for (int64_t ky = 0; ky < g->k[1]; ky++)
                for (int64_t kx = 0; kx < g->k[2]; kx++) {
                    int64_t kk[3] = {kz, ky, kx}, off;
                    int ph;
                    tap_of(g, &p, kk, &ph, &off);
                    offs[k++] = (int32_t)((ci * p.n_slots + p.slot[ph]) * p.cs + off);
                }
    direct_job j = {.g = g, .p = &p, .x = x, .wp = wp, .bias = bias, .group_floats = group_floats, .y = y,
                    .offs = offs, .threads_scratch = (char *)scratch + p.offs_bytes};
    int64_t tasks = g->batch * g->group * p.n_tiles * p.m_blocks;
    double task_flops = 2.0 * (double)p.m_rows * (double)(g->cin_g * g->k_size) * (double)p.tw;
    int64_t grain = task_flops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / task_flops) + 1;
    ref_parallel_for(pool, tasks, grain, direct_task, &j);
    return REF_OK;
}

/* ---- 1x1 stride 1 with few input channels: B is the input itself (tap k is channel k's plane), C the output ---- */

/* Input channels up to which reading X in place beats packing it: a short K strides only that many planes per column
 * block, so the L1 sets hold them, and packing would copy the whole input for few FLOP per float. */
#define INPLACE_MAX_K 32
#define INPLACE_COLS 512 /* columns per task, a multiple of 64 */

bool ref_conv_pointwise_inplace_ok(const ref_conv_geom *g)
{
    return !atomic_load(&force_im2col) && ref_sgemm_taps_available() && !g->transpose && pointwise(g) &&
           g->cout_g > 1 && g->cin_g <= INPLACE_MAX_K && (double)g->cin_g * (double)g->in_size < 2147483647.0;
}

size_t ref_conv_pointwise_inplace_scratch_bytes(const ref_conv_geom *g)
{
    return ref_align_up(sizeof(int32_t) * (size_t)g->cin_g, REF_ALIGN);
}

/* Tasks: (image, group, part), a part being a block of output rows over every column (rows_per > 0) or a block of
 * INPLACE_COLS columns over every row. */
typedef struct inplace_job {
    const direct_job *d;
    int64_t parts, rows_per;
} inplace_job;

static void inplace_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const inplace_job *ij = arg;
    const direct_job *j = ij->d;
    const ref_conv_geom *g = j->g;
    for (int64_t t = begin; t < end; t++) {
        int64_t jb = t / ij->parts, part = t % ij->parts, n = jb / g->group, gi = jb % g->group;
        int64_t m0 = 0, m1 = g->cout_g, v0 = 0, ncols = g->out_size;
        if (ij->rows_per) {
            m0 = part * ij->rows_per;
            m1 = m0 + ij->rows_per < g->cout_g ? m0 + ij->rows_per : g->cout_g;
        } else {
            v0 = part * INPLACE_COLS;
            ncols = g->out_size - v0 < INPLACE_COLS ? g->out_size - v0 : INPLACE_COLS;
        }
        const float *x_g = j->x + (n * g->cin + gi * g->cin_g) * g->in_size;
        float *y_g = j->y + (n * g->cout + gi * g->cout_g) * g->out_size;
        ref_sgemm_epilogue ep = {.bias = j->bias ? j->bias + gi * g->cout_g : NULL, .clamp = g->act,
                                 .lo = g->act_lo, .hi = g->act_hi};
        ref_sgemm_taps(j->wp + (size_t)gi * j->group_floats, g->cout_g, m0, m1, g->cin_g, x_g + v0, j->offs, ncols,
                       y_g + v0, g->out_size, &ep);
    }
}

int ref_conv_pointwise_inplace(const ref_conv_geom *g, const float *x, const float *wp, size_t group_floats,
                               const float *bias, float *y, ref_pool *pool, void *scratch, size_t scratch_bytes,
                               ref_error *err)
{
    size_t need = ref_conv_pointwise_inplace_scratch_bytes(g);
    if (scratch_bytes < need)
        return ref_fail(err, REF_E_INVALID, "conv: scratch of %zu bytes, %zu needed", scratch_bytes, need);
    int32_t *offs = scratch;
    for (int64_t ci = 0; ci < g->cin_g; ci++)
        offs[ci] = (int32_t)(ci * g->in_size);
    direct_job j = {.g = g, .x = x, .wp = wp, .bias = bias, .group_floats = group_floats, .y = y, .offs = offs};
    inplace_job ij = {.d = &j, .parts = cdiv(g->out_size, INPLACE_COLS)};
    /* With rows enough, each thread takes a block of output channels over the whole image when its share fits L2: the
     * planes it writes are the ones a depthwise convolution after it (split by planes the same way) reads, so they
     * stay in its core's cache; a split by columns would leave half of every plane in the other core's. A share past
     * L2 goes out to memory either way, and then the column split writes it faster (fewer streams at once). */
    int threads = ref_pool_threads(pool);
    int64_t panels = cdiv(g->cout_g, REF_SGEMM_MR), rows_per = cdiv(panels, threads) * REF_SGEMM_MR;
    if (threads > 1 && panels >= 2 * threads && rows_per * g->out_size <= DIRECT_TARGET_FLOATS) {
        ij.rows_per = rows_per;
        ij.parts = cdiv(g->cout_g, ij.rows_per);
    }
    int64_t tasks = g->batch * g->group * ij.parts;
    double task_flops = 2.0 * (double)g->cin_g * (ij.rows_per ? (double)ij.rows_per * (double)g->out_size
                                                               : (double)g->cout_g * INPLACE_COLS);
    int64_t grain = task_flops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / task_flops) + 1;
    ref_parallel_for(pool, tasks, grain, inplace_task, &ij);
    return REF_OK;
}
