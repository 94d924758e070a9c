/* probe_bench.c: memleak-probe-bench, the cost of one sample as a worker takes it: reset the peak, mark the
 * clocks before the step, read /proc/self/status after it, encode the line, write it. Not a test: it measures.
 * It must never report anything but what it timed on this run. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "sample.h"

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 30, per = argc > 2 ? atoi(argv[2]) : 2000;
    if (batches < 1 || per < 1) {
        fprintf(stderr, "usage: memleak-probe-bench [BATCHES [SAMPLES_PER_BATCH]]\n");
        return 2;
    }
    mlk_probe *p = NULL;
    mlk_error err = {0};
    if (mlk_probe_open(&p, &err)) {
        fprintf(stderr, "memleak-probe-bench: %s\n", err.msg);
        return 1;
    }
    int out = open("/dev/null", O_WRONLY);
    double *us = malloc(sizeof *us * (size_t)batches);
    if (out < 0 || !us) {
        fprintf(stderr, "memleak-probe-bench: %s\n", out < 0 ? "cannot open /dev/null" : "out of memory");
        free(us);
        mlk_probe_free(p);
        return 1;
    }
    char line[512];
    for (int b = 0; b < batches; b++) {
        int64_t t0 = now_ns();
        for (int i = 0; i < per; i++) {
            mlk_mem before, after;
            mlk_probe_reset_peak(p);
            mlk_probe_mark(p, &before);
            int rc = mlk_probe_read(p, &after);
            if (rc) {
                fprintf(stderr, "memleak-probe-bench: reading /proc/self/status: %s\n", strerror(-rc));
                return 1;
            }
            mlk_sample s = {.phase = MLK_PHASE_MEASURE, .iteration = i, .step = MLK_STEP_INFER, .m = after};
            s.wall_ns = after.wall_ns - before.wall_ns;
            int n = mlk_sample_encode(&s, line, sizeof line);
            if (n > 0 && write(out, line, (size_t)n) != n)
                return 1;
        }
        us[b] = (double)(now_ns() - t0) / 1e3 / per;
    }
    qsort(us, (size_t)batches, sizeof *us, cmp);
    printf("{\"samples\":%d,\"median_us_per_sample\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"heap_shim\":%s}\n",
           batches * per, us[batches / 2], us[0], us[batches - 1], mlk_probe_has_heap(p) ? "true" : "false");
    free(us);
    close(out);
    mlk_probe_free(p);
    return 0;
}
