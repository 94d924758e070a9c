/* shapes.c: shape schedules evaluated per iteration, and their worker-argument form.
 * It must never draw from a shared or time-seeded generator: a size is a pure function of seed, dim and iteration. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapes.h"

static const char *const kind_names[] = {
#define X_(e, n) n,
    MLK_SHAPE_KINDS(X_)
#undef X_
};
#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

const char *mlk_shape_kind_name(mlk_shape_kind k) { return (int)k >= 0 && (int)k < N_KINDS ? kind_names[k] : NULL; }

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Each dim draws from its own stream (its name hashed in), so adding a dim leaves the others' sizes as they were. */
static uint64_t draw(const mlk_shapes *s, const mlk_shape_dim *d, int64_t it)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = d->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    return mix(mix(s->seed ^ h) ^ (uint64_t)it);
}

static int64_t range_count(const mlk_shape_dim *d) { return (d->hi - d->lo) / d->step + 1; }

int64_t mlk_shapes_value(const mlk_shapes *s, int d, int64_t it)
{
    const mlk_shape_dim *x = &s->dims[d];
    switch (x->kind) {
    case MLK_SHAPE_CYCLE: return x->values[it % x->n_values];
    case MLK_SHAPE_CHOICE: return x->values[draw(s, x, it) % (uint64_t)x->n_values];
    case MLK_SHAPE_RANGE:
    default: return x->lo + x->step * (int64_t)(draw(s, x, it) % (uint64_t)range_count(x));
    }
}

int64_t mlk_shapes_max(const mlk_shapes *s, int d)
{
    const mlk_shape_dim *x = &s->dims[d];
    if (x->kind == MLK_SHAPE_RANGE)
        return x->lo + x->step * (range_count(x) - 1);
    int64_t m = 0;
    for (int i = 0; i < x->n_values; i++)
        m = x->values[i] > m ? x->values[i] : m;
    return m;
}

static int64_t distinct_values(const mlk_shape_dim *x)
{
    if (x->kind == MLK_SHAPE_RANGE)
        return range_count(x);
    int64_t n = 0;
    for (int i = 0; i < x->n_values; i++) {
        int j = 0;
        while (j < i && x->values[j] != x->values[i])
            j++;
        n += j == i;
    }
    return n;
}

int64_t mlk_shapes_combinations(const mlk_shapes *s)
{
    int64_t n = 1;
    for (int d = 0; d < s->n_dims; d++) {
        int64_t k = distinct_values(&s->dims[d]);
        n = k > 0 && n > INT64_MAX / k ? INT64_MAX : n * k;
    }
    return n;
}

int mlk_shape_dim_format(const mlk_shape_dim *d, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s=%s:", d->name, mlk_shape_kind_name(d->kind));
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (d->kind == MLK_SHAPE_RANGE) {
        int k = snprintf(buf + n, len - (size_t)n, "%lld:%lld:%lld", (long long)d->lo, (long long)d->hi,
                         (long long)d->step);
        return k < 0 || (size_t)(n + k) >= len ? -1 : n + k;
    }
    for (int i = 0; i < d->n_values; i++) {
        int k = snprintf(buf + n, len - (size_t)n, "%s%lld", i ? "," : "", (long long)d->values[i]);
        if (k < 0 || (size_t)(n + k) >= len)
            return -1;
        n += k;
    }
    return n;
}

/* A size: decimal, 1..MLK_SHAPE_MAX_SIZE, ended by the character stop, or by the string's end when end_ok. */
static int size_at(const char **p, char stop, bool end_ok, int64_t *out)
{
    if (**p < '0' || **p > '9') /* strtoll would take a sign or leading blanks */
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (end == *p || errno || v < 1 || v > MLK_SHAPE_MAX_SIZE || (*end ? *end != stop : !end_ok))
        return -1;
    *out = v;
    *p = end;
    return 0;
}

int mlk_shape_dim_parse(const char *arg, mlk_shape_dim *out, mlk_error *err)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(arg, '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!eq || !colon || eq == arg || (size_t)(eq - arg) >= sizeof out->name)
        return mlk_fail(err, MLK_E_USAGE, "shape '%s': expected NAME=KIND:SIZES", arg);
    memcpy(out->name, arg, (size_t)(eq - arg));
    int kind = -1;
    for (int k = 0; k < N_KINDS; k++)
        if ((size_t)(colon - eq - 1) == strlen(kind_names[k]) && !strncmp(eq + 1, kind_names[k], strlen(kind_names[k])))
            kind = k;
    if (kind < 0)
        return mlk_fail(err, MLK_E_USAGE, "shape '%s': unknown kind (range, cycle or choice)", arg);
    out->kind = (mlk_shape_kind)kind;
    const char *p = colon + 1;
    if (out->kind == MLK_SHAPE_RANGE) {
        if (size_at(&p, ':', false, &out->lo) || (p++, size_at(&p, ':', false, &out->hi)) ||
            (p++, size_at(&p, '\0', true, &out->step)) || out->hi < out->lo)
            return mlk_fail(err, MLK_E_USAGE, "shape '%s': expected range:LO:HI:STEP with 1 <= LO <= HI", arg);
        return MLK_OK;
    }
    while (*p) {
        if (out->n_values == MLK_SHAPE_MAX_VALUES || size_at(&p, ',', true, &out->values[out->n_values]))
            return mlk_fail(err, MLK_E_USAGE, "shape '%s': expected 1 to %d sizes from 1 to %d, comma-separated", arg,
                            MLK_SHAPE_MAX_VALUES, MLK_SHAPE_MAX_SIZE);
        out->n_values++;
        if (*p == ',' && !*++p)
            return mlk_fail(err, MLK_E_USAGE, "shape '%s': a trailing comma", arg);
    }
    if (!out->n_values)
        return mlk_fail(err, MLK_E_USAGE, "shape '%s': no sizes", arg);
    return MLK_OK;
}

void mlk_shapes_describe(const mlk_shapes *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < s->n_dims && used < len; d++) {
        if (d)
            used += (size_t)snprintf(buf + used, len - used, " ");
        if (used >= len)
            break;
        int n = mlk_shape_dim_format(&s->dims[d], buf + used, len - used);
        if (n < 0) {
            buf[used] = '\0';
            snprintf(buf + used, len - used, "...");
            return;
        }
        used += (size_t)n;
    }
    if (used < len)
        snprintf(buf + used, len - used, " (seed %llu)", (unsigned long long)s->seed);
}
