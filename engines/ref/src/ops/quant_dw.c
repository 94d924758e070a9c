/* quant_dw.c: depthwise ConvInteger through the float depthwise kernel (conv_depthwise.c): x and w less their zero
 * points are small integers, every product and partial sum of up to REF_QDW_MAX_TAPS taps is an integer below 2^24,
 * so float arithmetic holds them exactly in any order and the int32 sums are the integer path's bit for bit. It must
 * never take a kernel with more taps (a sum could round) or a requantizing conv (QLinearConv keeps the int path). */
#include <string.h>

#include "quant.h"
#include "quant_dw.h"

static int64_t al64(int64_t n) { return (n + 63) / 64 * 64; }

bool ref_qdw_float_ok(const ref_conv_geom *g) { return ref_conv_is_depthwise(g) && g->k_size <= REF_QDW_MAX_TAPS; }

size_t ref_qdw_float_scratch_bytes(const ref_conv_geom *g, int threads)
{
    return (size_t)(al64(g->batch * g->cin * g->in_size * 4) + al64(g->cout * g->k_size * 4)) +
           ref_conv_depthwise_scratch_bytes(g, threads) + 64;
}

typedef struct {
    const void *x;
    float *xf;
    int32_t *y;
    int64_t plane;
    float xz;
    bool x_s8;
} qdw_cvt_job;

/* Planes [begin, end) of x less its zero point, as float (exact: |v| <= 255). */
__attribute__((target_clones("avx2", "default"), optimize("tree-vectorize"))) static void to_float(void *arg,
                                                                                                   int64_t begin,
                                                                                                   int64_t end, int tid)
{
    (void)tid;
    const qdw_cvt_job *j = arg;
    int64_t lo = begin * j->plane, hi = end * j->plane;
    if (j->x_s8)
        for (int64_t i = lo; i < hi; i++)
            j->xf[i] = (float)((const int8_t *)j->x)[i] - j->xz;
    else
        for (int64_t i = lo; i < hi; i++)
            j->xf[i] = (float)((const uint8_t *)j->x)[i] - j->xz;
}

/* Planes [begin, end) of y, written as float by the kernel, to int32 in place (exact: integers below 2^24). */
__attribute__((target_clones("avx2", "default"), optimize("tree-vectorize"))) static void to_int(void *arg,
                                                                                                 int64_t begin,
                                                                                                 int64_t end, int tid)
{
    (void)tid;
    const qdw_cvt_job *j = arg;
    for (int64_t i = begin * j->plane; i < end * j->plane; i++) {
        float f;
        memcpy(&f, j->y + i, 4); /* the same bytes read as float, then overwritten as int32 */
        j->y[i] = (int32_t)f;
    }
}

int ref_qdw_float_run(ref_op_ctx *c, const ref_conv_geom *g, const ref_qconv_in *q, ref_tensor *y)
{
    int threads = c->n_threads > 0 ? c->n_threads : 1;
    size_t need = ref_qdw_float_scratch_bytes(g, threads);
    if (c->scratch_bytes < need)
        return ref_fail(c->err, REF_E_STATE, "%s: scratch too small", c->node->op_type);
    float *xf = c->scratch, *wf = (float *)((char *)c->scratch + al64(g->batch * g->cin * g->in_size * 4));
    char *rest = (char *)wf + al64(g->cout * g->k_size * 4);
    bool w_s8 = q->w->dtype == REF_DT_INT8;
    for (int64_t co = 0; co < g->cout; co++) {
        int wz = (int)ref_quant_at(q->wz, co);
        for (int64_t t = 0; t < g->k_size; t++) {
            int64_t at = co * g->k_size + t;
            wf[at] = (float)((w_s8 ? ((const int8_t *)q->w->data)[at] : ((const uint8_t *)q->w->data)[at]) - wz);
        }
    }
    qdw_cvt_job j = {.x = q->x->data, .xf = xf, .y = y->data, .plane = g->in_size,
                     .xz = (float)ref_quant_at(q->xz, 0), .x_s8 = q->x->dtype == REF_DT_INT8};
    int64_t grain = 65536 / (g->in_size + 1) + 1;
    ref_parallel_for(c->pool, g->batch * g->cin, grain, to_float, &j);
    size_t rest_bytes = c->scratch_bytes - (size_t)(rest - (char *)c->scratch);
    int rc = ref_conv_depthwise(g, xf, wf, NULL, y->data, c->pool, rest, rest_bytes, c->err);
    if (rc)
        return rc;
    j.plane = g->out_size;
    ref_parallel_for(c->pool, g->batch * g->cout, 65536 / (g->out_size + 1) + 1, to_int, &j);
    return REF_OK;
}
