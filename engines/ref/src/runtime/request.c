/* request.c: inference requests: input copies and zero-copy bindings, the plan cache (mem_pattern) and
 * the activation arena with its growth policy. It must never allocate inside ref_infer when the plan is
 * cached and the arena big enough: that is the arena=on contract the harness checks. */
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../inject.h"
#include "../ops/half_convert.h"
#include "request.h"

static void request_destroy(ref_request *r);

static int request_create(ref_compiled *c, ref_pool *pool, ref_request **out, ref_error *err)
{
    int rc;
    ref_request *r = ref_calloc(1, sizeof *r);
    if (!r)
        return ref_fail(err, REF_E_NOMEM, "create_request: out of memory");
    r->c = c;
    size_t nv = (size_t)c->n_vals + 1, ni = (size_t)c->n_inputs + 1, no = (size_t)c->n_outputs + 1;
    size_t n_in = (size_t)c->max_in + 1, n_out = (size_t)c->max_out + 1;
    r->vals = ref_calloc(nv, sizeof *r->vals);
    r->dyn = ref_calloc(nv, sizeof *r->dyn);
    r->in = ref_calloc(ni, sizeof *r->in);
    r->in_own = ref_calloc(ni, sizeof *r->in_own);
    r->in_cap = ref_calloc(ni, sizeof *r->in_cap);
    r->in_set = ref_calloc(ni, sizeof *r->in_set);
    r->out_bind = ref_calloc(no, sizeof *r->out_bind);
    r->out_bind_bytes = ref_calloc(no, sizeof *r->out_bind_bytes);
    r->half_out = ref_calloc(no, sizeof *r->half_out);
    r->half_cap = ref_calloc(no, sizeof *r->half_cap);
    r->half_bind = ref_calloc(no, sizeof *r->half_bind);
    r->half_bind_bytes = ref_calloc(no, sizeof *r->half_bind_bytes);
    r->in_ptrs = ref_calloc(n_in, sizeof *r->in_ptrs);
    r->out_ptrs = ref_calloc(n_out, sizeof *r->out_ptrs);
    r->dummies = ref_calloc(n_out, sizeof *r->dummies);
    r->dummy_bufs = ref_calloc(n_out, sizeof *r->dummy_bufs);
    r->node_rt = ref_calloc((size_t)c->n_nodes + 1, sizeof *r->node_rt);
    if (!r->vals || !r->dyn || !r->in || !r->in_own || !r->in_cap || !r->in_set || !r->out_bind ||
        !r->out_bind_bytes || !r->half_out || !r->half_cap || !r->half_bind || !r->half_bind_bytes ||
        !r->in_ptrs || !r->out_ptrs || !r->dummies || !r->dummy_bufs || !r->node_rt) {
        rc = ref_fail(err, REF_E_NOMEM, "create_request: out of memory");
        goto fail;
    }
    r->pool = pool;
    if (!pool && (rc = ref_pool_new(c->opts.threads, &r->pool, err)))
        goto fail;
    r->own_pool = !pool;
    const ref_plan *p = c->default_plan;
    if (c->opts.arena && !c->omitted_outputs && p && p->dynamic_from == c->n_nodes && p->arena_bytes) {
        r->arena = ref_aligned_alloc(p->arena_bytes);
        if (!r->arena) {
            rc = ref_fail(err, REF_E_NOMEM, "create_request: out of memory for a %zu-byte arena",
                          p->arena_bytes);
            goto fail;
        }
        r->arena_cap = p->arena_bytes;
    }
    *out = r;
    return REF_OK;
fail:
    request_destroy(r);
    return rc;
}

int ref_request_new(ref_compiled *c, ref_request **out, ref_error *err)
{
    if (!c || !out)
        return ref_fail(err, REF_E_INVALID, "create_request: compiled model and out are required");
    int rc = ref_inject_step(&c->opts, REF_STEP_CREATE_REQUEST, err);
    if (rc)
        return rc;
    return request_create(c, NULL, out, err);
}

int ref_request_new_sub(ref_compiled *c, ref_pool *pool, ref_request **out, ref_error *err)
{
    return request_create(c, pool, out, err);
}

void ref_request_free(ref_request *r)
{
    if (!r)
        return;
    ref_inject_step(&r->c->opts, REF_STEP_RELEASE_REQUEST, NULL);
    request_destroy(r);
}

void ref_request_free_sub(ref_request *r)
{
    if (r)
        request_destroy(r);
}

static void request_destroy(ref_request *r)
{
    if (r->dyn)
        ref_exec_release(r);
    for (int k = 0; r->node_rt && k < r->c->n_nodes; k++)
        if (r->node_rt[k])
            r->c->nodes[k].op->rt_free(r->node_rt[k]);
    ref_free(r->node_rt);
    for (int i = 0; i < r->n_cache; i++)
        ref_plan_free(r->c, r->cache[i]);
    ref_free(r->cache);
    ref_plan_free(r->c, r->tmp_plan);
    if (r->in_own)
        for (int i = 0; i < r->c->n_inputs; i++)
            ref_free(r->in_own[i]);
    ref_free(r->arena);
    if (r->own_pool)
        ref_pool_free(r->pool);
    ref_free(r->vals);
    ref_free(r->dyn);
    ref_free(r->in);
    ref_free(r->in_own);
    ref_free(r->in_cap);
    ref_free(r->in_set);
    ref_free(r->out_bind);
    ref_free(r->out_bind_bytes);
    for (int i = 0; r->half_out && r->half_cap && i < r->c->n_outputs; i++)
        if (r->half_cap[i])
            ref_free(r->half_out[i]);
    ref_free(r->half_out);
    ref_free(r->half_cap);
    ref_free(r->half_bind);
    ref_free(r->half_bind_bytes);
    ref_free(r->in_ptrs);
    ref_free(r->out_ptrs);
    ref_free(r->dummies);
    ref_free(r->dummy_bufs);
    ref_free(r);
}

/* The tensor must match the graph input's declared type, rank and fixed dims. */
static int check_input(const ref_request *r, size_t i, const ref_tensor *t, ref_error *err)
{
    if (i >= (size_t)r->c->n_inputs)
        return ref_fail(err, REF_E_RANGE, "input index %zu out of range (%d inputs)", i, r->c->n_inputs);
    const ref_value *v = &r->c->vals[r->c->inputs[i]];
    static const ref_value_info undeclared = {.rank = -1};
    const ref_value_info *d = v->declared ? v->declared : &undeclared; /* a subgraph's capture */
    if (!t || t->rank < 0 || t->rank > REF_MAX_RANK || !ref_dtype_size(t->dtype))
        return ref_fail(err, REF_E_INVALID, "input '%s': a tensor with a sized dtype and rank 0..%d is required",
                        v->name, REF_MAX_RANK);
    bool as_float = r->c->half && d->elem_type == REF_DT_FLOAT16 && t->dtype == REF_DT_FLOAT; /* from a parent */
    if (d->elem_type && d->elem_type != t->dtype && !as_float)
        return ref_fail(err, REF_E_SHAPE, "input '%s': expected %s, got %s", v->name,
                        ref_dtype_name(d->elem_type), ref_dtype_name(t->dtype));
    if (d->rank >= 0 && d->rank != t->rank)
        return ref_fail(err, REF_E_SHAPE, "input '%s': expected rank %d, got %d", v->name, d->rank, t->rank);
    for (int j = 0; d->rank >= 0 && j < d->rank; j++)
        if (!d->dims[j].param && d->dims[j].value >= 0 && d->dims[j].value != t->dims[j])
            return ref_fail(err, REF_E_SHAPE, "input '%s': dim %d must be %lld, got %lld", v->name, j,
                            (long long)d->dims[j].value, (long long)t->dims[j]);
    for (int j = 0; j < t->rank; j++)
        if (t->dims[j] < 0)
            return ref_fail(err, REF_E_SHAPE, "input '%s': dim %d is negative", v->name, j);
    char what[160];
    snprintf(what, sizeof what, "input '%.128s'", v->name);
    return ref_shape_check(t, (size_t)r->c->opts.max_tensor_bytes, what, err);
}

int ref_request_set_input(ref_request *r, size_t i, const ref_tensor *t, ref_error *err)
{
    if (!r)
        return ref_fail(err, REF_E_INVALID, "set_input: request is required");
    int rc = check_input(r, i, t, err);
    if (rc)
        return rc;
    size_t bytes = ref_tensor_nbytes(t);
    if (bytes && !t->data)
        return ref_fail(err, REF_E_INVALID, "set_input %zu: tensor has no data", i);
    bool half = r->c->half && t->dtype == REF_DT_FLOAT16; /* runs as float32 (compile/half.c) */
    if (half)
        bytes *= 2;
    if (bytes > r->in_cap[i] || !r->in_own[i]) {
        void *p = ref_aligned_alloc(bytes);
        if (!p)
            return ref_fail(err, REF_E_NOMEM, "set_input %zu: out of memory for %zu bytes", i, bytes);
        ref_free(r->in_own[i]);
        r->in_own[i] = p;
        r->in_cap[i] = bytes;
    }
    if (bytes && half)
        ref_half_to_float_n(t->data, r->in_own[i], ref_tensor_numel(t));
    else if (bytes)
        memcpy(r->in_own[i], t->data, bytes);
    r->in[i] = *t;
    r->in[i].data = r->in_own[i];
    if (half)
        r->in[i].dtype = REF_DT_FLOAT;
    r->in_set[i] = true;
    return REF_OK;
}

int ref_request_bind_input(ref_request *r, size_t i, const ref_tensor *t, ref_error *err)
{
    if (!r)
        return ref_fail(err, REF_E_INVALID, "bind_input: request is required");
    if (r->c->half && t && t->dtype == REF_DT_FLOAT16)
        return ref_request_set_input(r, i, t, err); /* converted, so copied: float16 runs as float32 */
    int rc = check_input(r, i, t, err);
    if (rc)
        return rc;
    if (ref_tensor_nbytes(t) && !t->data)
        return ref_fail(err, REF_E_INVALID, "bind_input %zu: tensor has no data", i);
    r->in[i] = *t;
    r->in_set[i] = true;
    return REF_OK;
}

/* Output i runs as float32 and is handed out as float16. */
static bool half_output(const ref_compiled *c, size_t i)
{
    return c->half && !c->parent && i < c->graph->n_outputs && c->graph->outputs[i].elem_type == REF_DT_FLOAT16;
}

/* After a run: every float16 output converted from its float32 value, into the caller's buffer or the request's
 * own (grown only when the shape grows). */
static int convert_half_outputs(ref_request *r, ref_error *err)
{
    for (int i = 0; i < r->c->n_outputs; i++) {
        if (!half_output(r->c, (size_t)i))
            continue;
        const ref_tensor *v = &r->vals[r->c->outputs[i]];
        if (v->dtype != REF_DT_FLOAT)
            return ref_fail(err, REF_E_SHAPE, "output '%s': declared float16, made %s",
                            r->c->vals[r->c->outputs[i]].name, ref_dtype_name(v->dtype));
        int64_t n = ref_tensor_numel(v);
        size_t bytes = (size_t)n * 2;
        if (r->half_bind[i]) {
            if (bytes > r->half_bind_bytes[i])
                return ref_fail(err, REF_E_RANGE, "output %d: needs %zu bytes, the bound buffer has %zu", i, bytes,
                                r->half_bind_bytes[i]);
            ref_float_to_half_n(v->data, r->half_bind[i], n);
            continue;
        }
        if (bytes > r->half_cap[i] || !r->half_out[i]) {
            void *p = ref_aligned_alloc(bytes ? bytes : 2);
            if (!p)
                return ref_fail(err, REF_E_NOMEM, "output %d: out of memory for %zu bytes of float16", i, bytes);
            ref_free(r->half_cap[i] ? r->half_out[i] : NULL);
            r->half_out[i] = p;
            r->half_cap[i] = bytes ? bytes : 2;
        }
        ref_float_to_half_n(v->data, r->half_out[i], n);
    }
    return REF_OK;
}

int ref_request_bind_output(ref_request *r, size_t i, void *buf, size_t nbytes, ref_error *err)
{
    if (!r || i >= (size_t)r->c->n_outputs)
        return ref_fail(err, REF_E_RANGE, "bind_output: index %zu out of range", i);
    if (half_output(r->c, i)) { /* the graph writes float32: converted into buf after each infer */
        r->half_bind[i] = buf;
        r->half_bind_bytes[i] = buf ? nbytes : 0;
        return REF_OK;
    }
    r->out_bind[i] = buf;
    r->out_bind_bytes[i] = buf ? nbytes : 0;
    return REF_OK;
}

int ref_request_output(const ref_request *r, size_t i, ref_tensor *out, ref_error *err)
{
    if (!r || !out || i >= (size_t)r->c->n_outputs)
        return ref_fail(err, REF_E_RANGE, "output index %zu out of range", i);
    *out = r->vals[r->c->outputs[i]];
    if (!out->data && ref_tensor_nbytes(out))
        return ref_fail(err, REF_E_STATE, "output %zu: no infer has completed", i);
    if (half_output(r->c, i)) {
        out->dtype = REF_DT_FLOAT16;
        out->data = r->half_bind[i] ? r->half_bind[i] : r->half_out[i];
    }
    return REF_OK;
}

size_t ref_request_arena_bytes(const ref_request *r) { return r ? r->arena_cap : 0; }

void ref_request_plan_counts(const ref_request *r, ref_plan_counts *out)
{
    memset(out, 0, sizeof *out);
    if (!r)
        return;
    out->built = r->n_plans_built;
    out->evicted = r->n_plans_evicted;
    out->cached = r->n_cache;
}

/* The plan for the current input shapes: the default one, a cached one (moved to the front), or a new one
 * (at the front; the least recently used beyond opts.plan_cache is freed). A hit allocates nothing. */
static int select_plan(ref_request *r, const ref_plan **out, ref_error *err)
{
    const ref_compiled *c = r->c;
    int rc;
    if (!c->opts.mem_pattern) {
        ref_plan_free(c, r->tmp_plan);
        r->tmp_plan = NULL;
        if ((rc = ref_plan_build(c, r->in, &r->tmp_plan, err)))
            return rc;
        r->n_plans_built++;
        *out = r->tmp_plan;
        return REF_OK;
    }
    if (c->default_plan && ref_plan_matches(c, c->default_plan, r->in)) {
        *out = c->default_plan;
        return REF_OK;
    }
    for (int i = 0; i < r->n_cache; i++)
        if (ref_plan_matches(c, r->cache[i], r->in)) {
            ref_plan *hit = r->cache[i];
            memmove(&r->cache[1], &r->cache[0], sizeof *r->cache * (size_t)i);
            r->cache[0] = hit;
            *out = hit;
            return REF_OK;
        }
    int limit = c->opts.plan_cache > 0 ? c->opts.plan_cache : 1;
    if (r->n_cache == r->cap_cache && r->cap_cache < limit) {
        int cap = r->cap_cache ? 2 * r->cap_cache : 4;
        cap = cap < limit ? cap : limit;
        ref_plan **p = ref_realloc(r->cache, sizeof *p * (size_t)cap);
        if (!p)
            return ref_fail(err, REF_E_NOMEM, "infer: out of memory for the plan cache");
        r->cache = p;
        r->cap_cache = cap;
    }
    ref_plan *p = NULL;
    if ((rc = ref_plan_build(c, r->in, &p, err)))
        return rc;
    r->n_plans_built++;
    if (r->n_cache == r->cap_cache) {
        ref_plan_free(c, r->cache[--r->n_cache]);
        r->n_plans_evicted++;
    }
    memmove(&r->cache[1], &r->cache[0], sizeof *r->cache * (size_t)r->n_cache);
    r->cache[0] = p;
    r->n_cache++;
    *out = p;
    return REF_OK;
}

static size_t next_pow2(size_t n)
{
    size_t p = 4096;
    while (p < n)
        p *= 2;
    return p;
}

static int ensure_arena(ref_request *r, size_t need, ref_error *err)
{
    if (need <= r->arena_cap)
        return REF_OK;
    size_t cap = r->c->opts.arena_growth == REF_GROWTH_POW2 ? next_pow2(need) : need;
    void *a = ref_aligned_alloc(cap);
    if (!a)
        return ref_fail(err, REF_E_NOMEM, "infer: out of memory growing the arena to %zu bytes", cap);
    ref_free(r->arena);
    r->arena = a;
    r->arena_cap = cap;
    return REF_OK;
}

/* The kind of run the pool times apart (ref_pool_run_begin): the inputs' shapes, FNV-1a over their dims. */
static uint64_t shapes_kind(const ref_request *r)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < r->c->n_inputs; i++)
        for (int d = -1; d < r->in[i].rank; d++)
            h = (h ^ (uint64_t)(d < 0 ? r->in[i].rank : r->in[i].dims[d])) * 1099511628211ull;
    return h;
}

int ref_infer(ref_request *r, ref_error *err)
{
    if (!r)
        return ref_fail(err, REF_E_INVALID, "infer: request is required");
    int rc = ref_inject_step(&r->c->opts, REF_STEP_INFER, err);
    if (rc)
        return rc;
    if (!r->c->opts.thread_arbiter)
        return ref_infer_run(r, err);
    ref_pool_run_begin(r->pool, shapes_kind(r));
    rc = ref_infer_run(r, err);
    ref_pool_run_end(r->pool, rc == REF_OK);
    return rc;
}

int ref_infer_run(ref_request *r, ref_error *err)
{
    int rc;
    for (int i = 0; i < r->c->n_inputs; i++)
        if (!r->in_set[i])
            return ref_fail(err, REF_E_STATE, "infer: input '%s' was never set",
                            r->c->vals[r->c->inputs[i]].name);
    ref_exec_release(r);
    const ref_plan *p = NULL;
    if ((rc = select_plan(r, &p, err)))
        return rc;
    if (r->c->opts.arena && !r->c->omitted_outputs && p->dynamic_from == r->c->n_nodes) {
        if ((rc = ensure_arena(r, p->arena_bytes, err)))
            return rc;
        rc = ref_exec_arena(r, p, err);
    } else {
        rc = ref_exec_per_tensor(r, p, err);
    }
    return rc || !r->c->half ? rc : convert_half_outputs(r, err);
}
