/* test_allocators.c: the allocator table: names, a missing library names its Debian package, and in this
 * process glibc is detected and its release call works. It must never preload anything itself. */
#include <string.h>

#include "allocators.h"
#include "mlk_check.h"

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
    return mlk_check_summary();
}
