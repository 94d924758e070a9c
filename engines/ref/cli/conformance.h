/* conformance.h: one ONNX backend test case run and judged; used by "refengine conformance".
 * It must never abort the whole run for one case: each case reports pass, fail or skip with a reason. */
#ifndef REF_CONFORMANCE_H
#define REF_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "refengine.h"

enum { REF_CASE_PASS = 0, REF_CASE_FAIL = 1, REF_CASE_SKIP = 2 };

/* A case judged by the statistic (conformance_within.h): at least the fraction need of each float output's values
 * within tol * max|want|. */
typedef struct ref_case_within {
    const char *name;
    double need, tol;
    const char *why;
} ref_case_within;

typedef struct ref_case_opts {
    ref_options engine;
    double rtol, atol;
    int iterations; /* infers per data set; more than 1 checks that reruns give the same result */
    bool shapes_from_data; /* compile for the first data set's input shapes (shape.NAME) */
    const ref_case_within *within; /* set by ref_case_run from the table; NULL: element by element */
} ref_case_opts;

typedef struct ref_case_result {
    int verdict;
    char msg[600];  /* why it failed or was skipped; for a passed statistical case, its worst output's numbers */
    double worst;   /* the lowest fraction within so far, for a statistical case */
} ref_case_result;

/* Run case_dir (model.onnx plus test_data_set_*). Unsupported ops, attributes or types give SKIP. */
void ref_case_run(const char *case_dir, const ref_case_opts *o, ref_case_result *res);

/* 0 when got matches want (type, shape, values within atol + rtol*|want|); else -1 and why. */
int ref_case_compare(const ref_tensor *got, const ref_tensor *want, double rtol, double atol, char *why,
                     size_t len);

/* Element i of a numeric tensor as a double (float16 and bfloat16 decoded); whether dtype is a float type. */
double ref_case_value(const ref_tensor *t, int64_t i);
bool ref_case_is_float(int dtype);

/* The declaration for a case name (the folder's last component), or NULL. */
const ref_case_within *ref_case_within_find(const char *case_name);

/* As ref_case_compare, but float tensors of a declared case (w not NULL) go by the statistic; line gets its numbers
 * (empty when w is NULL or the output is not a float tensor) and *frac the fraction within. */
int ref_case_compare_declared(const ref_tensor *got, const ref_tensor *want, double rtol, double atol,
                              const ref_case_within *w, double *frac, char *line, size_t len);

#endif
