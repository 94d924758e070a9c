/* test_alert.c: alert.h: the floors per metric and how a scenario and --floor move them, the verdicts with the
 * baseline's spread, latency across runs, findings grouped into ranked alerts, the gate, and numbers as people read
 * them. It must never depend on a db: every figure is given here. */
#include <math.h>
#include <string.h>

#include "alert.h"
#include "mlk_check.h"

static void floors(void)
{
    mlk_alert_floors f;
    mlk_error err = {0};
    mlk_alert_floors_init(&f, NULL);
    CHECK(f.rel[MLK_M_PEAK] == 0.05 && f.abs[MLK_M_PEAK] == 1024);                /* KiB */
    CHECK(f.abs[MLK_M_REQ_MAPPED] == 16.0 * 1024 * 1024);                         /* bytes */
    CHECK(f.abs[MLK_M_GROWTH] == 1024 && f.latency_rel == 0.10 && f.latency_min_runs == 3);
    /* a scenario that sets its own thresholds moves every level's floor; one that leaves them keeps the table */
    mlk_scenario s;
    memset(&s, 0, sizeof s);
    s.regression_rel = 0.2, s.regression_abs_kib = 2048, s.leak_bytes_per_iter = 64, s.latency_rel = 0.5;
    mlk_alert_floors_init(&f, &s);
    CHECK(f.rel[MLK_M_FINAL_RSS] == 0.2 && f.abs[MLK_M_FINAL_RSS] == 2048);
    CHECK(f.abs[MLK_M_REQ_HEAP] == 2048.0 * 1024 && f.abs[MLK_M_GROWTH] == 64 && f.latency_rel == 0.5);

    mlk_alert_floors_init(&f, NULL);
    CHECK_OK(mlk_alert_floors_parse(&f, "memory_abs=2MiB,peak_kib_rel=10%,mapped_peak_bytes_abs=64MiB,latency_runs=5",
                                    &err), &err);
    CHECK(f.abs[MLK_M_PEAK] == 2048 && f.abs[MLK_M_FINAL_HEAP] == 2.0 * 1024 * 1024 && f.rel[MLK_M_PEAK] == 0.10);
    CHECK(f.abs[MLK_M_REQ_MAPPED] == 64.0 * 1024 * 1024 && f.latency_min_runs == 5);
    mlk_alert_floors g = f;
    CHECK(mlk_alert_floors_parse(&f, "peak_kib_abs=lots", &err) == MLK_E_USAGE && strstr(err.msg, "peak_kib_abs"));
    CHECK(mlk_alert_floors_parse(&f, "memory_rel=0.1,wall_ms_rel=1", &err) == MLK_E_USAGE &&
          strstr(err.msg, "wall_ms_rel"));
    CHECK(mlk_alert_floors_parse(&f, "latency_runs=0", &err) == MLK_E_USAGE);
    CHECK(mlk_alert_floors_parse(&f, "growth", &err) == MLK_E_USAGE && strstr(err.msg, "KEY=VALUE"));
    CHECK(!memcmp(&f, &g, sizeof f)); /* untouched on failure, even after a good first item */
}

static void verdicts(void)
{
    mlk_alert_floors f;
    double e;
    mlk_alert_floors_init(&f, NULL);
    /* peak: 5% of 100 MiB = 5 MiB; 1 MiB of 10 MiB is the abs floor */
    CHECK(mlk_alert_level(&f, "peak_kib", 102400 + 6000, 102400, 0, &e) == 1 && e > 1);
    CHECK(mlk_alert_level(&f, "peak_kib", 102400 + 4000, 102400, 0, &e) == 0 && e == 0);
    CHECK(mlk_alert_level(&f, "peak_kib", 10240 + 1000, 10240, 0, &e) == 0);
    CHECK(mlk_alert_level(&f, "peak_kib", 10240 - 2000, 10240, 0, &e) == -1);
    /* the baseline's own noise widens the floor */
    CHECK(mlk_alert_level(&f, "peak_kib", 102400 + 6000, 102400, 8000, &e) == 0);
    double noisy[] = {100, 110, 90, 105, 95}, steady_with_step[] = {100, 100, 100, 150, 150};
    CHECK(mlk_alert_spread(noisy, 5) > 20 && mlk_alert_spread(steady_with_step, 5) == 0);
    CHECK(mlk_alert_spread(noisy, 1) == 0);
    /* runs newest first: a step inside the window stays a finding, an allocator's second mode does not */
    double med;
    double step_in_window[] = {13280, 13404, 9600, 9588, 9644}; /* the two newest at the new level */
    CHECK(mlk_alert_level_runs(&f, "peak_kib", 13300, step_in_window, 5, &med, &e) == 1 && med == 9644);
    double two_modes[] = {72680, 73052, 77312}; /* the oldest at the other mode */
    CHECK(mlk_alert_level_runs(&f, "peak_kib", 76896, two_modes, 3, &med, &e) == 0 && e == 0);
    CHECK(mlk_alert_level_runs(&f, "peak_kib", 90000, two_modes, 3, &med, &e) == 1); /* beyond both */
    CHECK(mlk_alert_level_runs(&f, "peak_kib", 1, two_modes, 0, &med, &e) == 0 && isnan(med));
    /* growth: absolute floor only; series: the judge decides */
    CHECK(mlk_alert_level(&f, "growth", 4096, 0, 0, &e) == 1 && fabs(e - 4) < 1e-12);
    CHECK(mlk_alert_level(&f, "growth", 900, 0, 0, &e) == 0);
    CHECK(mlk_alert_level(&f, "series.heap", 1e9, 0, 0, &e) == 0);
    CHECK(mlk_alert_step(&f, "wall_ms", 10, 12, &e) == 1 && mlk_alert_step(&f, "wall_ms", 10, 10.9, &e) == 0);
    CHECK(mlk_alert_effect(&f, "growth", 4096, 0) == 4 && mlk_alert_effect(&f, "peak_kib", 1, 1) == 1);

    /* latency across runs: too few runs judge nothing, however large the move */
    double two[] = {10, 10.1}, five[] = {10, 10.2, 9.9, 10.1, 10};
    CHECK(mlk_alert_latency_runs(&f, 30, two, 2, &e) == 0);
    CHECK(mlk_alert_latency_runs(&f, 12, five, 5, &e) == 1);
    double five2[] = {10, 10.2, 9.9, 10.1, 10};
    CHECK(mlk_alert_latency_runs(&f, 10.8, five2, 5, &e) == 0);
    double wild[] = {10, 15, 7, 13, 9}; /* a machine this loaded hides a 20% move */
    CHECK(mlk_alert_latency_runs(&f, 12, wild, 5, &e) == 0);
    /* repetitions: the U test must agree */
    double cur[] = {13, 13.1, 12.9, 13.2, 13}, base[] = {10, 10.1, 9.9, 10.2, 10}, p, mc, mb;
    CHECK(mlk_alert_latency_reps(&f, cur, 5, base, 5, &e, &p, &mc, &mb) == 1 && p < 0.05 && mc == 13 && mb == 10);
}

static void grouping(void)
{
    mlk_finding v[6];
    mlk_alert *a = NULL;
    int n = 0;
    mlk_error err = {0};
    mlk_finding_set(&v[0], "k2", "b", "run 3", "infer", "wall_ms", 1, 20, 10, 10); /* latency only, huge */
    mlk_finding_set(&v[1], "k1", "a", "run 3", "infer", "peak_kib", 1, 2000, 1000, 2);
    mlk_finding_set(&v[2], "k1", "a", "run 3", "iteration", "peak_kib", 1, 2000, 1000, 2);
    mlk_finding_set(&v[3], "k1", "a", "run 3", "iteration", "wall_ms", 1, 20, 10, 50);
    mlk_finding_set(&v[4], "k3", "c", "run 3", "iteration", "growth", 1, 4096, 0, 4);
    mlk_finding_set(&v[5], "k1", "a", "run 3", "infer", "final_rss_kib", -1, 500, 1000, 3);
    CHECK_OK(mlk_alerts_build(v, 6, &a, &n, &err), &err);
    CHECK(n == 4);
    /* regressions, memory before latency, larger effect first; improvements last */
    CHECK(a[0].dir == 1 && a[0].family == MLK_FAM_MEMORY && !strcmp(v[a[0].first].key, "k3"));
    CHECK(a[1].dir == 1 && a[1].family == MLK_FAM_MEMORY && !strcmp(v[a[1].first].key, "k1") && a[1].n == 3);
    CHECK(!strcmp(v[a[1].first].step, "iteration") && !strcmp(v[a[1].first].metric, "peak_kib")); /* it leads */
    CHECK(!strcmp(v[a[1].first + 2].metric, "wall_ms")); /* latency inside the memory alert, after it */
    CHECK(a[2].family == MLK_FAM_LATENCY && !strcmp(v[a[2].first].key, "k2"));
    CHECK(a[3].dir == -1);
    CHECK(mlk_alert_fails(&a[1], v, MLK_GATE_MEMORY) && !mlk_alert_fails(&a[2], v, MLK_GATE_MEMORY));
    CHECK(mlk_alert_fails(&a[2], v, MLK_GATE_LATENCY) && mlk_alert_fails(&a[1], v, MLK_GATE_LATENCY));
    CHECK(!mlk_alert_fails(&a[3], v, MLK_GATE_ALL) && !mlk_alert_fails(&a[0], v, MLK_GATE_NONE));
    char head[600];
    mlk_alert_headline(head, sizeof head, &a[1], v);
    CHECK(!strcmp(head, "REGRESSION memory: a at run 3: iteration peak_kib 1000.0 KiB -> 2.0 MiB (+100.0%) "
                        "(+2 more moved with it)"));
    free(a);
    CHECK_OK(mlk_alerts_build(v, 0, &a, &n, &err), &err);
    CHECK(n == 0 && a);
    free(a);
    CHECK(mlk_gate_from_name("latency") == MLK_GATE_LATENCY && mlk_gate_from_name("mem") < 0);
}

static void numbers(void)
{
    char b[64];
    mlk_fmt_metric_value(b, sizeof b, "final_heap_bytes", 18172500);
    CHECK(!strcmp(b, "17.3 MiB"));
    mlk_fmt_metric_value(b, sizeof b, "wall_ms", 0.0123);
    CHECK(!strcmp(b, "12.3 µs"));
    mlk_fmt_metric_value(b, sizeof b, "wall_ms", 1234.5);
    CHECK(!strcmp(b, "1.23 s"));
    mlk_fmt_metric_value(b, sizeof b, "growth", 4104);
    CHECK(!strcmp(b, "+4.0 KiB/iter"));
    mlk_fmt_metric_value(b, sizeof b, "peak_kib", NAN);
    CHECK(!strcmp(b, "-"));
    mlk_fmt_metric_value(b, sizeof b, "other", 3e9);
    CHECK(!strchr(b, 'e'));
    mlk_fmt_rel(b, sizeof b, 4104, 0);
    CHECK(!strcmp(b, "new"));
    mlk_fmt_rel(b, sizeof b, NAN, 1);
    CHECK(!strcmp(b, "-"));
    mlk_fmt_rel(b, sizeof b, 9.25e9, 1e8);
    CHECK(!strcmp(b, "+92.5x"));
}

int main(void)
{
    floors();
    verdicts();
    grouping();
    numbers();
    return check_summary();
}
