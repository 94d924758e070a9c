/* test_detect.c: unit tests of the leak detector on synthetic series: Theil-Sen and Mann-Kendall against
 * hand-computed values, verdicts on lines, plateaus, steps, noise sweeps and planted leaks.
 * It must never depend on randomness outside its fixed-seed generator, nor on timing. */
#include "detect_series.h"

/* ------------------------------------------------------------------------------------------------
 * Theil-Sen
 * ---------------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of all pairwise slopes, the slow obvious way. */
static double brute_theil_sen(const double *y, int n)
{
    size_t np = (size_t)n * (size_t)(n - 1) / 2, k = 0;
    double *s = malloc(sizeof *s * np);
    if (!s)
        return NAN;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            s[k++] = (y[j] - y[i]) / (double)(j - i);
    qsort(s, np, sizeof *s, cmp_double);
    double m = np % 2 ? s[np / 2] : s[np / 2 - 1] + (s[np / 2] - s[np / 2 - 1]) / 2;
    free(s);
    return m;
}

static void test_theil_sen_small(void)
{
    double y[64], s = -1;
    for (int i = 0; i < 64; i++)
        y[i] = 3 + 2.5 * i;
    CHECK(mlk_theil_sen(y, 64, &s) == 0 && s == 2.5); /* every pair has slope 2.5 exactly */

    const double odd[] = {0, 1, 5}; /* slopes 1, 2.5, 4 */
    CHECK(mlk_theil_sen(odd, 3, &s) == 0 && s == 2.5);
    const double even[] = {0, 2, 3, 9}; /* slopes 1, 1.5, 2 | 3, 3.5, 6 */
    CHECK(mlk_theil_sen(even, 4, &s) == 0 && s == 2.5);
    const double two[] = {10, 4};
    CHECK(mlk_theil_sen(two, 2, &s) == 0 && s == -6);
    const double ties[] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 8}; /* 36 zeros, 9 positive: median 0 */
    CHECK(mlk_theil_sen(ties, 10, &s) == 0 && s == 0);

    /* bad arguments fail and leave the output alone */
    s = 42;
    CHECK(mlk_theil_sen(NULL, 4, &s) == -1 && s == 42);
    CHECK(mlk_theil_sen(y, 1, &s) == -1 && s == 42);
    CHECK(mlk_theil_sen(y, 4, NULL) == -1);
    y[2] = NAN;
    CHECK(mlk_theil_sen(y, 4, &s) == -1 && s == 42);
    y[2] = INFINITY;
    CHECK(mlk_theil_sen(y, 4, &s) == -1 && s == 42);
    y[2] = 1e301;
    CHECK(mlk_theil_sen(y, 4, &s) == -1 && s == 42);
}

/* The selection must give the same double as sorting every slope, whatever the ties and spread. */
static void test_theil_sen_vs_brute(void)
{
    static const int sizes[] = {5, 8, 9, 31, 64, 100, 101, 257, 600, 1000};
    double *y = malloc(sizeof *y * 1000);
    if (!y) {
        CHECK(!"no memory");
        return;
    }
    int mismatches = 0, cases = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int n = sizes[si];
        for (int shape = 0; shape < 4; shape++) {
            rng r = {(uint64_t)(n * 31 + shape)};
            for (int i = 0; i < n; i++) {
                double g = rng_gauss(&r);
                if (shape == 0) /* noisy line */
                    y[i] = 1000 + 3.7 * i + 50 * g;
                else if (shape == 1) /* quantized: many equal slopes */
                    y[i] = PAGE * floor((1e6 + 900.0 * i) / PAGE) + PAGE * rng_int(&r, -3, 3);
                else if (shape == 2) /* heavy tails */
                    y[i] = i + (rng_unit(&r) < 0.2 ? 1e9 * g : g);
                else /* a few distinct values */
                    y[i] = rng_int(&r, 0, 2);
            }
            double s = NAN, b = brute_theil_sen(y, n);
            cases++;
            if (mlk_theil_sen(y, n, &s) != 0 || s != b) {
                mismatches++;
                fprintf(stderr, "theil-sen n=%d shape %d: %.17g, brute force %.17g\n", n, shape, s, b);
            }
        }
    }
    CHECK(mismatches == 0);
    printf("theil-sen: %d series matched the all-pairs sort exactly\n", cases - mismatches);
    free(y);
}

static void test_theil_sen_outliers(void)
{
    double y[200], s = NAN;
    int worst = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        rng r = {seed};
        for (int i = 0; i < 200; i++) {
            y[i] = 5000 + 100.0 * i + 20 * rng_gauss(&r);
            if (rng_int(&r, 0, 4) == 0) /* 20% wild, both signs, up to 1e7 */
                y[i] += (rng_unit(&r) < 0.5 ? -1 : 1) * 1e7 * rng_unit(&r);
        }
        CHECK(mlk_theil_sen(y, 200, &s) == 0);
        if (!(fabs(s - 100) <= 5))
            worst++;
    }
    CHECK(worst == 0); /* least squares would be off by thousands */
}

/* Above 2000 samples a fixed stride of pairs is used: still exact on a line, close on a noisy one. */
static void test_theil_sen_large(void)
{
    int n = 5000;
    double *y = malloc(sizeof *y * (size_t)n), s = NAN, s2 = NAN;
    if (!y) {
        CHECK(!"no memory");
        return;
    }
    for (int i = 0; i < n; i++)
        y[i] = 7.0 * i - 3;
    CHECK(mlk_theil_sen(y, n, &s) == 0 && s == 7);
    rng r = {99};
    for (int i = 0; i < n; i++)
        y[i] = 10.0 * i + 1000 * rng_gauss(&r);
    CHECK(mlk_theil_sen(y, n, &s) == 0);
    CHECK_NEAR(s, 10, 0.1);
    CHECK(mlk_theil_sen(y, n, &s2) == 0 && s2 == s); /* deterministic */
    CHECK(mlk_theil_sen(y, 2000, &s) == 0);           /* largest exact case */
    CHECK_NEAR(s, 10, 0.5);
    free(y);
}

/* ------------------------------------------------------------------------------------------------
 * Mann-Kendall: expected values computed by hand (S by counting pairs, variance from the tie groups,
 * continuity-corrected z, p = Q(z)) and checked with scipy.stats.norm.sf.
 * ---------------------------------------------------------------------------------------------- */

static void check_mk(const double *y, int n, double want_z, double want_p, int line_no)
{
    double z = NAN, p = NAN;
    int rc = mlk_mann_kendall(y, n, &z, &p);
    if (rc != 0 || fabs(z - want_z) > 1e-9 || fabs(p - want_p) > 1e-9 * (want_p > 1e-3 ? 1 : want_p * 1e3)) {
        n_fail++;
        fprintf(stderr, "%s:%d: mann-kendall rc %d z %.15g p %.15g, expected z %.15g p %.15g\n", __FILE__,
                line_no, rc, z, p, want_z, want_p);
    } else {
        n_pass++;
    }
}

static void test_mann_kendall(void)
{
    const double up8[] = {1, 2, 3, 4, 5, 6, 7, 8}; /* S 28, var 65.333 */
    check_mk(up8, 8, 3.340383700311406, 0.0004183135655596522, __LINE__);
    const double down8[] = {8, 7, 6, 5, 4, 3, 2, 1};
    check_mk(down8, 8, -3.340383700311406, 0.9995816864344403, __LINE__);
    const double mixed[] = {5, 3, 8, 6, 9, 7, 10, 12, 11, 13}; /* S 35, var 125 */
    check_mk(mixed, 10, 3.041052449399714, 0.001178763797897745, __LINE__);
    const double tied[] = {1, 2, 2, 3, 3, 3, 4, 5}; /* S 24, var (1176 - 18 - 66) / 18 */
    check_mk(tied, 8, 2.9529273983252993, 0.0015738799278502903, __LINE__);
    const double flat[] = {4, 4, 4, 4, 4, 4, 4, 4}; /* variance 0: no evidence either way */
    check_mk(flat, 8, 0, 0.5, __LINE__);
    const double one_off[] = {2, 1, 3, 3, 1, 2, 2, 3, 1, 2}; /* S -1: the correction gives z 0 */
    check_mk(one_off, 10, 0, 0.5, __LINE__);
    const double zigzag[] = {1, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 8}; /* S 52, var 208.667 */
    check_mk(zigzag, 12, 3.5305603280544506, 0.00020734021805976702, __LINE__);

    double z = 7, p = 7;
    CHECK(mlk_mann_kendall(NULL, 8, &z, &p) == -1 && z == 7 && p == 7);
    CHECK(mlk_mann_kendall(up8, 1, &z, &p) == -1 && z == 7 && p == 7);
    CHECK(mlk_mann_kendall(up8, 8, NULL, &p) == -1);
    const double bad[] = {1, 2, NAN, 4};
    CHECK(mlk_mann_kendall(bad, 4, &z, &p) == -1 && z == 7 && p == 7);

    /* a long series goes through the same O(n log n) count: a pure line gives S = n(n-1)/2 */
    int n = 20000;
    double *y = malloc(sizeof *y * (size_t)n);
    if (!y) {
        CHECK(!"no memory");
        return;
    }
    for (int i = 0; i < n; i++)
        y[i] = i;
    double dn = n, s = dn * (dn - 1) / 2, var = dn * (dn - 1) * (2 * dn + 5) / 18;
    CHECK(mlk_mann_kendall(y, n, &z, &p) == 0);
    CHECK_NEAR(z, (s - 1) / sqrt(var), 1e-6);
    free(y);
}

/* ------------------------------------------------------------------------------------------------
 * Verdicts
 * ---------------------------------------------------------------------------------------------- */

static void test_pure_lines(void)
{
    double y[N_ITER];
    mlk_detect_opts o;
    mlk_detect_result res;
    opts_rss(&o);
    line(y, N_ITER, RSS_BASE, PAGE);
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_LEAK);
    CHECK(res.slope == PAGE && res.late_slope == PAGE && res.late_head_slope == PAGE);
    CHECK(res.n == N_ITER && res.mk_p < 1e-12 && res.growth == 70 * PAGE && res.noise == 0);
    CHECK(strstr(res.detail, ": leak") && strstr(res.detail, "late slope 4096 B/iter >= floor 1024 B"));
    printf("line 4 KiB/iter: %s\n", res.detail);

    opts_heap(&o, 32);
    line(y, N_ITER, HEAP_BASE, 64);
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_LEAK && res.late_slope == 64);
    line(y, N_ITER, HEAP_BASE, 0);
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_PASS && res.slope == 0 && res.growth == 0);
    line(y, N_ITER, HEAP_BASE, -64); /* shrinking is never a leak */
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_PASS);
    line(y, N_ITER, HEAP_BASE, 16); /* under the floor, but it adds up: flagged as plateau, not leak */
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_PLATEAU);

    /* RSS staircases, judged with a floor of 64 B/iter: two single pages in the late part are within the
     * 2-quanta resolution, a page every 12 iterations (341 B/iter) is a leak */
    opts_rss(&o);
    o.floor_per_iter = 64;
    for (int i = 0; i < N_ITER; i++)
        y[i] = RSS_BASE + (i >= 62 ? PAGE : 0) + (i >= 87 ? PAGE : 0);
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_PASS && strstr(res.detail, "within 2 quanta"));
    for (int i = 0; i < N_ITER; i++)
        y[i] = RSS_BASE + PAGE * floor(i / 12.0);
    CHECK(judge(y, N_ITER, &o, &res) == MLK_VERDICT_LEAK);
    CHECK_NEAR(res.late_slope, PAGE / 12, PAGE / 48);
}

/* Weekly-length runs go through the strided Theil-Sen: still quiet when flat, still sharp on a leak. */
static void test_long_runs(void)
{
    int n = 3000;
    double *t = malloc(sizeof *t * (size_t)n), *y = malloc(sizeof *y * (size_t)n);
    mlk_detect_opts o;
    mlk_detect_result res;
    if (!t || !y) {
        CHECK(!"no memory");
        free(t);
        free(y);
        return;
    }
    opts_rss(&o);
    add_noise(y, NULL, n, RSS_BASE, RSS_AR1, 7);
    CHECK(judge(y, n, &o, &res) == MLK_VERDICT_PASS);
    line(t, n, RSS_BASE, 1536);
    add_noise(y, t, n, 0, RSS_AR1, 7);
    CHECK(judge(y, n, &o, &res) == MLK_VERDICT_LEAK);
    CHECK_NEAR(res.late_slope, 1536, 50);
    free(t);
    free(y);
}

/* Clean runs: the false-alarm sweep. Heap series are judged with a 32 B/iter floor, RSS with 1 KiB. From 100
 * samples on, no noise model may give a single false leak. Shorter runs are weaker: at 30 samples (a late part
 * of 15) the RSS floor is within two standard errors of the noise, and at 50 an AR(1) wander of 2.5 pages
 * passes for a trend about once in a hundred runs; those figures are printed, the rest held to zero. */
static void test_noise_sweeps(void)
{
    mlk_detect_opts o;
    int total_leak = 0, total = 0;
    static const int lengths[] = {30, 50, N_ITER, 300};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int n = lengths[li], seeds = n == N_ITER ? 1000 : n == 300 ? 100 : 300;
        for (int k = 0; k < NOISE_COUNT; k++) {
            int rss = is_rss((noise_kind)k);
            if (rss)
                opts_rss(&o);
            else
                opts_heap(&o, 32);
            tally t = sweep(NULL, n, rss ? RSS_BASE : HEAP_BASE, (noise_kind)k, &o, seeds);
            if (n >= N_ITER || !rss || (n >= 50 && k != RSS_AR1)) {
                CHECK(t.leak == 0);
                total_leak += t.leak;
                total += seeds;
            }
            printf("flat n=%d %-14s: %d leak, %d plateau in %d seeds\n", n, noise_name[k], t.leak, t.plateau,
                   seeds);
        }
    }
    printf("false alarms: %d leak verdicts in %d clean series held to zero\n", total_leak, total);
}

/* Planted leaks. The targets: 64 B/iter on heap bytes and 4 KiB/iter on RSS are flagged in every one of 1000
 * seeds within 100 iterations, under the noise the brief names (+-3 pages; +-4096 B jitter) and its spiky
 * variants, and under every model once the run is 300 long. Also prints detection rates down a ladder of
 * sizes (floors: 16 B/iter heap, 1 KiB/iter RSS). */
static void test_leak_sweeps(void)
{
    double truth[300];
    mlk_detect_opts o;
    static const double heap_sizes[] = {8, 16, 24, 32, 48, 64};
    static const double rss_sizes[] = {1024, 1536, 2048, 3072, 4096, 8192};
    static const int lengths[] = {30, 50, N_ITER, 300};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        int n = lengths[li];
        for (int k = 0; k < NOISE_COUNT; k++) {
            int rss = is_rss((noise_kind)k);
            int named = k == RSS_UNIFORM3 || k == RSS_SPIKES || k == HEAP_JITTER || k == HEAP_GAUSS;
            const double *sizes = rss ? rss_sizes : heap_sizes;
            printf("leak n=%d %-14s:", n, noise_name[k]);
            for (int si = 0; si < 6; si++) {
                int target = sizes[si] == (rss ? 4096 : 64);
                if (n == 300 && !target)
                    continue;
                int seeds = n == N_ITER && target ? 1000 : n == 300 ? 100 : 200;
                if (rss)
                    opts_rss(&o);
                else
                    opts_heap(&o, 16);
                line(truth, n, rss ? RSS_BASE : HEAP_BASE, sizes[si]);
                tally t = sweep(truth, n, 0, (noise_kind)k, &o, seeds);
                printf(" %g:%d%%", sizes[si], t.leak * 100 / seeds);
                if (target && ((n == N_ITER && named) || n == 300))
                    CHECK(t.leak == seeds);
            }
            printf("\n");
        }
    }
}

/* Retention shapes: growth that stops. Judged on RSS with +-3 pages of noise, 200 seeds each. */
typedef enum { SHAPE_EXP, SHAPE_STEP_EARLY, SHAPE_SAWTOOTH, SHAPE_STAIRS_SHRINKING, SHAPE_COUNT } shape_kind;

static void retention_shape(double *t, int n, shape_kind shape, double param)
{
    for (int i = 0; i < n; i++) {
        double v = 0;
        switch (shape) {
        case SHAPE_EXP: /* allocator caches filling up: 16 MiB, time constant param */
            v = 16 * MIB * (1 - exp(-i / param));
            break;
        case SHAPE_STEP_EARLY: /* one arena mapped at iteration param, then flat */
            v = i >= param ? 8 * MIB : 0;
            break;
        case SHAPE_SAWTOOTH: /* glibc: the top grows 128 KiB per iteration, trimmed every 7, until param */
        {
            int k = i < param ? i : (int)param;
            v = 128 * 1024.0 * k + 64 * 1024.0 * (i % 7);
            break;
        }
        case SHAPE_STAIRS_SHRINKING: /* fragmentation: steps of halving size, 2 MiB first, every param */
            v = 0;
            for (int k = 1; k <= i / (int)param; k++)
                v += 2 * MIB / (double)(1 << (k - 1 < 30 ? k - 1 : 30));
            break;
        case SHAPE_COUNT:
            break;
        }
        t[i] = RSS_BASE + v;
    }
}

static void test_plateaus(void)
{
    static const struct {
        shape_kind shape;
        double param;
        const char *name;
    } cases[] = {
        {SHAPE_EXP, 5, "exponential, tau 5"},
        {SHAPE_EXP, 10, "exponential, tau 10"},
        {SHAPE_EXP, 15, "exponential, tau 15"},
        {SHAPE_EXP, 25, "exponential, tau 25"},
        {SHAPE_STEP_EARLY, 10, "step at 10"},
        {SHAPE_STEP_EARLY, 45, "step at 45"},
        {SHAPE_SAWTOOTH, 30, "sawtooth to 30"},
        {SHAPE_SAWTOOTH, 45, "sawtooth to 45"},
        {SHAPE_STAIRS_SHRINKING, 8, "halving stairs every 8"},
    };
    double t[N_ITER];
    mlk_detect_opts o;
    opts_rss(&o);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        retention_shape(t, N_ITER, cases[c].shape, cases[c].param);
        mlk_detect_result res;
        CHECK(judge(t, N_ITER, &o, &res) == MLK_VERDICT_PLATEAU); /* noise-free */
        if (res.verdict != MLK_VERDICT_PLATEAU)
            fprintf(stderr, "  %s, no noise: %s\n", cases[c].name, res.detail);
        tally k = sweep(t, N_ITER, 0, RSS_UNIFORM3, &o, 200);
        printf("plateau %-24s: %d plateau, %d leak, %d pass in 200 seeds\n", cases[c].name, k.plateau, k.leak,
               k.pass);
        CHECK(k.plateau == 200);
    }
}

/* One jump, flat before and after, anywhere in the run and of any size: never a leak. */
static void test_single_steps(void)
{
    static const double pages[] = {1, 2, 3, 4, 8, 64, 256, 2560};
    double t[N_ITER], y[N_ITER];
    mlk_detect_opts o;
    mlk_detect_result res;
    int leaks = 0, judged = 0;
    opts_rss(&o);
    for (size_t si = 0; si < sizeof pages / sizeof *pages; si++)
        for (int at = 1; at < N_ITER; at++)
            for (uint64_t seed = 1; seed <= 10; seed++) {
                for (int i = 0; i < N_ITER; i++)
                    t[i] = RSS_BASE + (i >= at ? pages[si] * PAGE : 0);
                add_noise(y, t, N_ITER, 0, RSS_UNIFORM3, seed * 1000 + (uint64_t)at);
                judged++;
                if (judge(y, N_ITER, &o, &res) == MLK_VERDICT_LEAK) {
                    leaks++;
                    fprintf(stderr, "step of %g pages at %d, seed %d: %s\n", pages[si], at, (int)seed, res.detail);
                }
            }
    /* exact heap series: a step is a perfect two-level series */
    static const double bytes[] = {8, 4096, MIB};
    opts_heap(&o, 16);
    for (size_t si = 0; si < sizeof bytes / sizeof *bytes; si++)
        for (int at = 1; at < N_ITER; at++) {
            for (int i = 0; i < N_ITER; i++)
                y[i] = HEAP_BASE + (i >= at ? bytes[si] : 0);
            judged++;
            if (judge(y, N_ITER, &o, &res) == MLK_VERDICT_LEAK) {
                leaks++;
                fprintf(stderr, "heap step of %g B at %d: %s\n", bytes[si], at, res.detail);
            }
        }
    CHECK(leaks == 0);
    printf("single steps: %d leak verdicts in %d series\n", leaks, judged);
}

/* Retention first, then a leak: the late part decides. */
static void test_leak_after_plateau(void)
{
    double t[N_ITER];
    mlk_detect_opts o;
    opts_rss(&o);
    retention_shape(t, N_ITER, SHAPE_EXP, 6); /* 16 MiB; still 670 B/iter at 50 */
    for (int i = 40; i < N_ITER; i++)
        t[i] += PAGE * (i - 40);
    tally k = sweep(t, N_ITER, 0, RSS_UNIFORM3, &o, 200);
    CHECK(k.leak == 200);
    printf("rss plateau then 4 KiB/iter from 40: %d leak in 200 seeds\n", k.leak);

    opts_heap(&o, 32);
    for (int i = 0; i < N_ITER; i++)
        t[i] = HEAP_BASE + floor(MIB * (1 - exp(-i / 6.0))) + (i >= 40 ? 64.0 * (i - 40) : 0);
    k = sweep(t, N_ITER, 0, HEAP_JITTER, &o, 200);
    CHECK(k.leak == 200);
    printf("heap plateau then 64 B/iter from 40: %d leak in 200 seeds\n", k.leak);

    /* a leak that starts late in the run still has to show in both halves of the late part */
    opts_rss(&o);
    for (int i = 0; i < N_ITER; i++)
        t[i] = RSS_BASE + (i >= 60 ? 4 * PAGE * (i - 60) : 0);
    k = sweep(t, N_ITER, 0, RSS_UNIFORM3, &o, 200);
    CHECK(k.leak == 200);
    printf("rss 16 KiB/iter from 60: %d leak in 200 seeds\n", k.leak);
}

static void test_short_and_invalid(void)
{
    double y[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    mlk_detect_opts o;
    mlk_detect_result res;
    opts_heap(&o, 0.5);
    for (int n = 0; n < 8; n++) {
        CHECK(mlk_detect_leak(n ? y : NULL, n, &o, &res) == 0);
        CHECK(res.verdict == MLK_VERDICT_PASS && res.n == n && strstr(res.detail, "too few samples"));
        CHECK(isnan(res.slope) && isnan(res.mk_p));
    }
    CHECK(mlk_detect_leak(y, 8, &o, &res) == 0 && res.verdict == MLK_VERDICT_LEAK); /* 8 is enough */

    memset(&res, 0x5a, sizeof res);
    mlk_detect_result before = res;
    CHECK(mlk_detect_leak(NULL, 8, &o, &res) == -1);
    CHECK(mlk_detect_leak(y, -1, &o, &res) == -1);
    CHECK(mlk_detect_leak(y, 8, NULL, &res) == -1);
    CHECK(mlk_detect_leak(y, 8, &o, NULL) == -1);
    mlk_detect_opts bad = o;
    bad.alpha = 0;
    CHECK(mlk_detect_leak(y, 8, &bad, &res) == -1);
    bad = o;
    bad.late_fraction = 1.5;
    CHECK(mlk_detect_leak(y, 8, &bad, &res) == -1);
    bad = o;
    bad.floor_per_iter = NAN;
    CHECK(mlk_detect_leak(y, 8, &bad, &res) == -1);
    bad = o;
    bad.quantum = -1;
    CHECK(mlk_detect_leak(y, 8, &bad, &res) == -1);
    y[3] = NAN;
    CHECK(mlk_detect_leak(y, 8, &o, &res) == -1);
    CHECK(mlk_detect_openvino(y, 8, 0.1, &res) == -1);
    y[3] = 4;
    CHECK(mlk_detect_openvino(NULL, 8, 0.1, &res) == -1);
    CHECK(mlk_detect_openvino(y, 8, NAN, &res) == -1);
    CHECK(mlk_detect_openvino(y, 8, 0.1, NULL) == -1);
    CHECK(memcmp(&res, &before, sizeof res) == 0); /* untouched on failure */

    mlk_detect_opts_init(&o);
    CHECK(o.alpha == 0.01 && o.late_fraction == 0.5 && o.floor_per_iter == 1024 && o.quantum == 1);
    mlk_detect_opts_init(NULL);
    CHECK(!strcmp(mlk_verdict_name(MLK_VERDICT_PLATEAU), "plateau"));
    CHECK(!strcmp(mlk_verdict_name(MLK_VERDICT_OOM), "oom"));
    CHECK(!strcmp(mlk_verdict_name(MLK_VERDICT_COUNT), "unknown"));
}

int main(void)
{
    test_theil_sen_small();
    test_theil_sen_vs_brute();
    test_theil_sen_outliers();
    test_theil_sen_large();
    test_mann_kendall();
    test_pure_lines();
    test_long_runs();
    test_noise_sweeps();
    test_leak_sweeps();
    test_plateaus();
    test_single_steps();
    test_leak_after_plateau();
    test_short_and_invalid();
    return check_summary();
}
