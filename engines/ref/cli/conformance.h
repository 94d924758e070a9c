/* conformance.h: one ONNX backend test case run and judged; used by "refengine conformance".
 * It must never abort the whole run for one case: each case reports pass, fail or skip with a reason. */
#ifndef REF_CONFORMANCE_H
#define REF_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "refengine.h"

enum { REF_CASE_PASS = 0, REF_CASE_FAIL = 1, REF_CASE_SKIP = 2 };

typedef struct ref_case_opts {
    ref_options engine;
    double rtol, atol;
    int iterations; /* infers per data set; more than 1 checks that reruns give the same result */
    bool shapes_from_data; /* compile for the first data set's input shapes (shape.NAME) */
} ref_case_opts;

typedef struct ref_case_result {
    int verdict;
    char msg[600];
} ref_case_result;

/* Run case_dir (model.onnx plus test_data_set_*). Unsupported ops, attributes or types give SKIP. */
void ref_case_run(const char *case_dir, const ref_case_opts *o, ref_case_result *res);

/* 0 when got matches want (type, shape, values within atol + rtol*|want|); else -1 and why. */
int ref_case_compare(const ref_tensor *got, const ref_tensor *want, double rtol, double atol, char *why,
                     size_t len);

#endif
