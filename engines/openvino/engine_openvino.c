/* engine_openvino.c: OpenVINO behind the plugin ABI (engine_openvino.so), through its C API: a core per context, models
 * read from ONNX or IR (.xml + .bin), compiled for the CPU, requests over buffers the plugin owns; the library itself,
 * its release and function table come from ov_library.c.
 * It must never export anything but engine_get_api, call OpenVINO but through the loaded release's table, or let a
 * failed call pass: every ov_status_e is checked and OpenVINO's last error message copied into engine_error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ov_library.h"

struct engine_ctx {
    ov_library ov;           /* the release loaded and its functions */
    ov_core_t *core;
    ov_opts o;
    engine_compiled *live;   /* the newest compiled model still alive, whose figures metrics reports */
};

struct engine_model {
    engine_ctx *ctx;
    ov_model_t *model;
    ov_onnx_dims dims;       /* ONNX inputs' symbolic dim names (empty for IR) */
};

struct engine_compiled {
    engine_ctx *ctx;
    ov_compiled_model_t *cm;
    size_t n_in, n_out;
    engine_tensor_info *in;  /* default shapes, dynamic dims from dim.NAME or 1; names point into in_names */
    int *in_elem;            /* the library's element type of each input */
    char **in_names;
    char **out_names;
    char **in_params;        /* n_in * ENGINE_MAX_RANK: the symbolic name of each dim left dynamic, else NULL */
    int64_t streams, infer_threads; /* the compiled model's NUM_STREAMS and INFERENCE_NUM_THREADS; -1 unknown */
};

struct engine_request {
    engine_compiled *c;
    ov_infer_request_t *req;
    void **in_bufs;          /* the request's own input buffers, under in_tensors */
    size_t *in_bytes;
    ov_tensor_t **in_tensors;
    engine_tensor_info *in_shape;
    ov_tensor_t **outs;      /* output tensors fetched by output(), released at the next infer */
    int ran;
};

/* ---- Status handling ---- */

/* 0 for OK; otherwise copies OpenVINO's last error message (INVALID_C_PARAM sets none: a stale one is not shown) into
 * err (may be NULL) and returns the plugin code. */
static int check(const ov_library *ov, ov_status_e st, engine_error *err, const char *what)
{
    if (st == OK)
        return 0;
    const char *m = st != INVALID_C_PARAM ? ov->fn.ov_get_last_err_msg() : NULL;
    const char *info = ov->fn.ov_get_error_info(st);
    int oom = m && (strstr(m, "bad_alloc") || strstr(m, "out of memory") || strstr(m, "Failed to allocate"));
    ov_fail(err, oom ? OV_E_NOMEM : OV_E_RUNTIME, "%s: %s%s(OpenVINO status %d%s%s)", what, m ? m : "",
            m ? " " : "", (int)st, info ? ": " : "", info ? info : "");
    if (m)
        ov->fn.ov_free(m);
    return oom ? OV_E_NOMEM : OV_E_RUNTIME;
}

#define TRY(ov, call, what)                                   \
    do {                                                      \
        if ((rc = check((ov), (call), err, (what))) != 0)     \
            goto fail;                                        \
    } while (0)

/* ---- load_engine / unload_engine ---- */

static void unload(engine_ctx *c)
{
    if (!c)
        return;
    if (c->core)
        c->ov.fn.ov_core_free(c->core);
    ov_library_close(&c->ov);
    free(c);
}

/* One property on device dev ("" = the core itself): ov_core_set_property takes one pair per call. */
static int set_prop(engine_ctx *c, const char *dev, const char *key, const char *value, engine_error *err)
{
    char what[160];
    snprintf(what, sizeof what, "load_engine: set %s=%s on %s", key, value, dev[0] ? dev : "the core");
    return check(&c->ov, c->ov.fn.ov_core_set_property(c->core, dev, key, value), err, what);
}

/* The CPU plugin lists key among its SUPPORTED_PROPERTIES; else OV_E_RELEASE naming the option. A property set on the
 * core is only checked when the plugin is created, at the first compile: asking here fails load_engine instead. */
static int cpu_supports(engine_ctx *c, const char *option, const char *key, engine_error *err)
{
    char *list = NULL;
    int rc = check(&c->ov, c->ov.fn.ov_core_get_property(c->core, "CPU", "SUPPORTED_PROPERTIES", &list), err,
                   "load_engine: the CPU plugin's SUPPORTED_PROPERTIES");
    if (rc)
        return rc;
    int found = 0;
    size_t n = strlen(key);
    for (const char *p = list ? strstr(list, key) : NULL; p && !found; p = strstr(p + 1, key))
        found = (p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
    if (!found)
        rc = ov_fail(err, OV_E_RELEASE, "load_engine: option %s: OpenVINO %s's CPU plugin does not support %s (its "
                     "SUPPORTED_PROPERTIES: %.280s)", option, c->ov.release, key, list ? list : "");
    if (list)
        c->ov.fn.ov_free(list);
    return rc;
}

static int set_props(engine_ctx *c, engine_error *err)
{
    const ov_opts *o = &c->o;
    char v[32];
    int rc = set_prop(c, "", "ENABLE_MMAP", o->mmap ? "YES" : "NO", err);
    if (!rc && o->cache_dir[0])
        rc = set_prop(c, "", "CACHE_DIR", o->cache_dir, err);
    if (!rc && (snprintf(v, sizeof v, "%d", o->threads), 1))
        rc = set_prop(c, "CPU", "INFERENCE_NUM_THREADS", v, err);
    if (!rc && o->compile_threads >= 0 && !(rc = cpu_supports(c, "compile_threads", "COMPILATION_NUM_THREADS", err)) &&
        (snprintf(v, sizeof v, "%d", o->compile_threads), 1))
        rc = set_prop(c, "CPU", "COMPILATION_NUM_THREADS", v, err);
    if (!rc && o->hint >= 0)
        rc = set_prop(c, "CPU", "PERFORMANCE_HINT", ov_hint_value(o->hint), err);
    if (!rc && o->streams >= 0) {
        snprintf(v, sizeof v, "%d", o->streams);
        rc = set_prop(c, "CPU", "NUM_STREAMS", o->streams ? v : "AUTO", err);
    }
    if (!rc && o->runtime_cache >= 0 && (snprintf(v, sizeof v, "%lld", (long long)o->runtime_cache), 1))
        rc = set_prop(c, "CPU", "CPU_RUNTIME_CACHE_CAPACITY", v, err);
    if (!rc && o->precision >= 0)
        rc = set_prop(c, "CPU", "INFERENCE_PRECISION_HINT", ov_precision_value(o->precision), err);
    return rc;
}

static int load(const engine_kv *kv, size_t n, engine_ctx **out, engine_error *err)
{
    ov_opts o;
    int rc = ov_opts_parse(kv, n, &o, err);
    if (rc)
        return rc;
    engine_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ov_fail(err, OV_E_NOMEM, "load_engine: out of memory");
    c->o = o;
    /* OpenVINO's TBB dlopens tbbbind and hwloc with RTLD_DEEPBIND unless TBB_ENABLE_SANITIZERS is set: hwloc then
     * frees with glibc's free what a preloaded allocator (jemalloc, tcmalloc, mimalloc) or memleak's heap shim handed
     * out, and aborts ("free(): invalid pointer", at the first NUMA query of compile_model). Without the flag every
     * library resolves malloc and free in the global scope, as the rest of the process does. A user's value is kept. */
    if (setenv("TBB_ENABLE_SANITIZERS", "1", 0)) {
        rc = ov_fail(err, OV_E_NOMEM, "load_engine: setenv TBB_ENABLE_SANITIZERS: out of memory");
        goto fail;
    }
    if ((rc = ov_library_open(&c->o, &c->ov, err)))
        goto fail;
    TRY(&c->ov, c->ov.fn.ov_core_create(&c->core), "load_engine: ov_core_create");
    if ((rc = set_props(c, err)))
        goto fail;
    *out = c;
    return 0;
fail:
    unload(c);
    return rc;
}

static const char *option_keys(void) { return ov_opts_keys(); }

/* Without loading OpenVINO: the values, and that the release asked for is fetched. */
static int check_options(const engine_kv *kv, size_t n, engine_error *err)
{
    ov_opts o;
    int rc = ov_opts_parse(kv, n, &o, err);
    if (rc)
        return rc;
    char path[1200];
    return ov_library_path(o.version, path, sizeof path, err);
}

/* ---- read_model / release_model ---- */

static void release_model(engine_model *m)
{
    if (!m)
        return;
    if (m->model)
        m->ctx->ov.fn.ov_model_free(m->model);
    ov_onnx_dims_free(&m->dims);
    free(m);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Input i's dynamic dims that dim.NAME sets become static: the model is reshaped before it is compiled. */
static int reshape_input(engine_model *m, size_t i, engine_error *err)
{
    const ov_library *ov = &m->ctx->ov;
    ov_output_const_port_t *port = NULL;
    char *name = NULL;
    ov_partial_shape_t ps = {0}, fixed = {0};
    int rc = 0, changed = 0;
    TRY(ov, ov->fn.ov_model_const_input_by_index(m->model, i, &port), "read_model: ov_model_const_input_by_index");
    TRY(ov, ov->fn.ov_port_get_any_name(port, &name), "read_model: ov_port_get_any_name");
    TRY(ov, ov->fn.ov_port_get_partial_shape(port, &ps), "read_model: ov_port_get_partial_shape");
    if (ps.rank.min != ps.rank.max || ps.rank.max > ENGINE_MAX_RANK)
        goto fail; /* a dynamic rank or a large one: compile says what it makes of it */
    ov_dimension_t dims[ENGINE_MAX_RANK];
    for (int64_t k = 0; k < ps.rank.max; k++) {
        dims[k] = ps.dims[k];
        if (dims[k].max < 0) /* unbounded: ov_partial_shape_create takes it only as {-1, -1} */
            dims[k].min = dims[k].max = -1;
        const char *p = dims[k].min != dims[k].max ? ov_onnx_dims_param(&m->dims, name, (int)k) : NULL;
        int64_t v = p ? ov_opts_dim(&m->ctx->o, p) : 0;
        if (v > 0) {
            dims[k].min = dims[k].max = v;
            changed = 1;
        }
    }
    if (!changed)
        goto fail;
    TRY(ov, ov->fn.ov_partial_shape_create(ps.rank.max, dims, &fixed), "read_model: ov_partial_shape_create");
    TRY(ov, ov->fn.ov_model_reshape_input_by_name(m->model, name, fixed), "read_model: reshape to dim.NAME values");
fail:
    if (fixed.dims)
        ov->fn.ov_partial_shape_free(&fixed);
    if (ps.dims)
        ov->fn.ov_partial_shape_free(&ps);
    if (name)
        ov->fn.ov_free(name);
    if (port)
        ov->fn.ov_output_const_port_free(port);
    return rc;
}

static int read_model(engine_ctx *c, const char *path, engine_model **out, engine_error *err)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return ov_fail(err, OV_E_NOTFOUND, "read_model: %s is not a readable file", path);
    engine_model *m = calloc(1, sizeof *m);
    if (!m)
        return ov_fail(err, OV_E_NOMEM, "read_model: out of memory");
    m->ctx = c;
    int rc = 0;
    /* ONNX: the symbolic names of the inputs' dims, which OpenVINO's ports do not keep. IR has none to give, and the
     * other formats OpenVINO reads are left to it whole. */
    if (ends_with(path, ".onnx") && (rc = ov_onnx_dims_read(path, &m->dims, err)))
        goto fail;
    /* IR: the weights are the .bin beside the .xml (OpenVINO finds it when bin_path is NULL). */
    TRY(&c->ov, c->ov.fn.ov_core_read_model(c->core, path, NULL, &m->model), "read_model: ov_core_read_model");
    size_t n_in = 0;
    TRY(&c->ov, c->ov.fn.ov_model_inputs_size(m->model, &n_in), "read_model: ov_model_inputs_size");
    for (size_t i = 0; i < n_in && c->o.n_dims; i++)
        if ((rc = reshape_input(m, i, err)))
            goto fail;
    *out = m;
    return 0;
fail:
    release_model(m);
    return rc;
}

/* ---- compile_model / release_compiled ---- */

static void release_compiled(engine_compiled *cc)
{
    if (!cc)
        return;
    if (cc->ctx->live == cc)
        cc->ctx->live = NULL;
    if (cc->cm)
        cc->ctx->ov.fn.ov_compiled_model_free(cc->cm);
    for (size_t i = 0; cc->in_names && i < cc->n_in; i++)
        free(cc->in_names[i]);
    for (size_t i = 0; cc->out_names && i < cc->n_out; i++)
        free(cc->out_names[i]);
    for (size_t i = 0; cc->in_params && i < cc->n_in * ENGINE_MAX_RANK; i++)
        free(cc->in_params[i]);
    free(cc->in_params);
    free(cc->in_names);
    free(cc->out_names);
    free(cc->in_elem);
    free(cc->in);
    free(cc);
}

/* A copy of a name OpenVINO allocated, which is then freed. */
static int take_name(const ov_library *ov, char *name, char **out, engine_error *err)
{
    *out = strdup(name);
    ov->fn.ov_free(name);
    return *out ? 0 : ov_fail(err, OV_E_NOMEM, "compile_model: out of memory");
}

/* Name, element type, default shape and symbolic dims of input i (or the name of output i when output). */
static int describe_port(engine_compiled *cc, const engine_model *m, size_t i, int output, engine_error *err)
{
    const ov_library *ov = &cc->ctx->ov;
    ov_output_const_port_t *port = NULL;
    char *name = NULL;
    ov_partial_shape_t ps = {0};
    ov_element_type_e et;
    int rc = 0;
    TRY(ov, output ? ov->fn.ov_compiled_model_output_by_index(cc->cm, i, &port)
                   : ov->fn.ov_compiled_model_input_by_index(cc->cm, i, &port),
        "compile_model: port of the compiled model");
    /* A port may carry no tensor name (an IR written without names): it is then known by its index. */
    char **slot = output ? &cc->out_names[i] : &cc->in_names[i];
    if (ov->fn.ov_port_get_any_name(port, &name) == OK && name)
        rc = take_name(ov, name, slot, err);
    else if (!(*slot = malloc(32)))
        rc = ov_fail(err, OV_E_NOMEM, "compile_model: out of memory");
    else
        snprintf(*slot, 32, "%s%zu", output ? "output" : "input", i);
    if (rc || output)
        goto fail;
    TRY(ov, ov->fn.ov_port_get_element_type(port, &et), "compile_model: ov_port_get_element_type");
    TRY(ov, ov->fn.ov_port_get_partial_shape(port, &ps), "compile_model: ov_port_get_partial_shape");
    engine_tensor_info *t = &cc->in[i];
    t->name = cc->in_names[i];
    t->dtype = ov_library_onnx_dtype(ov, (int)et);
    cc->in_elem[i] = (int)et;
    if (ps.rank.min != ps.rank.max || ps.rank.max < 0 || ps.rank.max > ENGINE_MAX_RANK) {
        rc = ov_fail(err, OV_E_INVALID, "compile_model: input '%s' has a dynamic rank or one above %d", t->name,
                     ENGINE_MAX_RANK);
        goto fail;
    }
    t->rank = (int32_t)ps.rank.max;
    for (int k = 0; k < t->rank; k++) {
        if (ps.dims[k].min == ps.dims[k].max && ps.dims[k].max >= 0) {
            t->dims[k] = ps.dims[k].max;
            continue;
        }
        const char *p = ov_onnx_dims_param(&m->dims, t->name, k);
        int64_t v = p ? ov_opts_dim(&cc->ctx->o, p) : 0;
        t->dims[k] = v > 0 ? v : ps.dims[k].min > 1 ? ps.dims[k].min : 1;
        if (p && !(cc->in_params[i * ENGINE_MAX_RANK + (size_t)k] = strdup(p))) {
            rc = ov_fail(err, OV_E_NOMEM, "compile_model: out of memory");
            goto fail;
        }
    }
fail:
    if (ps.dims)
        ov->fn.ov_partial_shape_free(&ps);
    if (port)
        ov->fn.ov_output_const_port_free(port);
    return rc;
}

/* An integer property of the compiled model, -1 when it has none. */
static int64_t compiled_int(engine_compiled *cc, const char *key)
{
    const ov_library *ov = &cc->ctx->ov;
    char *v = NULL;
    if (ov->fn.ov_compiled_model_get_property(cc->cm, key, &v) != OK || !v)
        return -1;
    char *end;
    long long x = strtoll(v, &end, 10);
    ov->fn.ov_free(v);
    return end != v ? x : -1;
}

static int compile(engine_ctx *c, engine_model *m, engine_compiled **out, engine_error *err)
{
    const ov_library *ov = &c->ov;
    engine_compiled *cc = calloc(1, sizeof *cc);
    int rc = 0;
    if (!cc)
        return ov_fail(err, OV_E_NOMEM, "compile_model: out of memory");
    cc->ctx = c;
    TRY(ov, ov->fn.ov_core_compile_model(c->core, m->model, "CPU", 0, &cc->cm), "compile_model: ov_core_compile_model");
    TRY(ov, ov->fn.ov_compiled_model_inputs_size(cc->cm, &cc->n_in), "compile_model: ov_compiled_model_inputs_size");
    TRY(ov, ov->fn.ov_compiled_model_outputs_size(cc->cm, &cc->n_out), "compile_model: ov_compiled_model_outputs_size");
    cc->in = calloc(cc->n_in + 1, sizeof *cc->in);
    cc->in_elem = calloc(cc->n_in + 1, sizeof *cc->in_elem);
    cc->in_names = calloc(cc->n_in + 1, sizeof *cc->in_names);
    cc->out_names = calloc(cc->n_out + 1, sizeof *cc->out_names);
    cc->in_params = calloc(cc->n_in * ENGINE_MAX_RANK + 1, sizeof *cc->in_params);
    if (!cc->in || !cc->in_elem || !cc->in_names || !cc->out_names || !cc->in_params) {
        rc = ov_fail(err, OV_E_NOMEM, "compile_model: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < cc->n_in; i++)
        if ((rc = describe_port(cc, m, i, 0, err)))
            goto fail;
    for (size_t i = 0; i < cc->n_out; i++)
        if ((rc = describe_port(cc, m, i, 1, err)))
            goto fail;
    cc->streams = compiled_int(cc, "NUM_STREAMS");
    cc->infer_threads = compiled_int(cc, "INFERENCE_NUM_THREADS");
    c->live = cc;
    *out = cc;
    return 0;
fail:
    release_compiled(cc);
    return rc;
}

static size_t n_inputs(engine_compiled *c) { return c->n_in; }
static size_t n_outputs(engine_compiled *c) { return c->n_out; }

static int input_info(engine_compiled *c, size_t i, engine_tensor_info *out)
{
    if (i >= c->n_in)
        return OV_E_INVALID;
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

/* (Re)bind input i to a request-owned buffer of the given shape, under a tensor that shares it. */
static int bind_input(engine_request *r, size_t i, const engine_tensor_info *shape, engine_error *err)
{
    engine_compiled *c = r->c;
    const ov_library *ov = &c->ctx->ov;
    size_t esize = ov_dtype_size(c->in[i].dtype);
    ov_shape_t sh = {0};
    ov_tensor_t *t = NULL;
    int rc = 0;
    if (!esize)
        return ov_fail(err, OV_E_INVALID, "create_request: input '%s' has OpenVINO element type %d, which this plugin "
                       "cannot feed", c->in_names[i], c->in_elem[i]);
    size_t nbytes = (size_t)numel(shape) * esize;
    void *buf = r->in_bufs[i];
    if (nbytes != r->in_bytes[i] || !buf) {
        if (!(buf = aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64)))
            return ov_fail(err, OV_E_NOMEM, "create_request: out of memory for input '%s' (%zu bytes)", c->in_names[i],
                           nbytes);
        memset(buf, 0, nbytes);
    }
    TRY(ov, ov->fn.ov_shape_create(shape->rank, shape->dims, &sh), "create_request: ov_shape_create");
    TRY(ov, ov->fn.ov_tensor_create_from_host_ptr((ov_element_type_e)c->in_elem[i], sh, buf, &t),
        "create_request: ov_tensor_create_from_host_ptr");
    TRY(ov, ov->fn.ov_infer_request_set_input_tensor_by_index(r->req, i, t),
        "create_request: ov_infer_request_set_input_tensor_by_index");
    /* The request holds the new tensor now: the old one and its buffer can go. */
    if (r->in_tensors[i])
        ov->fn.ov_tensor_free(r->in_tensors[i]);
    if (buf != r->in_bufs[i])
        free(r->in_bufs[i]);
    r->in_tensors[i] = t;
    r->in_bufs[i] = buf;
    r->in_bytes[i] = nbytes;
    r->in_shape[i] = *shape;
    t = NULL;
fail:
    if (t)
        ov->fn.ov_tensor_free(t);
    if (rc && buf != r->in_bufs[i])
        free(buf);
    if (sh.dims)
        ov->fn.ov_shape_free(&sh);
    return rc;
}

static void drop_outputs(engine_request *r)
{
    for (size_t i = 0; r->outs && i < r->c->n_out; i++) {
        if (r->outs[i])
            r->c->ctx->ov.fn.ov_tensor_free(r->outs[i]);
        r->outs[i] = NULL;
    }
}

static void release_request(engine_request *r)
{
    if (!r)
        return;
    const ov_library *ov = &r->c->ctx->ov;
    drop_outputs(r);
    if (r->req)
        ov->fn.ov_infer_request_free(r->req);
    for (size_t i = 0; r->in_tensors && i < r->c->n_in; i++)
        if (r->in_tensors[i])
            ov->fn.ov_tensor_free(r->in_tensors[i]);
    for (size_t i = 0; r->in_bufs && i < r->c->n_in; i++)
        free(r->in_bufs[i]);
    free(r->in_tensors);
    free(r->in_bufs);
    free(r->in_bytes);
    free(r->in_shape);
    free(r->outs);
    free(r);
}

static int create_request(engine_compiled *c, engine_request **out, engine_error *err)
{
    const ov_library *ov = &c->ctx->ov;
    engine_request *r = calloc(1, sizeof *r);
    int rc = 0;
    if (!r)
        return ov_fail(err, OV_E_NOMEM, "create_request: out of memory");
    r->c = c;
    r->in_bufs = calloc(c->n_in + 1, sizeof *r->in_bufs);
    r->in_bytes = calloc(c->n_in + 1, sizeof *r->in_bytes);
    r->in_tensors = calloc(c->n_in + 1, sizeof *r->in_tensors);
    r->in_shape = calloc(c->n_in + 1, sizeof *r->in_shape);
    r->outs = calloc(c->n_out + 1, sizeof *r->outs);
    if (!r->in_bufs || !r->in_bytes || !r->in_tensors || !r->in_shape || !r->outs) {
        rc = ov_fail(err, OV_E_NOMEM, "create_request: out of memory");
        goto fail;
    }
    TRY(ov, ov->fn.ov_compiled_model_create_infer_request(c->cm, &r->req),
        "create_request: ov_compiled_model_create_infer_request");
    for (size_t i = 0; i < c->n_in; i++)
        if ((rc = bind_input(r, i, &c->in[i], err)))
            goto fail;
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
        return ov_fail(err, OV_E_INVALID, "set_input %zu: the model has %zu inputs", i, c->n_in);
    if (info->dtype != c->in[i].dtype || info->rank != c->in[i].rank || info->rank < 0 || info->rank > ENGINE_MAX_RANK)
        return ov_fail(err, OV_E_INVALID, "set_input '%s': element type %d rank %d given, the model has %d rank %d",
                       c->in_names[i], info->dtype, info->rank, c->in[i].dtype, c->in[i].rank);
    size_t need = (size_t)numel(info) * ov_dtype_size(info->dtype);
    if (need != nbytes)
        return ov_fail(err, OV_E_INVALID, "set_input '%s': %zu bytes given, the shape needs %zu", c->in_names[i],
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
    const ov_library *ov = &r->c->ctx->ov;
    int rc = 0;
    drop_outputs(r);
    TRY(ov, ov->fn.ov_infer_request_infer(r->req), "infer: ov_infer_request_infer");
    r->ran = 1;
fail:
    return rc;
}

static int output(engine_request *r, size_t i, engine_tensor_info *info, const void **data, size_t *nbytes,
                  engine_error *err)
{
    const ov_library *ov = &r->c->ctx->ov;
    ov_shape_t sh = {0};
    ov_element_type_e et;
    void *p = NULL;
    int rc = 0;
    if (!r->ran)
        return ov_fail(err, OV_E_STATE, "output %zu: no infer has completed", i);
    if (i >= r->c->n_out)
        return ov_fail(err, OV_E_INVALID, "output %zu: the model has %zu outputs", i, r->c->n_out);
    if (!r->outs[i])
        TRY(ov, ov->fn.ov_infer_request_get_output_tensor_by_index(r->req, i, &r->outs[i]),
            "output: ov_infer_request_get_output_tensor_by_index");
    TRY(ov, ov->fn.ov_tensor_get_shape(r->outs[i], &sh), "output: ov_tensor_get_shape");
    TRY(ov, ov->fn.ov_tensor_get_element_type(r->outs[i], &et), "output: ov_tensor_get_element_type");
    TRY(ov, ov->fn.ov_tensor_data(r->outs[i], &p), "output: ov_tensor_data");
    if (sh.rank < 0 || sh.rank > ENGINE_MAX_RANK) {
        rc = ov_fail(err, OV_E_INVALID, "output %zu: rank %lld is more than %d", i, (long long)sh.rank,
                     ENGINE_MAX_RANK);
        goto fail;
    }
    memset(info, 0, sizeof *info);
    info->name = r->c->out_names[i];
    info->dtype = ov_library_onnx_dtype(ov, (int)et);
    info->rank = (int32_t)sh.rank;
    for (int k = 0; k < info->rank; k++)
        info->dims[k] = sh.dims[k];
    *data = p;
    *nbytes = (size_t)numel(info) * ov_dtype_size(info->dtype);
fail:
    if (sh.dims)
        ov->fn.ov_shape_free(&sh);
    return rc;
}

/* ---- Metrics: which release each cell ran, and what the CPU plugin made of the threading options ----
 * openvino_release (2026004001 for 2026.4.1) comes after every step, so the db says which release each cell loaded
 * whatever its options; the compiled model's streams and inference threads were read at compile (reading nothing here,
 * so the figures cost no allocation between a step's probes). OpenVINO's C API exposes no memory statistics. */
static int metrics(engine_ctx *c, engine_metric *out, size_t max, size_t *n)
{
    *n = 0;
    if (*n < max) {
        snprintf(out[*n].name, sizeof out[*n].name, "openvino_release");
        out[(*n)++].value = c->ov.release_code;
    }
    if (c->live && c->live->streams >= 0 && *n < max) {
        snprintf(out[*n].name, sizeof out[*n].name, "openvino_streams");
        out[(*n)++].value = c->live->streams;
    }
    if (c->live && c->live->infer_threads >= 0 && *n < max) {
        snprintf(out[*n].name, sizeof out[*n].name, "openvino_inference_threads");
        out[(*n)++].value = c->live->infer_threads;
    }
    return 0;
}

static const engine_api api_table = {
    .abi_version = ENGINE_ABI_VERSION,
    .struct_size = sizeof(engine_api),
    .name = "openvino",
    .version = MLK_OV_DEFAULT_VERSION, /* the default release's; the one a cell ran is metric openvino_release */
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
