/* check.h: the tiny assertion kit the engine's unit tests share: count, report, never abort.
 * It must never hide a failure: every failed check prints file:line and the expression. */
#ifndef REF_CHECK_H
#define REF_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "refengine.h"

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
static inline const char *check_msg_(const ref_error *e) { return e ? e->msg : ""; }

/* Check a status call succeeded; on failure print the ref_error message. */
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

#define CHECK_NEAR(a, b, tol)                                                              \
    do {                                                                                   \
        double a_ = (a), b_ = (b);                                                         \
        if (a_ - b_ <= (tol) && b_ - a_ <= (tol)) {                                        \
            check_passed_++;                                                               \
        } else {                                                                           \
            check_failed_++;                                                               \
            fprintf(stderr, "%s:%d: %s = %g, expected %g (tol %g)\n", __FILE__, __LINE__, #a, \
                    a_, b_, (double)(tol));                                                \
        }                                                                                  \
    } while (0)

/* Tensor y holds exactly the listed values of element type T. */
#define CHECK_EQ_ARRAY(T, y, ...)                                                         \
    do {                                                                                  \
        const T want_[] = {__VA_ARGS__};                                                  \
        int n_ = (int)(sizeof want_ / sizeof want_[0]);                                   \
        CHECK(ref_tensor_numel(y) == n_);                                                 \
        if (ref_tensor_numel(y) == n_)                                                    \
            for (int i_ = 0; i_ < n_; i_++)                                               \
                CHECK(((const T *)(y)->data)[i_] == want_[i_]);                           \
    } while (0)

/* Print "N passed, N failed" and give main's exit code. */
static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

/* ctest's skip: print why and exit 77. */
#define CHECK_SKIP(why)                  \
    do {                                 \
        printf("SKIP: %s\n", (why));     \
        exit(77);                        \
    } while (0)

#endif
