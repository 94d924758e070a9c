/* check.h: the engine's unit tests' use of the one test kit (common/testkit/mlk_check.h): ref_error messages, and
 * checks over ref tensors. It must never grow checks of its own that the kit already has. */
#ifndef REF_CHECK_H
#define REF_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "refengine.h"

#define MLK_CHECK_ERROR ref_error
#include "mlk_check.h"

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

#endif
