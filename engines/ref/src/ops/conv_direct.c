/* conv_direct.c: stride-1 convolutions without im2col: the GEMM reads its columns in place from the zero-padded input
 * through a tap table (ref_sgemm_taps), over "virtual" output columns that run along the padded rows; the few columns
 * that fall in the padding are computed and dropped. It must never allocate, and never give other bits than the
 * im2col path (same K order, same K blocks). */
#include <stdatomic.h>
#include <string.h>

#include "../alloc.h"
#include "conv_ops.h"
#include "sgemm.h"

#define NP (2 * REF_SGEMM_NR) /* columns per kernel call */
#define MR REF_SGEMM_MR

/* One thread's padded input slab and C tile, together, aim at L2 (the im2col path's tile size). */
#define DIRECT_TARGET_FLOATS (1024 * 1024 / 4)

static atomic_int force_im2col;
void ref_conv_force_im2col(bool on) { atomic_store(&force_im2col, on ? 1 : 0); }

static inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }
static inline int64_t cdiv(int64_t n, int64_t m) { return (n + m - 1) / m; }

static bool pointwise(const ref_conv_geom *g)
{
    for (int d = 0; d < REF_CONV_SP; d++)
        if (g->k[d] != 1 || g->pad_lo[d] || g->pad_hi[d])
            return false;
    return true;
}

/* The layout: the padded image is pd[0] x pd[1] x pd[2]; output (z, y, x) is virtual column (z*pd[1] + y)*pd[2] + x,
 * and tap (kz, ky, kx) reads the padded image at that column plus (kz*dil0*pd[1] + ky*dil1)*pd[2] + kx*dil2. */
typedef struct direct_plan {
    bool pw;               /* pointwise: x itself is the padded image, columns are outputs (no copies) */
    int64_t pd[3], plane;  /* padded dims and their product */
    int64_t nv, span;      /* virtual columns (through the last output); the widest tap's offset */
    int64_t tw, n_tiles;   /* columns per tile (a multiple of NP but the last), tiles per image */
    int64_t cs;            /* floats per channel in a thread's slab (pointwise: the input plane) */
    int64_t m_rows, m_blocks; /* output rows per task and row blocks (rows split only when tiles are too few) */
    size_t slab_floats, c_floats, offs_bytes;
} direct_plan;

static void direct_plan_of(const ref_conv_geom *g, int threads, direct_plan *p)
{
    memset(p, 0, sizeof *p);
    p->pw = pointwise(g);
    for (int d = 0; d < 3; d++)
        p->pd[d] = g->in[d] + g->pad_lo[d] + g->pad_hi[d];
    p->plane = p->pd[0] * p->pd[1] * p->pd[2];
    p->span = ((g->k[0] - 1) * g->dil[0] * p->pd[1] + (g->k[1] - 1) * g->dil[1]) * p->pd[2] + (g->k[2] - 1) * g->dil[2];
    p->nv = ((g->out[0] - 1) * p->pd[1] + g->out[1] - 1) * p->pd[2] + g->out[2];
    int64_t per_col = g->cin_g + g->cout_g;
    int64_t tw = (DIRECT_TARGET_FLOATS - g->cin_g * p->span) / per_col / NP * NP;
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
    p->tw = tw;
    p->n_tiles = cdiv(p->nv, tw);
    p->m_rows = g->cout_g;
    p->m_blocks = 1;
    if (threads > 1 && jobs * p->n_tiles < threads) {
        p->m_rows = round_up(cdiv(g->cout_g, threads), MR);
        p->m_blocks = cdiv(g->cout_g, p->m_rows);
    }
    p->cs = p->pw ? g->in_size : round_up(tw + p->span, 16);
    p->slab_floats = p->pw ? 0 : (size_t)(g->cin_g * p->cs);
    p->c_floats = p->pw ? 0 : (size_t)(g->cout_g * round_up(tw, 16));
    p->offs_bytes = ref_align_up(sizeof(int32_t) * (size_t)(g->cin_g * g->k_size), REF_ALIGN);
}

static size_t thread_bytes(const direct_plan *p)
{
    return ref_align_up(sizeof(float) * (p->slab_floats + p->c_floats), REF_ALIGN);
}

bool ref_conv_direct_ok(const ref_conv_geom *g)
{
    /* 1x1: packing X is cheap and its panels are contiguous, while reading X in place strides a plane per k (L1 set
     * conflicts made ResNet-50 slower); one output channel: the packed path's one-row kernel adds in another order */
    if (atomic_load(&force_im2col) || !ref_sgemm_taps_available() || g->transpose || pointwise(g) || g->cout_g == 1)
        return false;
    for (int d = 0; d < REF_CONV_SP; d++)
        if (g->stride[d] != 1)
            return false;
    direct_plan p;
    direct_plan_of(g, 1, &p);
    /* offsets are int32: the largest is (cin_g - 1) * cs + span, read up to a tile's width past it */
    return (double)g->cin_g * (double)(p.cs + p.tw) + (double)p.span < 2147483647.0;
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

/* Padded positions [q0, q1) of channel xc's padded image into dst (dst[0] is position q0). */
static void fill_slab(const ref_conv_geom *g, const direct_plan *p, const float *xc, int64_t q0, int64_t q1,
                      float *dst)
{
    int64_t w = p->pd[2];
    for (int64_t r = q0 / w; r * w < q1; r++) {
        int64_t a = q0 > r * w ? q0 - r * w : 0, b = q1 - r * w < w ? q1 - r * w : w; /* px range */
        float *d = dst + r * w + a - q0;
        int64_t iz = r / p->pd[1] - g->pad_lo[0], iy = r % p->pd[1] - g->pad_lo[1];
        if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1]) {
            memset(d, 0, sizeof(float) * (size_t)(b - a));
            continue;
        }
        const float *src = xc + (iz * g->in[1] + iy) * g->in[2];
        int64_t lo = g->pad_lo[2], hi = g->pad_lo[2] + g->in[2]; /* px inside the image */
        int64_t ca = a > lo ? a : lo, cb = b < hi ? b : hi;
        if (ca >= cb) {
            memset(d, 0, sizeof(float) * (size_t)(b - a));
            continue;
        }
        memset(d, 0, sizeof(float) * (size_t)(ca - a));
        memcpy(d + (ca - a), src + (ca - lo), sizeof(float) * (size_t)(cb - ca));
        memset(d + (cb - a), 0, sizeof(float) * (size_t)(b - cb));
    }
}

/* The tile's virtual columns [v0, v0+n) of rows [m0, m1) from ct (row stride ldc) to their outputs in y_g. */
static void copy_out(const ref_conv_geom *g, const direct_plan *p, const float *ct, int64_t ldc, int64_t v0, int64_t n,
                     int64_t m0, int64_t m1, float *y_g)
{
    int64_t w = p->pd[2];
    for (int64_t r = v0 / w; r * w < v0 + n; r++) {
        int64_t oz = r / p->pd[1], oy = r % p->pd[1];
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
        ref_sgemm_epilogue ep = {.bias = j->bias ? j->bias + gi * g->cout_g : NULL, .clamp = g->act,
                                 .lo = g->act_lo, .hi = g->act_hi};
        const float *ap = j->wp + (size_t)gi * j->group_floats;
        if (p->pw) {
            ref_sgemm_taps(ap, g->cout_g, m0, m1, K, x_g + v0, j->offs, ncols, y_g + v0, g->out_size, &ep);
            continue;
        }
        int64_t q1 = v0 + ncols + p->span < p->plane ? v0 + ncols + p->span : p->plane;
        for (int64_t ci = 0; ci < g->cin_g; ci++)
            fill_slab(g, p, x_g + ci * g->in_size, v0, q1, slab + ci * p->cs);
        ref_sgemm_taps(ap, g->cout_g, m0, m1, K, slab, j->offs, ncols, ct, ldc, &ep);
        copy_out(g, p, ct, ldc, v0, ncols, m0, m1, y_g);
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
                for (int64_t kx = 0; kx < g->k[2]; kx++)
                    offs[k++] = (int32_t)(ci * p.cs + (kz * g->dil[0] * p.pd[1] + ky * g->dil[1]) * p.pd[2] +
                                          kx * g->dil[2]);
    direct_job j = {.g = g, .p = &p, .x = x, .wp = wp, .bias = bias, .group_floats = group_floats, .y = y,
                    .offs = offs, .threads_scratch = (char *)scratch + p.offs_bytes};
    int64_t tasks = g->batch * g->group * p.n_tiles * p.m_blocks;
    double task_flops = 2.0 * (double)p.m_rows * (double)(g->cin_g * g->k_size) * (double)p.tw;
    int64_t grain = task_flops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / task_flops) + 1;
    ref_parallel_for(pool, tasks, grain, direct_task, &j);
    return REF_OK;
}
