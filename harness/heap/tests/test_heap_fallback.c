/* test_heap_fallback.c: the shim over an allocator lacking malloc_usable_size and the memalign family
 * (heap_test_fake_alloc.so): bytes are reported as not measured (-1), calls are still counted, and every
 * aligned call is served by the allocator itself, never by glibc's. Run by run_expect_note.sh. */
#include "heap_test.h"

#include <malloc.h>
#include <stdint.h>
#include <unistd.h>

static void *volatile sink;

int main(void)
{
    heap_test_get_stats = (mlk_heap_get_stats_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_STATS_SYMBOL);
    int (*owns)(const void *) = (int (*)(const void *))dlsym(RTLD_DEFAULT, "fake_owns");
    if (!heap_test_get_stats || !owns) {
        fprintf(stderr, "FAIL: run with LD_PRELOAD=\"libmemleak_heap.so heap_test_fake_alloc.so\"\n");
        return 1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    mlk_heap_stats s0 = heap_test_stats();
    HT_CHECK(s0.live_bytes == -1 && s0.peak_bytes == -1 && s0.total_bytes == -1,
             "bytes without a usable-size function: live %lld peak %lld total %lld, want -1 (not measured)",
             (long long)s0.live_bytes, (long long)s0.peak_bytes, (long long)s0.total_bytes);

    struct {
        const char *what;
        void *p;
        size_t align;
    } blocks[] = {
        {"malloc", malloc(100), 16},
        {"memalign", memalign(64, 100), 64},
        {"memalign(24)", memalign(24, 100), 32},
        {"aligned_alloc", aligned_alloc(4096, 8192), 4096},
        {"valloc", valloc(100), page},
        {"pvalloc", pvalloc(100), page},
        {"reallocarray", reallocarray(NULL, 10, 10), 16},
    };
    int n = (int)(sizeof blocks / sizeof blocks[0]);
    for (int i = 0; i < n; i++) {
        sink = blocks[i].p;
        HT_CHECK(blocks[i].p && owns(blocks[i].p), "%s: %p not from the allocator", blocks[i].what, blocks[i].p);
        HT_CHECK(((uintptr_t)blocks[i].p & (blocks[i].align - 1)) == 0, "%s: %p not aligned to %zu",
                 blocks[i].what, blocks[i].p, blocks[i].align);
        HT_CHECK(malloc_usable_size(blocks[i].p) == 0, "%s: malloc_usable_size must answer 0 (unknown)",
                 blocks[i].what);
    }
    void *r = realloc(blocks[0].p, 300);
    HT_CHECK(r && owns(r), "realloc moved to %p, outside the allocator", r);
    blocks[0].p = r;
    for (int i = 0; i < n; i++)
        free(blocks[i].p);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.n_allocs == n && d.n_frees == n && d.n_reallocs == 1,
             "counts: +%lld allocs +%lld frees +%lld reallocs, want +%d +%d +1", (long long)d.n_allocs,
             (long long)d.n_frees, (long long)d.n_reallocs, n, n);
    return heap_test_finish("test_heap_fallback");
}
