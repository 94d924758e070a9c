/* options.c: the engine's options: defaults and parsing from the key/value strings scenarios use.
 * It must never accept a key or value silently: unknown keys list the accepted ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "status.h"

static const char *const step_names[REF_STEP_COUNT] = {
    [REF_STEP_NONE] = "none",
    [REF_STEP_READ_MODEL] = "read_model",
    [REF_STEP_COMPILE_MODEL] = "compile_model",
    [REF_STEP_CREATE_REQUEST] = "create_request",
    [REF_STEP_INFER] = "infer",
    [REF_STEP_RELEASE_REQUEST] = "release_request",
    [REF_STEP_RELEASE_COMPILED] = "release_compiled",
    [REF_STEP_RELEASE_MODEL] = "release_model",
};

const char *ref_step_name(ref_step s)
{
    return (s >= 0 && s < REF_STEP_COUNT) ? step_names[s] : "?";
}

ref_step ref_step_from_name(const char *name)
{
    for (int s = 1; s < REF_STEP_COUNT; s++)
        if (!strcmp(step_names[s], name))
            return (ref_step)s;
    return REF_STEP_NONE;
}

void ref_options_init(ref_options *o)
{
    memset(o, 0, sizeof *o);
    o->mmap = 1;
    o->threads = 1;
    o->compile_threads = 1;
    o->planner = REF_PLANNER_GREEDY;
    o->arena = 1;
    o->arena_growth = REF_GROWTH_POW2;
    o->mem_pattern = 1;
    o->plan_cache = 8;
    o->fold_bn = 1;
    o->fuse_qdq = 1;
    o->thread_arbiter = 1;
    o->inject_leak_step = REF_STEP_INFER;
    o->inject_retention_step = REF_STEP_INFER;
    o->inject_crash_step = REF_STEP_INFER;
    o->inject_thread_step = REF_STEP_CREATE_REQUEST;
}

const char *ref_options_keys(void)
{
    return "mmap, threads, compile_threads, planner, arena, arena_growth, mem_pattern, plan_cache, fold_bn, "
           "fuse_qdq, thread_arbiter, max_tensor_bytes, "
           "dim.NAME, shape.NAME, "
           "inject_leak_bytes, inject_leak_step, inject_retention_bytes, inject_retention_cap, "
           "inject_retention_step, inject_crash_at, inject_crash_step, inject_thread_leak, "
           "inject_thread_step";
}

static int parse_bool(const char *key, const char *v, int *out, ref_error *err)
{
    if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) {
        *out = 1;
        return REF_OK;
    }
    if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no")) {
        *out = 0;
        return REF_OK;
    }
    return ref_fail(err, REF_E_INVALID, "option %s: '%s' is not on|off", key, v);
}

/* Integer in [lo, hi]; accepts K/M/G suffixes (powers of 1024) for byte counts. */
static int parse_int(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out, ref_error *err)
{
    errno = 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    int64_t mul = 1;
    if (end != v && *end) {
        if (!strcasecmp(end, "k") || !strcasecmp(end, "kib"))
            mul = 1024;
        else if (!strcasecmp(end, "m") || !strcasecmp(end, "mib"))
            mul = 1024 * 1024;
        else if (!strcasecmp(end, "g") || !strcasecmp(end, "gib"))
            mul = 1024LL * 1024 * 1024;
        else
            end = (char *)v;
    }
    if (errno || end == v || x < lo / mul || x > hi / mul)
        return ref_fail(err, REF_E_INVALID, "option %s: '%s' is not an integer in [%lld, %lld]", key, v,
                        (long long)lo, (long long)hi);
    *out = (int64_t)x * mul;
    return REF_OK;
}

static int parse_step(const char *key, const char *v, int *out, ref_error *err)
{
    ref_step s = ref_step_from_name(v);
    if (s == REF_STEP_NONE)
        return ref_fail(err, REF_E_INVALID,
                        "option %s: '%s' is not a step (read_model, compile_model, create_request, infer, "
                        "release_request, release_compiled, release_model)",
                        key, v);
    *out = (int)s;
    return REF_OK;
}

static int set_dim(ref_options *o, const char *name, const char *v, ref_error *err)
{
    int64_t x;
    int rc = parse_int("dim", v, 1, INT32_MAX, &x, err);
    if (rc)
        return rc;
    if (!name[0] || strlen(name) >= sizeof o->dims[0].name)
        return ref_fail(err, REF_E_INVALID, "option dim.%s: name must be 1 to %zu characters", name,
                        sizeof o->dims[0].name - 1);
    for (int i = 0; i < o->n_dims; i++)
        if (!strcmp(o->dims[i].name, name)) {
            o->dims[i].value = x;
            return REF_OK;
        }
    if (o->n_dims == REF_MAX_DIM_OVERRIDES)
        return ref_fail(err, REF_E_RANGE, "option dim.%s: at most %d symbolic dims", name,
                        REF_MAX_DIM_OVERRIDES);
    strcpy(o->dims[o->n_dims].name, name);
    o->dims[o->n_dims++].value = x;
    return REF_OK;
}

int ref_options_set_shape(ref_options *o, const char *name, const ref_tensor *t, ref_error *err)
{
    if (!name || !name[0] || strlen(name) >= sizeof o->shapes[0].name)
        return ref_fail(err, REF_E_INVALID, "option shape.%s: name must be 1 to %zu characters", name ? name : "",
                        sizeof o->shapes[0].name - 1);
    if (t->rank < 0 || t->rank > REF_MAX_RANK)
        return ref_fail(err, REF_E_INVALID, "option shape.%s: rank %d (0 to %d)", name, t->rank, REF_MAX_RANK);
    int i = 0;
    while (i < o->n_shapes && strcmp(o->shapes[i].name, name))
        i++;
    if (i == REF_MAX_SHAPE_OVERRIDES)
        return ref_fail(err, REF_E_RANGE, "option shape.%s: at most %d input shapes", name, REF_MAX_SHAPE_OVERRIDES);
    if (i == o->n_shapes)
        strcpy(o->shapes[o->n_shapes++].name, name);
    o->shapes[i].rank = t->rank;
    for (int d = 0; d < REF_MAX_RANK; d++)
        o->shapes[i].dims[d] = d < t->rank ? t->dims[d] : 0;
    return REF_OK;
}

/* "1x3x640x640" (or "" for a scalar): dims of at most 2^31 - 1 each. */
static int set_shape(ref_options *o, const char *name, const char *v, ref_error *err)
{
    ref_tensor t = {.dtype = 0};
    for (const char *p = v; *p;) {
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || errno || d < 0 || d > INT32_MAX || (*end && *end != 'x' && *end != 'X') ||
            t.rank == REF_MAX_RANK)
            return ref_fail(err, REF_E_INVALID, "option shape.%s: '%s' is not a shape like 1x3x224x224 (at most %d "
                            "dims, each 0 to %d; empty for a scalar)", name, v, REF_MAX_RANK, INT32_MAX);
        t.dims[t.rank++] = d;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return ref_fail(err, REF_E_INVALID, "option shape.%s: '%s' ends with 'x'", name, v);
    }
    return ref_options_set_shape(o, name, &t, err);
}

int ref_options_set(ref_options *o, const char *key, const char *v, ref_error *err)
{
    int64_t x = 0;
    int rc;
    if (!key || !v)
        return ref_fail(err, REF_E_INVALID, "option key and value are required");
    if (!strcmp(key, "mmap"))
        return parse_bool(key, v, &o->mmap, err);
    if (!strcmp(key, "arena"))
        return parse_bool(key, v, &o->arena, err);
    if (!strcmp(key, "mem_pattern"))
        return parse_bool(key, v, &o->mem_pattern, err);
    if (!strcmp(key, "fold_bn"))
        return parse_bool(key, v, &o->fold_bn, err);
    if (!strcmp(key, "fuse_qdq"))
        return parse_bool(key, v, &o->fuse_qdq, err);
    if (!strcmp(key, "thread_arbiter"))
        return parse_bool(key, v, &o->thread_arbiter, err);
    if (!strcmp(key, "plan_cache")) {
        if ((rc = parse_int(key, v, 1, 4096, &x, err)))
            return rc;
        o->plan_cache = (int)x;
        return REF_OK;
    }
    if (!strncmp(key, "shape.", 6))
        return set_shape(o, key + 6, v, err);
    if (!strcmp(key, "inject_thread_leak"))
        return parse_bool(key, v, &o->inject_thread_leak, err);
    if (!strcmp(key, "threads") || !strcmp(key, "compile_threads")) {
        if ((rc = parse_int(key, v, 1, 256, &x, err)))
            return rc;
        *(key[0] == 't' ? &o->threads : &o->compile_threads) = (int)x;
        return REF_OK;
    }
    if (!strcmp(key, "planner")) {
        if (!strcmp(v, "naive") || !strcmp(v, "greedy")) {
            o->planner = v[0] == 'n' ? REF_PLANNER_NAIVE : REF_PLANNER_GREEDY;
            return REF_OK;
        }
        return ref_fail(err, REF_E_INVALID, "option planner: '%s' is not naive|greedy", v);
    }
    if (!strcmp(key, "arena_growth")) {
        if (!strcmp(v, "pow2") || !strcmp(v, "exact")) {
            o->arena_growth = v[0] == 'p' ? REF_GROWTH_POW2 : REF_GROWTH_EXACT;
            return REF_OK;
        }
        return ref_fail(err, REF_E_INVALID, "option arena_growth: '%s' is not pow2|exact", v);
    }
    if (!strncmp(key, "dim.", 4))
        return set_dim(o, key + 4, v, err);
    if (!strcmp(key, "inject_leak_bytes") || !strcmp(key, "inject_retention_bytes") ||
        !strcmp(key, "inject_retention_cap")) {
        if ((rc = parse_int(key, v, 0, INT64_MAX / 2, &x, err)))
            return rc;
        if (!strcmp(key, "inject_leak_bytes"))
            o->inject_leak_bytes = x;
        else if (!strcmp(key, "inject_retention_bytes"))
            o->inject_retention_bytes = x;
        else
            o->inject_retention_cap_bytes = x;
        return REF_OK;
    }
    if (!strcmp(key, "max_tensor_bytes")) {
        if ((rc = parse_int(key, v, 1, INT64_MAX, &x, err)))
            return rc;
        o->max_tensor_bytes = x;
        return REF_OK;
    }
    if (!strcmp(key, "inject_crash_at")) {
        if ((rc = parse_int(key, v, 0, INT64_MAX / 2, &x, err)))
            return rc;
        o->inject_crash_at = x;
        return REF_OK;
    }
    if (!strcmp(key, "inject_leak_step"))
        return parse_step(key, v, &o->inject_leak_step, err);
    if (!strcmp(key, "inject_retention_step"))
        return parse_step(key, v, &o->inject_retention_step, err);
    if (!strcmp(key, "inject_crash_step"))
        return parse_step(key, v, &o->inject_crash_step, err);
    if (!strcmp(key, "inject_thread_step"))
        return parse_step(key, v, &o->inject_thread_step, err);
    return ref_fail(err, REF_E_NOTFOUND, "unknown option '%s'; accepted: %s", key, ref_options_keys());
}
