/* inputs.c: model inputs for workers: .pb tensors read once, or deterministic values generated once per shape.
 * It must never change the values between iterations: a leak verdict must not depend on input data. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "onnx/dtype.h"
#include "onnx/tensor_file.h"

#define MAX_IN 32

struct mlk_inputs {
    int n_pb;
    onnx_tensor *pb[MAX_IN];
    void *buf[MAX_IN]; /* generated data, per graph input */
    size_t cap[MAX_IN];
};

int mlk_inputs_new(const char *const *pb_paths, int n, mlk_inputs **out, mlk_error *err)
{
    if (n > MAX_IN)
        return mlk_fail(err, MLK_E_USAGE, "at most %d input files", MAX_IN);
    mlk_inputs *in = calloc(1, sizeof *in);
    if (!in)
        return mlk_fail(err, MLK_E_NOMEM, "inputs: out of memory");
    for (int i = 0; i < n; i++) {
        onnx_error e = {0};
        if (onnx_tensor_load(pb_paths[i], &in->pb[i], &e)) {
            mlk_inputs_free(in);
            return mlk_fail(err, MLK_E_PARSE, "input %d: %s", i, e.msg);
        }
        in->n_pb = i + 1;
    }
    *out = in;
    return MLK_OK;
}

void mlk_inputs_free(mlk_inputs *in)
{
    if (!in)
        return;
    for (int i = 0; i < in->n_pb; i++)
        onnx_tensor_free(in->pb[i]);
    for (int i = 0; i < MAX_IN; i++)
        free(in->buf[i]);
    free(in);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The float16 bits of v, a multiple of 2^-10 in [-1, 1] (exact in float16: 11 significant bits, all normal). */
static uint16_t half_of(double v)
{
    uint16_t sign = v < 0 ? 0x8000 : 0;
    double m = fabs(v);
    if (m == 0)
        return sign;
    int x;
    double f = frexp(m, &x); /* m = f * 2^x, f in [0.5, 1) */
    return (uint16_t)(sign | (uint16_t)((x - 1 + 15) << 10) | (uint16_t)((f * 2 - 1) * 1024));
}

void mlk_inputs_fill(int dtype, void *buf, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&s);
        double u = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (dtype) {
        case ONNX_DT_FLOAT: ((float *)buf)[i] = (float)u; break;
        case ONNX_DT_DOUBLE: ((double *)buf)[i] = u; break;
        case ONNX_DT_FLOAT16: ((uint16_t *)buf)[i] = half_of(nearbyint(u * 1024) / 1024); break;
        case ONNX_DT_INT64: ((int64_t *)buf)[i] = (int64_t)(r & 3); break;
        case ONNX_DT_INT32: ((int32_t *)buf)[i] = (int32_t)(r & 3); break;
        case ONNX_DT_BOOL: ((uint8_t *)buf)[i] = (uint8_t)(i & 1); break;
        default: memset((char *)buf + (size_t)i * onnx_dtype_size(dtype), 0, onnx_dtype_size(dtype));
        }
    }
}

/* The byte count of info's shape, refusing negative (still symbolic) dims and products that overflow; 0 or -1. */
static int shape_bytes(const engine_tensor_info *info, int64_t *numel_out, size_t *bytes, engine_error *err)
{
    size_t esize = onnx_dtype_size(info->dtype);
    if (!esize || info->rank < 0 || info->rank > ENGINE_MAX_RANK) {
        snprintf(err->msg, sizeof err->msg, "input '%s': cannot generate data of type %d, rank %d: give a .pb",
                 info->name, info->dtype, info->rank);
        return -1;
    }
    int64_t numel = 1;
    for (int k = 0; k < info->rank; k++) {
        if (info->dims[k] < 0 || (info->dims[k] && numel > INT64_MAX / info->dims[k]) ||
            (uint64_t)(numel * info->dims[k]) > SIZE_MAX / esize) {
            snprintf(err->msg, sizeof err->msg, "input '%s': dim %d is %lld: give a .pb or the dim's size",
                     info->name, k, (long long)info->dims[k]);
            return -1;
        }
        numel *= info->dims[k];
    }
    *numel_out = numel;
    *bytes = (size_t)numel * esize;
    return 0;
}

/* Input i's generated data for info's shape, in a buffer made for room's (its largest under a schedule): the data of a
 * smaller shape is a prefix of the same values, so nothing is made again when the shape changes. */
static int generated(mlk_inputs *in, int i, const engine_tensor_info *info, const engine_tensor_info *room,
                     const void **data, size_t *bytes, engine_error *err)
{
    int64_t numel, room_numel;
    size_t need, room_bytes;
    if (shape_bytes(info, &numel, &need, err) || shape_bytes(room, &room_numel, &room_bytes, err))
        return -1;
    if (room_bytes < need)
        room_bytes = need, room_numel = numel;
    if (room_bytes > in->cap[i] || !in->buf[i]) {
        void *p = realloc(in->buf[i], room_bytes ? room_bytes : 1);
        if (!p) {
            snprintf(err->msg, sizeof err->msg, "input '%s': out of memory for %zu bytes", info->name, room_bytes);
            err->oom = 1;
            return -1;
        }
        in->buf[i] = p;
        in->cap[i] = room_bytes;
        mlk_inputs_fill(info->dtype, p, room_numel, 0x5eedULL + (uint64_t)i);
    }
    *data = in->buf[i];
    *bytes = need;
    return 0;
}

/* The schedule's dim named name, or -1. */
static int scheduled(const mlk_shapes *sh, const char *name)
{
    for (int d = 0; name && sh && d < sh->n_dims; d++)
        if (!strcmp(sh->dims[d].name, name))
            return d;
    return -1;
}

/* Input i's dims under the schedule: info gets this call's sizes, room the largest. *n_set: dims the schedule set. */
static void schedule_dims(const engine_api *api, engine_compiled *c, size_t i, const mlk_shapes *sh,
                          const int64_t *sizes, engine_tensor_info *info, engine_tensor_info *room, unsigned *used,
                          int *n_set)
{
    *room = *info;
    *n_set = 0;
    for (int k = 0; sh && k < info->rank && k < ENGINE_MAX_RANK; k++) {
        int d = scheduled(sh, api->input_dim_param(c, i, k));
        if (d < 0)
            continue;
        info->dims[k] = sizes[d];
        room->dims[k] = mlk_shapes_max(sh, d);
        *used |= 1u << d;
        (*n_set)++;
    }
}

/* "shapes: no input of the model has a symbolic dim named 'x' (its symbolic dims: batch, seq)". */
static int unmatched(const engine_api *api, engine_compiled *c, size_t n, const mlk_shapes *sh, unsigned used,
                     engine_error *err)
{
    int d = 0;
    while (used & (1u << d))
        d++;
    int len = snprintf(err->msg, sizeof err->msg, "shapes: no input of the model has a symbolic dim named '%s' (its "
                       "symbolic dims:", sh->dims[d].name);
    int named = 0;
    for (size_t i = 0; i < n; i++) {
        engine_tensor_info info;
        if (api->input_info(c, i, &info))
            continue;
        for (int k = 0; k < info.rank && k < ENGINE_MAX_RANK && len > 0 && len < (int)sizeof err->msg; k++) {
            const char *p = api->input_dim_param(c, i, k);
            if (p)
                len += snprintf(err->msg + len, sizeof err->msg - (size_t)len, "%s %s", named++ ? "," : "", p);
        }
    }
    if (len > 0 && len < (int)sizeof err->msg)
        snprintf(err->msg + len, sizeof err->msg - (size_t)len, "%s)", named ? "" : " none");
    return -1;
}

int mlk_inputs_apply(mlk_inputs *in, const engine_api *api, engine_compiled *c, engine_request *r,
                     const mlk_shapes *sh, const int64_t *sizes, engine_error *err)
{
    size_t n = api->n_inputs(c);
    if (n > MAX_IN) {
        snprintf(err->msg, sizeof err->msg, "the model has %zu inputs; at most %d are supported", n, MAX_IN);
        return -1;
    }
    if (sh && sh->n_dims == 0)
        sh = NULL;
    if (sh && !api->input_dim_param) {
        snprintf(err->msg, sizeof err->msg, "shapes: engine '%s' cannot vary input shapes: its plugin does not name "
                 "its inputs' dims (engine.h input_dim_param)", api->name ? api->name : "?");
        return -1;
    }
    unsigned used = 0;
    for (size_t i = 0; i < n; i++) {
        engine_tensor_info info, room;
        if (api->input_info(c, i, &info)) {
            snprintf(err->msg, sizeof err->msg, "input %zu: the engine gives no description", i);
            return -1;
        }
        int n_set;
        schedule_dims(api, c, i, sh, sizes, &info, &room, &used, &n_set);
        const void *data;
        size_t bytes;
        if ((int)i < in->n_pb) {
            if (n_set) {
                snprintf(err->msg, sizeof err->msg, "shapes: input '%s' is read from a .pb file, whose shape is "
                         "fixed: leave its dims out of shapes:, or its file out of inputs:", info.name);
                return -1;
            }
            const onnx_tensor *t = in->pb[i];
            info.dtype = t->dtype;
            info.rank = t->rank;
            for (int k = 0; k < t->rank && k < ENGINE_MAX_RANK; k++)
                info.dims[k] = t->dims[k];
            data = t->data;
            bytes = t->nbytes;
        } else if (generated(in, (int)i, &info, &room, &data, &bytes, err)) {
            return -1;
        }
        int rc = api->set_input(r, i, &info, data, bytes, err);
        if (rc)
            return rc;
    }
    if (sh && used != (1u << sh->n_dims) - 1)
        return unmatched(api, c, n, sh, used, err);
    return 0;
}
