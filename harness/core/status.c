/* status.c: harness error records and status names, from the one list in status.h.
 * It must never allocate. */
#include <stdio.h>
#include <string.h>

#include "status.h"

const char *mlk_status_name(int code)
{
    switch (code) {
    case MLK_OK:
        return "ok";
#define MLK_X_NAME(sym, val, text) \
    case sym:                      \
        return text;
        MLK_STATUS_LIST(MLK_X_NAME)
#undef MLK_X_NAME
    default:
        return "unknown status";
    }
}

int mlk_fail(mlk_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int mlk_fail_prefix(mlk_error *err, const char *fmt, ...)
{
    if (!err)
        return MLK_E_INTERNAL;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t plen = strlen(prefix), cap = sizeof err->msg - 1;
    if (plen > cap)
        plen = cap;
    size_t olen = strnlen(err->msg, cap);
    if (olen > cap - plen)
        olen = cap - plen;
    memmove(err->msg + plen, err->msg, olen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen + olen] = '\0';
    if (!err->code)
        err->code = MLK_E_INTERNAL;
    return err->code;
}
