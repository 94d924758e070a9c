/* engine_ort.c: ONNX Runtime behind the plugin ABI (engine_ort.so): load, sessions, requests, outputs, arena stats;
 * the library itself, its release and C API table come from ort_library.c.
 * It must never export anything but engine_get_api, read an OrtApi member past the end of the loaded release's table
 * (every member newer than ORT_API_MIN is checked with ORT_HAS first), or leave an OrtStatus unreleased: every one is
 * checked, its message copied, then released. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <onnxruntime_c_api.h>
#include <onnxruntime_run_options_config_keys.h>
#include <onnxruntime_session_options_config_keys.h>

#include "ort_library.h"

struct engine_ctx {
    ort_library ort;        /* the release loaded and its C API table (ort_library.h) */
    OrtEnv *env;
    OrtMemoryInfo *cpu;     /* CPU, arena type: tensors, output binding, the env arena */
    int env_arena;          /* 1: an arena is registered with the env (arena_extend_strategy) */
    ort_opts o;
    engine_compiled *live;  /* the newest compiled model still alive, whose arena metrics reports */
};

/* What read_model keeps: the path (mmap=on: ORT reads the file at compile and maps external data) or the bytes
 * of the model and its external-data files (mmap=off: handed to ORT from memory, nothing mapped). */
struct engine_model {
    engine_ctx *ctx;
    char *path;
    int in_memory;
    ort_bytes bytes;
};

struct engine_compiled {
    engine_ctx *ctx;
    OrtSession *sess;
    OrtAllocator *stats;    /* the session's CPU arena, for AllocatorGetStats; NULL without one */
    size_t n_in, n_out;
    engine_tensor_info *in; /* default shapes, symbolic dims resolved; names point into in_names */
    char **in_names, **out_names;
    char **in_params;       /* n_in * ENGINE_MAX_RANK: each input dim's symbolic name, NULL when fixed or unnamed */
};

struct engine_request {
    engine_compiled *c;
    OrtIoBinding *bind;
    OrtRunOptions *run;
    OrtValue **in_vals;     /* tensors over in_bufs, bound to the inputs */
    void **in_bufs;
    size_t *in_bytes;
    engine_tensor_info *in_shape; /* the shape each input is bound with now */
    OrtValue **outs;        /* output values fetched by output(), released at the next infer */
    size_t n_outs;
    int ran;
};

/* ---- Status handling ---- */

static int looks_like_oom(const char *m)
{
    return strstr(m, "bad_alloc") || strstr(m, "bad allocation") || strstr(m, "Failed to allocate") ||
           strstr(m, "out of memory");
}

/* 0 for a NULL status; otherwise copies the message into err (may be NULL), releases the status, returns the
 * plugin code. */
static int check(const OrtApi *api, OrtStatus *st, engine_error *err, const char *what)
{
    if (!st)
        return 0;
    const char *m = api->GetErrorMessage(st);
    int code = looks_like_oom(m) ? ORT_E_NOMEM : ORT_E_RUNTIME;
    ort_fail(err, code, "%s: %s (ORT error %d)", what, m, (int)api->GetErrorCode(st));
    api->ReleaseStatus(st);
    return code;
}

#define TRY(call, what)                                       \
    do {                                                      \
        if ((rc = check(api, (call), err, (what))) != 0)      \
            goto fail;                                        \
    } while (0)

/* ---- load_engine / unload_engine ---- */


static void unload(engine_ctx *c)
{
    if (!c)
        return;
    const OrtApi *api = c->ort.api;
    if (api) {
        if (c->env_arena)
            check(api, api->UnregisterAllocator(c->env, c->cpu), NULL, "unload_engine");
        api->ReleaseMemoryInfo(c->cpu);
        api->ReleaseEnv(c->env);
    }
    ort_library_close(&c->ort);
    free(c);
}

/* The shared env arena: CreateArenaCfgV2 with the extend strategy, registered for the CPU; sessions use it
 * through session.use_env_allocators=1. */
static int register_env_arena(engine_ctx *c, engine_error *err)
{
    const OrtApi *api = c->ort.api;
    const char *keys[] = {"arena_extend_strategy"};
    const size_t values[] = {(size_t)c->o.extend_strategy};
    OrtArenaCfg *cfg = NULL;
    int rc = 0;
    TRY(api->CreateArenaCfgV2(keys, values, 1, &cfg), "load_engine: CreateArenaCfgV2");
    TRY(api->CreateAndRegisterAllocator(c->env, c->cpu, cfg), "load_engine: CreateAndRegisterAllocator");
    c->env_arena = 1;
fail:
    api->ReleaseArenaCfg(cfg);
    return rc;
}

static int load(const engine_kv *kv, size_t n, engine_ctx **out, engine_error *err)
{
    ort_opts o;
    int rc = ort_opts_parse(kv, n, &o, err);
    if (rc)
        return rc;
    engine_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ort_fail(err, ORT_E_NOMEM, "load_engine: out of memory");
    c->o = o;
    if ((rc = ort_library_open(&c->o, &c->ort, err)))
        goto fail;
    const OrtApi *api = c->ort.api;
    TRY(api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "memleak", &c->env), "load_engine: CreateEnv");
    /* Telemetry (ort_telemetry.c): the API switch as well, for a library that would not read the variable. */
    if (o.telemetry)
        TRY(api->EnableTelemetryEvents(c->env), "load_engine: EnableTelemetryEvents");
    else
        TRY(api->DisableTelemetryEvents(c->env), "load_engine: DisableTelemetryEvents");
    TRY(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &c->cpu), "load_engine: CreateCpuMemoryInfo");
    /* With the arena off there is no arena to extend: the strategy is then ignored. */
    if (o.arena && o.extend_strategy >= 0 && (rc = register_env_arena(c, err)))
        goto fail;
    *out = c;
    return 0;
fail:
    unload(c);
    return rc;
}

static const char *option_keys(void) { return ort_opts_keys(); }

/* Without loading ORT: the values, telemetry=on where ORT would ignore it, and with a version the options that
 * release cannot serve and whether fetch.sh has fetched it (unless MLK_ORT_LIBRARY overrides the library: its
 * release is checked at load_engine). */
static int check_options(const engine_kv *kv, size_t n, engine_error *err)
{
    ort_opts o;
    int rc = ort_opts_parse(kv, n, &o, err);
    if (rc || (o.telemetry && (rc = ort_telemetry_check_on(err))) || !o.version[0])
        return rc;
    int api = 0;
    if ((rc = ort_release_parse(o.version, "option version", &api, NULL, err)) ||
        (rc = ort_opts_check_api(&o, api < ORT_API_VERSION ? api : ORT_API_VERSION, o.version, err)))
        return rc;
    char path[1200]; /* the release must be fetched: the file load_engine would open */
    return ort_library_path(o.version, path, sizeof path, err);
}

/* ---- read_model / release_model ---- */

static int read_model(engine_ctx *c, const char *path, engine_model **out, engine_error *err)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return ort_fail(err, ORT_E_NOTFOUND, "read_model: %s is not a readable file", path);
    engine_model *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return ort_fail(err, ORT_E_NOMEM, "read_model: out of memory");
    }
    m->ctx = c;
    if (!c->o.mmap) {
        int rc = ort_bytes_read(path, &m->bytes, err);
        if (rc) {
            free(m->path);
            free(m);
            return rc;
        }
        m->in_memory = 1;
    }
    *out = m;
    return 0;
}

static void release_model(engine_model *m)
{
    if (!m)
        return;
    ort_bytes_free(&m->bytes);
    free(m->path);
    free(m);
}

/* ---- compile_model / release_compiled ---- */

static int session_options(engine_ctx *c, OrtSessionOptions *so, engine_error *err)
{
    const OrtApi *api = c->ort.api;
    const ort_opts *o = &c->o;
    int rc = 0;
    TRY(api->SetIntraOpNumThreads(so, o->threads), "compile_model: SetIntraOpNumThreads");
    TRY(api->SetInterOpNumThreads(so, o->inter_threads), "compile_model: SetInterOpNumThreads");
    /* Inter-op threads only run anything in parallel execution mode. */
    if (o->inter_threads > 1)
        TRY(api->SetSessionExecutionMode(so, ORT_PARALLEL), "compile_model: SetSessionExecutionMode");
    TRY(o->arena ? api->EnableCpuMemArena(so) : api->DisableCpuMemArena(so), "compile_model: cpu mem arena");
    TRY(o->mem_pattern ? api->EnableMemPattern(so) : api->DisableMemPattern(so), "compile_model: mem pattern");
    TRY(api->SetSessionGraphOptimizationLevel(so, (GraphOptimizationLevel)o->graph_opt),
        "compile_model: SetSessionGraphOptimizationLevel");
    if (!o->prepacking)
        TRY(api->AddSessionConfigEntry(so, kOrtSessionOptionsConfigDisablePrepacking, "1"),
            "compile_model: session.disable_prepacking");
    if (o->init_device_alloc)
        TRY(api->AddSessionConfigEntry(so, kOrtSessionOptionsUseDeviceAllocatorForInitializers, "1"),
            "compile_model: session.use_device_allocator_for_initializers");
    if (c->env_arena)
        TRY(api->AddSessionConfigEntry(so, kOrtSessionOptionsConfigUseEnvAllocators, "1"),
            "compile_model: session.use_env_allocators");
    for (int i = 0; i < o->n_dims; i++)
        TRY(api->AddFreeDimensionOverrideByName(so, o->dims[i].name, o->dims[i].value),
            "compile_model: AddFreeDimensionOverrideByName");
fail:
    return rc;
}

static void release_compiled(engine_compiled *cc)
{
    if (!cc)
        return;
    const OrtApi *api = cc->ctx->ort.api;
    if (cc->ctx->live == cc)
        cc->ctx->live = NULL;
    if (cc->stats)
        api->ReleaseAllocator(cc->stats);
    api->ReleaseSession(cc->sess);
    for (size_t i = 0; cc->in_names && i < cc->n_in; i++)
        free(cc->in_names[i]);
    for (size_t i = 0; cc->out_names && i < cc->n_out; i++)
        free(cc->out_names[i]);
    for (size_t i = 0; cc->in_params && i < cc->n_in * ENGINE_MAX_RANK; i++)
        free(cc->in_params[i]);
    free(cc->in_params);
    free(cc->in_names);
    free(cc->out_names);
    free(cc->in);
    free(cc);
}

/* A copy of a name ORT allocated with the default allocator, which is then freed. */
static int take_name(const OrtApi *api, OrtAllocator *def, char *name, char **out, engine_error *err)
{
    *out = strdup(name);
    check(api, api->AllocatorFree(def, name), NULL, "");
    return *out ? 0 : ort_fail(err, ORT_E_NOMEM, "compile_model: out of memory");
}

/* Element type and default shape of input i: symbolic dims from dim.NAME, else 1. */
static int input_shape(engine_compiled *cc, size_t i, engine_error *err)
{
    const OrtApi *api = cc->ctx->ort.api;
    engine_tensor_info *t = &cc->in[i];
    OrtTypeInfo *ti = NULL;
    const OrtTensorTypeAndShapeInfo *tsi = NULL;
    ONNXTensorElementDataType dt;
    size_t rank = 0;
    const char *sym[ENGINE_MAX_RANK] = {0};
    int rc = 0;
    TRY(api->SessionGetInputTypeInfo(cc->sess, i, &ti), "compile_model: SessionGetInputTypeInfo");
    TRY(api->CastTypeInfoToTensorInfo(ti, &tsi), "compile_model: CastTypeInfoToTensorInfo");
    if (!tsi) {
        rc = ort_fail(err, ORT_E_INVALID, "compile_model: input '%s' is not a tensor", cc->in_names[i]);
        goto fail;
    }
    TRY(api->GetTensorElementType(tsi, &dt), "compile_model: GetTensorElementType");
    TRY(api->GetDimensionsCount(tsi, &rank), "compile_model: GetDimensionsCount");
    if (rank > ENGINE_MAX_RANK) {
        rc = ort_fail(err, ORT_E_INVALID, "compile_model: input '%s' has rank %zu, more than %d", cc->in_names[i],
                      rank, ENGINE_MAX_RANK);
        goto fail;
    }
    TRY(api->GetDimensions(tsi, t->dims, rank), "compile_model: GetDimensions");
    TRY(api->GetSymbolicDimensions(tsi, sym, rank), "compile_model: GetSymbolicDimensions");
    for (size_t k = 0; k < rank; k++)
        if (sym[k] && sym[k][0] && !(cc->in_params[i * ENGINE_MAX_RANK + k] = strdup(sym[k]))) {
            rc = ort_fail(err, ORT_E_NOMEM, "compile_model: out of memory");
            goto fail;
        }
    t->name = cc->in_names[i];
    t->dtype = (int32_t)dt;
    t->rank = (int32_t)rank;
    for (size_t k = 0; k < rank; k++)
        if (t->dims[k] < 0) {
            int64_t v = sym[k] && sym[k][0] ? ort_opts_dim(&cc->ctx->o, sym[k]) : 0;
            t->dims[k] = v > 0 ? v : 1;
        }
fail:
    api->ReleaseTypeInfo(ti);
    return rc;
}

static int describe(engine_compiled *cc, engine_error *err)
{
    const OrtApi *api = cc->ctx->ort.api;
    OrtAllocator *def = NULL;
    int rc = 0;
    TRY(api->GetAllocatorWithDefaultOptions(&def), "compile_model: GetAllocatorWithDefaultOptions");
    TRY(api->SessionGetInputCount(cc->sess, &cc->n_in), "compile_model: SessionGetInputCount");
    TRY(api->SessionGetOutputCount(cc->sess, &cc->n_out), "compile_model: SessionGetOutputCount");
    cc->in = calloc(cc->n_in + 1, sizeof *cc->in);
    cc->in_names = calloc(cc->n_in + 1, sizeof *cc->in_names);
    cc->out_names = calloc(cc->n_out + 1, sizeof *cc->out_names);
    cc->in_params = calloc(cc->n_in * ENGINE_MAX_RANK + 1, sizeof *cc->in_params);
    if (!cc->in || !cc->in_names || !cc->out_names || !cc->in_params)
        return ort_fail(err, ORT_E_NOMEM, "compile_model: out of memory");
    for (size_t i = 0; i < cc->n_in; i++) {
        char *name = NULL;
        TRY(api->SessionGetInputName(cc->sess, i, def, &name), "compile_model: SessionGetInputName");
        if ((rc = take_name(api, def, name, &cc->in_names[i], err)) || (rc = input_shape(cc, i, err)))
            goto fail;
    }
    for (size_t i = 0; i < cc->n_out; i++) {
        char *name = NULL;
        TRY(api->SessionGetOutputName(cc->sess, i, def, &name), "compile_model: SessionGetOutputName");
        if ((rc = take_name(api, def, name, &cc->out_names[i], err)))
            goto fail;
    }
fail:
    return rc;
}

static int create_session(engine_model *m, OrtSessionOptions *so, OrtSession **sess, engine_error *err)
{
    const OrtApi *api = m->ctx->ort.api;
    const ort_bytes *b = &m->bytes;
    int rc = 0;
    if (!m->in_memory) {
        TRY(api->CreateSession(m->ctx->env, m->path, so, sess), "compile_model: CreateSession");
        return 0;
    }
    /* ORT copies in-memory external data into its own tensors; our buffers stay the model's. */
    const ort_need *need = ort_need_find("mmap=off with external data");
    if (b->n_ext && !ORT_HAS(&m->ctx->ort, AddExternalInitializersFromFilesInMemory))
        return ort_fail(err, ORT_E_RELEASE, "compile_model: option %s needs C API %d (ONNX Runtime 1.%d or later: "
                        "%s); ONNX Runtime %s serves C API %d: use mmap=on with this release", need->option,
                        need->api, need->api, need->member, m->ctx->ort.release, m->ctx->ort.api_version);
    if (b->n_ext)
        TRY(api->AddExternalInitializersFromFilesInMemory(so, (const char *const *)b->ext_names, b->ext_bufs,
                                                          b->ext_lens, b->n_ext),
            "compile_model: AddExternalInitializersFromFilesInMemory");
    TRY(api->CreateSessionFromArray(m->ctx->env, b->model, b->model_len, so, sess),
        "compile_model: CreateSessionFromArray");
fail:
    return rc;
}

static int compile(engine_ctx *c, engine_model *m, engine_compiled **out, engine_error *err)
{
    const OrtApi *api = c->ort.api;
    OrtSessionOptions *so = NULL;
    engine_compiled *cc = calloc(1, sizeof *cc);
    int rc = 0;
    if (!cc)
        return ort_fail(err, ORT_E_NOMEM, "compile_model: out of memory");
    cc->ctx = c;
    TRY(api->CreateSessionOptions(&so), "compile_model: CreateSessionOptions");
    if ((rc = session_options(c, so, err)) || (rc = create_session(m, so, &cc->sess, err)) ||
        (rc = describe(cc, err)))
        goto fail;
    /* The session's CPU arena (the env's when it shares one), for its stats; none with the arena off. The
     * env's own OrtAllocator (GetSharedAllocator) reports no stats, the session's view of it does. */
    if (c->o.arena && ORT_HAS(&c->ort, AllocatorGetStats))
        check(api, api->CreateAllocator(cc->sess, c->cpu, &cc->stats), NULL, "");
    api->ReleaseSessionOptions(so);
    c->live = cc;
    *out = cc;
    return 0;
fail:
    api->ReleaseSessionOptions(so);
    release_compiled(cc);
    return rc;
}

static size_t n_inputs(engine_compiled *c) { return c->n_in; }
static size_t n_outputs(engine_compiled *c) { return c->n_out; }

static int input_info(engine_compiled *c, size_t i, engine_tensor_info *out)
{
    if (i >= c->n_in)
        return ORT_E_INVALID;
    *out = c->in[i];
    return 0;
}

static const char *input_dim_param(engine_compiled *c, size_t i, int axis)
{
    return i < c->n_in && axis >= 0 && axis < c->in[i].rank ? c->in_params[i * ENGINE_MAX_RANK + (size_t)axis] : NULL;
}

/* ---- Requests ---- */

static int64_t numel(const engine_tensor_info *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->rank; k++)
        n *= t->dims[k];
    return n;
}

/* (Re)bind input i to a request-owned buffer of the given shape. */
static int bind_input(engine_request *r, size_t i, const engine_tensor_info *shape, engine_error *err)
{
    engine_compiled *c = r->c;
    const OrtApi *api = c->ctx->ort.api;
    size_t esize = ort_dtype_size(c->in[i].dtype);
    int rc = 0;
    if (!esize)
        return ort_fail(err, ORT_E_INVALID, "create_request: input '%s' has element type %d, which this plugin "
                        "cannot feed", c->in_names[i], c->in[i].dtype);
    size_t nbytes = (size_t)numel(shape) * esize;
    if (nbytes != r->in_bytes[i] || !r->in_bufs[i]) {
        void *buf = aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
        if (!buf)
            return ort_fail(err, ORT_E_NOMEM, "create_request: out of memory for input '%s' (%zu bytes)",
                            c->in_names[i], nbytes);
        memset(buf, 0, nbytes);
        api->ReleaseValue(r->in_vals[i]);
        r->in_vals[i] = NULL;
        free(r->in_bufs[i]);
        r->in_bufs[i] = buf;
        r->in_bytes[i] = nbytes;
    } else {
        api->ReleaseValue(r->in_vals[i]);
        r->in_vals[i] = NULL;
    }
    TRY(api->CreateTensorWithDataAsOrtValue(c->ctx->cpu, r->in_bufs[i], nbytes, shape->dims, (size_t)shape->rank,
                                            (ONNXTensorElementDataType)c->in[i].dtype, &r->in_vals[i]),
        "create_request: CreateTensorWithDataAsOrtValue");
    TRY(api->BindInput(r->bind, c->in_names[i], r->in_vals[i]), "create_request: BindInput");
    r->in_shape[i] = *shape;
fail:
    return rc;
}

static void drop_outputs(engine_request *r)
{
    const OrtApi *api = r->c->ctx->ort.api;
    if (!r->outs)
        return;
    for (size_t i = 0; i < r->n_outs; i++)
        api->ReleaseValue(r->outs[i]);
    OrtAllocator *def = NULL;
    if (!check(api, api->GetAllocatorWithDefaultOptions(&def), NULL, ""))
        check(api, api->AllocatorFree(def, r->outs), NULL, "");
    r->outs = NULL;
    r->n_outs = 0;
}

static void release_request(engine_request *r)
{
    if (!r)
        return;
    const OrtApi *api = r->c->ctx->ort.api;
    drop_outputs(r);
    for (size_t i = 0; r->in_vals && i < r->c->n_in; i++)
        api->ReleaseValue(r->in_vals[i]);
    for (size_t i = 0; r->in_bufs && i < r->c->n_in; i++)
        free(r->in_bufs[i]);
    api->ReleaseIoBinding(r->bind);
    api->ReleaseRunOptions(r->run);
    free(r->in_vals);
    free(r->in_bufs);
    free(r->in_bytes);
    free(r->in_shape);
    free(r);
}

static int create_request(engine_compiled *c, engine_request **out, engine_error *err)
{
    const OrtApi *api = c->ctx->ort.api;
    engine_request *r = calloc(1, sizeof *r);
    int rc = 0;
    if (!r)
        return ort_fail(err, ORT_E_NOMEM, "create_request: out of memory");
    r->c = c;
    r->in_vals = calloc(c->n_in + 1, sizeof *r->in_vals);
    r->in_bufs = calloc(c->n_in + 1, sizeof *r->in_bufs);
    r->in_bytes = calloc(c->n_in + 1, sizeof *r->in_bytes);
    r->in_shape = calloc(c->n_in + 1, sizeof *r->in_shape);
    if (!r->in_vals || !r->in_bufs || !r->in_bytes || !r->in_shape) {
        rc = ort_fail(err, ORT_E_NOMEM, "create_request: out of memory");
        goto fail;
    }
    TRY(api->CreateIoBinding(c->sess, &r->bind), "create_request: CreateIoBinding");
    TRY(api->CreateRunOptions(&r->run), "create_request: CreateRunOptions");
    /* ORT fails every run that asks to shrink an arena that does not exist: with arena=off there is none. */
    if (c->ctx->o.arena_shrinkage && c->ctx->o.arena)
        TRY(api->AddRunConfigEntry(r->run, kOrtRunOptionsConfigEnableMemoryArenaShrinkage, "cpu:0"),
            "create_request: memory.enable_memory_arena_shrinkage");
    for (size_t i = 0; i < c->n_in; i++)
        if ((rc = bind_input(r, i, &c->in[i], err)))
            goto fail;
    /* Outputs land in memory ORT allocates on the CPU at each run (from the arena when it is on). */
    for (size_t i = 0; i < c->n_out; i++)
        TRY(api->BindOutputToDevice(r->bind, c->out_names[i], c->ctx->cpu), "create_request: BindOutputToDevice");
    *out = r;
    return 0;
fail:
    release_request(r);
    return rc;
}

static int set_input(engine_request *r, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err)
{
    engine_compiled *c = r->c;
    if (i >= c->n_in)
        return ort_fail(err, ORT_E_INVALID, "set_input %zu: the model has %zu inputs", i, c->n_in);
    if (info->dtype != c->in[i].dtype || info->rank != c->in[i].rank || info->rank < 0 ||
        info->rank > ENGINE_MAX_RANK)
        return ort_fail(err, ORT_E_INVALID, "set_input '%s': element type %d rank %d given, the model has %d rank %d",
                        c->in_names[i], info->dtype, info->rank, c->in[i].dtype, c->in[i].rank);
    size_t need = (size_t)numel(info) * ort_dtype_size(info->dtype);
    if (need != nbytes)
        return ort_fail(err, ORT_E_INVALID, "set_input '%s': %zu bytes given, the shape needs %zu", c->in_names[i],
                        nbytes, need);
    if (memcmp(info->dims, r->in_shape[i].dims, (size_t)info->rank * sizeof info->dims[0])) {
        int rc = bind_input(r, i, info, err);
        if (rc)
            return rc;
    }
    memcpy(r->in_bufs[i], data, nbytes);
    return 0;
}

static int infer(engine_request *r, engine_error *err)
{
    const OrtApi *api = r->c->ctx->ort.api;
    int rc = 0;
    drop_outputs(r);
    TRY(api->RunWithBinding(r->c->sess, r->run, r->bind), "infer: RunWithBinding");
    r->ran = 1;
fail:
    return rc;
}

static int output(engine_request *r, size_t i, engine_tensor_info *info, const void **data, size_t *nbytes,
                  engine_error *err)
{
    const OrtApi *api = r->c->ctx->ort.api;
    OrtTensorTypeAndShapeInfo *tsi = NULL;
    int rc = 0;
    if (!r->ran)
        return ort_fail(err, ORT_E_STATE, "output %zu: no infer has completed", i);
    if (i >= r->c->n_out)
        return ort_fail(err, ORT_E_INVALID, "output %zu: the model has %zu outputs", i, r->c->n_out);
    if (!r->outs) {
        OrtAllocator *def = NULL;
        TRY(api->GetAllocatorWithDefaultOptions(&def), "output: GetAllocatorWithDefaultOptions");
        TRY(api->GetBoundOutputValues(r->bind, def, &r->outs, &r->n_outs), "output: GetBoundOutputValues");
    }
    if (i >= r->n_outs)
        return ort_fail(err, ORT_E_STATE, "output %zu: only %zu outputs are bound", i, r->n_outs);
    ONNXTensorElementDataType dt;
    size_t rank = 0;
    void *p = NULL;
    TRY(api->GetTensorTypeAndShape(r->outs[i], &tsi), "output: GetTensorTypeAndShape");
    TRY(api->GetTensorElementType(tsi, &dt), "output: GetTensorElementType");
    TRY(api->GetDimensionsCount(tsi, &rank), "output: GetDimensionsCount");
    if (rank > ENGINE_MAX_RANK) {
        rc = ort_fail(err, ORT_E_INVALID, "output %zu: rank %zu is more than %d", i, rank, ENGINE_MAX_RANK);
        goto fail;
    }
    memset(info, 0, sizeof *info);
    TRY(api->GetDimensions(tsi, info->dims, rank), "output: GetDimensions");
    TRY(api->GetTensorMutableData(r->outs[i], &p), "output: GetTensorMutableData");
    info->name = r->c->out_names[i];
    info->dtype = (int32_t)dt;
    info->rank = (int32_t)rank;
    *data = p;
    *nbytes = (size_t)numel(info) * ort_dtype_size(info->dtype);
fail:
    api->ReleaseTensorTypeAndShapeInfo(tsi);
    return rc;
}

/* ---- Metrics: the release, and the CPU arena's AllocatorGetStats (API >= 23), as ort_* figures ----
 * ort_release (1023002 for 1.23.2) and ort_api_version come first, after every step, so the db says which
 * release each cell ran whatever its options (the plugin ABI has no per-cell version string). */

static int metrics(engine_ctx *c, engine_metric *out, size_t max, size_t *n)
{
    static const struct {
        const char *key, *name;
    } map[] = {{"InUse", "ort_in_use_bytes"},           {"TotalAllocated", "ort_total_allocated_bytes"},
               {"MaxInUse", "ort_max_in_use_bytes"},    {"NumAllocs", "ort_num_allocs"},
               {"NumReserves", "ort_num_reserves"},     {"NumArenaExtensions", "ort_num_arena_extensions"},
               {"NumArenaShrinkages", "ort_num_arena_shrinkages"}, {"MaxAllocSize", "ort_max_alloc_bytes"},
               {"RequestedInUse", "ort_requested_in_use_bytes"}};
    const OrtApi *api = c->ort.api;
    OrtAllocator *a = NULL;
    OrtKeyValuePairs *kv = NULL;
    *n = 0;
    if (c->ort.release_code && *n < max) {
        snprintf(out[*n].name, sizeof out[*n].name, "ort_release");
        out[(*n)++].value = c->ort.release_code;
    }
    if (*n < max) {
        snprintf(out[*n].name, sizeof out[*n].name, "ort_api_version");
        out[(*n)++].value = c->ort.api_version;
    }
    if (c->live)
        a = c->live->stats; /* NULL below C API 23 (compile creates none) */
    if (!a || check(api, api->AllocatorGetStats(a, &kv), NULL, "") || !kv)
        return 0;
    const char *const *keys = NULL, *const *values = NULL;
    size_t cnt = 0;
    api->GetKeyValuePairs(kv, &keys, &values, &cnt);
    for (size_t m = 0; m < sizeof map / sizeof map[0] && *n < max; m++)
        for (size_t k = 0; k < cnt; k++)
            if (!strcmp(keys[k], map[m].key)) {
                snprintf(out[*n].name, sizeof out[*n].name, "%s", map[m].name);
                out[*n].value = strtoll(values[k], NULL, 10);
                (*n)++;
                break;
            }
    api->ReleaseKeyValuePairs(kv);
    return 0;
}

static const engine_api api_table = {
    .abi_version = ENGINE_ABI_VERSION,
    .struct_size = sizeof(engine_api),
    .name = "ort",
    .version = MLK_ORT_DEFAULT_VERSION, /* the default library's; the release a cell ran is metric ort_release */
    .option_keys = option_keys,
    .check_options = check_options,
    .load = load,
    .unload = unload,
    .read_model = read_model,
    .release_model = release_model,
    .compile = compile,
    .release_compiled = release_compiled,
    .n_inputs = n_inputs,
    .input_info = input_info,
    .input_dim_param = input_dim_param,
    .create_request = create_request,
    .set_input = set_input,
    .infer = infer,
    .release_request = release_request,
    .metrics = metrics,
    .n_outputs = n_outputs,
    .output = output,
};

__attribute__((visibility("default"))) const engine_api *engine_get_api(void) { return &api_table; }
