/* ort_options.c: the ORT plugin's options, parsed from the key/value strings scenarios use, and its error helper.
 * It must never touch ONNX Runtime (check_options runs without loading it) nor accept a key or value silently. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine_opts.h"
#include "ort_internal.h"

int ort_fail(engine_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        err->oom = code == ORT_E_NOMEM;
    }
    return code;
}

const char *ort_opts_keys(void)
{
    return "threads, inter_threads, arena, mem_pattern, arena_extend_strategy, graph_optimization, prepacking, "
           "initializers_in_device_allocator, arena_shrinkage, mmap, telemetry, version, dim.NAME";
}

static void defaults(ort_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->inter_threads = 1;
    o->arena = 1;
    o->mem_pattern = 1;
    o->extend_strategy = -1;
    o->graph_opt = 99;
    o->prepacking = 1;
    o->mmap = 1;
}

static int parse_bool(const char *key, const char *v, int *out, engine_error *err)
{
    return engine_opt_bool(key, v, ORT_E_INVALID, out, err);
}

static int parse_int(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out, engine_error *err)
{
    return engine_opt_int(key, v, lo, hi, ORT_E_INVALID, out, err);
}

/* One of names[] (n of them); *out gets values[i]. */
static int parse_enum(const char *key, const char *v, const char *const *names, const int *values, int n,
                      int *out, engine_error *err)
{
    int i, rc = engine_opt_enum(key, v, names, n, ORT_E_INVALID, &i, err);
    if (!rc)
        *out = values[i];
    return rc;
}

static int set_dim(ort_opts *o, const char *name, const char *v, engine_error *err)
{
    return engine_opt_dim_set(o->dims, &o->n_dims, ORT_MAX_DIMS, name, v, ORT_E_INVALID, err);
}

static int set_one(ort_opts *o, const char *key, const char *v, engine_error *err)
{
    static const char *const strategies[] = {"pow2", "exact"};
    static const int strategy_values[] = {0, 1};
    static const char *const levels[] = {"disable", "basic", "extended", "all"};
    static const int level_values[] = {0, 1, 2, 99};
    int64_t x;
    int rc;
    if (!strcmp(key, "threads") || !strcmp(key, "inter_threads")) {
        if ((rc = parse_int(key, v, 0, 256, &x, err)))
            return rc;
        *(key[0] == 't' ? &o->threads : &o->inter_threads) = (int)x;
        return 0;
    }
    if (!strcmp(key, "arena"))
        return parse_bool(key, v, &o->arena, err);
    if (!strcmp(key, "mem_pattern"))
        return parse_bool(key, v, &o->mem_pattern, err);
    if (!strcmp(key, "prepacking"))
        return parse_bool(key, v, &o->prepacking, err);
    if (!strcmp(key, "initializers_in_device_allocator"))
        return parse_bool(key, v, &o->init_device_alloc, err);
    if (!strcmp(key, "arena_shrinkage"))
        return parse_bool(key, v, &o->arena_shrinkage, err);
    if (!strcmp(key, "mmap"))
        return parse_bool(key, v, &o->mmap, err);
    if (!strcmp(key, "telemetry"))
        return parse_bool(key, v, &o->telemetry, err);
    if (!strcmp(key, "arena_extend_strategy"))
        return parse_enum(key, v, strategies, strategy_values, 2, &o->extend_strategy, err);
    if (!strcmp(key, "graph_optimization"))
        return parse_enum(key, v, levels, level_values, 4, &o->graph_opt, err);
    if (!strcmp(key, "version")) {
        if ((rc = ort_release_parse(v, "option version", NULL, NULL, err)))
            return rc;
        snprintf(o->version, sizeof o->version, "%s", v); /* fits: at most 1.999.999 */
        return 0;
    }
    if (!strncmp(key, "dim.", 4))
        return set_dim(o, key + 4, v, err);
    return ort_fail(err, ORT_E_NOTFOUND, "unknown option '%s'; accepted: %s", key, ort_opts_keys());
}

int ort_opts_parse(const engine_kv *kv, size_t n, ort_opts *o, engine_error *err)
{
    defaults(o);
    for (size_t i = 0; i < n; i++) {
        if (!kv[i].key || !kv[i].value)
            return ort_fail(err, ORT_E_INVALID, "option %zu: key and value are required", i);
        int rc = set_one(o, kv[i].key, kv[i].value, err);
        if (rc)
            return rc;
    }
    return 0;
}

int64_t ort_opts_dim(const ort_opts *o, const char *name)
{
    for (int i = 0; i < o->n_dims; i++)
        if (!strcmp(o->dims[i].name, name))
            return o->dims[i].value;
    return 0;
}

size_t ort_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case 1: case 6: case 12: return 4;  /* float, int32, uint32 */
    case 2: case 3: case 9: return 1;   /* uint8, int8, bool */
    case 4: case 5: case 10: case 16: return 2; /* uint16, int16, float16, bfloat16 */
    case 7: case 11: case 13: case 14: return 8; /* int64, double, uint64, complex64 */
    case 15: return 16;                 /* complex128 */
    default: return 0;                  /* string, undefined, and types this plugin does not know */
    }
}
