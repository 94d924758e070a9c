/* base.c: status names, the error record, and libc's allocation table.
 * It must never allocate, so errors stay reportable when memory is exhausted. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *onnx_status_name(int code)
{
    switch (code) {
    case ONNX_OK:
        return "ok";
#define ONNX_X_NAME(sym, val, text) \
    case sym:                       \
        return text;
        ONNX_STATUS_LIST(ONNX_X_NAME)
#undef ONNX_X_NAME
    default:
        break;
    }
    if (code < 0 && code > -4096)
        return strerror(-code);
    return "unknown status";
}

int onnx_fail(onnx_error *err, int code, const char *fmt, ...)
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

int onnx_fail_prefix(onnx_error *err, const char *fmt, ...)
{
    if (!err)
        return ONNX_E_INVALID;
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
    if (err->code == ONNX_OK)
        err->code = ONNX_E_INVALID;
    return err->code;
}

const onnx_alloc *onnx_alloc_or_libc(const onnx_alloc *a)
{
    static const onnx_alloc libc = {realloc, free};
    return a ? a : &libc;
}
