/* test_within.c: the fraction-within statistic: scale, fraction, mean and max on known arrays, one outlier that an
 * element-wise check would refuse, NaN and infinities. It must never pass on a no-op (every number is checked). */
#include <math.h>
#include <string.h>

typedef struct { char msg[8]; } within_no_error; /* mlk_check.h's error record; nothing here returns one */
#define MLK_CHECK_ERROR within_no_error
#include "mlk_check.h"
#include "mlk_within.h"

typedef struct {
    const double *ref, *got;
} pairs;

static void pair_at(const void *ctx, size_t i, double *ref, double *got)
{
    const pairs *p = ctx;
    *ref = p->ref[i];
    *got = p->got[i];
}

/* 1000 values of scale 2, each off by 1e-5 but one off by 0.5: element-wise it fails, 0.999 of it is within. */
static void test_one_outlier(void)
{
    static double ref[1000], got[1000];
    for (int i = 0; i < 1000; i++) {
        ref[i] = 2.0 * sin(i * 0.37);
        got[i] = ref[i] + 1e-5;
    }
    ref[10] = 2.0; /* the scale, exactly */
    got[10] = 2.0;
    got[500] = ref[500] + 0.5;
    pairs p = {ref, got};
    mlk_within w;
    mlk_within_measure(1000, pair_at, &p, 1e-3, &w);
    CHECK(w.n == 1000 && w.n_in == 999);
    CHECK(w.scale == 2.0);
    CHECK(fabs(w.frac - 0.999) < 1e-12);
    CHECK(fabs(w.max - 0.5) < 1e-9);
    CHECK(fabs(w.mean - (998 * 1e-5 + 0.5) / 1000) < 1e-9);
    CHECK(mlk_within_ok(&w, 0.999));
    CHECK(!mlk_within_ok(&w, 0.9995));
    /* A tighter tolerance than every difference: nothing within but the exact element. */
    mlk_within_measure(1000, pair_at, &p, 1e-6, &w);
    CHECK(w.n_in == 1);
    CHECK(!mlk_within_ok(&w, 0.5));
    char line[200];
    mlk_within_format(&w, 1e-6, 0.5, line, sizeof line);
    CHECK(strstr(line, "0.0010 of 1000 values within 1e-06 of max|ref| 2 (need 0.5000)") != NULL);
    CHECK(strstr(line, "max 0.5") != NULL);
}

/* NaN is within only against NaN; equal infinities agree; the scale ignores infinities; all-zero references
 * take the tolerance as absolute. */
static void test_special_values(void)
{
    double ref[5] = {NAN, NAN, INFINITY, -INFINITY, 1.0}, got[5] = {NAN, 1.0, INFINITY, INFINITY, 1.0};
    pairs p = {ref, got};
    mlk_within w;
    mlk_within_measure(5, pair_at, &p, 1e-3, &w);
    CHECK(w.scale == 1.0);
    CHECK(w.n_in == 3);
    CHECK(isinf(w.max) && isinf(w.mean));
    double z[3] = {0, 0, 0}, g[3] = {5e-4, -5e-4, 2e-3};
    pairs q = {z, g};
    mlk_within_measure(3, pair_at, &q, 1e-3, &w);
    CHECK(w.scale == 0 && w.n_in == 2);
    mlk_within_measure(0, pair_at, &q, 1e-3, &w);
    CHECK(w.n == 0 && w.frac == 1 && mlk_within_ok(&w, 1.0));
}

/* Against a basis: within a factor k of its shares within and outside, the stricter, then the floor, at most 1. */
static void test_need_from_basis(void)
{
    mlk_within basis = {.n = 100, .n_in = 90, .frac = 0.9};
    CHECK(fabs(mlk_within_need(&basis, 2, 0) - 0.8) < 1e-12); /* outside: 2 * 0.1 */
    CHECK(fabs(mlk_within_need(&basis, 1, 0) - 0.9) < 1e-12);
    CHECK(fabs(mlk_within_need(&basis, 2, 0.85) - 0.85) < 1e-12); /* the floor wins */
    basis.frac = 0.3;
    CHECK(fabs(mlk_within_need(&basis, 2, 0) - 0.15) < 1e-12); /* within: 0.3 / 2; 1 - 2 * 0.7 is below 0 */
    CHECK(mlk_within_need(&basis, 2, 0.25) == 0.25);
    basis.frac = 0;
    CHECK(mlk_within_need(&basis, 2, 0) == 0);
    basis.frac = 1;
    CHECK(mlk_within_need(&basis, 2, 0) == 1);
    CHECK(mlk_within_need(&basis, 2, 1.5) == 1);
}

int main(void)
{
    test_need_from_basis();
    test_one_outlier();
    test_special_values();
    return check_summary();
}
