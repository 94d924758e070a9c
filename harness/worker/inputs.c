/* inputs.c: model inputs for workers: .pb tensors read once, or deterministic values generated once per shape.
 * It must never change the values between iterations: a leak verdict must not depend on input data. */
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

void mlk_inputs_fill(int dtype, void *buf, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&s);
        double u = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (dtype) {
        case ONNX_DT_FLOAT: ((float *)buf)[i] = (float)u; break;
        case ONNX_DT_DOUBLE: ((double *)buf)[i] = u; break;
        case ONNX_DT_INT64: ((int64_t *)buf)[i] = (int64_t)(r & 3); break;
        case ONNX_DT_INT32: ((int32_t *)buf)[i] = (int32_t)(r & 3); break;
        case ONNX_DT_BOOL: ((uint8_t *)buf)[i] = (uint8_t)(i & 1); break;
        default: memset((char *)buf + (size_t)i * onnx_dtype_size(dtype), 0, onnx_dtype_size(dtype));
        }
    }
}

static int generated(mlk_inputs *in, int i, const engine_tensor_info *info, const void **data, size_t *bytes,
                     engine_error *err)
{
    size_t esize = onnx_dtype_size(info->dtype);
    if (!esize || info->rank < 0 || info->rank > ENGINE_MAX_RANK) {
        snprintf(err->msg, sizeof err->msg, "input '%s': cannot generate data of type %d, rank %d: give a .pb",
                 info->name, info->dtype, info->rank);
        return -1;
    }
    /* The element count, refusing negative (still symbolic) dims and products that overflow. */
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
    size_t need = (size_t)numel * esize;
    if (need > in->cap[i] || !in->buf[i]) {
        void *p = realloc(in->buf[i], need ? need : 1);
        if (!p) {
            snprintf(err->msg, sizeof err->msg, "input '%s': out of memory for %zu bytes", info->name, need);
            err->oom = 1;
            return -1;
        }
        in->buf[i] = p;
        in->cap[i] = need;
        mlk_inputs_fill(info->dtype, p, numel, 0x5eedULL + (uint64_t)i);
    }
    *data = in->buf[i];
    *bytes = need;
    return 0;
}

int mlk_inputs_apply(mlk_inputs *in, const engine_api *api, engine_compiled *c, engine_request *r,
                     engine_error *err)
{
    size_t n = api->n_inputs(c);
    if (n > MAX_IN) {
        snprintf(err->msg, sizeof err->msg, "the model has %zu inputs; at most %d are supported", n, MAX_IN);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        engine_tensor_info info;
        if (api->input_info(c, i, &info)) {
            snprintf(err->msg, sizeof err->msg, "input %zu: the engine gives no description", i);
            return -1;
        }
        const void *data;
        size_t bytes;
        if ((int)i < in->n_pb) {
            const onnx_tensor *t = in->pb[i];
            info.dtype = t->dtype;
            info.rank = t->rank;
            for (int k = 0; k < t->rank && k < ENGINE_MAX_RANK; k++)
                info.dims[k] = t->dims[k];
            data = t->data;
            bytes = t->nbytes;
        } else if (generated(in, (int)i, &info, &data, &bytes, err)) {
            return -1;
        }
        int rc = api->set_input(r, i, &info, data, bytes, err);
        if (rc)
            return rc;
    }
    return 0;
}
