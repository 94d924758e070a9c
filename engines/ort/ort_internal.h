/* ort_internal.h: what the files of engine_ort.so share: options, the model's bytes, status codes, error helpers.
 * It must never be installed or included outside engines/ort: nothing here is part of the plugin ABI. */
#ifndef ORT_INTERNAL_H
#define ORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "engine_opts.h"

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
    ORT_E_RELEASE = -3009,  /* an option the loaded ONNX Runtime release lacks, or a release not fetched */
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
    char version[16];      /* the ONNX Runtime release to load ("1.23.2"); "" when not given (ort_release.c) */
    engine_opt_dim dims[ORT_MAX_DIMS];  /* free dimension overrides (dim.NAME) */
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

/* ---- Releases (ort_release.c) ----
 * ORT's C API is one struct of function pointers, OrtApi, only ever appended to: C API N is the first members of
 * the struct, and it ships with release 1.N. A library serves every API up to its own (GetApi(N) returns NULL
 * above it), and its table ends where its API does: a member past that end must never be read.
 *
 * ORT_API_OF(i): the C API version that added the OrtApi member at index i (offsetof / sizeof(void *)), from the
 * last index of each version as upstream's onnxruntime_c_api.cc pins them ("Size of version N API cannot change";
 * versions 19 and 21 added nothing); engine_ort.c checks these boundaries against the header it is built with.
 * 0 for an index past version 23, the last boundary written here: engine_ort.c refuses to use such a member. */
#define ORT_API_OF(i)                                                                                        \
    ((i) <= 101 ? 1 : (i) <= 118 ? 2 : (i) <= 124 ? 3 : (i) <= 126 ? 4 : (i) <= 149 ? 5 : (i) <= 157 ? 6 :   \
     (i) <= 161 ? 7 : (i) <= 169 ? 8 : (i) <= 191 ? 9 : (i) <= 203 ? 10 : (i) <= 209 ? 11 : (i) <= 218 ? 12 : \
     (i) <= 224 ? 13 : (i) <= 238 ? 14 : (i) <= 254 ? 15 : (i) <= 265 ? 16 : (i) <= 275 ? 17 :               \
     (i) <= 279 ? 18 : (i) <= 284 ? 20 : (i) <= 317 ? 22 : (i) <= 389 ? 23 : 0)

/* The oldest C API the plugin loads: what every load, compile and request calls (IoBinding and
 * AddSessionConfigEntry, API 5). engine_ort.c asserts that no member it always calls is newer. */
#define ORT_API_MIN 5
/* The oldest release fetch.sh can fetch: onnxruntime-node carries no Linux library before 1.10. */
#define ORT_RELEASE_FIRST_FETCHABLE 10

/* What an option needs of the C API beyond ORT_API_MIN, for the message that names the option and the release. */
typedef struct ort_need {
    const char *option;  /* "arena_extend_strategy", "mmap=off with external data" */
    int api;             /* the C API version that first has member */
    const char *member;  /* the newest OrtApi member the option calls */
} ort_need;
/* The needs table, n entries (static storage); engine_ort.c asserts each api against its member's place. */
const ort_need *ort_needs(size_t *n);
/* The need named option, or NULL. */
const ort_need *ort_need_find(const char *option);

/* "1.23.2" -> *api 23 (the release's own C API; 1.N ships API N) and *code 1023002 (major * 1e6 + minor * 1e3 +
 * patch, as the metric ort_release records it). Only "1.N.P" with decimal parts is accepted; fails with
 * ORT_E_INVALID naming what (e.g. "option version"). Out-parameters are untouched on failure. */
int ort_release_parse(const char *s, const char *what, int *api, int64_t *code, engine_error *err);

/* Every option set in o that the C API api cannot serve fails with ORT_E_RELEASE: "option K needs C API N
 * (ONNX Runtime 1.N or later: MEMBER); ONNX Runtime <release> serves C API <api>". 0 when all are served. */
int ort_opts_check_api(const ort_opts *o, int api, const char *release, engine_error *err);

/* The library of release version: <cache>/<version>/lib/libonnxruntime.so.1, where <cache> is the folder two
 * levels above default_lib (fetch.sh's layout), else default_lib itself when version is default_version. Writes
 * the path into path (len bytes). A release not fetched fails with ORT_E_RELEASE naming the file it looked for and
 * the fetch.sh command that fetches it; a path that does not fit with ORT_E_INVALID. */
int ort_release_library(const char *version, const char *default_lib, const char *default_version, char *path,
                        size_t len, engine_error *err);

/* Bytes per element of an ONNX dtype, 0 for unsized or unknown ones. */
size_t ort_dtype_size(int32_t dtype);

#endif
