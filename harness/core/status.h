/* status.h: the harness's status codes and error record (mlk_), shared by every harness module.
 * It must never allocate: errors must be reportable when memory is exhausted. */
#ifndef MLK_STATUS_H
#define MLK_STATUS_H

#include <stdarg.h>

#define MLK_STATUS_LIST(X)                                   \
    X(MLK_E_USAGE, -2001, "usage error")                      \
    X(MLK_E_PARSE, -2002, "invalid input file")               \
    X(MLK_E_NOTFOUND, -2003, "not found")                     \
    X(MLK_E_NOMEM, -2004, "out of memory")                    \
    X(MLK_E_IO, -2005, "input/output error")                  \
    X(MLK_E_DB, -2006, "database error")                      \
    X(MLK_E_ENGINE, -2007, "engine error")                    \
    X(MLK_E_CHILD, -2008, "worker process error")             \
    X(MLK_E_INTERNAL, -2009, "internal error")                \
    X(MLK_E_INTERRUPTED, -2010, "interrupted")

enum {
    MLK_OK = 0,
#define MLK_X_ENUM(sym, val, text) sym = (val),
    MLK_STATUS_LIST(MLK_X_ENUM)
#undef MLK_X_ENUM
};

typedef struct mlk_error {
    int code;
    char msg[1024]; /* e.g. "scenarios/x.yaml:12:5: unknown key 'iteration' (expected one of: ...)" */
} mlk_error;

/* Fill err (may be NULL) and return code. */
int mlk_fail(mlk_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Put context in front of err's message, keeping its code; returns the code. */
int mlk_fail_prefix(mlk_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *mlk_status_name(int code);

#endif
