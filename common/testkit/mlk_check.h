/* mlk_check.h: the assertion kit of the harness's unit tests: count, report, never abort.
 * It must never hide a failure: every failed check prints file:line and the expression. */
#ifndef MLK_CHECK_H
#define MLK_CHECK_H

#include <stdio.h>

#include "status.h"

static int mlk_passed_, mlk_failed_;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            mlk_passed_++;                                                            \
        } else {                                                                      \
            mlk_failed_++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

static inline const char *mlk_check_msg_(const mlk_error *e) { return e ? e->msg : ""; }

/* A status call must return 0; on failure print the error's message. */
#define CHECK_OK(expr, errp)                                                                            \
    do {                                                                                                \
        int rc_ = (expr);                                                                               \
        if (rc_ == 0) {                                                                                 \
            mlk_passed_++;                                                                              \
        } else {                                                                                        \
            mlk_failed_++;                                                                              \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, rc_, mlk_check_msg_(errp)); \
        }                                                                                               \
    } while (0)

static inline int mlk_check_summary(void)
{
    printf("%d passed, %d failed\n", mlk_passed_, mlk_failed_);
    return mlk_failed_ != 0;
}

#endif
