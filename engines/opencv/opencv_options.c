/* opencv_options.c: the OpenCV plugin's options, parsed from the key/value strings scenarios use, its error helper,
 * and the binding of symbolic dims. It must never touch OpenCV (check_options runs without it) nor accept a key or
 * value silently. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "onnx/dtype.h"
#include "engine_opts.h"
#include "opencv_internal.h"

int ocv_fail(engine_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        err->oom = code == OCV_E_NOMEM;
    }
    return code;
}

const char *ocv_opts_keys(void) { return "threads, fusion, mmap, blob_reuse, dim.NAME"; }

static void defaults(ocv_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->fusion = 1;
    o->mmap = 1;
    o->blob_reuse = -1;
}

static int parse_bool(const char *key, const char *v, int *out, engine_error *err)
{
    return engine_opt_bool(key, v, OCV_E_INVALID, out, err);
}

static int parse_int(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out, engine_error *err)
{
    return engine_opt_int(key, v, lo, hi, OCV_E_INVALID, out, err);
}

static int set_dim(ocv_opts *o, const char *name, const char *v, engine_error *err)
{
    return engine_opt_dim_set(o->dims, &o->n_dims, OCV_MAX_DIMS, name, v, OCV_E_INVALID, err);
}

static int set_one(ocv_opts *o, const char *key, const char *v, engine_error *err)
{
    if (!strcmp(key, "threads")) {
        int64_t x;
        int rc = parse_int(key, v, 0, 256, &x, err);
        if (!rc)
            o->threads = (int)x;
        return rc;
    }
    if (!strcmp(key, "fusion"))
        return parse_bool(key, v, &o->fusion, err);
    if (!strcmp(key, "mmap"))
        return parse_bool(key, v, &o->mmap, err);
    if (!strcmp(key, "blob_reuse"))
        return parse_bool(key, v, &o->blob_reuse, err);
    if (!strncmp(key, "dim.", 4))
        return set_dim(o, key + 4, v, err);
    return ocv_fail(err, OCV_E_NOTFOUND, "unknown option '%s'; accepted: %s", key, ocv_opts_keys());
}

int ocv_opts_parse(const engine_kv *kv, size_t n, ocv_opts *o, engine_error *err)
{
    defaults(o);
    for (size_t i = 0; i < n; i++) {
        if (!kv[i].key || !kv[i].value)
            return ocv_fail(err, OCV_E_INVALID, "option %zu: key and value are required", i);
        int rc = set_one(o, kv[i].key, kv[i].value, err);
        if (rc)
            return rc;
    }
    return 0;
}

int64_t ocv_opts_dim(const ocv_opts *o, const char *name)
{
    for (int i = 0; i < o->n_dims; i++)
        if (!strcmp(o->dims[i].name, name))
            return o->dims[i].value;
    return 0;
}

int ocv_value_shape(const ocv_value *v, const ocv_opts *o, engine_tensor_info *out, engine_error *err)
{
    if (!v->dtype)
        return ocv_fail(err, OCV_E_UNSUPPORTED, "'%.200s' is not a tensor with an element type in the model",
                        v->name);
    if (v->rank < 0)
        return ocv_fail(err, OCV_E_UNSUPPORTED, "'%.200s' has no shape in the model; OpenCV needs one", v->name);
    engine_tensor_info t;
    memset(&t, 0, sizeof t);
    t.name = v->name;
    t.dtype = v->dtype;
    t.rank = v->rank;
    for (int k = 0; k < v->rank; k++) {
        int64_t x = v->dims[k];
        if (x < 0) {
            x = v->sym[k] ? ocv_opts_dim(o, v->sym[k]) : 0;
            if (x <= 0)
                x = 1;
        }
        t.dims[k] = x;
    }
    *out = t;
    return 0;
}

size_t ocv_dtype_size(int32_t dtype) { return onnx_dtype_size(dtype); }
