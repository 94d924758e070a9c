/* opencv_internal.h: what the files of engine_opencv.so share: options, the ONNX graph's inputs and outputs as the
 * file declares them, status codes and the error helper. Everything here is C, so the unit test runs it without
 * OpenCV. It must never be installed or included outside engines/opencv: nothing here is part of the plugin ABI. */
#ifndef OCV_INTERNAL_H
#define OCV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "engine_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plugin status codes (engine_error.code). */
enum {
    OCV_E_INVALID = -5001,     /* a bad option value or argument */
    OCV_E_NOTFOUND = -5002,    /* an unknown option key, a missing file */
    OCV_E_IO = -5003,          /* reading the model */
    OCV_E_NOMEM = -5004,
    OCV_E_PARSE = -5005,       /* the model's bytes are not a well-formed ModelProto */
    OCV_E_UNSUPPORTED = -5006, /* a model OpenCV 4.6 cannot take (external data, a non-tensor input) */
    OCV_E_OPENCV = -5007,      /* a cv::Exception from OpenCV (the model's operators, shapes) */
    OCV_E_RUNTIME = -5008,     /* any other C++ exception */
    OCV_E_STATE = -5009,       /* a call out of order (output before infer), or an option that cannot change now */
};

#define OCV_MAX_DIMS 16

typedef struct ocv_opts {
    int threads;    /* cv::setNumThreads: 1 (default, like ref and ort), N, or 0 for OpenCV's own choice. Process-wide. */
    int fusion;     /* Net::enableFusion. Default 1 (OpenCV's default). */
    int mmap;       /* 1: OpenCV reads the path itself; 0: the plugin reads the bytes, OpenCV parses the buffer. */
    int blob_reuse; /* -1 unset; 1/0: OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS=0/1, read once per process by OpenCV */
    engine_opt_dim dims[OCV_MAX_DIMS]; /* symbolic dims (dim.NAME); unset ones are 1 */
    int n_dims;
} ocv_opts;

/* Comma-separated accepted keys (static storage). */
const char *ocv_opts_keys(void);
/* Parse n options over the defaults. An unknown key fails with OCV_E_NOTFOUND listing ocv_opts_keys(); a bad value with
 * OCV_E_INVALID naming the key and the values allowed. *o is filled either way. */
int ocv_opts_parse(const engine_kv *kv, size_t n, ocv_opts *o, engine_error *err);
/* Value of dim.NAME, or 0 when not set. */
int64_t ocv_opts_dim(const ocv_opts *o, const char *name);

/* Fill err (code, oom, "fmt ...") and return code. err may be NULL. */
int ocv_fail(engine_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One graph input or output as the ModelProto declares it (ValueInfoProto). */
typedef struct ocv_value {
    char *name;                     /* owned */
    int32_t dtype;                  /* TensorProto.DataType; 0 when the value is not a tensor or has no elem_type */
    int32_t rank;                   /* -1 when the type has no shape */
    int64_t dims[ENGINE_MAX_RANK];  /* -1 where the dim is symbolic or unknown */
    char *sym[ENGINE_MAX_RANK];     /* dim_param names (owned), NULL where there is none */
} ocv_value;

/* The graph's inputs that are not initializers (what the caller feeds), its outputs, and whether any initializer
 * keeps its data in an external file. */
typedef struct ocv_graph {
    size_t n_in, n_out;
    ocv_value *in, *out;            /* owned arrays */
    size_t n_ext;                   /* distinct external-data locations the initializers name */
    char *ext0;                     /* the first of them (owned), NULL without external data */
} ocv_graph;

/* Read ModelProto.graph's input (11), output (12) and initializer (5) names from buf[0..len) with common/onnx; every
 * other field is stepped over. Fails with OCV_E_PARSE naming the field path and byte, OCV_E_UNSUPPORTED for a rank
 * above ENGINE_MAX_RANK, or OCV_E_NOMEM; *g is untouched on failure. */
int ocv_graph_read(const void *buf, size_t len, ocv_graph *g, engine_error *err);
/* Release everything; g is left empty. NULL is fine. */
void ocv_graph_free(ocv_graph *g);

/* v's shape with its symbolic and unknown dims bound: dim.NAME when set, else 1. Fails with OCV_E_UNSUPPORTED (naming
 * the value) when v is not a tensor or has no shape; *out (name borrowed from v) is untouched on failure. */
int ocv_value_shape(const ocv_value *v, const ocv_opts *o, engine_tensor_info *out, engine_error *err);

/* Bytes per element of an ONNX dtype, 0 for unsized or unknown ones (common/onnx's table). */
size_t ocv_dtype_size(int32_t dtype);

#ifdef __cplusplus
}
#endif

#endif
