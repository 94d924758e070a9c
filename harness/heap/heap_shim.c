/* heap_shim.c: libmemleak_heap.so's C half: finds the allocator behind it, forwards the malloc family to it
 * and counts usable bytes. It must never change what a call returns, nor lock or allocate on the hot path. */
#include "heap_shim.h"
#include "heap_shim_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Separate cache lines: the counters bounce between cores, the function table must stay read-only. */
_Alignas(64) mlk_heap_next mlk_heap_real;
_Alignas(64) mlk_heap_counters mlk_heap_count;
__thread mlk_heap_thread mlk_heap_self __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------ bootstrap buffer */

/* dlsym may allocate before the real functions are known (glibc < 2.34 always did, 2.36 does on error);
 * 64 KiB is far more than that needs. Each block is preceded by its size, so realloc can copy it out. */
#define MLK_BOOT_BYTES (64 * 1024)
#define MLK_BOOT_HEADER 16
static _Alignas(64) unsigned char mlk_boot_buf[MLK_BOOT_BYTES];
static _Atomic size_t mlk_boot_used;

bool mlk_heap_is_boot(const void *p)
{
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)mlk_boot_buf;
    return a >= base && a < base + MLK_BOOT_BYTES;
}

void *mlk_heap_boot_alloc(size_t align, size_t n_bytes)
{
    if (align < MLK_BOOT_HEADER)
        align = MLK_BOOT_HEADER;
    if (n_bytes > MLK_BOOT_BYTES || align > MLK_BOOT_BYTES) {
        errno = ENOMEM;
        return NULL;
    }
    size_t start = atomic_load_explicit(&mlk_boot_used, memory_order_relaxed), user, end;
    do {
        user = (start + MLK_BOOT_HEADER + align - 1) & ~(align - 1);
        end = (user + n_bytes + MLK_BOOT_HEADER - 1) & ~(size_t)(MLK_BOOT_HEADER - 1);
        if (end > MLK_BOOT_BYTES) {
            static _Atomic int noted;
            if (!atomic_exchange_explicit(&noted, 1, memory_order_relaxed))
                mlk_heap_note("bootstrap buffer exhausted: allocations before the allocator is found fail");
            errno = ENOMEM;
            return NULL;
        }
    } while (!atomic_compare_exchange_weak_explicit(&mlk_boot_used, &start, end, memory_order_relaxed,
                                                    memory_order_relaxed));
    memcpy(mlk_boot_buf + user - sizeof(size_t), &n_bytes, sizeof n_bytes);
    return mlk_boot_buf + user;
}

static size_t mlk_boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - sizeof(size_t), sizeof n);
    return n;
}

void mlk_heap_note(const char *msg)
{
    static const char prefix[] = "memleak_heap: note: ";
    ssize_t rc = write(2, prefix, sizeof prefix - 1);
    rc = write(2, msg, strlen(msg));
    rc = write(2, "\n", 1);
    (void)rc; /* a note that cannot be written is not worth failing an allocation for */
}

/* ------------------------------------------------------------------ resolution */

#define MLK_FN(type, ptr) ((type)(ptr))

static const void *mlk_owner_of(const void *fn)
{
    Dl_info info;
    if (!fn || !dladdr(fn, &info))
        return NULL;
    return info.dli_fbase;
}

/* The next definition of name, only if it lives in the same object as the allocator's malloc. */
static void *mlk_owned(const char *name, const void *owner)
{
    void *fn = dlsym(RTLD_NEXT, name);
    return fn && mlk_owner_of(fn) == owner ? fn : NULL;
}

/* tcmalloc's malloc_usable_size is MallocExtension::instance()->GetAllocatedSize(p): a virtual call that
 * answers 0 (after allocating a default instance) until tcmalloc's own static constructor has run, which
 * comes after libstdc++'s and libc's first allocations. TCMallocImplementation::GetAllocatedSize is the
 * same pagemap lookup without the instance; checked on gperftools 2.10: it never reads `this`. */
static size_t (*mlk_tc_allocated_size)(const void *self, const void *p);

static size_t mlk_tc_usable_size(void *p)
{
    return mlk_tc_allocated_size(NULL, p);
}

static size_t (*mlk_resolve_usable(const void *owner))(void *)
{
    void *tc = mlk_owned("_ZN22TCMallocImplementation16GetAllocatedSizeEPKv", owner);
    if (tc) {
        mlk_tc_allocated_size = MLK_FN(size_t(*)(const void *, const void *), tc);
        return mlk_tc_usable_size;
    }
    /* tcmalloc and mimalloc also call it malloc_size; every allocator checked exports the first name. */
    static const char *const names[] = {"malloc_usable_size", "malloc_size", "mi_usable_size"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *fn = mlk_owned(names[i], owner);
        if (fn)
            return MLK_FN(size_t(*)(void *), fn);
    }
    mlk_heap_note("the allocator has no malloc_usable_size: byte counts are not measured (reported as -1)");
    return NULL;
}

static void mlk_check_first(void)
{
    void *fn = dlsym(RTLD_DEFAULT, "malloc");
    if (mlk_owner_of(fn) != mlk_owner_of((const void *)mlk_boot_size))
        mlk_heap_note("malloc does not resolve to the shim (preload it before the allocator): counts are incomplete");
}

/* Fills a private table, then publishes it: calls made meanwhile (dlsym's own) see ready == 0 and use the
 * bootstrap buffer, so resolution never recurses into itself. */
static void mlk_resolve(void)
{
    mlk_heap_next r = {0};
    r.malloc = MLK_FN(void *(*)(size_t), dlsym(RTLD_NEXT, "malloc"));
    r.free = MLK_FN(void (*)(void *), dlsym(RTLD_NEXT, "free"));
    r.calloc = MLK_FN(void *(*)(size_t, size_t), dlsym(RTLD_NEXT, "calloc"));
    r.realloc = MLK_FN(void *(*)(void *, size_t), dlsym(RTLD_NEXT, "realloc"));
    if (!r.malloc || !r.free || !r.calloc || !r.realloc) {
        mlk_heap_note("malloc, free, calloc or realloc not found after the shim: only the bootstrap buffer serves");
        return;
    }
    const void *owner = mlk_owner_of((const void *)r.malloc);
    r.posix_memalign = MLK_FN(int (*)(void **, size_t, size_t), mlk_owned("posix_memalign", owner));
    r.aligned_alloc = MLK_FN(void *(*)(size_t, size_t), mlk_owned("aligned_alloc", owner));
    r.memalign = MLK_FN(void *(*)(size_t, size_t), mlk_owned("memalign", owner));
    r.valloc = MLK_FN(void *(*)(size_t), mlk_owned("valloc", owner));
    r.pvalloc = MLK_FN(void *(*)(size_t), mlk_owned("pvalloc", owner));
    r.reallocarray = MLK_FN(void *(*)(void *, size_t, size_t), mlk_owned("reallocarray", owner));
    r.usable_size = mlk_resolve_usable(owner);
    /* glibc's, reached past an allocator that lacks one, would read a foreign block's header */
    r.usable_size_any = MLK_FN(size_t(*)(void *), mlk_owned("malloc_usable_size", owner));
    if (!r.posix_memalign && !r.aligned_alloc && !r.memalign)
        mlk_heap_note("the allocator has no aligned allocation function: the memalign family returns NULL");
    mlk_check_first();
    mlk_maps_resolve((const void *)r.malloc);

    mlk_heap_real.malloc = r.malloc;
    mlk_heap_real.free = r.free;
    mlk_heap_real.calloc = r.calloc;
    mlk_heap_real.realloc = r.realloc;
    mlk_heap_real.posix_memalign = r.posix_memalign;
    mlk_heap_real.aligned_alloc = r.aligned_alloc;
    mlk_heap_real.memalign = r.memalign;
    mlk_heap_real.valloc = r.valloc;
    mlk_heap_real.pvalloc = r.pvalloc;
    mlk_heap_real.reallocarray = r.reallocarray;
    mlk_heap_real.usable_size = r.usable_size;
    mlk_heap_real.usable_size_any = r.usable_size_any;
    atomic_store_explicit(&mlk_heap_real.ready, 1, memory_order_release);
}

int64_t mlk_heap_size_untrusted(void *p)
{
    if (!mlk_heap_real.usable_size || mlk_heap_self.sizing)
        return 0;
    mlk_heap_self.sizing = 1;
    size_t n = mlk_heap_real.usable_size(p);
    mlk_heap_self.sizing = 0;
    if (n) /* a live block always has a usable size: 0 means the function is not working yet */
        atomic_store_explicit(&mlk_heap_real.usable_size_trusted, 1, memory_order_relaxed);
    return (int64_t)n;
}

bool mlk_heap_ready_slow(void)
{
    static _Atomic int state; /* 0 not started, 1 resolving, 2 done */
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&state, &expected, 1, memory_order_acq_rel,
                                                memory_order_acquire)) {
        mlk_resolve();
        atomic_store_explicit(&state, 2, memory_order_release);
    }
    return atomic_load_explicit(&mlk_heap_real.ready, memory_order_acquire);
}

__attribute__((constructor)) static void mlk_heap_init(void)
{
    if (mlk_heap_ready())
        mlk_heap_cxx_resolve();
    mlk_sites_init();
}

/* ------------------------------------------------------------------ emulation */

static bool mlk_is_pow2(size_t x)
{
    return x && !(x & (x - 1));
}

static size_t mlk_round_align(size_t align)
{
    size_t a = sizeof(void *);
    while (a < align && a <= (SIZE_MAX >> 1))
        a <<= 1;
    return a;
}

void *mlk_heap_aligned_raw(size_t align, size_t n_bytes)
{
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (mlk_heap_real.posix_memalign) {
        void *p = NULL;
        int rc = mlk_heap_real.posix_memalign(&p, align, n_bytes);
        if (rc) {
            errno = rc;
            return NULL;
        }
        return p;
    }
    if (mlk_heap_real.aligned_alloc) {
        size_t rounded = (n_bytes + align - 1) & ~(align - 1);
        if (rounded < n_bytes) {
            errno = ENOMEM;
            return NULL;
        }
        return mlk_heap_real.aligned_alloc(align, rounded);
    }
    if (mlk_heap_real.memalign)
        return mlk_heap_real.memalign(align, n_bytes);
    errno = ENOMEM;
    return NULL;
}

static void *mlk_emulate_pvalloc(size_t n_bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = n_bytes ? (n_bytes + page - 1) & ~(page - 1) : page;
    if (rounded < n_bytes) {
        errno = ENOMEM;
        return NULL;
    }
    return mlk_heap_aligned_raw(page, rounded);
}

/* ------------------------------------------------------------------ counting helpers */

/* One realloc-like call on p (old_bytes usable) that returned q. realloc(NULL) is an allocation; a NULL
 * result for size 0 means the allocator freed p (glibc, tcmalloc); a NULL result otherwise is a failure
 * that left p alive. A moved block counts all its bytes into total_bytes, an in-place one its growth. */
static void mlk_count_realloc(void *p, int64_t old_bytes, void *q, size_t n_bytes, bool p_own)
{
    /* The unwinder's own blocks (heap_sites.c) on either side: a free of p if it was counted, then an allocation. */
    if (MLK_UNLIKELY(p_own) || (MLK_UNLIKELY(mlk_sites_mode) && MLK_UNLIKELY(mlk_heap_self.in_sites))) {
        if (p && !p_own && (q || n_bytes == 0))
            mlk_heap_on_free(old_bytes);
        if (q)
            mlk_heap_on_alloc(q);
        return;
    }
    if (!p) {
        if (q)
            mlk_heap_counted_asked(q, mlk_heap_self.n_alloc_events, n_bytes);
        return;
    }
    if (!q) {
        if (n_bytes == 0)
            mlk_heap_on_free(old_bytes);
        return;
    }
    mlk_heap_self.n_alloc_events++;
    int64_t now = mlk_heap_size_of(q);
    /* The block's old record went before the call: a realloc'd block is a new one, of the size asked for (a buffer
     * grown in place within jemalloc's size class still grows by what its code appends). */
    mlk_sites_on_alloc(q, n_bytes > 0 && (int64_t)n_bytes <= now ? (int64_t)n_bytes : now);
    int64_t live = atomic_fetch_add_explicit(&mlk_heap_count.live_bytes, now - old_bytes, memory_order_relaxed) +
                   (now - old_bytes);
    atomic_fetch_add_explicit(&mlk_heap_count.n_reallocs, 1, memory_order_relaxed);
    int64_t added = q != p ? now : (now > old_bytes ? now - old_bytes : 0);
    atomic_fetch_add_explicit(&mlk_heap_count.total_bytes, added, memory_order_relaxed);
    mlk_heap_raise_peak(live);
}

/* A realloc-like call counts only if no interposed call inside it did (glibc's reallocarray reallocs). */
static void *mlk_realloc_counted(void *p, int64_t old_bytes, void *q, size_t n_bytes, uint64_t alloc_mark,
                                 uint64_t free_mark, uint64_t rec)
{
    if (mlk_heap_self.n_alloc_events == alloc_mark && mlk_heap_self.n_free_events == free_mark)
        mlk_count_realloc(p, old_bytes, q, n_bytes, mlk_sites_rec_own(rec));
    return q;
}

/* ------------------------------------------------------------------ interposed C API */

MLK_EXPORT void *malloc(size_t n_bytes)
{
    if (MLK_UNLIKELY(!mlk_heap_ready()))
        return mlk_heap_boot_alloc(0, n_bytes);
    uint64_t mark = mlk_heap_alloc_mark();
    return mlk_heap_counted_asked(mlk_heap_real.malloc(n_bytes), mark, n_bytes);
}

MLK_EXPORT void *calloc(size_t n_items, size_t item_bytes)
{
    if (MLK_UNLIKELY(!mlk_heap_ready())) {
        size_t n_bytes;
        if (__builtin_mul_overflow(n_items, item_bytes, &n_bytes)) {
            errno = ENOMEM;
            return NULL;
        }
        return mlk_heap_boot_alloc(0, n_bytes); /* never reused, so already zero */
    }
    uint64_t mark = mlk_heap_alloc_mark();
    size_t asked;
    if (__builtin_mul_overflow(n_items, item_bytes, &asked))
        asked = 0; /* the call fails anyway */
    return mlk_heap_counted_asked(mlk_heap_real.calloc(n_items, item_bytes), mark, asked);
}

/* A bootstrap block moves to the real allocator on its first realloc (counted as an allocation there). */
static void *mlk_realloc_boot(void *p, size_t n_bytes)
{
    if (p && !mlk_heap_is_boot(p)) { /* a real block while unresolved cannot exist; refuse rather than guess */
        errno = ENOMEM;
        return NULL;
    }
    if (p && n_bytes == 0)
        return NULL;
    void *q = malloc(n_bytes);
    if (q && p) {
        size_t old = mlk_boot_size(p);
        memcpy(q, p, old < n_bytes ? old : n_bytes);
    }
    return q;
}

MLK_EXPORT void *realloc(void *p, size_t n_bytes)
{
    if (MLK_UNLIKELY(!mlk_heap_ready() || mlk_heap_is_boot(p)))
        return mlk_realloc_boot(p, n_bytes);
    int64_t old = p ? mlk_heap_size_of(p) : 0;
    uint64_t alloc_mark = mlk_heap_self.n_alloc_events, free_mark = mlk_heap_self.n_free_events;
    uint64_t rec = mlk_sites_take_for_realloc(p);
    void *q = mlk_heap_real.realloc(p, n_bytes);
    mlk_sites_after_realloc(p, rec, q, n_bytes);
    return mlk_realloc_counted(p, old, q, n_bytes, alloc_mark, free_mark, rec);
}

MLK_EXPORT void *reallocarray(void *p, size_t n_items, size_t item_bytes)
{
    size_t n_bytes;
    if (__builtin_mul_overflow(n_items, item_bytes, &n_bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (MLK_UNLIKELY(!mlk_heap_ready() || mlk_heap_is_boot(p) || !mlk_heap_real.reallocarray))
        return realloc(p, n_bytes); /* jemalloc and tcmalloc lack it: glibc's would realloc a foreign block */
    int64_t old = p ? mlk_heap_size_of(p) : 0;
    uint64_t alloc_mark = mlk_heap_self.n_alloc_events, free_mark = mlk_heap_self.n_free_events;
    uint64_t rec = mlk_sites_take_for_realloc(p);
    void *q = mlk_heap_real.reallocarray(p, n_items, item_bytes);
    mlk_sites_after_realloc(p, rec, q, n_bytes);
    return mlk_realloc_counted(p, old, q, n_bytes, alloc_mark, free_mark, rec);
}

MLK_EXPORT void free(void *p)
{
    if (MLK_UNLIKELY(mlk_heap_is_boot(p)))
        return;
    if (MLK_UNLIKELY(!mlk_heap_ready()))
        return; /* nothing but bootstrap blocks can exist yet */
    if (!p) {
        mlk_heap_real.free(p);
        return;
    }
    int64_t n = mlk_heap_size_of(p);
    uint64_t mark = mlk_heap_self.n_free_events;
    bool own = mlk_sites_on_free(p);
    mlk_heap_real.free(p);
    if (MLK_LIKELY(!own))
        mlk_heap_counted_free(n, mark);
}

MLK_EXPORT int posix_memalign(void **out, size_t align, size_t n_bytes)
{
    bool valid = mlk_is_pow2(align) && align % sizeof(void *) == 0;
    if (MLK_UNLIKELY(!mlk_heap_ready())) {
        void *p = valid ? mlk_heap_boot_alloc(align, n_bytes) : NULL;
        if (p)
            *out = p;
        return !valid ? EINVAL : p ? 0 : ENOMEM;
    }
    uint64_t mark = mlk_heap_alloc_mark();
    if (mlk_heap_real.posix_memalign) {
        int rc = mlk_heap_real.posix_memalign(out, align, n_bytes);
        if (rc == 0)
            mlk_heap_counted(*out, mark);
        return rc;
    }
    if (!valid)
        return EINVAL;
    void *p = mlk_heap_counted(mlk_heap_aligned_raw(align, n_bytes), mark);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

MLK_EXPORT void *aligned_alloc(size_t align, size_t n_bytes)
{
    if (MLK_UNLIKELY(!mlk_heap_ready()))
        return mlk_heap_boot_alloc(mlk_round_align(align), n_bytes);
    uint64_t mark = mlk_heap_alloc_mark();
    return mlk_heap_counted(mlk_heap_real.aligned_alloc ? mlk_heap_real.aligned_alloc(align, n_bytes)
                                                        : mlk_heap_aligned_raw(mlk_round_align(align), n_bytes),
                            mark);
}

MLK_EXPORT void *memalign(size_t align, size_t n_bytes)
{
    if (MLK_UNLIKELY(!mlk_heap_ready()))
        return mlk_heap_boot_alloc(mlk_round_align(align), n_bytes);
    uint64_t mark = mlk_heap_alloc_mark();
    return mlk_heap_counted(mlk_heap_real.memalign ? mlk_heap_real.memalign(align, n_bytes)
                                                   : mlk_heap_aligned_raw(mlk_round_align(align), n_bytes),
                            mark);
}

MLK_EXPORT void *valloc(size_t n_bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (MLK_UNLIKELY(!mlk_heap_ready()))
        return mlk_heap_boot_alloc(page, n_bytes);
    uint64_t mark = mlk_heap_alloc_mark();
    return mlk_heap_counted(mlk_heap_real.valloc ? mlk_heap_real.valloc(n_bytes) : mlk_heap_aligned_raw(page, n_bytes),
                            mark);
}

MLK_EXPORT void *pvalloc(size_t n_bytes)
{
    if (MLK_UNLIKELY(!mlk_heap_ready()))
        return mlk_heap_boot_alloc((size_t)sysconf(_SC_PAGESIZE), n_bytes);
    uint64_t mark = mlk_heap_alloc_mark();
    return mlk_heap_counted(mlk_heap_real.pvalloc ? mlk_heap_real.pvalloc(n_bytes) : mlk_emulate_pvalloc(n_bytes),
                            mark);
}

MLK_EXPORT size_t malloc_usable_size(void *p)
{
    if (mlk_heap_is_boot(p))
        return mlk_boot_size(p);
    if (!p || !mlk_heap_ready() || !mlk_heap_real.usable_size_any)
        return 0;
    return mlk_heap_real.usable_size_any(p);
}

/* ------------------------------------------------------------------ exported statistics */

MLK_EXPORT void mlk_heap_get_stats(mlk_heap_stats *out)
{
    if (!out)
        return;
    bool measured = mlk_heap_ready() && mlk_heap_real.usable_size;
    out->live_bytes = measured ? atomic_load_explicit(&mlk_heap_count.live_bytes, memory_order_relaxed) : -1;
    out->peak_bytes = measured ? atomic_load_explicit(&mlk_heap_count.peak_bytes, memory_order_relaxed) : -1;
    out->total_bytes = measured ? atomic_load_explicit(&mlk_heap_count.total_bytes, memory_order_relaxed) : -1;
    out->n_allocs = atomic_load_explicit(&mlk_heap_count.n_allocs, memory_order_relaxed);
    out->n_frees = atomic_load_explicit(&mlk_heap_count.n_frees, memory_order_relaxed);
    out->n_reallocs = atomic_load_explicit(&mlk_heap_count.n_reallocs, memory_order_relaxed);
    mlk_maps_stats(&out->mapped_bytes, &out->n_mappings);
    out->mapped_peak_bytes = mlk_maps_peak();
    out->shim_bytes = mlk_sites_resident() + mlk_maps_resident();
}

MLK_EXPORT void mlk_heap_reset_peak(void)
{
    atomic_store_explicit(&mlk_heap_count.peak_bytes,
                          atomic_load_explicit(&mlk_heap_count.live_bytes, memory_order_relaxed),
                          memory_order_relaxed);
    mlk_maps_reset_peak();
}
