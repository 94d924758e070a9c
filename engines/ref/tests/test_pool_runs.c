/* test_pool_runs.c: the run-level arbiter on synthetic run times: it settles on the faster mode (workers on a quiet
 * machine, the caller alone beside a busy core; after one time each when they are far apart), probes the other
 * rarely, follows a machine that turns busy or quiet, times kinds of run apart, ignores one outlier and failed runs.
 * It must never depend on a real clock. */
#include "check.h"
#include "pool_runs.h"

typedef struct {
    ref_runs *r;
    int64_t now;
    int64_t runs[2]; /* runs in each mode since the last reset */
} sim;

/* One run of this kind, taking workers_ns or solo_ns depending on the mode the arbiter picks; returns the mode. */
static ref_run_mode run(sim *s, uint64_t kind, int64_t workers_ns, int64_t solo_ns)
{
    ref_run_mode m = ref_runs_begin(s->r, kind, s->now);
    s->now += m == REF_RUN_SOLO ? solo_ns : workers_ns;
    ref_runs_end(s->r, s->now, true);
    s->runs[m]++;
    return m;
}

static void reset_counts(sim *s) { s->runs[0] = s->runs[1] = 0; }

static void test_settles_either_way(void)
{
    /* beside a busy core: alone 20 ms, with workers 27 ms */
    sim s = {0};
    ref_error err = {0};
    CHECK(ref_runs_new(&s.r, &err) == REF_OK);
    for (int i = 0; i < 8; i++)
        run(&s, 1, 27000000, 20000000);
    reset_counts(&s);
    for (int i = 0; i < 200; i++)
        run(&s, 1, 27000000, 20000000);
    CHECK(s.runs[REF_RUN_WORKERS] >= 2);  /* it keeps probing */
    CHECK(s.runs[REF_RUN_WORKERS] <= 10); /* 8, 16, 32, 64, 64 runs apart */
    ref_runs_free(s.r);

    /* quiet: with workers 11 ms, alone 20 ms */
    sim q = {0};
    CHECK(ref_runs_new(&q.r, &err) == REF_OK);
    for (int i = 0; i < 8; i++)
        run(&q, 1, 11000000, 20000000);
    reset_counts(&q);
    for (int i = 0; i < 200; i++)
        run(&q, 1, 11000000, 20000000);
    CHECK(q.runs[REF_RUN_SOLO] >= 2 && q.runs[REF_RUN_SOLO] <= 10);
    ref_runs_free(q.r);
}

/* Far apart, one time each decides: the fourth run of a kind is already in the faster mode; close together, both
 * modes are timed twice first. */
static void test_decides_early_when_clear(void)
{
    ref_error err = {0};
    for (int busy = 0; busy <= 1; busy++) {
        sim s = {0};
        CHECK(ref_runs_new(&s.r, &err) == REF_OK);
        int64_t w = busy ? 27000000 : 11000000, so = 20000000;
        ref_run_mode m[6];
        for (int i = 0; i < 6; i++)
            m[i] = run(&s, 5, w, so);
        /* cold and unbooked, then workers, then alone, then the faster */
        CHECK(m[0] == REF_RUN_WORKERS && m[1] == REF_RUN_WORKERS && m[2] == REF_RUN_SOLO);
        ref_run_mode want = busy ? REF_RUN_SOLO : REF_RUN_WORKERS;
        CHECK(m[3] == want && m[4] == want && m[5] == want);
        ref_runs_free(s.r);
    }
    sim s = {0};
    CHECK(ref_runs_new(&s.r, &err) == REF_OK);
    ref_run_mode m[5];
    for (int i = 0; i < 5; i++)
        m[i] = run(&s, 5, 10500000, 10000000); /* 5% apart */
    CHECK(m[3] == REF_RUN_WORKERS && m[4] == REF_RUN_SOLO);
    ref_runs_free(s.r);
    /* workers 5% faster: not enough to leave the caller alone (a noisy median could as well be 5% slower) */
    sim g = {0};
    CHECK(ref_runs_new(&g.r, &err) == REF_OK);
    for (int i = 0; i < 6; i++)
        run(&g, 6, 9500000, 10000000);
    reset_counts(&g);
    for (int i = 0; i < 40; i++)
        run(&g, 6, 9500000, 10000000);
    CHECK(g.runs[REF_RUN_SOLO] >= 36);
    /* 15% faster: the workers */
    reset_counts(&g);
    for (int i = 0; i < 40; i++)
        run(&g, 7, 8500000, 10000000);
    CHECK(g.runs[REF_RUN_WORKERS] >= 30);
    ref_runs_free(g.r);
}

static void test_follows_the_machine(void)
{
    sim s = {0};
    ref_error err = {0};
    CHECK(ref_runs_new(&s.r, &err) == REF_OK);
    for (int i = 0; i < 300; i++) /* quiet long enough for the probe interval to reach its cap */
        run(&s, 7, 11000000, 20000000);
    /* the machine turns busy: the runs with workers show it at once, two of them move the median */
    int switched_after = -1;
    for (int i = 0; i < 10 && switched_after < 0; i++)
        if (run(&s, 7, 30000000, 20000000) == REF_RUN_SOLO)
            switched_after = i;
    CHECK(switched_after >= 0 && switched_after <= 3);
    for (int i = 0; i < 50; i++)
        run(&s, 7, 30000000, 20000000);
    /* quiet again: only a probe can see it, within the probe interval's cap (64) plus two runs to move the median */
    int back_after = -1;
    for (int i = 0; i < 100 && back_after < 0; i++) {
        ref_run_mode m = run(&s, 7, 11000000, 20000000);
        if (m == REF_RUN_WORKERS && run(&s, 7, 11000000, 20000000) == REF_RUN_WORKERS &&
            run(&s, 7, 11000000, 20000000) == REF_RUN_WORKERS)
            back_after = i;
    }
    CHECK(back_after >= 0 && back_after <= 70);
    reset_counts(&s);
    for (int i = 0; i < 20; i++)
        run(&s, 7, 11000000, 20000000);
    CHECK(s.runs[REF_RUN_WORKERS] >= 19);
    ref_runs_free(s.r);
}

static void test_kinds_apart(void)
{
    /* two input shapes alternating: the small one is faster alone, the large one with workers */
    sim s = {0};
    ref_error err = {0};
    CHECK(ref_runs_new(&s.r, &err) == REF_OK);
    for (int i = 0; i < 20; i++) {
        run(&s, 100, 400000, 300000);
        run(&s, 200, 11000000, 20000000);
    }
    int small_solo = 0, large_workers = 0;
    for (int i = 0; i < 40; i++) {
        small_solo += run(&s, 100, 400000, 300000) == REF_RUN_SOLO;
        large_workers += run(&s, 200, 11000000, 20000000) == REF_RUN_WORKERS;
    }
    CHECK(small_solo >= 37);
    CHECK(large_workers >= 37);
    /* more kinds than slots: the oldest are forgotten, the current ones still settle */
    for (uint64_t k = 1000; k < 1040; k++)
        for (int i = 0; i < 10; i++)
            run(&s, k, 11000000, 20000000);
    reset_counts(&s);
    for (int i = 0; i < 10; i++)
        run(&s, 1039, 11000000, 20000000);
    CHECK(s.runs[REF_RUN_WORKERS] >= 9); /* one probe at most */
    ref_runs_free(s.r);
}

static void test_outlier_and_failures(void)
{
    sim s = {0};
    ref_error err = {0};
    CHECK(ref_runs_new(&s.r, &err) == REF_OK);
    for (int i = 0; i < 40; i++)
        run(&s, 3, 11000000, 20000000);
    /* one run with workers hit by a 100 ms stall: the median of three does not move */
    CHECK(run(&s, 3, 100000000, 20000000) == REF_RUN_WORKERS);
    reset_counts(&s);
    for (int i = 0; i < 5; i++)
        run(&s, 3, 11000000, 20000000);
    CHECK(s.runs[REF_RUN_WORKERS] == 5);
    /* a failed run is not booked, however long it took */
    int64_t w0, s0, w1, s1;
    ref_runs_counts(s.r, &w0, &s0);
    ref_run_mode m = ref_runs_begin(s.r, 3, s.now);
    s.now += 500000000;
    ref_runs_end(s.r, s.now, false);
    ref_runs_counts(s.r, &w1, &s1);
    CHECK(w1 == w0 && s1 == s0);
    CHECK(m == REF_RUN_WORKERS && run(&s, 3, 11000000, 20000000) == REF_RUN_WORKERS);
    /* an end without a begin is ignored */
    ref_runs_end(s.r, s.now, true);
    ref_runs_counts(s.r, &w1, &s1);
    CHECK(w1 == w0 + 1 && s1 == s0);
    ref_runs_free(s.r);
    ref_runs_free(NULL);
}

int main(void)
{
    test_settles_either_way();
    test_decides_early_when_clear();
    test_follows_the_machine();
    test_kinds_apart();
    test_outlier_and_failures();
    return check_summary();
}
