/* onnx_check.h: the assertion kit of common/onnx's unit tests, and a counting allocator that fails on demand.
 * It must never hide a failure: every failed check prints file:line and the expression. */
#ifndef ONNX_CHECK_H
#define ONNX_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "onnx/base.h"

static int check_passed_, check_failed_;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            check_passed_++;                                                          \
        } else {                                                                      \
            check_failed_++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

/* Message of an error record that may be NULL (a function, so &err never trips -Waddress). */
static inline const char *check_msg_(const onnx_error *e) { return e ? e->msg : ""; }

/* A status call must return 0; on failure print the error's message. */
#define CHECK_OK(expr, errp)                                                                  \
    do {                                                                                      \
        int rc_ = (expr);                                                                     \
        if (rc_ == 0) {                                                                       \
            check_passed_++;                                                                  \
        } else {                                                                              \
            check_failed_++;                                                                  \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, rc_,   \
                    check_msg_(errp));                                                        \
        }                                                                                     \
    } while (0)

/* Print "N passed, N failed" and give main's exit code. */
static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

/* ctest's skip: print why and exit 77. */
#define CHECK_SKIP(why)              \
    do {                             \
        printf("SKIP: %s\n", (why)); \
        exit(77);                    \
    } while (0)

/* ------------------------------------------------------------------------------------------------
 * An onnx_alloc table over libc that counts live blocks and fails the allocation after the next
 * test_alloc_fail_in successes (SQLite-style), so tests can check both the hook and the failure paths.
 * ---------------------------------------------------------------------------------------------- */
static long test_alloc_live_, test_alloc_calls_, test_alloc_fail_in_ = -1;

static inline void *test_alloc_realloc_(void *p, size_t n)
{
    test_alloc_calls_++;
    if (test_alloc_fail_in_ >= 0 && test_alloc_fail_in_-- == 0)
        return NULL;
    void *q = realloc(p, n);
    if (q && !p)
        test_alloc_live_++;
    return q;
}

static inline void test_alloc_free_(void *p)
{
    if (p)
        test_alloc_live_--;
    free(p);
}

static inline const onnx_alloc *test_alloc(void)
{
    static const onnx_alloc a = {test_alloc_realloc_, test_alloc_free_};
    return &a;
}

/* Let the next n allocations through test_alloc() succeed and fail the one after; n < 0 disarms. */
static inline void test_alloc_fail_in(long n) { test_alloc_fail_in_ = n; }

#endif
