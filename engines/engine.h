/* engine.h: the engine plugin ABI. Each engine is a shared object exporting one function, engine_get_api,
 * that returns a versioned table of calls; memleak-run dlopens it in load_engine and dlcloses it in unload_engine.
 * Only scalars, opaque pointers and plain structs cross it; members are only ever appended, never changed. */
#ifndef ENGINE_H
#define ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENGINE_ABI_VERSION 1u
#define ENGINE_ENTRY_SYMBOL "engine_get_api"
#define ENGINE_MAX_RANK 8

/* Filled by every fallible call; msg names what was wrong and where. */
typedef struct engine_error {
    int code;       /* engine-specific status, never 0 on failure */
    int oom;        /* 1 when the failure was running out of memory */
    char msg[512];
} engine_error;

/* One option, as the scenario spells it ("threads" = "2"). */
typedef struct engine_kv {
    const char *key;
    const char *value;
} engine_kv;

/* A graph input: ONNX element type number, and its default shape (symbolic dims resolved). */
typedef struct engine_tensor_info {
    const char *name;   /* borrowed; valid while the compiled model lives */
    int32_t dtype;      /* ONNX TensorProto.DataType */
    int32_t rank;
    int64_t dims[ENGINE_MAX_RANK];
} engine_tensor_info;

/* An engine-specific figure sampled after a step (e.g. arena bytes in use). */
typedef struct engine_metric {
    char name[48];
    int64_t value;
} engine_metric;

typedef struct engine_ctx engine_ctx;           /* a loaded engine with its options */
typedef struct engine_model engine_model;
typedef struct engine_compiled engine_compiled;
typedef struct engine_request engine_request;

typedef struct engine_api {
    uint32_t abi_version; /* ENGINE_ABI_VERSION the plugin was built against */
    uint32_t struct_size; /* sizeof(engine_api) of the plugin: members past it are absent */
    const char *name;     /* "ref", "ort" */
    const char *version;  /* the engine's own version string */

    /* Comma-separated option keys accepted by load (static storage). */
    const char *(*option_keys)(void);
    /* Validate options without loading anything: unknown key → error listing option_keys(); bad value →
     * error naming key and allowed values. Returns 0 or non-zero. */
    int (*check_options)(const engine_kv *opts, size_t n, engine_error *err);

    /* load_engine / unload_engine. */
    int (*load)(const engine_kv *opts, size_t n, engine_ctx **out, engine_error *err);
    void (*unload)(engine_ctx *ctx);

    int (*read_model)(engine_ctx *ctx, const char *path, engine_model **out, engine_error *err);
    void (*release_model)(engine_model *m);

    int (*compile)(engine_ctx *ctx, engine_model *m, engine_compiled **out, engine_error *err);
    void (*release_compiled)(engine_compiled *c);

    size_t (*n_inputs)(engine_compiled *c);
    int (*input_info)(engine_compiled *c, size_t i, engine_tensor_info *out);

    int (*create_request)(engine_compiled *c, engine_request **out, engine_error *err);
    /* Copy data (nbytes, matching info's dtype and dims) into input i of the request. */
    int (*set_input)(engine_request *r, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err);
    int (*infer)(engine_request *r, engine_error *err);
    void (*release_request)(engine_request *r);

    /* Optional (may be NULL: no engine metrics). Writes up to max figures into out, sets *n. */
    int (*metrics)(engine_ctx *ctx, engine_metric *out, size_t max, size_t *n);

    /* Optional (may be NULL, as may output: the outputs cannot be read back). Number of graph outputs. */
    size_t (*n_outputs)(engine_compiled *c);
    /* Optional (may be NULL). Output i of the request's last infer: name, dtype and shape into *info, and a
     * borrowed pointer to its nbytes bytes, valid until the next infer or release_request. Call it only after
     * an infer that succeeded; fails for i out of range. For cross-checking engines, never between a step's
     * probes (it may allocate). */
    int (*output)(engine_request *r, size_t i, engine_tensor_info *info, const void **data, size_t *nbytes,
                  engine_error *err);

    /* Optional (may be NULL: the harness cannot vary this engine's input shapes; a scenario's `shapes:` then fails
     * naming the engine). The name the model gives dim `axis` of input i when it leaves that dim symbolic (ONNX
     * dim_param), else NULL (a fixed dim, an unnamed one, or i or axis out of range); borrowed, valid while c lives.
     * An engine that offers it accepts in set_input any size of a named dim, from one call to the next on the same
     * request: input_info's dims are only the default. */
    const char *(*input_dim_param)(engine_compiled *c, size_t i, int axis);
} engine_api;

typedef const engine_api *(*engine_get_api_fn)(void);

/* The one symbol a plugin exports. */
const engine_api *engine_get_api(void);

#ifdef __cplusplus
}
#endif

#endif
