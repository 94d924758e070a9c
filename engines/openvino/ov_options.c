/* ov_options.c: the OpenVINO plugin's options, parsed from the key/value strings scenarios use, and its error helper.
 * It must never touch OpenVINO (check_options runs without loading it) nor accept a key or value silently. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine_opts.h"
#include "ov_internal.h"

int ov_fail(engine_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        err->oom = code == OV_E_NOMEM;
    }
    return code;
}

const char *ov_opts_keys(void)
{
    return "mmap, threads, compile_threads, streams, hint, runtime_cache, cache_dir, precision, version, dim.NAME";
}

#define NAME_(name, value) name,
#define VALUE_(name, value) value,
static const char *const hint_names[] = {OV_HINTS(NAME_)};
static const char *const hint_values[] = {OV_HINTS(VALUE_)};
static const char *const precision_names[] = {OV_PRECISIONS(NAME_)};
static const char *const precision_values[] = {OV_PRECISIONS(VALUE_)};
#undef NAME_
#undef VALUE_

const char *ov_hint_value(int i)
{
    return i >= 0 && i < (int)(sizeof hint_values / sizeof *hint_values) ? hint_values[i] : NULL;
}

const char *ov_precision_value(int i)
{
    return i >= 0 && i < (int)(sizeof precision_values / sizeof *precision_values) ? precision_values[i] : NULL;
}

static void defaults(ov_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mmap = 1;
    o->threads = 1;
    o->compile_threads = -1;
    o->streams = -1;
    o->hint = -1;
    o->runtime_cache = -1;
    o->precision = -1;
}

static int parse_bool(const char *key, const char *v, int *out, engine_error *err)
{
    return engine_opt_bool(key, v, OV_E_INVALID, out, err);
}

static int parse_int(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out, engine_error *err)
{
    return engine_opt_int(key, v, lo, hi, OV_E_INVALID, out, err);
}

/* One of names[] (n of them); *out gets its index. */
static int parse_enum(const char *key, const char *v, const char *const *names, int n, int *out, engine_error *err)
{
    return engine_opt_enum(key, v, names, n, OV_E_INVALID, out, err);
}

static int set_dim(ov_opts *o, const char *name, const char *v, engine_error *err)
{
    return engine_opt_dim_set(o->dims, &o->n_dims, OV_MAX_DIMS, name, v, OV_E_INVALID, err);
}

static int set_one(ov_opts *o, const char *key, const char *v, engine_error *err)
{
    int64_t x;
    int rc;
    if (!strcmp(key, "mmap"))
        return parse_bool(key, v, &o->mmap, err);
    if (!strcmp(key, "threads") || !strcmp(key, "compile_threads")) {
        if ((rc = parse_int(key, v, 0, 1024, &x, err)))
            return rc;
        *(key[0] == 't' ? &o->threads : &o->compile_threads) = (int)x;
        return 0;
    }
    if (!strcmp(key, "streams")) {
        if (!strcmp(v, "auto")) {
            o->streams = 0;
            return 0;
        }
        if (parse_int(key, v, 1, 1024, &x, NULL))
            return ov_fail(err, OV_E_INVALID, "option streams: '%s' is not auto or an integer in [1, 1024]", v);
        o->streams = (int)x;
        return 0;
    }
    if (!strcmp(key, "hint"))
        return parse_enum(key, v, hint_names, (int)(sizeof hint_names / sizeof *hint_names), &o->hint, err);
    if (!strcmp(key, "precision"))
        return parse_enum(key, v, precision_names, (int)(sizeof precision_names / sizeof *precision_names),
                          &o->precision, err);
    if (!strcmp(key, "runtime_cache"))
        return parse_int(key, v, 0, INT32_MAX, &o->runtime_cache, err);
    if (!strcmp(key, "cache_dir")) {
        if (!v[0] || strlen(v) >= sizeof o->cache_dir)
            return ov_fail(err, OV_E_INVALID, "option cache_dir: the folder must be 1 to %zu characters",
                           sizeof o->cache_dir - 1);
        snprintf(o->cache_dir, sizeof o->cache_dir, "%s", v);
        return 0;
    }
    if (!strcmp(key, "version")) {
        if ((rc = ov_release_parse(v, "option version", NULL, err)))
            return rc;
        snprintf(o->version, sizeof o->version, "%s", v); /* fits: at most 9999.999.999 */
        return 0;
    }
    if (!strncmp(key, "dim.", 4))
        return set_dim(o, key + 4, v, err);
    return ov_fail(err, OV_E_NOTFOUND, "unknown option '%s'; accepted: %s", key, ov_opts_keys());
}

int ov_opts_parse(const engine_kv *kv, size_t n, ov_opts *o, engine_error *err)
{
    defaults(o);
    for (size_t i = 0; i < n; i++) {
        if (!kv[i].key || !kv[i].value)
            return ov_fail(err, OV_E_INVALID, "option %zu: key and value are required", i);
        int rc = set_one(o, kv[i].key, kv[i].value, err);
        if (rc)
            return rc;
    }
    return 0;
}

int64_t ov_opts_dim(const ov_opts *o, const char *name)
{
    for (int i = 0; i < o->n_dims; i++)
        if (!strcmp(o->dims[i].name, name))
            return o->dims[i].value;
    return 0;
}

size_t ov_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case 1: case 6: case 12: return 4;           /* float, int32, uint32 */
    case 2: case 3: case 9: return 1;            /* uint8, int8, bool */
    case 4: case 5: case 10: case 16: return 2;  /* uint16, int16, float16, bfloat16 */
    case 7: case 11: case 13: return 8;          /* int64, double, uint64 */
    default: return 0;                           /* string, complex, and types this plugin does not feed */
    }
}
