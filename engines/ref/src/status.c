/* status.c: status names and the error record; one table drives codes, names and messages. Also the one
 * place common/onnx's statuses become ref's. It must never allocate, so errors stay reportable when memory is
 * exhausted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "onnx/base.h"
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

int ref_status_from_onnx(int code)
{
    switch (code) {
    case ONNX_OK: return REF_OK;
    case ONNX_E_INVALID: return REF_E_INVALID;
    case ONNX_E_PARSE: return REF_E_PARSE;
    case ONNX_E_UNSUPPORTED: return REF_E_UNSUPPORTED;
    case ONNX_E_NOMEM: return REF_E_NOMEM;
    case ONNX_E_IO: return REF_E_IO;
#define REF_X_SAME(sym, val, text) \
    case sym:                      \
        return sym;
        REF_STATUS_LIST(REF_X_SAME) /* already ref's: kept */
#undef REF_X_SAME
    default: return code < 0 && code > -4096 ? REF_E_IO : code;
    }
}

int ref_fail_onnx(ref_error *err, int code, const onnx_error *oe)
{
    int rc = ref_status_from_onnx(code);
    const char *msg = oe && oe->msg[0] ? oe->msg : onnx_status_name(code);
    return ref_fail(err, rc, "%s", msg);
}
