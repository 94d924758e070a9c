/* layout_transpose.c: Transpose and the two ops that are a transpose of a 6-D view (DepthToSpace, SpaceToDepth).
 * It must never allocate: every kernel is one strided gather over the input's own bytes. */
#include <string.h>

#include "layout_copy.h"
#include "layout_ops.h"

/* Write the transpose of the contiguous tensor in_dims[0..rank) by perm to dst. */
static void permute(ref_pool *pool, void *dst, const void *src, size_t es, int rank, const int64_t *in_dims,
                    const int *perm)
{
    int64_t in_strides[REF_MAX_RANK], dims[REF_MAX_RANK], strides[REF_MAX_RANK];
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        in_strides[d] = s;
        s *= in_dims[d];
    }
    for (int d = 0; d < rank; d++) {
        dims[d] = in_dims[perm[d]];
        strides[d] = in_strides[perm[d]];
    }
    ref_layout_gather(pool, dst, src, es, rank, dims, strides);
}

/* ---------------------------------------------------------------------------------------------
 * Transpose
 * ------------------------------------------------------------------------------------------- */

/* perm from the attribute (reversed dims without it), checked to be a permutation of rank. */
static int transpose_perm(ref_op_ctx *c, int rank, int *perm)
{
    const int64_t *p;
    size_t n = ref_attr_ints(c->node, "perm", &p);
    if (!ref_node_attr(c->node, "perm")) {
        for (int d = 0; d < rank; d++)
            perm[d] = rank - 1 - d;
        return REF_OK;
    }
    if (n != (size_t)rank)
        return ref_fail(c->err, REF_E_SHAPE, "Transpose: perm has %zu entries for rank %d", n, rank);
    bool seen[REF_MAX_RANK] = {false};
    for (int d = 0; d < rank; d++) {
        if (p[d] < 0 || p[d] >= rank || seen[p[d]])
            return ref_fail(c->err, REF_E_SHAPE, "Transpose: perm is not a permutation of 0..%d (entry %d is %lld)",
                            rank - 1, d, (long long)p[d]);
        seen[p[d]] = true;
        perm[d] = (int)p[d];
    }
    return REF_OK;
}

int ref_transpose_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Transpose");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int perm[REF_MAX_RANK];
    if ((rc = transpose_perm(c, x->rank, perm)))
        return rc;
    c->out[0]->dtype = x->dtype;
    c->out[0]->rank = x->rank;
    for (int d = 0; d < x->rank; d++)
        c->out[0]->dims[d] = x->dims[perm[d]];
    return REF_OK;
}

int ref_transpose_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int perm[REF_MAX_RANK];
    int rc = transpose_perm(c, x->rank, perm);
    if (rc)
        return rc;
    permute(c->pool, c->out[0]->data, x->data, ref_dtype_size(x->dtype), x->rank, x->dims, perm);
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * DepthToSpace, SpaceToDepth
 * ------------------------------------------------------------------------------------------- */

/* Shared checks: a 4-D input of a sized type and a positive blocksize. */
static int block_input(ref_op_ctx *c, const char *op, int64_t *b)
{
    int rc = ref_layout_want_sized(c, 0, op);
    if (rc)
        return rc;
    if (c->in[0]->rank != 4)
        return ref_fail(c->err, REF_E_SHAPE, "%s: input must be 4-D (N,C,H,W), got rank %d", op, c->in[0]->rank);
    *b = ref_attr_int_or(c->node, "blocksize", 0);
    int64_t bb;
    if (*b < 1)
        return ref_fail(c->err, REF_E_INVALID, "%s: blocksize must be positive, got %lld", op, (long long)*b);
    if (!ref_dim_mul(*b, *b, &bb))
        return ref_fail(c->err, REF_E_RANGE, "%s: blocksize %lld squared overflows 64 bits", op, (long long)*b);
    return REF_OK;
}

/* DCR (the default) splits channels as (b1, b2, C'); CRD as (C', b1, b2). */
static int depth_mode_crd(ref_op_ctx *c, bool *crd)
{
    const char *mode = ref_attr_str_or(c->node, "mode", "DCR");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "DepthToSpace: mode '%s' (DCR or CRD)", mode);
    *crd = !strcmp(mode, "CRD");
    return REF_OK;
}

int ref_depth_to_space_infer(ref_op_ctx *c)
{
    int64_t b;
    bool crd;
    int rc = block_input(c, "DepthToSpace", &b);
    if (rc || (rc = depth_mode_crd(c, &crd)))
        return rc;
    const ref_tensor *x = c->in[0];
    if (x->dims[1] % (b * b))
        return ref_fail(c->err, REF_E_SHAPE, "DepthToSpace: channels %lld are not a multiple of blocksize^2 = %lld",
                        (long long)x->dims[1], (long long)(b * b));
    int64_t dims[4] = {x->dims[0], x->dims[1] / (b * b), 0, 0};
    if (!ref_dim_mul(x->dims[2], b, &dims[2]) || !ref_dim_mul(x->dims[3], b, &dims[3]))
        return ref_fail(c->err, REF_E_RANGE, "DepthToSpace: spatial dims %lldx%lld times blocksize %lld overflow 64 bits",
                        (long long)x->dims[2], (long long)x->dims[3], (long long)b);
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], 4, dims);
    return REF_OK;
}

int ref_depth_to_space_run(ref_op_ctx *c)
{
    int64_t b;
    bool crd;
    int rc = block_input(c, "DepthToSpace", &b);
    if (rc || (rc = depth_mode_crd(c, &crd)))
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t n = x->dims[0], cc = x->dims[1] / (b * b), h = x->dims[2], w = x->dims[3];
    static const int perm_dcr[6] = {0, 3, 4, 1, 5, 2}, perm_crd[6] = {0, 1, 4, 2, 5, 3};
    int64_t dcr[6] = {n, b, b, cc, h, w}, crd6[6] = {n, cc, b, b, h, w};
    permute(c->pool, c->out[0]->data, x->data, ref_dtype_size(x->dtype), 6, crd ? crd6 : dcr,
            crd ? perm_crd : perm_dcr);
    return REF_OK;
}

int ref_space_to_depth_infer(ref_op_ctx *c)
{
    int64_t b;
    int rc = block_input(c, "SpaceToDepth", &b);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    if (x->dims[2] % b || x->dims[3] % b)
        return ref_fail(c->err, REF_E_SHAPE, "SpaceToDepth: spatial dims %lldx%lld are not multiples of blocksize %lld",
                        (long long)x->dims[2], (long long)x->dims[3], (long long)b);
    int64_t dims[4] = {x->dims[0], 0, x->dims[2] / b, x->dims[3] / b};
    if (!ref_dim_mul(x->dims[1], b * b, &dims[1]))
        return ref_fail(c->err, REF_E_RANGE, "SpaceToDepth: channels %lld times blocksize^2 = %lld overflow 64 bits",
                        (long long)x->dims[1], (long long)(b * b));
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], 4, dims);
    return REF_OK;
}

int ref_space_to_depth_run(ref_op_ctx *c)
{
    int64_t b;
    int rc = block_input(c, "SpaceToDepth", &b);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    static const int perm[6] = {0, 3, 5, 1, 2, 4};
    int64_t view[6] = {x->dims[0], x->dims[1], x->dims[2] / b, b, x->dims[3] / b, b};
    permute(c->pool, c->out[0]->data, x->data, ref_dtype_size(x->dtype), 6, view, perm);
    return REF_OK;
}
