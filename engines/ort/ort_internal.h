/* ort_internal.h: what the files of engine_ort.so share: options, the model's bytes, status codes, error helpers.
 * It must never be installed or included outside engines/ort: nothing here is part of the plugin ABI. */
#ifndef ORT_INTERNAL_H
#define ORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* Plugin status codes (engine_error.code); ORT's own error code is added to ORT_E_RUNTIME's message. */
enum {
    ORT_E_INVALID = -3001,  /* a bad option value or argument */
    ORT_E_NOTFOUND = -3002, /* an unknown option key, a missing file */
    ORT_E_IO = -3003,       /* reading the model or its external data */
    ORT_E_NOMEM = -3004,
    ORT_E_LOAD = -3005,     /* libonnxruntime missing, too old, or not loadable */
    ORT_E_RUNTIME = -3006,  /* an OrtStatus from ONNX Runtime */
    ORT_E_PARSE = -3007,    /* the model's bytes are not a well-formed ModelProto */
    ORT_E_STATE = -3008,    /* a call out of order (output before infer) */
};

#define ORT_MAX_DIMS 16

typedef struct ort_opts {
    int threads;           /* intra-op threads; 0 lets ORT pick (one per core). Default 1, like ref. */
    int inter_threads;     /* inter-op threads; > 1 also switches to ORT_PARALLEL execution. Default 1. */
    int arena;             /* Enable/DisableCpuMemArena. Default 1. */
    int mem_pattern;       /* Enable/DisableMemPattern. Default 1. */
    int extend_strategy;   /* -1 unset (the session's own arena); 0 pow2, 1 exact: a shared env arena */
    int graph_opt;         /* GraphOptimizationLevel value. Default 99 (all), ORT's own default. */
    int prepacking;        /* 0 sets session.disable_prepacking=1. Default 1. */
    int init_device_alloc; /* session.use_device_allocator_for_initializers. Default 0. */
    int arena_shrinkage;   /* run option memory.enable_memory_arena_shrinkage=cpu:0. Default 0. */
    int mmap;              /* 1: CreateSession(path), ORT maps external data; 0: bytes in memory. Default 1. */
    int telemetry;         /* ORT's own telemetry events (Enable/DisableTelemetryEvents). Default 0: see README. */
    struct {
        char name[64];
        int64_t value;
    } dims[ORT_MAX_DIMS];  /* free dimension overrides (dim.NAME) */
    int n_dims;
} ort_opts;

/* Comma-separated accepted keys (static storage). */
const char *ort_opts_keys(void);
/* Parse n options over the defaults. An unknown key fails with ORT_E_NOTFOUND listing ort_opts_keys(); a bad
 * value with ORT_E_INVALID naming the key and the values allowed. *o is filled either way. */
int ort_opts_parse(const engine_kv *kv, size_t n, ort_opts *o, engine_error *err);
/* Value of dim.NAME, or 0 when not set. */
int64_t ort_opts_dim(const ort_opts *o, const char *name);

/* Fill err (code, oom, "fmt ...") and return code. err may be NULL. */
int ort_fail(engine_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The model file's bytes and those of its external-data files, read into the heap (mmap=off). */
typedef struct ort_bytes {
    void *model;
    size_t model_len;
    size_t n_ext;
    char **ext_names;   /* the locations exactly as the model names them */
    char **ext_bufs;
    size_t *ext_lens;
} ort_bytes;

/* Read path and every external-data file its main graph's initializers name (listed by common/onnx; resolved in
 * path's folder; an absolute location or one with a ".." component is refused). Only regular files are read.
 * Fails with ORT_E_NOTFOUND (a missing file), ORT_E_IO, ORT_E_PARSE (with common/onnx's field path and byte) or
 * ORT_E_NOMEM, naming the file; on failure *out is left empty. */
int ort_bytes_read(const char *path, ort_bytes *out, engine_error *err);
void ort_bytes_free(ort_bytes *b);

/* Telemetry (ort_telemetry.c). For telemetry=off, set ORT_DISABLE_TELEMETRY=1 unless the user set it; for on, undo
 * that and check. Call before the library is loaded. */
int ort_telemetry_env(int on, engine_error *err);
/* Fails with ORT_E_INVALID naming the variable when ORT would ignore telemetry=on (ORT_DISABLE_TELEMETRY set by the
 * user, or a CI variable such as CI=true). */
int ort_telemetry_check_on(engine_error *err);
/* The variables by which ORT knows a CI machine, NULL-terminated. */
extern const char *const ort_ci_vars[];

/* Bytes per element of an ONNX dtype, 0 for unsized or unknown ones. */
size_t ort_dtype_size(int32_t dtype);

#endif
