/* heap_shim_internal.h: what heap_shim.c shares with heap_cxx.c inside libmemleak_heap.so (all hidden).
 * Nothing here may be exported, and nothing here may take a lock or allocate on the counting path. */
#ifndef MLK_HEAP_SHIM_INTERNAL_H
#define MLK_HEAP_SHIM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>

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
    /* Allocation sites (heap_sites.c). */
    int in_sites;         /* taking a stack or loading the unwinder: what that allocates or maps is not followed */
    unsigned unwind_gen;  /* the dlclose generation this thread's unwinder cache started at, plus 1; 0: none yet */
    int64_t sample_left;  /* bytes to this thread's next sampled allocation (sample mode) */
    uint64_t rng;         /* its random state; 0 until its first sample */
    int64_t asked;        /* the bytes the caller asked for, set around counting one allocation (0: unknown) */
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

/* ------------------------------------------------------------------ allocation sites (heap_sites.c)
 * Off unless MLK_HEAP_SITES asks for them; then the shim records the stack of sampled (or all) allocations and
 * keeps each sampled block in a table keyed by address, so its free finds it. The hooks below are all the hot path
 * pays when sites are off: one load of a global set before any thread runs. */
extern int mlk_sites_mode;                /* MLK_HEAP_SITES_OFF/SAMPLE/EXACT, set by the constructor */
extern unsigned char *mlk_sites_filter;   /* sample mode: per address hash, how many sampled blocks may be there */
extern _Atomic int mlk_sites_window;      /* sample mode: a window is open, every allocation is taken exactly */
#define MLK_SITES_FILTER_BITS 16
#define MLK_SITES_SITE_BITS 24                    /* a block record: usable size << 24 | site */
#define MLK_SITES_OWN ((1u << MLK_SITES_SITE_BITS) - 1) /* the site of the shim's own blocks */

/* A block the unwinder allocated while taking a stack (libunwind's thread-local block, allocated by the loader on
 * a thread's first stack): neither its allocation nor its free is counted, so the heap figures stay the engine's. */
static inline bool mlk_sites_rec_own(uint64_t rec)
{
    return rec && (rec & ((1u << MLK_SITES_SITE_BITS) - 1)) == MLK_SITES_OWN;
}

void mlk_sites_sample(void *p, int64_t n_bytes); /* the slow path: take the stack, record the block */
uint64_t mlk_sites_take(void *p);                /* p is about to be freed: its record, dropped (0: none) */
bool mlk_sites_own(void *p);                     /* p is the unwinder's: recorded as never counted (false: no room) */
void mlk_sites_restore(void *p, uint64_t rec);   /* the realloc failed: p lives on with its record */
uint32_t mlk_sites_mapping_site(void);           /* a mapping's site: its stack, when sites are on; else 0 */
void mlk_sites_adjust(uint32_t site, int64_t bytes, int64_t blocks_x1024); /* a site's live figures move */
void mlk_sites_dlclosed(void);                   /* an object was unloaded: unwinder caches may be stale */
void mlk_sites_init(void);                       /* the constructor's part: reads MLK_HEAP_SITES, loads the unwinder */
void mlk_span_of(const void *addr, uintptr_t *lo, uintptr_t *hi); /* the object holding addr; empty when none */
void mlk_maps_resolve(const void *allocator);    /* the next mmap, munmap, mremap; allocator: its malloc */
void mlk_maps_stats(int64_t *bytes, int64_t *n); /* what is mapped through the interposed calls; -1 when not followed */
int64_t mlk_maps_peak(void);      /* the most mapped since mlk_maps_reset_peak; -1 when not followed */
void mlk_maps_reset_peak(void);
void mlk_maps_limits(int64_t *max, int64_t *dropped); /* the mapping table's capacity and what it had no room for */
/* The resident bytes of the shim's own tables, which it maps NORESERVE and touches as they fill (mlk_heap_stats.
 * shim_bytes): the site records and the prefaulted site tables; the mapping table's pages up to its high-water mark. */
int64_t mlk_sites_resident(void);
int64_t mlk_maps_resident(void);

/* A spinlock for the shim's tables (held for a few instructions, or one syscall for the mapping table). */
#if defined(__x86_64__) || defined(__i386__)
#define MLK_PAUSE() __builtin_ia32_pause()
#else
#define MLK_PAUSE() ((void)0)
#endif

static inline void mlk_spin_lock(_Atomic int *l)
{
    for (int spins = 0; atomic_exchange_explicit(l, 1, memory_order_acquire);) {
        while (atomic_load_explicit(l, memory_order_relaxed)) {
            if (++spins < 64)
                MLK_PAUSE();
            else
                sched_yield();
        }
    }
}

static inline void mlk_spin_unlock(_Atomic int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

/* murmur3's finalizer: an address's bits spread over the whole word. */
static inline uint64_t mlk_sites_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb93fe53a85ebULL;
    x ^= x >> 33;
    return x;
}

/* Every free looks here in sample mode: one multiply (Fibonacci hashing of the 16-byte granule), not a full mix. */
static inline size_t mlk_sites_filter_slot(const void *p)
{
    return (size_t)((((uint64_t)(uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ULL) >> (64 - MLK_SITES_FILTER_BITS));
}

/* Sample mode: a per-thread countdown of bytes drawn from an exponential distribution (Poisson sampling by bytes,
 * as tcmalloc and heaptrack's sampler do): an allocation of n bytes is sampled with probability 1 - exp(-n/T). */
static inline void mlk_sites_on_alloc(void *p, int64_t n_bytes)
{
    if (MLK_LIKELY(!mlk_sites_mode))
        return;
    if (mlk_sites_mode == 1 /* sample */ && (mlk_heap_self.sample_left -= n_bytes) > 0 &&
        MLK_LIKELY(!atomic_load_explicit(&mlk_sites_window, memory_order_relaxed)))
        return;
    mlk_sites_sample(p, n_bytes);
}

/* Before p goes back to the allocator: another thread may get the same address at once. */
static inline bool mlk_sites_maybe(const void *p)
{
    if (MLK_LIKELY(!mlk_sites_mode) || !p)
        return false;
    return mlk_sites_mode != 1 ||
           __atomic_load_n(&mlk_sites_filter[mlk_sites_filter_slot(p)], __ATOMIC_RELAXED) != 0;
}

/* True when p was the shim's own block: its free is not counted. */
static inline bool mlk_sites_on_free(void *p)
{
    return MLK_UNLIKELY(mlk_sites_maybe(p)) && mlk_sites_rec_own(mlk_sites_take(p));
}

/* A realloc: the old block's record goes before the call (the address may be handed out again at once), and comes
 * back if the call fails and leaves the block alive. The new block is a new allocation for the sampler. */
static inline uint64_t mlk_sites_take_for_realloc(void *p)
{
    return MLK_UNLIKELY(mlk_sites_maybe(p)) ? mlk_sites_take(p) : 0;
}

static inline void mlk_sites_after_realloc(void *p, uint64_t rec, void *q, size_t n_bytes)
{
    if (MLK_UNLIKELY(rec) && !q && n_bytes)
        mlk_sites_restore(p, rec);
}

static inline void mlk_heap_on_alloc(void *p)
{
    mlk_heap_self.n_alloc_events++;
    if (MLK_UNLIKELY(mlk_sites_mode) && MLK_UNLIKELY(mlk_heap_self.in_sites) && mlk_sites_own(p))
        return;
    int64_t n = mlk_heap_size_of(p);
    int64_t live = atomic_fetch_add_explicit(&mlk_heap_count.live_bytes, n, memory_order_relaxed) + n;
    atomic_fetch_add_explicit(&mlk_heap_count.n_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&mlk_heap_count.total_bytes, n, memory_order_relaxed);
    mlk_heap_raise_peak(live);
    /* A site's bytes are what its code asked for (a leak of 64 B is 64 B/iter, not glibc's 72 or a size class),
     * where the call says; else the block's usable size. */
    int64_t asked = mlk_heap_self.asked;
    mlk_sites_on_alloc(p, asked > 0 && asked <= n ? asked : n);
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

/* The same, for a call that says how many bytes its caller asked for (malloc, calloc, operator new). */
static inline void *mlk_heap_counted_asked(void *p, uint64_t mark, size_t asked)
{
    if (p && mlk_heap_self.n_alloc_events == mark) {
        mlk_heap_self.asked = asked <= (size_t)INT64_MAX ? (int64_t)asked : 0;
        mlk_heap_on_alloc(p);
        mlk_heap_self.asked = 0;
    }
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
