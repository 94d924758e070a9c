/* test_heap_shim.c: checks libmemleak_heap.so's figures under the allocator run_under.sh preloads: every C
 * entry point, realloc semantics, threads, a planted leak, a C++ library dlopened late. Never sanitized. */
#include "heap_test.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

/* Blocks stay reachable from here, so the compiler cannot elide an allocation it sees unused. */
static void *volatile sink[256];

/* ------------------------------------------------------------------ one block per API */

typedef enum {
    API_MALLOC, API_CALLOC, API_REALLOC_NULL, API_REALLOCARRAY_NULL, API_POSIX_MEMALIGN, API_ALIGNED_ALLOC,
    API_MEMALIGN, API_VALLOC, API_PVALLOC, N_API
} api;

static const char *const api_names[N_API] = {
    "malloc", "calloc", "realloc(NULL)", "reallocarray(NULL)", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc",
};

static size_t page_bytes(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Calls one API. *min_bytes and *align_out receive what the block must at least have. */
static void *call_api(api a, size_t n, size_t align, size_t *min_bytes, size_t *align_out)
{
    void *p = NULL;
    *min_bytes = n;
    *align_out = n < 16 ? 8 : 16; /* mimalloc gives blocks under 16 bytes 8-byte alignment */
    switch (a) {
    case API_MALLOC: p = malloc(n); break;
    case API_CALLOC: p = calloc(n, 1); break;
    case API_REALLOC_NULL: p = realloc(NULL, n); break;
    case API_REALLOCARRAY_NULL: p = reallocarray(NULL, n, 1); break;
    case API_POSIX_MEMALIGN:
        if (posix_memalign(&p, align, n))
            p = NULL;
        *align_out = align;
        break;
    case API_ALIGNED_ALLOC:
        *min_bytes = round_up(n, align); /* C11 wants a multiple of the alignment */
        p = aligned_alloc(align, *min_bytes);
        *align_out = align;
        break;
    case API_MEMALIGN: p = memalign(align, n); *align_out = align; break;
    case API_VALLOC: p = valloc(n); *align_out = page_bytes(); break;
    case API_PVALLOC:
        p = pvalloc(n);
        /* glibc 2.36's pvalloc(0) returns a small block, not a page: not the shim's business */
        *min_bytes = n ? round_up(n, page_bytes()) : 0;
        *align_out = page_bytes();
        break;
    default: break;
    }
    return p;
}

/* Size-class rounding: jemalloc's classes are up to 25% apart, glibc's mmapped chunks round to a page;
 * mimalloc pads an aligned request by the alignment, then rounds to its large pages (1 MiB -> 1.5 MiB).
 * A block counted twice still falls outside, and each block is also checked to the byte against
 * malloc_usable_size. */
static size_t slack_for(api a, size_t n, size_t align)
{
    int aligned = a == API_POSIX_MEMALIGN || a == API_ALIGNED_ALLOC || a == API_MEMALIGN || a == API_VALLOC ||
                  a == API_PVALLOC;
    size_t slack = n / (aligned ? 2 : 4) > 64 ? n / (aligned ? 2 : 4) : 64;
    if (align > 16)
        slack += 2 * align;
    if (a == API_VALLOC || a == API_PVALLOC)
        slack += page_bytes();
    return slack;
}

static void check_one(api a, size_t n, size_t align)
{
    size_t min_bytes, want_align;
    mlk_heap_stats s0 = heap_test_stats();
    void *p = call_api(a, n, align, &min_bytes, &want_align);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    const char *name = api_names[a];
    HT_CHECK(p != NULL, "%s(%zu, align %zu) returned NULL", name, n, align);
    if (!p)
        return;
    sink[0] = p;
    size_t usable = malloc_usable_size(p);
    HT_CHECK(((uintptr_t)p & (want_align - 1)) == 0, "%s(%zu): %p not aligned to %zu", name, n, p, want_align);
    HT_CHECK(d.n_allocs == 1 && d.n_frees == 0 && d.n_reallocs == 0,
             "%s(%zu, align %zu): counts +%lld allocs +%lld frees +%lld reallocs, want +1 +0 +0", name, n, align,
             (long long)d.n_allocs, (long long)d.n_frees, (long long)d.n_reallocs);
    HT_CHECK(d.live_bytes == (int64_t)usable, "%s(%zu, align %zu): live +%lld, usable size %zu", name, n, align,
             (long long)d.live_bytes, usable);
    HT_CHECK(d.live_bytes >= (int64_t)min_bytes && d.live_bytes <= (int64_t)(min_bytes + slack_for(a, n, align)),
             "%s(%zu, align %zu): live +%lld outside [%zu, %zu]", name, n, align, (long long)d.live_bytes,
             min_bytes, min_bytes + slack_for(a, n, align));
    HT_CHECK(d.total_bytes == d.live_bytes, "%s(%zu): total +%lld, live +%lld", name, n, (long long)d.total_bytes,
             (long long)d.live_bytes);
    if (a == API_CALLOC) {
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++)
            nonzero += ((volatile unsigned char *)p)[i] != 0;
        HT_CHECK(nonzero == 0, "calloc(%zu): %zu non-zero bytes", n, nonzero);
    }
    memset(p, 0xa5, min_bytes);

    mlk_heap_stats s1 = heap_test_stats();
    free(p);
    d = heap_test_delta(s1, heap_test_stats());
    HT_CHECK(d.live_bytes == -(int64_t)usable && d.n_frees == 1 && d.n_allocs == 0,
             "free after %s(%zu): live %lld frees +%lld, want -%zu +1", name, n, (long long)d.live_bytes,
             (long long)d.n_frees, usable);
}

static void test_each_api(void)
{
    static const size_t sizes[] = {0, 1, 24, 100, 1000, 4096, 10000, 100000, 1 << 20, 5 << 20};
    static const size_t aligns[] = {16, 64, 4096, 65536};
    mlk_heap_stats base = heap_test_stats();
    int64_t n_calls = 0;
    for (int a = 0; a < N_API; a++) {
        int aligned = a == API_POSIX_MEMALIGN || a == API_ALIGNED_ALLOC || a == API_MEMALIGN;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (size_t k = 0; k < (aligned ? sizeof aligns / sizeof aligns[0] : 1); k++) {
                check_one((api)a, sizes[s], aligns[k]);
                n_calls++;
            }
        }
    }
    mlk_heap_stats d = heap_test_delta(base, heap_test_stats());
    HT_CHECK(d.live_bytes == 0, "after every API: live %+lld, want back at baseline", (long long)d.live_bytes);
    HT_CHECK(d.n_allocs == n_calls && d.n_frees == n_calls, "after %lld calls: +%lld allocs +%lld frees",
             (long long)n_calls, (long long)d.n_allocs, (long long)d.n_frees);
}

/* The shim takes a block's usable size at allocation and again at free, so it must not change in
 * between, whatever else the allocator does: checked for aligned blocks across heavy churn. */
static void test_usable_size_stable(void)
{
    enum { N_BLOCKS = 240 };
    static const size_t aligns[] = {16, 64, 256, 4096, 65536};
    void *blocks[N_BLOCKS];
    size_t sizes[N_BLOCKS];
    mlk_heap_stats s0 = heap_test_stats();
    int64_t sum = 0;
    unsigned x = 12345;
    for (int i = 0; i < N_BLOCKS; i++) {
        x = x * 1103515245u + 12345u;
        size_t n = 1 + (x >> 8) % (i % 3 == 0 ? 300000 : 3000), align = aligns[i % 5];
        switch (i % 4) {
        case 0: blocks[i] = memalign(align, n); break;
        case 1: blocks[i] = posix_memalign(&blocks[i], align, n) ? NULL : blocks[i]; break;
        case 2: blocks[i] = aligned_alloc(align, round_up(n, align)); break;
        default: blocks[i] = valloc(n); break;
        }
        HT_CHECK(blocks[i] != NULL, "aligned block %d (%zu bytes, align %zu) failed", i, n, align);
        sizes[i] = blocks[i] ? malloc_usable_size(blocks[i]) : 0;
        sum += (int64_t)sizes[i];
    }
    for (int i = 0; i < 20000; i++) { /* churn around them, growing and shrinking the heap */
        x = x * 1103515245u + 12345u;
        void *p = malloc(1 + (x >> 8) % 70000);
        sink[4] = p;
        free(p);
    }
    int n_changed = 0;
    for (int i = 0; i < N_BLOCKS; i++)
        n_changed += blocks[i] && malloc_usable_size(blocks[i]) != sizes[i];
    HT_CHECK(n_changed == 0, "%d aligned blocks changed usable size while alive", n_changed);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.live_bytes == sum, "aligned blocks: live %+lld, usable sizes sum to %lld", (long long)d.live_bytes,
             (long long)sum);
    for (int i = 0; i < N_BLOCKS; i++)
        free(blocks[i]);
    d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.live_bytes == 0 && d.n_allocs == d.n_frees, "aligned blocks freed: live %+lld, +%lld allocs +%lld frees",
             (long long)d.live_bytes, (long long)d.n_allocs, (long long)d.n_frees);
}

/* ------------------------------------------------------------------ realloc and edge cases */

static void check_realloc_step(void **p, size_t n, const char *what)
{
    size_t old = malloc_usable_size(*p);
    mlk_heap_stats s0 = heap_test_stats();
    void *q = realloc(*p, n);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(q != NULL, "%s: realloc to %zu failed", what, n);
    if (!q)
        return;
    size_t now = malloc_usable_size(q);
    HT_CHECK(d.n_reallocs == 1 && d.n_allocs == 0 && d.n_frees == 0, "%s: +%lld reallocs +%lld allocs +%lld frees",
             what, (long long)d.n_reallocs, (long long)d.n_allocs, (long long)d.n_frees);
    HT_CHECK(d.live_bytes == (int64_t)now - (int64_t)old, "%s: live %+lld, usable %zu -> %zu", what,
             (long long)d.live_bytes, old, now);
    HT_CHECK(now >= n, "%s: usable %zu < %zu", what, now, n);
    *p = q;
    sink[1] = q;
}

/* realloc(p, 0) must do what the allocator itself does: ask it directly, bypassing the shim. h is the
 * allocator's handle, opened by the caller outside the measured window (dlopen allocates). */
static void check_realloc_zero(void *h)
{
    void *(*real_malloc)(size_t) = (void *(*)(size_t))dlsym(h, "malloc");
    void *(*real_realloc)(void *, size_t) = (void *(*)(void *, size_t))dlsym(h, "realloc");
    void (*real_free)(void *) = (void (*)(void *))dlsym(h, "free");
    void *direct = real_realloc(real_malloc(16), 0);
    real_free(direct);

    void *p = malloc(16);
    size_t usable = malloc_usable_size(p);
    mlk_heap_stats s0 = heap_test_stats();
    void *q = realloc(p, 0);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK((q == NULL) == (direct == NULL), "realloc(p, 0) returned %p through the shim, %p directly", q, direct);
    if (q) {
        HT_CHECK(d.n_reallocs == 1 && d.n_frees == 0, "realloc(p, 0) kept a block: +%lld reallocs +%lld frees",
                 (long long)d.n_reallocs, (long long)d.n_frees);
        free(q);
    } else {
        HT_CHECK(d.n_frees == 1 && d.n_reallocs == 0 && d.live_bytes == -(int64_t)usable,
                 "realloc(p, 0) freed: +%lld frees +%lld reallocs live %+lld, want +1 +0 -%zu", (long long)d.n_frees,
                 (long long)d.n_reallocs, (long long)d.live_bytes, usable);
    }
    if (strcmp(getenv("MLK_HEAP_ALLOCATOR"), "glibc") == 0)
        HT_CHECK(q == NULL, "glibc's realloc(p, 0) frees p and returns NULL; got %p", q);
}

static void test_realloc_and_edges(void)
{
    void *h = heap_test_allocator();
    HT_CHECK(h != NULL, "cannot reach the allocator to compare realloc(p, 0)");
    mlk_heap_stats base = heap_test_stats();
    void *p = malloc(100);
    check_realloc_step(&p, 200, "grow small");
    check_realloc_step(&p, 50, "shrink");
    check_realloc_step(&p, 1 << 20, "grow large");
    check_realloc_step(&p, 3 << 20, "grow larger");
    check_realloc_step(&p, 10, "shrink from large");

    /* volatile: gcc would refuse the literal sizes, and calls on p after a realloc it cannot know failed */
    volatile size_t huge = SIZE_MAX / 4, half = SIZE_MAX / 2;
    sink[3] = p;
    mlk_heap_stats s0 = heap_test_stats();
    errno = 0;
    void *q = realloc(p, huge);
    HT_CHECK(q == NULL && errno == ENOMEM, "realloc to SIZE_MAX/4 gave %p errno %d", q, errno);
    q = reallocarray(sink[3], half, 4);
    HT_CHECK(q == NULL && errno == ENOMEM, "reallocarray overflow gave %p errno %d", q, errno);
    q = malloc(huge);
    HT_CHECK(q == NULL, "malloc(SIZE_MAX/4) gave %p", q);
    q = calloc(half, 4);
    HT_CHECK(q == NULL, "calloc overflow gave %p", q);
    free(NULL);
    void *r = NULL;
    HT_CHECK(posix_memalign(&r, 24, 64) == EINVAL && r == NULL, "posix_memalign(24) must be EINVAL");
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.live_bytes == 0 && d.n_allocs == 0 && d.n_frees == 0 && d.n_reallocs == 0,
             "failed calls and free(NULL) changed counts: live %+lld +%lld allocs +%lld frees +%lld reallocs",
             (long long)d.live_bytes, (long long)d.n_allocs, (long long)d.n_frees, (long long)d.n_reallocs);

    q = reallocarray(sink[3], 300, 2); /* a failure leaks p: the test fails anyway */
    HT_CHECK(q != NULL && malloc_usable_size(q) >= 600, "reallocarray(p, 300, 2) gave %p", q);
    free(q);
    if (h)
        check_realloc_zero(h);
    d = heap_test_delta(base, heap_test_stats());
    HT_CHECK(d.live_bytes == 0, "after realloc tests: live %+lld", (long long)d.live_bytes);
    HT_CHECK(d.n_allocs == 2 && d.n_frees == 2, "realloc tests: +%lld allocs +%lld frees, want +2 +2",
             (long long)d.n_allocs, (long long)d.n_frees);
    if (h)
        dlclose(h);
}

static void test_peak(void)
{
    mlk_heap_reset_peak_fn reset = (mlk_heap_reset_peak_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_RESET_PEAK_SYMBOL);
    HT_CHECK(reset != NULL, "%s not exported", MLK_HEAP_RESET_PEAK_SYMBOL);
    if (!reset)
        return;
    reset();
    mlk_heap_stats s0 = heap_test_stats();
    HT_CHECK(s0.peak_bytes == s0.live_bytes, "after reset: peak %lld live %lld", (long long)s0.peak_bytes,
             (long long)s0.live_bytes);
    void *p = malloc(3 << 20);
    sink[2] = p;
    size_t usable = malloc_usable_size(p);
    free(p);
    mlk_heap_stats s1 = heap_test_stats();
    HT_CHECK(s1.peak_bytes >= s0.live_bytes + (int64_t)usable, "peak %lld after a %zu-byte block over live %lld",
             (long long)s1.peak_bytes, usable, (long long)s0.live_bytes);
    reset();
    s1 = heap_test_stats();
    HT_CHECK(s1.peak_bytes == s1.live_bytes, "second reset: peak %lld live %lld", (long long)s1.peak_bytes,
             (long long)s1.live_bytes);
}

/* ------------------------------------------------------------------ threads */

#define N_THREADS 4
#define N_OPS 200000
#define N_SLOTS 64

typedef struct worker {
    pthread_barrier_t *start, *done, *leave;
    unsigned seed;
    int64_t n_allocs, n_frees, n_reallocs;
} worker;

static size_t pick_size(unsigned *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    unsigned r = *x;
    if (r % 64 == 0)
        return 16384 + r % 200000; /* some large blocks, mmap territory for glibc */
    return 1 + r % 2048;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    void *slots[N_SLOTS] = {0};
    unsigned x = w->seed;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < N_OPS; i++) {
        size_t n = pick_size(&x);
        void **s = &slots[x % N_SLOTS];
        if (!*s) {
            *s = (x & 1) ? malloc(n) : calloc(1, n);
            w->n_allocs += *s != NULL;
        } else if (x % 3 == 0) {
            void *q = realloc(*s, n);
            if (q) {
                *s = q;
                w->n_reallocs++;
            }
        } else {
            free(*s);
            *s = NULL;
            w->n_frees++;
        }
        if (*s)
            *(volatile char *)*s = (char)i;
    }
    for (int i = 0; i < N_SLOTS; i++) {
        if (slots[i]) {
            free(slots[i]);
            w->n_frees++;
        }
    }
    pthread_barrier_wait(w->done);
    pthread_barrier_wait(w->leave); /* thread exit frees glibc's per-thread state: after the measurement */
    return NULL;
}

/* Measured between two barriers, so thread creation and exit (stacks, TLS) fall outside the window. */
static void test_threads(void)
{
    pthread_barrier_t start, done, leave;
    pthread_barrier_init(&start, NULL, N_THREADS + 1);
    pthread_barrier_init(&done, NULL, N_THREADS + 1);
    pthread_barrier_init(&leave, NULL, N_THREADS + 1);
    worker w[N_THREADS];
    pthread_t t[N_THREADS];
    int n_started = 0;
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker){&start, &done, &leave, 0x9e3779b9u * (unsigned)(i + 1), 0, 0, 0};
        if (pthread_create(&t[i], NULL, worker_main, &w[i]) != 0)
            break;
        n_started++;
    }
    HT_CHECK(n_started == N_THREADS, "only %d threads started", n_started);
    if (n_started != N_THREADS) { /* the barriers would wait forever */
        fprintf(stderr, "cannot go on without %d threads\n", N_THREADS);
        exit(1);
    }
    mlk_heap_stats s0 = heap_test_stats(); /* the workers allocate the moment the barrier opens */
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&done);
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    pthread_barrier_wait(&leave);
    int64_t allocs = 0, frees = 0, reallocs = 0;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
        allocs += w[i].n_allocs;
        frees += w[i].n_frees;
        reallocs += w[i].n_reallocs;
    }
    HT_CHECK(d.live_bytes == 0, "threads: live %+lld at the end, want baseline", (long long)d.live_bytes);
    HT_CHECK(d.n_allocs == allocs && d.n_frees == frees && d.n_reallocs == reallocs,
             "threads: counted %lld/%lld/%lld allocs/frees/reallocs, made %lld/%lld/%lld", (long long)d.n_allocs,
             (long long)d.n_frees, (long long)d.n_reallocs, (long long)allocs, (long long)frees,
             (long long)reallocs);
    HT_CHECK(allocs > 100000 && reallocs > 10000, "threads: the mix did too little (%lld allocs, %lld reallocs)",
             (long long)allocs, (long long)reallocs);
    printf("threads: %lld allocs, %lld frees, %lld reallocs, peak %lld bytes\n", (long long)allocs,
           (long long)frees, (long long)reallocs, (long long)heap_test_stats().peak_bytes);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&done);
    pthread_barrier_destroy(&leave);
}

/* ------------------------------------------------------------------ a planted leak, a late C++ library */

static void *leaked[100];

static void test_leak(void)
{
    mlk_heap_stats s0 = heap_test_stats();
    for (int i = 0; i < 100; i++) {
        leaked[i] = malloc(4096);
        memset(leaked[i], i, 4096);
    }
    mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.live_bytes >= 409600, "100 blocks of 4 KiB: live +%lld", (long long)d.live_bytes);
    HT_CHECK(d.n_allocs == 100 && d.n_frees == 0, "leak: +%lld allocs +%lld frees", (long long)d.n_allocs,
             (long long)d.n_frees);
    for (int i = 0; i < 100; i++)
        free(leaked[i]);
    d = heap_test_delta(s0, heap_test_stats());
    HT_CHECK(d.live_bytes == 0 && d.n_frees == 100, "after freeing the leak: live %+lld +%lld frees",
             (long long)d.live_bytes, (long long)d.n_frees);
}

/* A C program that dlopens a C++ library locally (memleak-run loading an engine): libstdc++ arrives after
 * the shim resolved, outside the global scope, and its operators must still be counted exactly once. */
static void test_late_cxx(const char *plugin)
{
    void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    HT_CHECK(h != NULL, "dlopen %s: %s", plugin, dlerror());
    if (!h)
        return;
    int (*hold)(int) = (int (*)(int))dlsym(h, "heap_plugin_hold");
    int (*release)(void) = (int (*)(void))dlsym(h, "heap_plugin_release");
    HT_CHECK(hold && release, "plugin lacks heap_plugin_hold/release");
    if (hold && release) {
        /* first round unmeasured: the shim looks the operators up in the new libstdc++ (dlsym allocates) */
        hold(1);
        release();
        mlk_heap_stats s0 = heap_test_stats();
        int n = hold(1000);
        mlk_heap_stats d = heap_test_delta(s0, heap_test_stats());
        HT_CHECK(n == 1000, "plugin held %d blocks", n);
        HT_CHECK(d.n_allocs == 1001, "1000 new[] plus one vector: +%lld allocs", (long long)d.n_allocs);
        HT_CHECK(d.live_bytes >= 1000 * 4096 && d.live_bytes <= 1000 * (4096 + 1024) + 16384,
                 "plugin: live +%lld for 1000 x 4 KiB", (long long)d.live_bytes);
        HT_CHECK(release() == 1000, "plugin released a different number of blocks");
        d = heap_test_delta(s0, heap_test_stats());
        HT_CHECK(d.live_bytes == 0 && d.n_frees == 1001, "plugin released: live %+lld +%lld frees",
                 (long long)d.live_bytes, (long long)d.n_frees);
    }
    dlclose(h);
}

int main(int argc, char **argv)
{
    int rc = heap_test_setup();
    if (rc)
        return rc;
    mlk_heap_stats base = heap_test_stats();
    HT_CHECK(base.live_bytes >= 0 && base.n_allocs >= base.n_frees, "initial stats live %lld allocs %lld",
             (long long)base.live_bytes, (long long)base.n_allocs);
    test_each_api();
    test_usable_size_stable();
    test_realloc_and_edges();
    test_peak();
    test_leak();
    test_threads();
    if (argc > 1)
        test_late_cxx(argv[1]);
    return heap_test_finish("test_heap_shim");
}
