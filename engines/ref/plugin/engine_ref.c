/* engine_ref.c: the reference engine behind the plugin ABI (engine_ref.so): options, pipeline steps, metrics.
 * It must never export anything but engine_get_api, so a host linking refengine itself cannot clash with it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "refengine.h"

/* The engine keeps its live compiled models listed so ref_packed_bytes can add up their pre-packed weights. */
struct engine_ctx {
    ref_options opts;
    pthread_mutex_t mu;        /* guards compiled and each listed model's links */
    engine_compiled *compiled; /* live compiled models, newest first */
};

struct engine_compiled {
    ref_compiled *c;
    engine_ctx *ctx; /* NULL once the engine was unloaded before this model was released */
    engine_compiled *prev, *next;
};

/* A request remembers its compiled model to name its outputs. */
struct engine_request {
    ref_request *r;
    ref_compiled *c;
};

static void to_engine_error(const ref_error *e, engine_error *err)
{
    if (!err)
        return;
    err->code = e->code;
    err->oom = e->code == REF_E_NOMEM;
    snprintf(err->msg, sizeof err->msg, "%s", e->msg);
}

static int parse_options(const engine_kv *opts, size_t n, ref_options *o, engine_error *err)
{
    ref_options_init(o);
    for (size_t i = 0; i < n; i++) {
        ref_error e = {0};
        if (ref_options_set(o, opts[i].key, opts[i].value, &e)) {
            to_engine_error(&e, err);
            return e.code ? e.code : REF_E_INVALID;
        }
    }
    return 0;
}

static const char *option_keys(void) { return ref_options_keys(); }

static int check_options(const engine_kv *opts, size_t n, engine_error *err)
{
    ref_options o;
    return parse_options(opts, n, &o, err);
}

static int load(const engine_kv *opts, size_t n, engine_ctx **out, engine_error *err)
{
    engine_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err->msg, sizeof err->msg, "load_engine: out of memory");
        err->code = REF_E_NOMEM;
        err->oom = 1;
        return err->code;
    }
    int rc = parse_options(opts, n, &c->opts, err);
    if (rc) {
        free(c);
        return rc;
    }
    pthread_mutex_init(&c->mu, NULL);
    *out = c;
    return 0;
}

static void unload(engine_ctx *c)
{
    if (!c)
        return;
    /* Models still alive (a host that releases out of order) stay valid; they just leave no list behind. */
    for (engine_compiled *m = c->compiled, *next; m; m = next) {
        next = m->next;
        m->ctx = NULL;
        m->prev = m->next = NULL;
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int read_model(engine_ctx *c, const char *path, engine_model **out, engine_error *err)
{
    ref_error e = {0};
    ref_model *m = NULL;
    int rc = ref_model_read(path, &c->opts, &m, &e);
    if (rc) {
        to_engine_error(&e, err);
        return rc;
    }
    *out = (engine_model *)m;
    return 0;
}

static void release_model(engine_model *m) { ref_model_free((ref_model *)m); }

static int compile(engine_ctx *c, engine_model *m, engine_compiled **out, engine_error *err)
{
    ref_error e = {0};
    engine_compiled *ec = calloc(1, sizeof *ec);
    if (!ec) {
        snprintf(err->msg, sizeof err->msg, "compile: out of memory");
        err->code = REF_E_NOMEM;
        err->oom = 1;
        return err->code;
    }
    int rc = ref_compile((ref_model *)m, &c->opts, &ec->c, &e);
    if (rc) {
        to_engine_error(&e, err);
        free(ec);
        return rc;
    }
    ec->ctx = c;
    pthread_mutex_lock(&c->mu);
    ec->next = c->compiled;
    if (c->compiled)
        c->compiled->prev = ec;
    c->compiled = ec;
    pthread_mutex_unlock(&c->mu);
    *out = ec;
    return 0;
}

static void release_compiled(engine_compiled *ec)
{
    if (!ec)
        return;
    engine_ctx *c = ec->ctx;
    if (c) {
        pthread_mutex_lock(&c->mu);
        if (ec->prev)
            ec->prev->next = ec->next;
        else
            c->compiled = ec->next;
        if (ec->next)
            ec->next->prev = ec->prev;
        pthread_mutex_unlock(&c->mu);
    }
    ref_compiled_free(ec->c);
    free(ec);
}

static size_t n_inputs(engine_compiled *c) { return ref_compiled_n_inputs(c->c); }

static int input_info(engine_compiled *c, size_t i, engine_tensor_info *out)
{
    ref_value_desc d;
    int rc = ref_compiled_input(c->c, i, &d);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    out->name = d.name;
    out->dtype = d.shape.dtype;
    out->rank = d.shape.rank;
    for (int k = 0; k < d.shape.rank && k < ENGINE_MAX_RANK; k++)
        out->dims[k] = d.shape.dims[k];
    return 0;
}

static int create_request(engine_compiled *c, engine_request **out, engine_error *err)
{
    engine_request *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "create_request: out of memory");
        err->code = REF_E_NOMEM;
        err->oom = 1;
        return err->code;
    }
    ref_error e = {0};
    int rc = ref_request_new(c->c, &r->r, &e);
    if (rc) {
        to_engine_error(&e, err);
        free(r);
        return rc;
    }
    r->c = c->c;
    *out = r;
    return 0;
}

static int set_input(engine_request *r, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err)
{
    ref_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = info->dtype;
    t.rank = info->rank;
    for (int k = 0; k < info->rank && k < REF_MAX_RANK; k++)
        t.dims[k] = info->dims[k];
    t.data = (void *)data;
    ref_error e = {0};
    if (ref_tensor_nbytes(&t) != nbytes) {
        snprintf(err->msg, sizeof err->msg, "set_input %zu: %zu bytes given, the shape needs %zu", i, nbytes,
                 ref_tensor_nbytes(&t));
        err->code = REF_E_SHAPE;
        return err->code;
    }
    int rc = ref_request_set_input(r->r, i, &t, &e);
    if (rc)
        to_engine_error(&e, err);
    return rc;
}

static int infer(engine_request *r, engine_error *err)
{
    ref_error e = {0};
    int rc = ref_infer(r->r, &e);
    if (rc)
        to_engine_error(&e, err);
    return rc;
}

static void release_request(engine_request *r)
{
    if (!r)
        return;
    ref_request_free(r->r);
    free(r);
}

static int metrics(engine_ctx *c, engine_metric *out, size_t max, size_t *n)
{
    ref_alloc_stats s;
    ref_alloc_get_stats(&s);
    /* Pre-packed weights (float16 ones widened to float32 among them): the compressed-weight memory knob. */
    int64_t packed = 0;
    pthread_mutex_lock(&c->mu);
    for (const engine_compiled *m = c->compiled; m; m = m->next)
        packed += (int64_t)ref_compiled_packed_bytes(m->c);
    pthread_mutex_unlock(&c->mu);
    const struct {
        const char *name;
        int64_t value;
    } m[] = {{"ref_live_bytes", s.live_bytes}, {"ref_allocs", s.n_allocs}, {"ref_packed_bytes", packed}};
    size_t k = 0;
    for (; k < max && k < sizeof m / sizeof m[0]; k++) {
        snprintf(out[k].name, sizeof out[k].name, "%s", m[k].name);
        out[k].value = m[k].value;
    }
    *n = k;
    return 0;
}

static const char *input_dim_param(engine_compiled *c, size_t i, int axis)
{
    return ref_compiled_input_dim_param(c->c, i, axis);
}

static size_t n_outputs(engine_compiled *c) { return ref_compiled_n_outputs(c->c); }

static int output(engine_request *r, size_t i, engine_tensor_info *info, const void **data, size_t *nbytes,
                  engine_error *err)
{
    ref_error e = {0};
    ref_value_desc d;
    ref_tensor t;
    if (ref_compiled_output(r->c, i, &d)) {
        snprintf(err->msg, sizeof err->msg, "output %zu: the model has %zu outputs", i,
                 ref_compiled_n_outputs(r->c));
        err->code = REF_E_RANGE;
        return err->code;
    }
    int rc = ref_request_output(r->r, i, &t, &e);
    if (rc) {
        to_engine_error(&e, err);
        return rc;
    }
    memset(info, 0, sizeof *info);
    info->name = d.name;
    info->dtype = t.dtype;
    info->rank = t.rank;
    for (int k = 0; k < t.rank && k < ENGINE_MAX_RANK; k++)
        info->dims[k] = t.dims[k];
    *data = t.data;
    *nbytes = ref_tensor_nbytes(&t);
    return 0;
}

static const engine_api api = {
    .abi_version = ENGINE_ABI_VERSION,
    .struct_size = sizeof(engine_api),
    .name = "ref",
    .version = "0.1.0",
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
    .create_request = create_request,
    .set_input = set_input,
    .infer = infer,
    .release_request = release_request,
    .metrics = metrics,
    .n_outputs = n_outputs,
    .output = output,
    .input_dim_param = input_dim_param,
};

__attribute__((visibility("default"))) const engine_api *engine_get_api(void) { return &api; }
