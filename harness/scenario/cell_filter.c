/* cell_filter.c: --filter KEY=VALUE,... against a cell's axes (cell_filter.h). It must never match part of a value
 * nor read past the strings it is given. */
#include <stdio.h>
#include <string.h>

#include "cell_filter.h"

int mlk_filter_check(const char *spec, const char *what, mlk_error *err)
{
    for (const char *p = spec; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq || eq == p)
            return mlk_fail(err, MLK_E_USAGE, "%s: expected KEY=VALUE[,KEY=VALUE...], got '%.*s'", what, (int)n, p);
        p = end ? end + 1 : p + n;
    }
    return MLK_OK;
}

/* Whether label has the token k=v (k klen long, v vlen long), whole. */
static bool has_token(const char *label, const char *k, size_t klen, const char *v, size_t vlen)
{
    for (const char *t = label; t && *t;) {
        const char *end = strchr(t, ' ');
        size_t n = end ? (size_t)(end - t) : strlen(t);
        if (n == klen + 1 + vlen && !strncmp(t, k, klen) && t[klen] == '=' && !strncmp(t + klen + 1, v, vlen))
            return true;
        t = end ? end + 1 : t + n;
    }
    return false;
}

bool mlk_filter_match(const char *spec, const char *label)
{
    /* for each key of the spec: some item with that key matches */
    for (const char *p = spec; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq)
            return false;
        size_t klen = (size_t)(eq - p);
        bool any = false;
        for (const char *q = spec; q && *q && !any;) {
            const char *qe = strchr(q, ',');
            size_t qn = qe ? (size_t)(qe - q) : strlen(q);
            const char *qeq = memchr(q, '=', qn);
            if (qeq && (size_t)(qeq - q) == klen && !strncmp(q, p, klen))
                any = has_token(label, q, klen, qeq + 1, qn - klen - 1);
            q = qe ? qe + 1 : q + qn;
        }
        if (!any)
            return false;
        p = end ? end + 1 : p + n;
    }
    return true;
}
