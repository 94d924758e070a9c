/* test_rows.c: the float Softmax and LayerNormalization rows against double-precision formulas over row lengths on
 * both sides of the slot count, the AVX2 build against the portable one bit for bit, and Softmax's edge rows.
 * It must never accept an approximate match between the two builds: they promise the same bits. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "ops/rows.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(float scale)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0) * scale;
}

#define MAXN 1031
static const int64_t lengths[] = {1, 3, 7, 8, 9, 16, 63, 64, 127, 256, 1000, MAXN};

static void softmax_case(int64_t n, float scale)
{
    static float x[MAXN], y[MAXN], yp[MAXN], ya[MAXN];
    for (int64_t k = 0; k < n; k++)
        x[k] = frand(scale) + 3.0f;
    ref_rows_force_portable(false);
    ref_rows_softmax()(x, y, n);
    ref_rows_force_portable(true);
    ref_rows_softmax()(x, yp, n);
    ref_rows_force_portable(false);
    memcpy(ya, x, sizeof(float) * (size_t)n);
    ref_rows_softmax()(ya, ya, n); /* in place */
    double mx = -INFINITY, sum = 0.0, got = 0.0;
    for (int64_t k = 0; k < n; k++)
        mx = x[k] > mx ? x[k] : mx;
    for (int64_t k = 0; k < n; k++)
        sum += exp((double)x[k] - mx);
    int bad = 0;
    for (int64_t k = 0; k < n; k++) {
        double want = exp((double)x[k] - mx) / sum;
        bad += fabs(y[k] - want) > 2e-6 * want + 1e-12;
        got += y[k];
    }
    CHECK(bad == 0);
    CHECK(fabs(got - 1.0) < 1e-5);
    CHECK(memcmp(y, yp, sizeof(float) * (size_t)n) == 0);
    CHECK(memcmp(y, ya, sizeof(float) * (size_t)n) == 0);
}

static void layernorm_case(int64_t n, bool with_bias)
{
    static float x[MAXN], y[MAXN], yp[MAXN], sc[MAXN], b[MAXN];
    for (int64_t k = 0; k < n; k++) {
        x[k] = frand(4.0f) + 100.0f; /* an offset far above the spread: E[x^2] - E[x]^2 would cancel */
        sc[k] = frand(1.5f);
        b[k] = frand(0.5f);
    }
    double mean, inv, mean_p, inv_p, eps = 1e-5;
    ref_rows_force_portable(false);
    ref_rows_layernorm()(x, y, n, sc, with_bias ? b : NULL, eps, &mean, &inv);
    ref_rows_force_portable(true);
    ref_rows_layernorm()(x, yp, n, sc, with_bias ? b : NULL, eps, &mean_p, &inv_p);
    ref_rows_force_portable(false);
    double m = 0.0, v = 0.0;
    for (int64_t k = 0; k < n; k++)
        m += x[k];
    m /= (double)n;
    for (int64_t k = 0; k < n; k++)
        v += ((double)x[k] - m) * ((double)x[k] - m);
    double iv = 1.0 / sqrt(v / (double)n + eps);
    CHECK(fabs(mean - m) < 1e-9 * fabs(m));
    CHECK(fabs(inv - iv) < 1e-9 * iv);
    int bad = 0;
    for (int64_t k = 0; k < n; k++) {
        double want = ((double)x[k] - m) * iv * sc[k] + (with_bias ? b[k] : 0.0);
        /* float math after the stats: x - mean loses x's ulp at 100 (~8e-6) times inv_std */
        bad += fabs(y[k] - want) > 1e-5 * iv * fabs(sc[k]) + 1e-6 * fabs(want) + 1e-7;
    }
    CHECK(bad == 0);
    CHECK(memcmp(y, yp, sizeof(float) * (size_t)n) == 0 && mean == mean_p && inv == inv_p);
}

/* The generic lane's IEEE answers: a huge pair does not overflow; a row of -inf is NaN (0/0); +inf is NaN there and 0
 * elsewhere. */
static void softmax_edges(void)
{
    float y[3];
    ref_rows_softmax()((const float[]){1000.0f, 1001.0f}, y, 2);
    CHECK_NEAR(y[0], 0.26894142, 1e-6);
    CHECK_NEAR(y[1], 0.73105858, 1e-6);
    ref_rows_softmax()((const float[]){-INFINITY, -INFINITY}, y, 2);
    CHECK(isnan(y[0]) && isnan(y[1]));
    ref_rows_softmax()((const float[]){1.0f, INFINITY, 2.0f}, y, 3);
    CHECK(y[0] == 0.0f && isnan(y[1]) && y[2] == 0.0f);
    ref_rows_softmax()((const float[]){NAN, 1.0f}, y, 2);
    CHECK(isnan(y[0]) && isnan(y[1]));
}

int main(void)
{
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        softmax_case(lengths[i], 1.0f);
        softmax_case(lengths[i], 30.0f); /* most terms far below the max */
        layernorm_case(lengths[i], true);
        layernorm_case(lengths[i], false);
    }
    softmax_edges();
    return check_summary();
}
