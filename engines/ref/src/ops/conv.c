/* conv.c: operator family "conv": Conv as GEMM of pre-packed weights W_g[cout_g, cin_g*k], its columns read in place
 * where the CPU allows (conv_direct.c) or im2col'ed straight into packed tiles (1x1 stride-1 convs pack X directly),
 * depthwise convs by a direct kernel; ConvTranspose lives in conv_transpose.c. It must never allocate at run time. */
#include <stdatomic.h>
#include <string.h>

#include "../alloc.h"
#include "conv_ops.h"
#include "sgemm.h"

#define NR REF_SGEMM_NR

/* Packed column tiles aim at L2 (1 MiB tiles measured 2-3% faster than 512 KiB on this AVX-512 EPYC at 1 thread, 2 MiB
 * no better and slower at 2 threads), but hold at least 4 panels: every tile streams all of W once, and narrower tiles
 * leave that traffic unamortized (deep layers with a 7x7 output ran at half speed with 1-panel tiles). */
#define TILE_TARGET_BYTES (1024 * 1024)
#define TILE_MIN_PANELS 4

static int conv_infer(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = ref_conv_geom_init(c, false, &g);
    if (rc)
        return rc;
    ref_conv_out_shape(&g, c->out[0]);
    return REF_OK;
}

/* True for a convolution whose column matrix is X itself. */
static bool is_pointwise(const ref_conv_geom *g)
{
    for (int d = 0; d < REF_CONV_SP; d++)
        if (g->k[d] != 1 || g->stride[d] != 1 || g->pad_lo[d] || g->pad_hi[d])
            return false;
    return true;
}

/* Column tiling of the output: the out_size columns make `units` of two NR-wide panels (the widest micro-kernel takes
 * two panels at once, so a tile of an odd panel count would run one panel at half speed), dealt to n_tiles tiles as
 * evenly as whole units allow (tile t holds units [t*units/n_tiles, (t+1)*units/n_tiles)), each at most
 * ~TILE_TARGET_BYTES packed, and enough tiles to keep every thread busy. Each element's reduction does not depend on
 * the tiling. */
#define UNIT (2 * NR)
static void conv_tiles(const ref_conv_geom *g, int n_threads, int64_t *units, int64_t *n_tiles, int64_t *max_cols)
{
    int64_t kdim = g->cin_g * g->k_size, jobs = g->batch * g->group;
    int64_t cap = TILE_TARGET_BYTES / (int64_t)sizeof(float) / kdim / UNIT;
    if (cap < TILE_MIN_PANELS / 2)
        cap = TILE_MIN_PANELS / 2;
    int64_t u = (g->out_size + UNIT - 1) / UNIT, nt = (u + cap - 1) / cap;
    while (n_threads > 1 && (jobs * nt) % n_threads && jobs * nt < 8 * n_threads && nt < u)
        nt++;
    *units = u;
    *n_tiles = nt;
    *max_cols = (u + nt - 1) / nt * UNIT;
}

typedef struct conv_sizes {
    size_t packed_w_bytes; /* run-time packed weights, when prepare did not pack them */
    size_t tile_bytes;     /* one thread's packed column tile */
    int64_t units, n_tiles, max_cols;
} conv_sizes;

static void conv_sizes_of(const ref_conv_geom *g, bool prepacked, int n_threads, conv_sizes *s)
{
    int64_t kdim = g->cin_g * g->k_size;
    conv_tiles(g, n_threads, &s->units, &s->n_tiles, &s->max_cols);
    s->tile_bytes = ref_align_up(sizeof(float) * ref_sgemm_packed_b_floats(kdim, s->max_cols), REF_ALIGN);
    s->packed_w_bytes = prepacked ? 0
                                  : ref_align_up(sizeof(float) * ref_sgemm_packed_a_floats(g->cout_g, kdim) *
                                                     (size_t)g->group,
                                                 REF_ALIGN);
}

static size_t conv_scratch_bytes(const ref_op_ctx *c)
{
    ref_conv_geom g;
    ref_error e;
    ref_op_ctx cc = *c;
    cc.err = &e;
    if (ref_conv_geom_init(&cc, false, &g) || g.out_size == 0)
        return 0;
    if (ref_conv_is_depthwise(&g))
        return ref_conv_depthwise_scratch_bytes(&g, c->n_threads);
    conv_sizes s;
    conv_sizes_of(&g, ref_conv_has_packed(c), c->n_threads, &s);
    if (ref_conv_pointwise_inplace_ok(&g))
        return s.packed_w_bytes + ref_conv_pointwise_inplace_scratch_bytes(&g);
    if (ref_conv_direct_ok(&g))
        return s.packed_w_bytes + ref_conv_direct_scratch_bytes(&g, c->n_threads);
    return s.packed_w_bytes + s.tile_bytes * (size_t)(c->n_threads < 1 ? 1 : c->n_threads);
}

typedef struct conv_job {
    const ref_conv_geom *g;
    const float *x, *bias, *wp; /* wp: packed weights, group g at wp + g*group_floats */
    size_t group_floats;
    float *y;
    char *tiles;
    conv_sizes s;
    bool pointwise;
    atomic_int rc;
} conv_job;

/* One task = one (image, group, column tile): pack the tile, one serial GEMM that adds the bias as it writes. */
static void conv_task(void *arg, int64_t begin, int64_t end, int tid)
{
    conv_job *j = arg;
    const ref_conv_geom *g = j->g;
    float *buf = (float *)(j->tiles + (size_t)tid * j->s.tile_bytes);
    int64_t kdim = g->cin_g * g->k_size;
    for (int64_t t = begin; t < end; t++) {
        int64_t ti = t % j->s.n_tiles, ng = t / j->s.n_tiles, n = ng / g->group, gi = ng % g->group;
        int64_t col0 = ti * j->s.units / j->s.n_tiles * UNIT, col1 = (ti + 1) * j->s.units / j->s.n_tiles * UNIT;
        int64_t ncols = (col1 < g->out_size ? col1 : g->out_size) - col0;
        const float *xg = j->x + (n * g->cin + gi * g->cin_g) * g->in_size;
        float *yg = j->y + (n * g->cout + gi * g->cout_g) * g->out_size + col0;
        if (j->pointwise) {
            ref_sgemm_operand xb = {.data = xg + col0, .ld = g->in_size};
            ref_sgemm_pack_b(kdim, ncols, &xb, buf);
        } else {
            ref_conv_im2col_packed(g, xg, col0, ncols, (ncols + NR - 1) / NR * NR, 0, buf);
        }
        /* bias and fused activation applied to each C tile as the GEMM writes it, while it is in L1 */
        ref_sgemm_epilogue ep = {.bias = j->bias ? j->bias + gi * g->cout_g : NULL, .clamp = g->act,
                                 .lo = g->act_lo, .hi = g->act_hi};
        ref_sgemm_operand a = {.data = j->wp + (size_t)gi * j->group_floats, .packed = true};
        ref_sgemm_operand b = {.data = buf, .packed = true};
        int rc = ref_sgemm_ex(NULL, g->cout_g, ncols, kdim, 1.0f, &a, &b, 0.0f, yg, g->out_size, NULL, 0, &ep, NULL);
        if (rc)
            atomic_store(&j->rc, rc);
    }
}

/* A small image (deep layers: 14x14, 7x7) split by columns gives each thread a few narrow tiles of the same C rows,
 * whose edges share cache lines: the threads then fight over them (two threads ran MobileNetV2 slower than one). Its
 * one column tile is packed on the caller and the GEMM's rows are split over the threads instead. */
#define ROW_SPLIT_MAX_COLS 1024

static bool rows_fit(const conv_job *j, int64_t kdim, int threads)
{
    return j->s.tile_bytes * (size_t)threads >= sizeof(float) * ref_sgemm_packed_b_floats(kdim, j->g->out_size);
}

/* Packing B for conv_rows, by ranges of panels on all threads (packed on the caller alone, it left the others idle:
 * a 1x1 conv of 2048 channels on a 7x7 image packs 0.4 MB). */
static void pack_rows_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const conv_job *j = arg;
    const ref_conv_geom *g = j->g;
    float *buf = (float *)j->tiles;
    int64_t kdim = g->cin_g * g->k_size, np = (g->out_size + NR - 1) / NR * NR;
    int64_t col0 = begin * NR, ncols = (end * NR < g->out_size ? end * NR : g->out_size) - col0;
    if (!j->pointwise) {
        ref_conv_im2col_packed(g, j->x, col0, ncols, np, begin, buf);
        return;
    }
    int64_t kcb = ref_sgemm_kc(kdim);
    for (int64_t pc = 0; pc < kdim; pc += kcb) {
        int64_t kc = kdim - pc < kcb ? kdim - pc : kcb;
        ref_sgemm_pack_b_block(j->x + pc * g->in_size + col0, g->in_size, false, kc, ncols,
                               buf + pc * np + begin * NR * kc);
    }
}

/* The GEMM split by rows, B packed whole into the threads' tile buffers (rows_fit says it fits). */
static int conv_rows(ref_op_ctx *c, conv_job *j, int64_t kdim)
{
    const ref_conv_geom *g = j->g;
    float *buf = (float *)j->tiles;
    int64_t panels = (g->out_size + NR - 1) / NR;
    double panel_bytes = (double)kdim * NR * sizeof(float);
    /* a copy of ~64 KB a share is worth a dispatch (a few microseconds) */
    ref_parallel_for(c->pool, panels, (int64_t)(65536.0 / panel_bytes) + 1, pack_rows_task, j);
    ref_sgemm_epilogue ep = {.bias = j->bias, .clamp = g->act, .lo = g->act_lo, .hi = g->act_hi};
    ref_sgemm_operand a = {.data = j->wp, .packed = true}, b = {.data = buf, .packed = true};
    return ref_sgemm_ex(c->pool, g->cout_g, g->out_size, kdim, 1.0f, &a, &b, 0.0f, j->y, g->out_size, NULL, 0, &ep,
                        c->err);
}

static int conv_run(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = ref_conv_geom_init(c, false, &g);
    if (rc)
        return rc;
    const float *x = c->in[0]->data, *w = c->in[1]->data;
    const float *bias = g.has_bias ? c->in[2]->data : NULL;
    float *y = c->out[0]->data;
    if (g.batch == 0 || g.cout == 0)
        return REF_OK;
    if (ref_conv_is_depthwise(&g))
        return ref_conv_depthwise(&g, x, w, bias, y, c->pool, c->scratch, c->scratch_bytes, c->err);
    const ref_conv_state *st = c->state && ((const ref_conv_state *)c->state)->packed ? c->state : NULL;
    int64_t kdim = g.cin_g * g.k_size;
    if (st && (st->m != g.cout_g || st->kdim != kdim || st->group != g.group))
        return ref_fail(c->err, REF_E_STATE, "packed weights are %lldx%lld x %lld groups, the node needs %lldx%lld",
                        (long long)st->m, (long long)st->kdim, (long long)st->group, (long long)g.cout_g,
                        (long long)kdim);
    conv_job j = {.g = &g, .x = x, .bias = bias, .y = y, .pointwise = is_pointwise(&g)};
    int threads = c->n_threads < 1 ? 1 : c->n_threads;
    conv_sizes_of(&g, st != NULL, threads, &j.s);
    bool inplace = ref_conv_pointwise_inplace_ok(&g), direct = !inplace && ref_conv_direct_ok(&g);
    size_t need = j.s.packed_w_bytes + (direct || inplace ? 0 : j.s.tile_bytes * (size_t)threads);
    if (c->scratch_bytes < need)
        return ref_fail(c->err, REF_E_INVALID, "scratch of %zu bytes, %zu needed", c->scratch_bytes, need);
    j.group_floats = ref_sgemm_packed_a_floats(g.cout_g, kdim);
    if (st) {
        j.wp = st->packed;
    } else {
        float *wp = c->scratch;
        for (int64_t gi = 0; gi < g.group; gi++) {
            ref_sgemm_operand a = {.data = w + gi * g.cout_g * kdim, .ld = kdim};
            ref_sgemm_pack_a(g.cout_g, kdim, &a, wp + (size_t)gi * j.group_floats);
        }
        j.wp = wp;
    }
    if (inplace)
        return ref_conv_pointwise_inplace(&g, x, j.wp, j.group_floats, bias, y, c->pool,
                                          (char *)c->scratch + j.s.packed_w_bytes,
                                          c->scratch_bytes - j.s.packed_w_bytes, c->err);
    if (direct)
        return ref_conv_direct(&g, x, j.wp, j.group_floats, bias, y, c->pool, (char *)c->scratch + j.s.packed_w_bytes,
                               c->scratch_bytes - j.s.packed_w_bytes, c->err);
    j.tiles = (char *)c->scratch + j.s.packed_w_bytes;
    if (threads > 1 && g.batch * g.group == 1 && g.out_size <= ROW_SPLIT_MAX_COLS && rows_fit(&j, kdim, threads))
        return conv_rows(c, &j, kdim);
    int64_t tasks = g.batch * g.group * j.s.n_tiles;
    double task_flops = 2.0 * (double)g.cout_g * (double)kdim * (double)j.s.max_cols;
    int64_t grain = task_flops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / task_flops) + 1;
    ref_parallel_for(c->pool, tasks, grain, conv_task, &j);
    if ((rc = atomic_load(&j.rc)))
        return ref_fail(c->err, rc, "conv GEMM failed (status %d)", rc);
    return REF_OK;
}

const ref_op ref_ops_conv[] = {
    {.name = "Conv",
     .infer = conv_infer,
     .prepare = ref_conv_prepare,
     .prepare_scratch_bytes = ref_conv_prepare_scratch_bytes,
     .state_free = ref_conv_state_free,
     .state_bytes = ref_conv_state_bytes,
     .scratch_bytes = conv_scratch_bytes,
     .run = conv_run},
    {.name = "ConvTranspose",
     .infer = ref_conv_transpose_infer,
     .prepare = ref_conv_prepare,
     .prepare_scratch_bytes = ref_conv_prepare_scratch_bytes,
     .state_free = ref_conv_state_free,
     .state_bytes = ref_conv_state_bytes,
     .scratch_bytes = ref_conv_transpose_scratch_bytes,
     .run = ref_conv_transpose_run},
    {.name = NULL},
};
