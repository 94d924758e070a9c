/* base.h: what every onnx_ module shares: status codes, the error record, and the allocation table.
 * It must never allocate: an error has to be reportable after an out-of-memory failure. */
#ifndef ONNX_BASE_H
#define ONNX_BASE_H

#include <stddef.h>

/* Status codes. 0 is success; failures are negative: -errno for a failed system call (open, fstat, mmap,
 * pread), otherwise one of these. One list drives codes and names. */
#define ONNX_STATUS_LIST(X)                                          \
    X(ONNX_E_INVALID, -4001, "invalid argument")                     \
    X(ONNX_E_PARSE, -4002, "malformed protobuf or ONNX message")     \
    X(ONNX_E_UNSUPPORTED, -4003, "unsupported ONNX feature")         \
    X(ONNX_E_NOMEM, -4004, "out of memory")                          \
    X(ONNX_E_IO, -4005, "input/output error")

enum {
    ONNX_OK = 0,
#define ONNX_X_ENUM(sym, val, text) sym = (val),
    ONNX_STATUS_LIST(ONNX_X_ENUM)
#undef ONNX_X_ENUM
};

/* What went wrong and where. Caller-owned; every call that takes one accepts NULL. Callers with an error
 * type of their own (ref_error, engine_error) convert from this one where they call in. */
typedef struct onnx_error {
    int code;      /* the status the call returned */
    char msg[512]; /* e.g. "graph.node[3].attribute[1].t.dims @ byte 1204: truncated varint" */
} onnx_error;

/* Short fixed name of a status code, strerror's text for -errno (static storage). */
const char *onnx_status_name(int code);

/* Set err (if non-NULL) to code and a printf-style message, cut to the buffer; returns code. */
int onnx_fail(onnx_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Put context in front of err's message ("model.onnx: "), keeping its code, which it returns
 * (ONNX_E_INVALID when err is NULL or holds no failure). */
int onnx_fail_prefix(onnx_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Where the buffers this library hands out come from, so an engine can keep every allocation behind its
 * own hook (byte accounting, fault injection). Functions that take one accept NULL for libc's realloc
 * and free. realloc_fn(NULL, n) must allocate; on failure it returns NULL and leaves p valid. */
typedef struct onnx_alloc {
    void *(*realloc_fn)(void *p, size_t n);
    void (*free_fn)(void *p);
} onnx_alloc;

#endif
