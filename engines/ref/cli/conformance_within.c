/* conformance_within.c: the cases declared in conformance_within.h, judged by common/within's statistic.
 * It must never apply the statistic to a case that is not declared, nor to anything but float tensors. */
#include <stdio.h>
#include <string.h>

#include "conformance.h"
#include "conformance_within.h"
#include "mlk_within.h"
#include "tensor.h"

#define REF_CASE_WITHIN_ROW(name, need, tol, why) {name, need, tol, why},
static const ref_case_within declared[] = {REF_CASE_WITHIN_TABLE(REF_CASE_WITHIN_ROW)};

const ref_case_within *ref_case_within_find(const char *case_name)
{
    for (size_t i = 0; case_name && i < sizeof declared / sizeof declared[0]; i++)
        if (!strcmp(case_name, declared[i].name))
            return &declared[i];
    return NULL;
}

static void tensor_pair(const void *ctx, size_t i, double *ref, double *got)
{
    const ref_tensor *const *t = ctx; /* want, got */
    *ref = ref_case_value(t[0], (int64_t)i);
    *got = ref_case_value(t[1], (int64_t)i);
}

int ref_case_compare_declared(const ref_tensor *got, const ref_tensor *want, double rtol, double atol,
                              const ref_case_within *w, double *frac, char *line, size_t len)
{
    line[0] = '\0';
    *frac = 1;
    /* Type and shape must match exactly either way: the element-wise check says why when they do not. */
    bool statistical = w && ref_case_is_float(want->dtype) && got->dtype == want->dtype && ref_shape_equal(got, want);
    if (!statistical)
        return ref_case_compare(got, want, rtol, atol, line, len);
    const ref_tensor *pair[2] = {want, got};
    mlk_within s;
    mlk_within_measure((size_t)ref_tensor_numel(want), tensor_pair, pair, w->tol, &s);
    *frac = s.frac;
    mlk_within_format(&s, w->tol, w->need, line, len);
    return mlk_within_ok(&s, w->need) ? 0 : -1;
}
