/* status.c: status names and the error record; one table drives codes, names and messages.
 * It must never allocate, so errors stay reportable when memory is exhausted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "status.h"

const char *ref_status_name(int code)
{
    switch (code) {
    case REF_OK:
        return "ok";
#define REF_X_NAME(sym, val, text) \
    case sym:                      \
        return text;
        REF_STATUS_LIST(REF_X_NAME)
#undef REF_X_NAME
    default:
        break;
    }
    if (code < 0 && code > -4096)
        return strerror(-code);
    return "unknown status";
}

int ref_fail(ref_error *err, int code, const char *fmt, ...)
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

int ref_fail_prefix(ref_error *err, const char *fmt, ...)
{
    if (!err)
        return REF_E_INVALID;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* Shift the old message right and put the prefix in front; both may be cut at the end. */
    size_t plen = strlen(prefix), cap = sizeof err->msg - 1;
    if (plen > cap)
        plen = cap;
    size_t olen = strnlen(err->msg, cap);
    if (olen > cap - plen)
        olen = cap - plen;
    memmove(err->msg + plen, err->msg, olen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen + olen] = '\0';
    if (err->code == REF_OK)
        err->code = REF_E_INVALID;
    return err->code;
}

void ref_error_clear(ref_error *err)
{
    if (!err)
        return;
    err->code = REF_OK;
    err->msg[0] = '\0';
}
