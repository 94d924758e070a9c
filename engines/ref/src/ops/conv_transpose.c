/* conv_transpose.c: ConvTranspose as col[cout_g*k, in] = W_g^T x X_g (pre-packed W_g^T) followed by a
 * col2im scatter-add per output channel, parallel over channels. It must never allocate at run time. */
#include "../alloc.h"
#include "conv_ops.h"
#include "sgemm.h"

int ref_conv_transpose_infer(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = ref_conv_geom_init(c, true, &g);
    if (rc)
        return rc;
    /* the column matrix is a tensor of its own, held to the same bounds (col_bytes then cannot wrap) */
    ref_tensor col = {.dtype = REF_DT_FLOAT, .rank = 2, .dims = {0, g.in_size}};
    if (!ref_dim_mul(g.cout_g, g.k_size, &col.dims[0]))
        col.dims[0] = -1;
    if ((rc = ref_shape_check(&col, ref_op_max_tensor_bytes(c), "the column matrix", c->err)))
        return rc;
    ref_conv_out_shape(&g, c->out[0]);
    return REF_OK;
}

/* Column matrix of one (image, group), then the GEMM's own packing scratch. */
static size_t col_bytes(const ref_conv_geom *g)
{
    return ref_align_up(sizeof(float) * (size_t)(g->cout_g * g->k_size * g->in_size), REF_ALIGN);
}

static size_t gemm_bytes(const ref_conv_geom *g, bool prepacked, int n_threads)
{
    return ref_sgemm_scratch_bytes(g->cout_g * g->k_size, g->in_size, g->cin_g, prepacked, false, n_threads);
}

size_t ref_conv_transpose_scratch_bytes(const ref_op_ctx *c)
{
    ref_conv_geom g;
    ref_error e;
    ref_op_ctx cc = *c;
    cc.err = &e;
    if (ref_conv_geom_init(&cc, true, &g))
        return 0;
    bool prepacked = ref_conv_has_packed(c);
    return col_bytes(&g) + gemm_bytes(&g, prepacked, c->n_threads < 1 ? 1 : c->n_threads);
}

typedef struct ct_job {
    const ref_conv_geom *g;
    const float *col, *bias;
    float *y; /* this (image, group)'s first output channel */
    int64_t m0; /* its index among all output channels, for the bias */
} ct_job;

static void col2im_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const ct_job *j = arg;
    const ref_conv_geom *g = j->g;
    for (int64_t m = begin; m < end; m++) {
        float *yc = j->y + m * g->out_size, b = j->bias ? j->bias[j->m0 + m] : 0.0f;
        for (int64_t i = 0; i < g->out_size; i++)
            yc[i] = b;
        ref_conv_col2im(g, j->col + m * g->k_size * g->in_size, yc);
    }
}

int ref_conv_transpose_run(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = ref_conv_geom_init(c, true, &g);
    if (rc)
        return rc;
    const float *x = c->in[0]->data, *w = c->in[1]->data;
    const float *bias = g.has_bias ? c->in[2]->data : NULL;
    float *y = c->out[0]->data;
    const ref_conv_state *st = c->state && ((const ref_conv_state *)c->state)->packed ? c->state : NULL;
    int64_t mt = g.cout_g * g.k_size;
    if (st && (st->m != mt || st->kdim != g.cin_g || st->group != g.group))
        return ref_fail(c->err, REF_E_STATE, "packed weights are %lldx%lld x %lld groups, the node needs %lldx%lld",
                        (long long)st->m, (long long)st->kdim, (long long)st->group, (long long)mt,
                        (long long)g.cin_g);
    int threads = c->n_threads < 1 ? 1 : c->n_threads;
    size_t cb = col_bytes(&g), gb = gemm_bytes(&g, st != NULL, threads);
    if (c->scratch_bytes < cb + gb)
        return ref_fail(c->err, REF_E_INVALID, "scratch of %zu bytes, %zu needed", c->scratch_bytes, cb + gb);
    float *col = c->scratch;
    void *gs = (char *)c->scratch + cb;
    /* ~1e5 scattered adds a share outweigh waking the pool */
    int64_t per_channel = g.k_size * g.in_size, grain = per_channel > 100000 ? 1 : 100000 / (per_channel + 1) + 1;
    for (int64_t n = 0; n < g.batch; n++)
        for (int64_t gi = 0; gi < g.group; gi++) {
            /* packed: W's own data is never touched, and compile may have released it (compile/release.c) */
            ref_sgemm_operand a = st ? (ref_sgemm_operand){.data = st->packed + (size_t)gi * st->group_floats,
                                                           .packed = true}
                                     : (ref_sgemm_operand){.data = w + gi * g.cin_g * mt, .ld = mt, .trans = true};
            ref_sgemm_operand b = {.data = x + (n * g.cin + gi * g.cin_g) * g.in_size, .ld = g.in_size};
            if ((rc = ref_sgemm(c->pool, mt, g.in_size, g.cin_g, 1.0f, &a, &b, 0.0f, col, g.in_size, gs, gb,
                                c->err)))
                return rc;
            ct_job j = {.g = &g, .col = col, .bias = bias, .y = y + (n * g.cout + gi * g.cout_g) * g.out_size,
                        .m0 = gi * g.cout_g};
            ref_parallel_for(c->pool, g.cout_g, grain, col2im_task, &j);
        }
    return REF_OK;
}
