/* test_worker_probe.c: a worker whose probe cannot read /proc/self/status sends no sample for that moment: it ends
 * with an "E" line naming the probe and exit code STEP_FAILED, never with an uninitialised sample and success.
 * It must never pass when a failed read is sent as a sample (the samples before it are checked, and none after). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlk_check.h"
#include "probe.h"
#include "worker.h"

/* The ABI-1 test plugin of harness/core/tests, built next to this executable: load and unload work. */
static void fixture(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/plugin_fixture_short.so", n > 0 ? self : ".");
}

/* Run a 3-iteration worker (load_engine; no pipeline steps; unload_engine) with the probe failing after `reads`
 * reads; returns its exit code and what it wrote into out. */
static int run(int64_t reads, char *out, size_t len)
{
    char lib[PATH_MAX + 64];
    fixture(lib, sizeof lib);
    char tmpl[] = "/tmp/mlk-test-worker-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return -1;
    unlink(tmpl);
    mlk_worker_args a = {.fd = fd, .engine_lib = lib, .model = "unused.onnx", .iterations = 3, .warmup = 0};
    a.setup[a.n_setup++] = MLK_STEP_LOAD_ENGINE;
    a.teardown[a.n_teardown++] = MLK_STEP_UNLOAD_ENGINE;
    mlk_probe_fail_after(reads);
    int rc = mlk_worker_run(&a);
    mlk_probe_fail_after(-1);
    ssize_t n = pread(fd, out, len - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    return rc;
}

static int count_lines(const char *s, char kind)
{
    int n = 0;
    for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += *p == kind;
    return n;
}

int main(void)
{
    char out[16384];
    /* Unarmed: load (1 read), 3 iteration samples, unload (1 read): 5 samples and D. */
    CHECK(run(-1, out, sizeof out) == 0);
    CHECK(count_lines(out, 'S') == 5 && count_lines(out, 'D') == 1 && count_lines(out, 'E') == 0);

    /* The third read fails (the second iteration's sample): two samples went out, then an error, nothing after. */
    CHECK(run(2, out, sizeof out) == MLK_WORKER_EXIT_STEP_FAILED);
    CHECK(count_lines(out, 'S') == 2 && count_lines(out, 'D') == 0 && count_lines(out, 'E') == 1);
    const char *e = strstr(out, "\nE\t");
    CHECK(e && strstr(e, "probe") && strstr(e, "/proc/self/status") && strstr(e, "iteration"));
    if (!e)
        fprintf(stderr, "worker wrote:\n%s", out);

    /* The very first read (after load_engine) fails: no sample at all. */
    CHECK(run(0, out, sizeof out) == MLK_WORKER_EXIT_STEP_FAILED);
    CHECK(count_lines(out, 'S') == 0 && strstr(out, "E\tload_engine\t"));
    return check_summary();
}
