/* onnx_check.h: common/onnx's unit tests' use of the one test kit (onnx_error messages), and a counting allocator
 * that fails on demand. It must never grow checks of its own that the kit already has. */
#ifndef ONNX_CHECK_H
#define ONNX_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "onnx/base.h"

#define MLK_CHECK_ERROR onnx_error
#include "mlk_check.h"

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
