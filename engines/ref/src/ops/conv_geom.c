/* conv_geom.c: Conv/ConvTranspose geometry (pads, auto_pad, output sizes) and the per-group weight packing
 * that prepare does once. It must never trust an attribute: every count and value is checked first. */
#include <string.h>

#include "../alloc.h"
#include "conv_ops.h"
#include "sgemm.h"

/* Reads an INTS attribute of exactly n values (or 2n for pads) into out; absent leaves dflt. */
static int read_ints(ref_op_ctx *c, const char *name, int n, int64_t dflt, int64_t *out)
{
    const int64_t *v;
    size_t got = ref_attr_ints(c->node, name, &v);
    for (int i = 0; i < n; i++)
        out[i] = dflt;
    if (!v)
        return REF_OK;
    if (got != (size_t)n)
        return ref_fail(c->err, REF_E_SHAPE, "attribute %s has %zu values, expected %d", name, got, n);
    memcpy(out, v, sizeof(int64_t) * (size_t)n);
    return REF_OK;
}

static int check_inputs(ref_op_ctx *c, bool transpose, ref_conv_geom *g)
{
    const ref_tensor *x = c->in[0], *w = c->n_in > 1 ? c->in[1] : NULL;
    if (!x || !w)
        return ref_fail(c->err, REF_E_INVALID, "X and W are required");
    if (x->dtype != REF_DT_FLOAT || w->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "X is %s and W is %s; only float is supported",
                        ref_dtype_name(x->dtype), ref_dtype_name(w->dtype));
    if (x->rank < 3 || w->rank != x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "X has rank %d and W rank %d; both must be the same and >= 3",
                        x->rank, w->rank);
    if (ref_tensor_numel(w) == 0)
        return ref_fail(c->err, REF_E_SHAPE, "W has a zero dimension");
    g->nsp = x->rank - 2;
    if (g->nsp > REF_CONV_SP)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%d spatial dims; at most %d are supported", g->nsp,
                        REF_CONV_SP);
    g->transpose = transpose;
    g->group = ref_attr_int_or(c->node, "group", 1);
    g->batch = x->dims[0];
    g->cin = x->dims[1];
    if (g->group < 1 || w->dims[0] % g->group)
        return ref_fail(c->err, REF_E_SHAPE, "group %lld does not divide W's first dim %lld",
                        (long long)g->group, (long long)w->dims[0]);
    if (transpose) {
        g->cout = w->dims[1] * g->group;
        if (w->dims[0] != g->cin)
            return ref_fail(c->err, REF_E_SHAPE, "X has %lld channels but W's first dim is %lld",
                            (long long)g->cin, (long long)w->dims[0]);
    } else {
        g->cout = w->dims[0];
        if (w->dims[1] * g->group != g->cin)
            return ref_fail(c->err, REF_E_SHAPE, "X has %lld channels, W expects %lld x group %lld",
                            (long long)g->cin, (long long)w->dims[1], (long long)g->group);
    }
    g->cin_g = g->cin / g->group;
    g->cout_g = g->cout / g->group;
    const ref_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    g->has_bias = b != NULL;
    if (b && (b->dtype != REF_DT_FLOAT || b->rank != 1 || b->dims[0] != g->cout))
        return ref_fail(c->err, REF_E_SHAPE, "bias must be float [%lld]", (long long)g->cout);
    return REF_OK;
}

/* Explicit or automatic padding and the output size of spatial dim i (given-rank index). */
static int conv_dim(ref_op_ctx *c, ref_conv_geom *g, const char *ap, int i, int d, const int64_t *pads,
                    const int64_t *opad, const int64_t *oshape)
{
    /* Every step is checked: kernel, strides, dilations, pads and output_shape come from the model. */
    bool ovf = false;
    int64_t in = g->in[d], span = ref_i64_add(ref_i64_mul(g->k[d] - 1, g->dil[d], &ovf), 1, &ovf), s = g->stride[d];
    int64_t lo = pads[i], hi = pads[i + g->nsp], out;
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"), upper = !strcmp(ap, "SAME_UPPER");
    if (!g->transpose) {
        if (same) {
            out = in / s + (in % s != 0);
            int64_t total = ref_i64_sub(ref_i64_add(ref_i64_mul(out - 1, s, &ovf), span, &ovf), in, &ovf);
            total = total > 0 ? total : 0;
            lo = upper ? total / 2 : total - total / 2;
            hi = total - lo;
        } else if (!strcmp(ap, "VALID")) {
            lo = hi = 0;
        }
        int64_t room = ref_i64_sub(ref_i64_add(ref_i64_add(in, lo, &ovf), hi, &ovf), span, &ovf);
        out = room >= 0 ? room / s + 1 : 0;
    } else {
        int64_t natural = ref_i64_add(ref_i64_add(ref_i64_mul(s, in - 1, &ovf), opad[i], &ovf), span, &ovf);
        if (oshape || same) {
            out = oshape ? oshape[i] : ref_i64_mul(in, s, &ovf);
            int64_t total = ref_i64_sub(natural, out, &ovf);
            /* SAME_UPPER puts the odd pixel at the end, NOTSET and SAME_LOWER at the start. Halves round
             * toward -inf, so an output_shape larger than natural (total < 0) grows at the end. */
            int64_t half = total >= 0 ? total / 2 : -(ref_i64_sub(1, total, &ovf) / 2);
            lo = upper ? half : total - half;
            hi = total - lo;
        } else if (!strcmp(ap, "VALID")) {
            lo = hi = 0;
        }
        out = ref_i64_sub(ref_i64_sub(natural, lo, &ovf), hi, &ovf);
    }
    if (ovf)
        return ref_fail(c->err, REF_E_RANGE, "spatial dim %d: input %lld, kernel %lld, stride %lld, dilation %lld and "
                        "pads %lld/%lld overflow 64 bits", i, (long long)in, (long long)g->k[d], (long long)s,
                        (long long)g->dil[d], (long long)pads[i], (long long)pads[i + g->nsp]);
    if (!g->transpose && (lo < 0 || hi < 0))
        return ref_fail(c->err, REF_E_SHAPE, "negative pads on spatial dim %d", i);
    if (out <= 0)
        return ref_fail(c->err, REF_E_SHAPE, "spatial dim %d: input %lld, kernel %lld, stride %lld gives no output",
                        i, (long long)in, (long long)g->k[d], (long long)s);
    g->out[d] = out;
    g->pad_lo[d] = lo;
    g->pad_hi[d] = hi;
    return REF_OK;
}

static int read_attrs(ref_op_ctx *c, ref_conv_geom *g, const char *ap, int64_t *pads, int64_t *opad,
                      int64_t *oshape, bool *has_oshape)
{
    const ref_tensor *w = c->in[1];
    int n = g->nsp, rc;
    int64_t ks[REF_CONV_SP], st[REF_CONV_SP], dl[REF_CONV_SP];
    if ((rc = read_ints(c, "kernel_shape", n, -1, ks)) || (rc = read_ints(c, "strides", n, 1, st)) ||
        (rc = read_ints(c, "dilations", n, 1, dl)) || (rc = read_ints(c, "pads", 2 * n, 0, pads)) ||
        (rc = read_ints(c, "output_padding", n, 0, opad)))
        return rc;
    const int64_t *os;
    size_t n_os = ref_attr_ints(c->node, "output_shape", &os);
    *has_oshape = g->transpose && os;
    if (*has_oshape) {
        if (n_os != (size_t)n && n_os != (size_t)n + 2)
            return ref_fail(c->err, REF_E_SHAPE, "output_shape has %zu values for %d spatial dims", n_os, n);
        memcpy(oshape, os + (n_os - (size_t)n), sizeof(int64_t) * (size_t)n);
    }
    if (strcmp(ap, "NOTSET") && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER") && strcmp(ap, "VALID"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                        ap);
    for (int i = 0; i < n; i++) {
        int d = REF_CONV_SP - n + i;
        if (ks[i] >= 0 && ks[i] != w->dims[2 + i])
            return ref_fail(c->err, REF_E_SHAPE, "kernel_shape[%d] = %lld but W has %lld", i, (long long)ks[i],
                            (long long)w->dims[2 + i]);
        if (st[i] < 1 || dl[i] < 1 || w->dims[2 + i] < 1 || opad[i] < 0)
            return ref_fail(c->err, REF_E_SHAPE, "spatial dim %d: strides, dilations and kernel must be >= 1", i);
        g->k[d] = w->dims[2 + i];
        g->stride[d] = st[i];
        g->dil[d] = dl[i];
        g->in[d] = c->in[0]->dims[2 + i];
    }
    return REF_OK;
}

int ref_conv_geom_init(ref_op_ctx *c, bool transpose, ref_conv_geom *g)
{
    memset(g, 0, sizeof *g);
    g->act = c->act && !transpose;
    g->act_lo = c->act_lo;
    g->act_hi = c->act_hi;
    int rc = check_inputs(c, transpose, g);
    if (rc)
        return rc;
    for (int d = 0; d < REF_CONV_SP; d++) {
        g->in[d] = g->out[d] = g->k[d] = g->stride[d] = g->dil[d] = 1;
        g->pad_lo[d] = g->pad_hi[d] = 0;
    }
    int64_t pads[2 * REF_CONV_SP], opad[REF_CONV_SP], oshape[REF_CONV_SP];
    bool has_oshape = false;
    const char *ap = ref_attr_str_or(c->node, "auto_pad", "NOTSET");
    if ((rc = read_attrs(c, g, ap, pads, opad, oshape, &has_oshape)))
        return rc;
    for (int i = 0; i < g->nsp; i++)
        if ((rc = conv_dim(c, g, ap, i, REF_CONV_SP - g->nsp + i, pads, opad, has_oshape ? oshape : NULL)))
            return rc;
    g->in_size = g->out_size = g->k_size = 1;
    for (int d = 0; d < REF_CONV_SP; d++)
        if (!ref_dim_mul(g->in_size, g->in[d], &g->in_size) || !ref_dim_mul(g->out_size, g->out[d], &g->out_size) ||
            !ref_dim_mul(g->k_size, g->k[d], &g->k_size))
            return ref_fail(c->err, REF_E_RANGE, "the spatial sizes of input, output or kernel overflow 64 bits");
    return REF_OK;
}

void ref_conv_out_shape(const ref_conv_geom *g, ref_tensor *y)
{
    int64_t dims[REF_MAX_RANK] = {g->batch, g->cout};
    for (int i = 0; i < g->nsp; i++)
        dims[2 + i] = g->out[REF_CONV_SP - g->nsp + i];
    y->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(y, g->nsp + 2, dims);
}

/* ---- weight packing (prepare) ------------------------------------------------------------------- */

void ref_conv_a_shape(const ref_tensor *w, int64_t group, bool transpose, int64_t *m, int64_t *kdim)
{
    int64_t ksz = ref_dims_prod(w->dims, 2, w->rank);
    if (transpose) {
        *m = w->dims[1] * ksz;
        *kdim = w->dims[0] / group;
    } else {
        *m = w->dims[0] / group;
        *kdim = w->dims[1] * ksz;
    }
}

void ref_conv_pack_weights(const float *w, int64_t group, int64_t m, int64_t kdim, bool transpose, float *stage,
                           float *dst)
{
    size_t per = ref_sgemm_packed_a_floats(m, kdim);
    for (int64_t g = 0; g < group; g++) {
        const float *wg = w + g * m * kdim;
        if (transpose) {
            /* stored [kdim][m] (cin_g rows of cout_g*k): the GEMM wants its transpose */
            for (int64_t i = 0; i < m; i++)
                for (int64_t k = 0; k < kdim; k++)
                    stage[i * kdim + k] = wg[k * m + i];
        } else {
            memcpy(stage, wg, sizeof(float) * (size_t)(m * kdim));
        }
        ref_sgemm_operand a = {.data = stage, .ld = kdim};
        ref_sgemm_pack_a(m, kdim, &a, dst + (size_t)g * per);
    }
}

static bool is_transpose(const ref_op_ctx *c) { return !strcmp(c->node->op_type, "ConvTranspose"); }

bool ref_conv_will_pack(const ref_op_ctx *c)
{
    const ref_tensor *w = c->n_in > 1 ? c->in[1] : NULL;
    if (!w || !w->data || w->dtype != REF_DT_FLOAT || w->rank < 3 || ref_tensor_numel(w) == 0)
        return false;
    int64_t group = ref_attr_int_or(c->node, "group", 1);
    if (group < 1 || w->dims[0] % group)
        return false;
    /* depthwise Conv runs a direct kernel on W as stored; rows are bounded dim by dim, so no product wraps */
    int64_t rows = 1;
    for (int d = 2; d < w->rank - 1 && rows <= REF_CONV_DW_MAX_ROWS; d++)
        rows = w->dims[d] <= REF_CONV_DW_MAX_ROWS ? rows * w->dims[d] : REF_CONV_DW_MAX_ROWS + 1;
    if (!is_transpose(c) && w->dims[1] == 1 && group > 1 && w->dims[w->rank - 1] <= REF_CONV_DW_MAX_KX &&
        rows <= REF_CONV_DW_MAX_ROWS)
        return false;
    return true;
}

size_t ref_conv_prepare_scratch_bytes(const ref_op_ctx *c)
{
    if (!ref_conv_will_pack(c))
        return 0;
    int64_t m, kdim;
    ref_conv_a_shape(c->in[1], ref_attr_int_or(c->node, "group", 1), is_transpose(c), &m, &kdim);
    return sizeof(float) * (size_t)(m * kdim);
}

/* Pack the constant weights into s->packed; on failure s->packed stays NULL. */
static int conv_pack(ref_op_ctx *c, ref_conv_state *s)
{
    const ref_tensor *w = c->in[1];
    int64_t group = ref_attr_int_or(c->node, "group", 1), m, kdim;
    bool tr = is_transpose(c);
    ref_conv_a_shape(w, group, tr, &m, &kdim);
    if (c->scratch_bytes < sizeof(float) * (size_t)(m * kdim))
        return ref_fail(c->err, REF_E_INVALID, "prepare scratch of %zu bytes, %zu needed", c->scratch_bytes,
                        sizeof(float) * (size_t)(m * kdim));
    size_t per = ref_sgemm_packed_a_floats(m, kdim);
    if (!(s->packed = ref_aligned_alloc(sizeof(float) * per * (size_t)group)))
        return ref_fail(c->err, REF_E_NOMEM, "out of memory packing %lld x %lld weights x %lld groups",
                        (long long)m, (long long)kdim, (long long)group);
    s->group_floats = per;
    s->group = group;
    s->m = m;
    s->kdim = kdim;
    ref_conv_pack_weights(w->data, group, m, kdim, tr, c->scratch, s->packed);
    return REF_OK;
}

int ref_conv_prepare(ref_op_ctx *c, void **state)
{
    /* Always a state, packed or not: scratch sizing reads "prepare ran and did not pack" from it. */
    ref_conv_state *s = ref_calloc(1, sizeof *s);
    if (!s)
        return ref_fail(c->err, REF_E_NOMEM, "out of memory for the node state");
    int rc = ref_conv_will_pack(c) ? conv_pack(c, s) : REF_OK;
    if (rc) {
        ref_conv_state_free(s);
        return rc;
    }
    *state = s;
    return REF_OK;
}

bool ref_conv_has_packed(const ref_op_ctx *c)
{
    const ref_conv_state *s = c->state;
    return s ? s->packed != NULL : ref_conv_will_pack(c);
}

void ref_conv_state_free(void *state)
{
    ref_conv_state *s = state;
    if (!s)
        return;
    ref_free(s->packed);
    ref_free(s);
}

size_t ref_conv_state_bytes(const void *state)
{
    const ref_conv_state *s = state;
    return s ? sizeof(float) * s->group_floats * (size_t)s->group : 0;
}

void ref_conv_act(const ref_conv_geom *g, float *y, int64_t n)
{
    if (g->act)
        ref_sgemm_clamp(y, n, g->act_lo, g->act_hi);
}
