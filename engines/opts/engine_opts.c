/* engine_opts.c: option values parsed alike for every plugin (engines/engine_opts.h).
 * It must never write past the caller's dims table nor leave err without a message on failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine_opts.h"

static int fail(engine_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(engine_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        err->oom = 0;
    }
    return code;
}

int engine_opt_bool(const char *key, const char *v, int invalid, int *out, engine_error *err)
{
    if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no")) {
        *out = 0;
        return 0;
    }
    return fail(err, invalid, "option %s: '%s' is not on|off", key, v);
}

int engine_opt_int(const char *key, const char *v, int64_t lo, int64_t hi, int invalid, int64_t *out,
                   engine_error *err)
{
    errno = 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return fail(err, invalid, "option %s: '%s' is not an integer in [%lld, %lld]", key, v, (long long)lo,
                    (long long)hi);
    *out = x;
    return 0;
}

int engine_opt_enum(const char *key, const char *v, const char *const *names, int n, int invalid, int *index,
                    engine_error *err)
{
    char allowed[160] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(v, names[i])) {
            *index = i;
            return 0;
        }
        used += (size_t)snprintf(allowed + used, used < sizeof allowed ? sizeof allowed - used : 0, "%s%s",
                                 i ? "|" : "", names[i]);
    }
    return fail(err, invalid, "option %s: '%s' is not %s", key, v, allowed);
}

int engine_opt_dim_set(engine_opt_dim *dims, int *n, int max, const char *name, const char *v, int invalid,
                       engine_error *err)
{
    int64_t x;
    char key[80];
    snprintf(key, sizeof key, "dim.%.70s", name);
    int rc = engine_opt_int(key, v, 1, INT32_MAX, invalid, &x, err);
    if (rc)
        return rc;
    if (!name[0] || strlen(name) >= sizeof dims[0].name)
        return fail(err, invalid, "option dim.%s: the name must be 1 to %zu characters", name,
                    sizeof dims[0].name - 1);
    for (int i = 0; i < *n; i++)
        if (!strcmp(dims[i].name, name)) {
            dims[i].value = x;
            return 0;
        }
    if (*n >= max)
        return fail(err, invalid, "option dim.%s: at most %d symbolic dims", name, max);
    snprintf(dims[*n].name, sizeof dims[0].name, "%s", name);
    dims[(*n)++].value = x;
    return 0;
}
