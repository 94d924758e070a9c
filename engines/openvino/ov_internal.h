/* ov_internal.h: what the files of engine_openvino.so share: options, releases, status codes, the error helper, and
 * the symbolic dims of an ONNX model's inputs. It must never be installed or included outside engines/openvino, and
 * declares nothing of OpenVINO's own headers (the option parser and its unit test build without them). */
#ifndef OV_INTERNAL_H
#define OV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "engine_opts.h"

/* Plugin status codes (engine_error.code, apart from ORT's -3xxx, common/onnx's -4xxx and OpenCV's -5xxx); OpenVINO's
 * own ov_status_e is added to OV_E_RUNTIME's message. */
enum {
    OV_E_INVALID = -6001,  /* a bad option value or argument */
    OV_E_NOTFOUND = -6002, /* an unknown option key, a missing file */
    OV_E_NOMEM = -6003,
    OV_E_LOAD = -6004,     /* libopenvino_c missing, or not loadable, or lacking a function */
    OV_E_RUNTIME = -6005,  /* a failed OpenVINO call */
    OV_E_PARSE = -6006,    /* the ONNX file's inputs could not be read */
    OV_E_STATE = -6007,    /* a call out of order (output before infer) */
    OV_E_RELEASE = -6008,  /* a release not pinned, not fetched, or not the one asked for */
};

#define OV_MAX_DIMS 16

/* The values of `hint` and `precision`, each an X-macro table: option value, OpenVINO's property value. */
#define OV_HINTS(X) X("latency", "LATENCY") X("throughput", "THROUGHPUT")
#define OV_PRECISIONS(X) X("f32", "f32") X("bf16", "bf16") X("f16", "f16")

typedef struct ov_opts {
    int mmap;              /* ENABLE_MMAP on the core before the model is read. Default 1 (OpenVINO's own default). */
    int threads;           /* INFERENCE_NUM_THREADS; 0 lets OpenVINO pick. Default 1, like ref and ORT. */
    int compile_threads;   /* COMPILATION_NUM_THREADS; -1 unset (OpenVINO's default: every core). */
    int streams;           /* NUM_STREAMS; -1 unset, 0 "AUTO" */
    int hint;              /* index into OV_HINTS; -1 unset (the CPU plugin's default, latency) */
    int64_t runtime_cache; /* CPU_RUNTIME_CACHE_CAPACITY; -1 unset (the plugin's default), 0 off */
    char cache_dir[512];   /* CACHE_DIR; "" unset */
    int precision;         /* index into OV_PRECISIONS; -1 unset (the CPU's native precision) */
    char version[16];      /* the release to load ("2024.6.0"); "" = the default the plugin was built with */
    engine_opt_dim dims[OV_MAX_DIMS];   /* symbolic dimension values (dim.NAME) */
    int n_dims;
} ov_opts;

/* Comma-separated accepted keys (static storage). */
const char *ov_opts_keys(void);
/* Parse n options over the defaults. An unknown key fails with OV_E_NOTFOUND listing ov_opts_keys(); a bad value with
 * OV_E_INVALID naming the key and the values allowed. *o is filled either way. */
int ov_opts_parse(const engine_kv *kv, size_t n, ov_opts *o, engine_error *err);
/* Value of dim.NAME, or 0 when not set. */
int64_t ov_opts_dim(const ov_opts *o, const char *name);
/* OpenVINO's property value of option value index i of hint / precision. */
const char *ov_hint_value(int i);
const char *ov_precision_value(int i);

/* Fill err (code, oom, "fmt ...") and return code. err may be NULL. */
int ov_fail(engine_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "2024.6.0" -> *code 2024006000 (year * 1e6 + minor * 1e3 + patch, as the metric openvino_release records it). Only
 * "YYYY.M.P" with decimal parts is accepted; fails with OV_E_INVALID naming what. *code is untouched on failure. */
int ov_release_parse(const char *s, const char *what, int64_t *code, engine_error *err);

/* The folder holding release version's libraries, <cache>/<version>/libs, where <cache> is $MLK_OPENVINO_CACHE or else
 * default_cache (fetch.sh's cache at build time), and the C library in it (the one libopenvino_c.so.* there). A release
 * not fetched fails with OV_E_RELEASE naming the folder and the fetch.sh command that fetches it. */
int ov_release_library(const char *version, const char *default_cache, char *lib, size_t len, engine_error *err);

/* Bytes per element of an ONNX dtype, 0 for unsized or unknown ones. */
size_t ov_dtype_size(int32_t dtype);

/* The symbolic dims of an ONNX model's graph inputs (those that are not initializers), by input name and axis. */
typedef struct ov_onnx_dims {
    size_t n;
    char **input;        /* input names */
    char **param;        /* n * ENGINE_MAX_RANK: dim_param of each axis, NULL when fixed or unnamed */
} ov_onnx_dims;
/* Read them from the ONNX file at path (common/onnx). Fails with OV_E_NOTFOUND, OV_E_PARSE (naming the field and byte)
 * or OV_E_NOMEM; *out is left empty on failure. */
int ov_onnx_dims_read(const char *path, ov_onnx_dims *out, engine_error *err);
/* The dim_param of axis of the input named name, or NULL. Borrowed: valid while d lives. */
const char *ov_onnx_dims_param(const ov_onnx_dims *d, const char *name, int axis);
void ov_onnx_dims_free(ov_onnx_dims *d);

#endif
