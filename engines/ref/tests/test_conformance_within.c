/* test_conformance_within.c: conformance's statistic (cli/conformance_within.c): an ill-conditioned output passes
 * only when declared, a declaration can refuse what passes element-wise. It must never pass on a no-op. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "conformance.h"

static float want_v[400], got_v[400];

static ref_tensor tensor(float *v, int64_t n)
{
    ref_tensor t = {.dtype = REF_DT_FLOAT, .rank = 2, .dims = {n / 4, 4}, .data = v};
    return t;
}

/* Reference values rounded to 4 decimals, as some ONNX test generators typed them: small elements are off by more
 * than rtol 1e-3 + atol 1e-5 allows, though every one is within 5e-5 of an exact result. */
static void rounded_reference(void)
{
    for (int i = 0; i < 400; i++) {
        got_v[i] = (float)(0.9 * sin(i * 0.7));
        want_v[i] = (float)(round(got_v[i] * 1e4) / 1e4);
    }
}

static void test_declared_only(void)
{
    rounded_reference();
    ref_tensor got = tensor(got_v, 400), want = tensor(want_v, 400);
    char line[256];
    double frac = 0;
    CHECK(ref_case_compare(&got, &want, 1e-3, 1e-5, line, sizeof line) != 0); /* element-wise: refused */
    CHECK(ref_case_compare_declared(&got, &want, 1e-3, 1e-5, NULL, &frac, line, sizeof line) != 0);
    CHECK(strstr(line, "rtol") != NULL); /* the element-wise message, not the statistic's */
    ref_case_within decl = {"test_made_up", 1.0, 1e-4, "rounded reference"};
    CHECK(ref_case_compare_declared(&got, &want, 1e-3, 1e-5, &decl, &frac, line, sizeof line) == 0);
    CHECK(frac == 1.0);
    CHECK(strstr(line, "1.0000 of 400 values within 0.0001") != NULL);
    CHECK(strstr(line, "mean |diff|") != NULL);
    /* A tolerance under the rounding step: the same data fail, and say how much is within. */
    ref_case_within tight = {"test_made_up", 1.0, 1e-6, "too tight"};
    CHECK(ref_case_compare_declared(&got, &want, 1e-3, 1e-5, &tight, &frac, line, sizeof line) != 0);
    CHECK(frac < 0.5);
}

/* A fraction below 1 lets a few outliers through, and no more than declared. */
static void test_fraction(void)
{
    rounded_reference();
    for (int i = 0; i < 4; i++)
        got_v[i * 97] += 0.5f; /* 4 of 400 far off: 0.99 within */
    ref_tensor got = tensor(got_v, 400), want = tensor(want_v, 400);
    char line[256];
    double frac = 0;
    ref_case_within d99 = {"x", 0.99, 1e-4, "r"}, d995 = {"x", 0.995, 1e-4, "r"};
    CHECK(ref_case_compare_declared(&got, &want, 1e-3, 1e-5, &d99, &frac, line, sizeof line) == 0);
    CHECK(fabs(frac - 0.99) < 1e-12);
    CHECK(ref_case_compare_declared(&got, &want, 1e-3, 1e-5, &d995, &frac, line, sizeof line) != 0);
}

/* The statistic is not merely looser: a 5e-4 relative error passes element by element at rtol 1e-3, and fails a
 * declaration that wants every value within 1e-4 of the scale. */
static void test_not_looser(void)
{
    for (int i = 0; i < 400; i++) {
        want_v[i] = (float)(0.9 * sin(i * 0.7));
        got_v[i] = want_v[i] * 1.0005f;
    }
    ref_tensor got = tensor(got_v, 400), want = tensor(want_v, 400);
    char line[256];
    double frac = 0;
    ref_case_within decl = {"x", 1.0, 1e-4, "r"};
    CHECK(ref_case_compare(&got, &want, 1e-3, 1e-5, line, sizeof line) == 0);
    CHECK(ref_case_compare_declared(&got, &want, 1e-3, 1e-5, &decl, &frac, line, sizeof line) != 0);
    CHECK(frac > 0.1 && frac < 1.0);
}

/* A declaration changes nothing about types, shapes or non-float tensors. */
static void test_exact_parts(void)
{
    rounded_reference();
    ref_tensor got = tensor(got_v, 400), want = tensor(want_v, 400), wrong = want;
    wrong.dims[0] = 50;
    wrong.dims[1] = 8;
    char line[256];
    double frac = 0;
    ref_case_within decl = {"x", 0.5, 1e-1, "r"};
    CHECK(ref_case_compare_declared(&got, &wrong, 1e-3, 1e-5, &decl, &frac, line, sizeof line) != 0);
    CHECK(strstr(line, "shape") != NULL);
    int32_t gi[4] = {1, 2, 3, 4}, wi[4] = {1, 2, 3, 5};
    ref_tensor a = {.dtype = REF_DT_INT32, .rank = 1, .dims = {4}, .data = gi};
    ref_tensor b = {.dtype = REF_DT_INT32, .rank = 1, .dims = {4}, .data = wi};
    CHECK(ref_case_compare_declared(&a, &b, 1e-3, 1e-5, &decl, &frac, line, sizeof line) != 0);
}

/* The table: the rounded-reference cases are declared with a reason, an ordinary case is not. */
static void test_table(void)
{
    const ref_case_within *w = ref_case_within_find("test_roialign_aligned_false");
    CHECK(w != NULL);
    CHECK(w && w->need > 0 && w->need <= 1 && w->tol > 0 && strlen(w->why) > 20);
    CHECK(ref_case_within_find("test_add") == NULL);
    CHECK(ref_case_within_find("test_roialign") == NULL); /* whole names only */
    CHECK(ref_case_within_find(NULL) == NULL);
}

int main(void)
{
    test_declared_only();
    test_fraction();
    test_not_looser();
    test_exact_parts();
    test_table();
    return check_summary();
}
