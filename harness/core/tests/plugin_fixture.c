/* plugin_fixture.c: test plugins for test_plugin, one per PLUGIN_KIND: "short" is built against ABI 1's mandatory
 * calls only (as a plugin from before metrics/outputs were appended), "hole" lacks a mandatory call, "abi" is ABI 2.
 * It must never be loaded outside test_plugin: its calls do nothing useful. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine.h"

/* The table as an older engine.h declared it: the same leading members, nothing appended after release_request. */
typedef struct old_api {
    uint32_t abi_version, struct_size;
    const char *name, *version;
    const char *(*option_keys)(void);
    int (*check_options)(const engine_kv *opts, size_t n, engine_error *err);
    int (*load)(const engine_kv *opts, size_t n, engine_ctx **out, engine_error *err);
    void (*unload)(engine_ctx *ctx);
    int (*read_model)(engine_ctx *ctx, const char *path, engine_model **out, engine_error *err);
    void (*release_model)(engine_model *m);
    int (*compile)(engine_ctx *ctx, engine_model *m, engine_compiled **out, engine_error *err);
    void (*release_compiled)(engine_compiled *c);
    size_t (*n_inputs)(engine_compiled *c);
    int (*input_info)(engine_compiled *c, size_t i, engine_tensor_info *out);
    int (*create_request)(engine_compiled *c, engine_request **out, engine_error *err);
    int (*set_input)(engine_request *r, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err);
    int (*infer)(engine_request *r, engine_error *err);
    void (*release_request)(engine_request *r);
} old_api;

static int ctx_token;

static const char *keys(void) { return ""; }
static int check(const engine_kv *o, size_t n, engine_error *e) { return (void)o, (void)n, (void)e, 0; }
static int load(const engine_kv *o, size_t n, engine_ctx **out, engine_error *e)
{
    (void)o, (void)n, (void)e;
    *out = (engine_ctx *)&ctx_token;
    return 0;
}
static void unload(engine_ctx *c) { (void)c; }
static int read_model(engine_ctx *c, const char *p, engine_model **o, engine_error *e)
{
    return (void)c, (void)p, (void)o, (void)e, 1;
}
static void release_model(engine_model *m) { (void)m; }
static int compile(engine_ctx *c, engine_model *m, engine_compiled **o, engine_error *e)
{
    return (void)c, (void)m, (void)o, (void)e, 1;
}
static void release_compiled(engine_compiled *c) { (void)c; }
static size_t n_inputs(engine_compiled *c) { return (void)c, 0; }
static int input_info(engine_compiled *c, size_t i, engine_tensor_info *o) { return (void)c, (void)i, (void)o, 1; }
static int create_request(engine_compiled *c, engine_request **o, engine_error *e)
{
    return (void)c, (void)o, (void)e, 1;
}
static int set_input(engine_request *r, size_t i, const engine_tensor_info *info, const void *d, size_t n,
                     engine_error *e)
{
    return (void)r, (void)i, (void)info, (void)d, (void)n, (void)e, 1;
}
static int infer(engine_request *r, engine_error *e) { return (void)r, (void)e, 1; }
static void release_request(engine_request *r) { (void)r; }

static old_api table = {1, sizeof(old_api), "fixture", "0", keys, check, load, unload, read_model, release_model,
                        compile, release_compiled, n_inputs, input_info, create_request, set_input, infer,
                        release_request};

const engine_api *engine_get_api(void)
{
#if defined(PLUGIN_HOLE)
    table.infer = NULL;
#elif defined(PLUGIN_ABI)
    table.abi_version = 2;
#endif
    return (const engine_api *)(const void *)&table;
}
