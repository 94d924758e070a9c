/* heap_shim_internal.h: what heap_shim.c shares with heap_cxx.c inside libmemleak_heap.so (all hidden).
 * Nothing here may be exported, and nothing here may take a lock or allocate on the counting path. */
#ifndef MLK_HEAP_SHIM_INTERNAL_H
#define MLK_HEAP_SHIM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MLK_EXPORT __attribute__((visibility("default")))
#define MLK_LIKELY(x) __builtin_expect(!!(x), 1)
#define MLK_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The next definitions (normally the active allocator's). A member is NULL when the symbol is missing or
 * belongs to another object than malloc (glibc's pvalloc under jemalloc would hand out glibc blocks that
 * jemalloc's free cannot take back); the caller then emulates it with the allocator's own functions. */
typedef struct mlk_heap_next {
    _Atomic int ready; /* 1 once the table below is filled; read with acquire before any member */
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    size_t (*usable_size)(void *);      /* the owner's; NULL means bytes are not measured */
    _Atomic int usable_size_trusted;    /* it answered once without allocating: no recursion guard needed */
    size_t (*usable_size_any)(void *);  /* the owner's malloc_usable_size, for callers of ours (else 0) */
} mlk_heap_next;

typedef struct mlk_heap_counters {
    _Atomic int64_t live_bytes;
    _Atomic int64_t peak_bytes;
    _Atomic int64_t n_allocs;
    _Atomic int64_t n_frees;
    _Atomic int64_t n_reallocs;
    _Atomic int64_t total_bytes;
} mlk_heap_counters;

extern mlk_heap_next mlk_heap_real;
extern mlk_heap_counters mlk_heap_count;

/* Events this thread has counted. An interposed call counts only if nothing counted while it forwarded:
 * glibc's reallocarray calls realloc, libstdc++'s operator new calls malloc, jemalloc's operator delete
 * calls free, all through the PLT, i.e. through this shim again, which then counts the inner call. */
typedef struct mlk_heap_thread {
    uint64_t n_alloc_events; /* allocations and reallocs counted */
    uint64_t n_free_events;
    int sizing; /* inside the allocator's usable-size function (until it is trusted) */
} mlk_heap_thread;
extern __thread mlk_heap_thread mlk_heap_self __attribute__((tls_model("initial-exec")));

/* True when mlk_heap_real is usable; resolves it on first use. False while resolution is under way
 * (dlsym allocating, or another thread resolving): the caller must then use the bootstrap buffer. */
bool mlk_heap_ready_slow(void);
static inline bool mlk_heap_ready(void)
{
    if (MLK_LIKELY(atomic_load_explicit(&mlk_heap_real.ready, memory_order_acquire)))
        return true;
    return mlk_heap_ready_slow();
}

/* Bootstrap buffer: a static bump area for calls made before the real functions are known. Its blocks
 * are zeroed, never reused and never counted; free of one is a no-op. NULL (ENOMEM) when exhausted. */
void *mlk_heap_boot_alloc(size_t align, size_t n_bytes);
bool mlk_heap_is_boot(const void *p);

/* An aligned block from the allocator itself, whichever of its aligned functions it has; align must be
 * a power of two. NULL with errno set on failure. Uncounted: the interposed caller counts. */
void *mlk_heap_aligned_raw(size_t align, size_t n_bytes);

/* Writes "memleak_heap: note: <msg>" to stderr; never allocates. Callers make sure it is said once. */
void mlk_heap_note(const char *msg);

/* Looks up the C++ operators after the shim (heap_cxx.c); missing ones are retried when objects load. */
void mlk_heap_cxx_resolve(void);

static inline void mlk_heap_raise_peak(int64_t live)
{
    int64_t peak = atomic_load_explicit(&mlk_heap_count.peak_bytes, memory_order_relaxed);
    while (live > peak &&
           !atomic_compare_exchange_weak_explicit(&mlk_heap_count.peak_bytes, &peak, live,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* Usable size of a live block, 0 when not measured. Until the allocator's function has answered once it
 * runs under a guard: tcmalloc's malloc_usable_size allocates (with operator new) on first use, and a
 * block it allocates that way is counted as 0 bytes rather than recursing forever. */
int64_t mlk_heap_size_untrusted(void *p);
static inline int64_t mlk_heap_size_of(void *p)
{
    if (MLK_LIKELY(atomic_load_explicit(&mlk_heap_real.usable_size_trusted, memory_order_relaxed)))
        return (int64_t)mlk_heap_real.usable_size(p);
    return mlk_heap_size_untrusted(p);
}

static inline void mlk_heap_on_alloc(void *p)
{
    mlk_heap_self.n_alloc_events++;
    int64_t n = mlk_heap_size_of(p);
    int64_t live = atomic_fetch_add_explicit(&mlk_heap_count.live_bytes, n, memory_order_relaxed) + n;
    atomic_fetch_add_explicit(&mlk_heap_count.n_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&mlk_heap_count.total_bytes, n, memory_order_relaxed);
    mlk_heap_raise_peak(live);
}

static inline void mlk_heap_on_free(int64_t n_bytes)
{
    mlk_heap_self.n_free_events++;
    atomic_fetch_sub_explicit(&mlk_heap_count.live_bytes, n_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&mlk_heap_count.n_frees, 1, memory_order_relaxed);
}

/* The forwarding pattern: take a mark, forward, then count unless an inner call already did. */
static inline uint64_t mlk_heap_alloc_mark(void)
{
    return mlk_heap_self.n_alloc_events;
}

static inline void *mlk_heap_counted(void *p, uint64_t mark)
{
    if (p && mlk_heap_self.n_alloc_events == mark)
        mlk_heap_on_alloc(p);
    return p;
}

/* n_bytes is the block's size taken before it was handed back. Counting after the free leaves a window in
 * which another thread may reuse and count the block first: live stays exact, the peak may then overstate
 * by that one block for that instant. */
static inline void mlk_heap_counted_free(int64_t n_bytes, uint64_t free_mark)
{
    if (mlk_heap_self.n_free_events == free_mark)
        mlk_heap_on_free(n_bytes);
}

#endif
