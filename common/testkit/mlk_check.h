/* mlk_check.h: the one assertion kit of every unit test (harness, engines, common): count, report, never abort; the
 * closing "N passed, N failed" line is what ctest and CI read. It must never hide a failure: every failed check prints
 * file:line and the expression. A test of another module names its error record type before including it:
 *     #define MLK_CHECK_ERROR ref_error   (default: the harness's mlk_error, from status.h) */
#ifndef MLK_CHECK_H
#define MLK_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MLK_CHECK_ERROR
#include "status.h"
#define MLK_CHECK_ERROR mlk_error
#endif

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

/* The message of an error record that may be NULL (a function, so &err never trips -Waddress). */
static inline const char *check_msg_(const MLK_CHECK_ERROR *e) { return e ? e->msg : ""; }

/* A status call must return 0; on failure print the call, its code and the error record's message. */
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

/* |a - b| <= tol. */
#define CHECK_NEAR(a, b, tol)                                                                 \
    do {                                                                                      \
        double a_ = (a), b_ = (b);                                                            \
        if (a_ - b_ <= (tol) && b_ - a_ <= (tol)) {                                           \
            check_passed_++;                                                                  \
        } else {                                                                              \
            check_failed_++;                                                                  \
            fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g (tol %g)\n", __FILE__, __LINE__, #a, a_, b_, \
                    (double)(tol));                                                           \
        }                                                                                     \
    } while (0)

/* Two strings are equal; NULL never is. */
#define CHECK_STR(a, b)                                                                                  \
    do {                                                                                                 \
        const char *a_ = (a), *b_ = (b);                                                                 \
        if (a_ && b_ && !strcmp(a_, b_)) {                                                               \
            check_passed_++;                                                                             \
        } else {                                                                                         \
            check_failed_++;                                                                             \
            fprintf(stderr, "%s:%d: %s is '%s', expected '%s'\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", \
                    b_ ? b_ : "(null)");                                                                 \
        }                                                                                                \
    } while (0)

/* Print "N passed, N failed" and give main's exit code. */
static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

/* ctest's skip (SKIP_RETURN_CODE 77): say why, and exit. */
#define CHECK_SKIP(why)              \
    do {                             \
        printf("SKIP: %s\n", (why)); \
        exit(77);                    \
    } while (0)

#endif
