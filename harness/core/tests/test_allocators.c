/* test_allocators.c: the allocator table: names, a missing library names its Debian package, and in this
 * process glibc is detected and its release call works. It must never preload anything itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocators.h"
#include "mlk_check.h"

/* A scenario's own allocator library: read, never loaded; refused with the file named unless it serves malloc. */
static void test_preload(void)
{
    mlk_error err = {0};
    const char *je = MLK_LIBDIR "libjemalloc.so.2";
    if (access(je, R_OK) == 0)
        CHECK_OK(mlk_allocator_check_preload("mine", je, &err), &err);
    CHECK_OK(mlk_allocator_check_preload("libc", MLK_LIBDIR "libc.so.6", &err), &err);
    CHECK(mlk_allocator_check_preload("m", MLK_LIBDIR "libm.so.6", &err) == MLK_E_PARSE);
    CHECK(strstr(err.msg, "libm.so.6 does not define malloc and free"));
    CHECK(mlk_allocator_check_preload("m", "/etc/passwd", &err) == MLK_E_PARSE && strstr(err.msg, "not an x86-64 ELF"));
    CHECK(mlk_allocator_check_preload("m", "lib.so", &err) == MLK_E_PARSE && strstr(err.msg, "not an absolute path"));
    CHECK(mlk_allocator_check_preload("m", "/nonexistent/lib.so", &err) == MLK_E_NOTFOUND);
    CHECK(strstr(err.msg, "allocator m: cannot open /nonexistent/lib.so"));
    CHECK(mlk_allocator_check_preload("m", "/tmp", &err) == MLK_E_PARSE && strstr(err.msg, "not a regular file"));
    /* A FIFO is neither waited on nor read. */
    char fifo[] = "/tmp/mlk-test-fifo-XXXXXX";
    int fd = mkstemp(fifo);
    if (fd >= 0) {
        close(fd);
        unlink(fifo);
        if (mkfifo(fifo, 0600) == 0) {
            CHECK(mlk_allocator_check_preload("m", fifo, &err) == MLK_E_PARSE && strstr(err.msg, "not a regular"));
            unlink(fifo);
        }
    }
    /* A truncated library: its section table lies past the end. */
    char cut[] = "/tmp/mlk-test-cut-XXXXXX";
    int out = mkstemp(cut);
    FILE *in = fopen(MLK_LIBDIR "libc.so.6", "rb");
    if (out >= 0 && in) {
        char buf[4096];
        size_t n = fread(buf, 1, sizeof buf, in);
        CHECK(write(out, buf, n) == (ssize_t)n);
        CHECK(mlk_allocator_check_preload("cut", cut, &err) == MLK_E_PARSE && strstr(err.msg, "damaged ELF tables"));
    }
    if (in)
        fclose(in);
    if (out >= 0) {
        close(out);
        unlink(cut);
    }
}

int main(void)
{
    mlk_error err = {0};
    const char *names[] = {"glibc", "jemalloc", "tcmalloc", "mimalloc"};
    for (int i = 0; i < 4; i++) {
        const mlk_allocator_info *a = mlk_allocator_find(names[i], &err);
        CHECK(a && !strcmp(a->name, names[i]) && a->package && a->release);
        CHECK(i == 0 ? !a->preload : a->preload && a->marker);
    }
    CHECK(!mlk_allocator_find("hoard", &err));
    CHECK(strstr(err.msg, "jemalloc") != NULL);
    mlk_allocator_info fake = *mlk_allocator_find("tcmalloc", &err);
    fake.preload = "/nonexistent/libtcmalloc_minimal.so.4";
    CHECK(mlk_allocator_check(&fake, &err) == MLK_E_NOTFOUND);
    CHECK(strstr(err.msg, "libtcmalloc-minimal4") != NULL);
    CHECK(mlk_allocator_check(mlk_allocator_find("glibc", &err), &err) == 0);
    mlk_alloc_kind kind;
    char path[256];
    mlk_allocator_detect(&kind, path, sizeof path);
    CHECK(kind == MLK_ALLOC_GLIBC);
    CHECK(strstr(path, "libc.so") != NULL);
    CHECK(mlk_allocator_release(MLK_ALLOC_GLIBC) == 0);
    CHECK(mlk_allocator_release(MLK_ALLOC_JEMALLOC) == -1); /* not loaded here */
    test_preload();
    return check_summary();
}
