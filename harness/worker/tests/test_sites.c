/* test_sites.c: the worker's side of "where memory grows": which series of checkpoints grow (steady growth does; a
 * plateau, a single jump, noise and shrinking do not), where the checkpoints fall, /proc/self/maps read by path, a
 * function of this test named by the symbolizer, and a whole maps-mode report (no shim: the unit tests run without
 * it) naming a file this test maps again every iteration. It must never depend on timing. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mlk_check.h"
#include "sites.h"

static void check_trends(void)
{
    double x[16], y[16];
    mlk_site_trend t;
    for (int i = 0; i < 16; i++)
        x[i] = 10 + 6 * i, y[i] = 1000 + 4096.0 * x[i];
    mlk_sites_trend(x, y, 16, 1, &t);
    CHECK(t.grows && fabs(t.slope - 4096) < 1e-6 && t.concordance == 1);
    mlk_sites_trend(x, y, 16, 1e9, &t); /* growth below the floor (sampling's grain) */
    CHECK(!t.grows);
    for (int i = 0; i < 16; i++) /* a cache that fills, then stops: the second half is flat */
        y[i] = i < 8 ? 4096.0 * i : 4096.0 * 8;
    mlk_sites_trend(x, y, 16, 1, &t);
    CHECK(!t.grows && t.second_half == 0);
    for (int i = 0; i < 16; i++) /* a cache that fills over 60% of the run: its second half slows down */
        y[i] = i < 10 ? 8192.0 * i : 8192.0 * 10;
    mlk_sites_trend(x, y, 16, 1, &t);
    CHECK(!t.grows && t.first_half > 0 && t.second_half < 0.5 * t.first_half);
    for (int i = 0; i < 16; i++) /* one jump of any size */
        y[i] = i < 9 ? 0 : 1e9;
    mlk_sites_trend(x, y, 16, 1, &t);
    CHECK(!t.grows);
    for (int i = 0; i < 16; i++) /* churn: up and down */
        y[i] = (i * 7919 % 13) * 1000.0;
    mlk_sites_trend(x, y, 16, 1, &t);
    CHECK(!t.grows);
    for (int i = 0; i < 16; i++) /* shrinking */
        y[i] = 1e6 - 100.0 * i;
    mlk_sites_trend(x, y, 16, 1, &t);
    CHECK(!t.grows && t.slope < 0);
    for (int i = 0; i < 16; i++) /* sampled steps: a leak seen as a staircase still rises in both halves */
        y[i] = 262144.0 * (i / 2 + (i > 10));
    mlk_sites_trend(x, y, 16, 2 * 262144.0, &t);
    CHECK(t.grows);
    mlk_sites_trend(x, y, 2, 1, &t); /* too few points */
    CHECK(!t.grows);
}

static void check_checkpoints(void)
{
    CHECK(mlk_sites_checkpoint_iter(10, 100, 16, 0) == 10);
    CHECK(mlk_sites_checkpoint_iter(10, 100, 16, 15) == 109);
    int last = -1, ok = 1;
    for (int j = 0; j < 16; j++) {
        int it = mlk_sites_checkpoint_iter(10, 100, 16, j);
        ok &= it > last && it >= 10 && it <= 109;
        last = it;
    }
    CHECK(ok);
    CHECK(mlk_sites_checkpoint_iter(0, 3, 3, 1) == 1 && mlk_sites_checkpoint_iter(0, 2, 2, 1) == 1);
}

static void check_maps_parse(void)
{
    char text[] = "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
                  "00651000-00652000 r--p 00051000 08:02 173521      /usr/bin/dbus-daemon\n"
                  "00e03000-00e24000 rw-p 00000000 00:00 0           [heap]\n"
                  "7f0000000000-7f0000010000 rw-p 00000000 00:00 0 \n"
                  "7f0000020000-7f0000021000 ---p 00000000 00:00 0\n"
                  "garbage line\n"
                  "7f1000000000-7f1000002000 r--s 00000000 00:05 42     /dev/shm/a b (deleted)";
    mlk_maps_path p[8];
    int n = mlk_sites_maps_parse(text, strlen(text), p, 8);
    CHECK(n == 4);
    CHECK_STR(p[0].path, "/usr/bin/dbus-daemon");
    CHECK(p[0].bytes == 0x52000 + 0x1000);
    CHECK_STR(p[1].path, "[heap]");
    CHECK_STR(p[2].path, "[anon]");
    CHECK(p[2].bytes == 0x10000 + 0x1000);
    CHECK_STR(p[3].path, "/dev/shm/a b (deleted)");
    char small[] = "1000-2000 r--p 0 0:0 0 /a\n3000-4000 r--p 0 0:0 0 /b\n";
    CHECK(mlk_sites_maps_parse(small, strlen(small), p, 1) == 1); /* capped: /b dropped, /a kept */
}

__attribute__((noinline)) int sites_test_marker(int x);
__attribute__((noinline)) int sites_test_marker(int x)
{
    return x * 3 + 1;
}

static void check_symbolize(void)
{
    mlk_symbolizer *z = mlk_symbolizer_open();
    CHECK(z != NULL);
    mlk_site_sym s;
    /* A return address points just past a call: one byte into the function stands for a call from it. */
    mlk_symbolize(z, (uintptr_t)sites_test_marker + 1, &s);
    CHECK_STR(s.fn, "sites_test_marker");
    CHECK(s.obj[0] && strstr(s.obj, "test_sites"));
    CHECK(!s.file[0] || (strstr(s.file, "test_sites.c") && s.line > 0));
    mlk_symbolize(z, 0, &s); /* nowhere: empty names, no crash */
    CHECK(!s.fn[0] && !s.obj[0]);
    mlk_symbolizer_close(z);
    mlk_symbolizer_close(NULL);
}

/* No shim in a unit test: with MLK_HEAP_SITES set, the worker diffs /proc/self/maps, and a file mapped once per
 * iteration must come out as the fastest growing path. */
static void check_maps_report(void)
{
    unsetenv("MLK_HEAP_SITES");
    CHECK(mlk_sites_open(0, 10, false) == NULL); /* not asked for: a tool cell */
    setenv("MLK_HEAP_SITES", "sample", 1);
    CHECK(mlk_sites_open(0, 1, false) == NULL); /* one iteration: nothing to compare */
    char file[] = "/tmp/mlk-sites-test-XXXXXX";
    int fd = mkstemp(file);
    CHECK(fd >= 0);
    char page[4096];
    memset(page, 1, sizeof page);
    for (int i = 0; i < 16; i++)
        CHECK(write(fd, page, sizeof page) == (ssize_t)sizeof page);
    mlk_sites *s = mlk_sites_open(2, 10, false);
    CHECK(s != NULL);
    void *maps[12];
    for (int it = 0; it < 12; it++) {
        maps[it] = mmap(NULL, 16 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        mlk_sites_after_iteration(s, it);
    }
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    mlk_sites_report(s, pipefd[1]);
    close(pipefd[1]);
    char out[65536];
    ssize_t n = read(pipefd[0], out, sizeof out - 1);
    close(pipefd[0]);
    out[n > 0 ? n : 0] = '\0';
    /* Checkpoints at iterations 2 and 11: nine more mappings of 64 KiB, on the file's line. */
    char *at = strstr(out, file), *line = at;
    while (line && line > out && line[-1] != '\n')
        line--;
    CHECK(at && !strncmp(line, "W\tsite\t", 7) && strstr(line, "\tmaps\t65536\t\t589824\t") &&
          strstr(line, "\tmaps\t65536\t\t589824\t") < at);
    CHECK(strstr(out, "W\tinfo\tmaps\t\t2\t2\t11\t") != NULL);
    if (!at)
        fprintf(stderr, "report:\n%s", out);
    for (int it = 0; it < 12; it++)
        munmap(maps[it], 16 * 4096);
    close(fd);
    unlink(file);
    mlk_sites_free(s);
    mlk_sites_free(NULL);
    mlk_sites_after_iteration(NULL, 0);
    mlk_sites_report(NULL, 1);
}

int main(void)
{
    check_trends();
    check_checkpoints();
    check_maps_parse();
    check_symbolize();
    check_maps_report();
    return check_summary();
}
