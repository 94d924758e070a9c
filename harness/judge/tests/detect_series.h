/* detect_series.h: what the judge's tests share: a counting CHECK kit, a fixed-seed generator, the synthetic memory
 * series (RSS-like and heap-like noise models, lines, noisy sweeps), and a scenario parsed from a YAML string.
 * It must never draw randomness from anywhere but its own seeds, so every run sees the same series. */
#ifndef MLK_DETECT_SERIES_H
#define MLK_DETECT_SERIES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "scenario.h"

static int n_pass, n_fail;

/* Print the tally and give main's exit code. */
static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            n_pass++;                                                                 \
        } else {                                                                      \
            n_fail++;                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                  \
    do {                                                                                       \
        double a_ = (a), b_ = (b);                                                             \
        if (fabs(a_ - b_) <= (tol)) {                                                          \
            n_pass++;                                                                          \
        } else {                                                                               \
            n_fail++;                                                                          \
            fprintf(stderr, "%s:%d: %s = %.10g, expected %.10g (tol %g)\n", __FILE__, __LINE__, #a, a_, \
                    b_, (double)(tol));                                                        \
        }                                                                                      \
    } while (0)

#define PAGE 4096.0
#define MIB (1024.0 * 1024.0)

/* ------------------------------------------------------------------------------------------------
 * Deterministic noise: splitmix64
 * ---------------------------------------------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform integer in [lo, hi]. */
static inline int rng_int(rng *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1)); }

/* Standard normal (Box-Muller). */
static inline double rng_gauss(rng *r)
{
    double u = rng_unit(r), v = rng_unit(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

/* ------------------------------------------------------------------------------------------------
 * Series models. "True" memory is a function of the iteration; what is recorded adds noise.
 * ---------------------------------------------------------------------------------------------- */

typedef enum {
    RSS_UNIFORM3,  /* RSS: pages, +-3 pages uniform */
    RSS_AR1,       /* RSS: pages, AR(1) drift (phi 0.8, innovation sd 1.5 pages) */
    RSS_SPIKES,    /* RSS: +-3 pages and, 3% of the time, a transient +64 pages */
    RSS_HELD,      /* RSS: +-2 pages, and 16 extra pages held for 1..5 iterations, 5% of the time */
    HEAP_JITTER,   /* heap: exact, 10% of samples +-4096 (a block held in a cache) */
    HEAP_CACHES,   /* heap: exact, 30% of samples +4 KiB..64 KiB (thread caches, transient buffers) */
    HEAP_GAUSS,    /* heap: sd 200 B and 10% +-4096 */
    NOISE_COUNT
} noise_kind;

static const char *const noise_name[NOISE_COUNT] __attribute__((unused)) = {"rss +-3 pages", "rss AR(1)", "rss spikes", "rss held",
                                              "heap jitter", "heap caches", "heap gauss"};

static inline int is_rss(noise_kind k) { return k <= RSS_HELD; }

/* Fill y[0..n) with truth[i] plus noise of the given kind (truth may be NULL: flat at base). */
static inline void add_noise(double *y, const double *truth, int n, double base, noise_kind kind, uint64_t seed)
{
    rng r = {seed * 0x2545F4914F6CDD1Dull + (uint64_t)kind};
    double ar = 0;
    int held = 0;
    for (int i = 0; i < n; i++) {
        double t = truth ? truth[i] : base, e = 0;
        switch (kind) {
        case RSS_UNIFORM3:
            e = rng_int(&r, -3, 3) * PAGE;
            break;
        case RSS_AR1:
            ar = 0.8 * ar + 1.5 * rng_gauss(&r);
            e = round(ar) * PAGE;
            break;
        case RSS_SPIKES:
            e = rng_int(&r, -3, 3) * PAGE + (rng_unit(&r) < 0.03 ? 64 * PAGE : 0);
            break;
        case RSS_HELD:
            if (held == 0 && rng_unit(&r) < 0.05)
                held = rng_int(&r, 1, 5);
            e = rng_int(&r, -2, 2) * PAGE + (held > 0 ? 16 * PAGE : 0);
            if (held > 0)
                held--;
            break;
        case HEAP_JITTER:
            e = rng_unit(&r) < 0.1 ? (rng_unit(&r) < 0.5 ? -4096 : 4096) : 0;
            break;
        case HEAP_CACHES:
            e = rng_unit(&r) < 0.3 ? 4096.0 * rng_int(&r, 1, 16) : 0;
            break;
        case HEAP_GAUSS:
            e = round(200 * rng_gauss(&r)) + (rng_unit(&r) < 0.1 ? (rng_unit(&r) < 0.5 ? -4096 : 4096) : 0);
            break;
        case NOISE_COUNT:
            break;
        }
        /* RSS moves in whole pages: quantize the truth, then add page noise */
        y[i] = is_rss(kind) ? floor(t / PAGE) * PAGE + e : t + e;
    }
}

static inline void line(double *t, int n, double base, double per_iter)
{
    for (int i = 0; i < n; i++)
        t[i] = base + per_iter * i;
}

static inline void opts_rss(mlk_detect_opts *o)
{
    mlk_detect_opts_init(o);
    o->floor_per_iter = 1024;
    o->quantum = PAGE;
}

static inline void opts_heap(mlk_detect_opts *o, double floor)
{
    mlk_detect_opts_init(o);
    o->floor_per_iter = floor;
    o->quantum = 1;
}

static inline mlk_verdict judge(const double *y, int n, const mlk_detect_opts *o, mlk_detect_result *res)
{
    int rc = mlk_detect_leak(y, n, o, res);
    CHECK(rc == 0);
    return rc == 0 ? res->verdict : MLK_VERDICT_ERROR;
}

#define N_ITER 100 /* the scenario default: measured iterations */
#define RSS_BASE (50 * MIB)
#define HEAP_BASE (10 * MIB)

typedef struct tally {
    int leak, plateau, pass;
} tally;

static inline void count(tally *t, mlk_verdict v)
{
    t->leak += v == MLK_VERDICT_LEAK;
    t->plateau += v == MLK_VERDICT_PLATEAU;
    t->pass += v == MLK_VERDICT_PASS;
}

/* Judge `seeds` noisy copies of truth (NULL: flat at base). */
static inline tally sweep(const double *truth, int n, double base, noise_kind kind, const mlk_detect_opts *o, int seeds)
{
    tally t = {0, 0, 0};
    double *y = malloc(sizeof *y * (size_t)n);
    if (!y) {
        CHECK(!"no memory");
        return t;
    }
    mlk_detect_result res;
    for (int s = 1; s <= seeds; s++) {
        add_noise(y, truth, n, base, kind, (uint64_t)s);
        count(&t, judge(y, n, o, &res));
    }
    free(y);
    return t;
}

/* A scenario from YAML text, NULL (the parser's message on stderr) when it does not parse. */
static inline mlk_scenario *test_scenario(const char *yaml)
{
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    if (mlk_scenario_parse(yaml, strlen(yaml), "t.yaml", &s, &err))
        fprintf(stderr, "scenario: %s\n", err.msg);
    return s;
}

#endif
