/* heap_sites.c: libmemleak_heap.so's allocation sites (issue 9): the stack of sampled (or all) allocations and of
 * every mapping, a table of sites keyed by stack hash with each site's live bytes and blocks, and a table of the
 * sampled live blocks keyed by address, so that their free finds them. Everything lives in memory the shim maps
 * itself. It must never allocate through malloc, never block on the counting path but for one striped spinlock
 * around a table slot, and never crash or corrupt when a table is full: what does not fit is counted as dropped.
 *
 * The unwinder is libunwind (Debian's libunwind8, 1.6), unw_backtrace with local-only unwinding, as heaptrack uses
 * it. Frame-pointer walking would be cheaper, but engines are built without frame pointers (ONNX Runtime from npm
 * is -O2 -fomit-frame-pointer): there rbp holds data, and following it either stops early, names wrong callers or
 * reads unmapped memory. libunwind reads the .eh_frame CFI that C++ exceptions already rely on, so every object
 * that can throw can be unwound, whatever its frame layout; its x86-64 fast path caches each return address's
 * frame shape, so a stack costs about a microsecond (see README.md for measured figures).
 *
 * libunwind is dlopen'ed RTLD_LOCAL, and only when sites are asked for: libunwind.so.8 also defines _Unwind_*,
 * backtrace and friends, which, linked into a preloaded shim, would come before libgcc_s in the global scope and
 * take over every C++ exception of the engine. Loaded locally it interposes nothing. */
#include "heap_shim_internal.h"
#include "heap_sites.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef MLK_HEAP_HAVE_UNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

int mlk_sites_mode;
unsigned char *mlk_sites_filter;
_Atomic int mlk_sites_window;

/* ------------------------------------------------------------------ raw memory */

/* The shim's own tables: straight from the kernel, never through the interposed mmap (not counted as the process's
 * mappings), NORESERVE so that only touched pages cost. populate: touched now, so that the process's RSS does not
 * move later when the table fills (a worker judges RSS). */
static int64_t mlk_prefaulted; /* the bytes of the tables mapped with MAP_POPULATE: resident from the start */
static int64_t mlk_page_bytes = 4096;

static int64_t mlk_pages_of(int64_t bytes)
{
    return (bytes + mlk_page_bytes - 1) / mlk_page_bytes * mlk_page_bytes;
}

static void *mlk_raw_map(size_t bytes, bool populate)
{
    long r = syscall(SYS_mmap, NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (populate ? MAP_POPULATE : 0), -1, 0);
    if (r != -1 && populate)
        mlk_prefaulted += mlk_pages_of((int64_t)bytes);
    return r == -1 ? NULL : (void *)r;
}

/* ------------------------------------------------------------------ configuration */

static int64_t mlk_sample_bytes;          /* T, the mean sampling interval (sample mode) */
static double mlk_sample_inv;             /* 1 / T */

static struct {
    _Atomic int64_t stacks, timed, unwind_ns, dropped_sites, dropped_blocks, live_blocks;
} mlk_sites_stat;

/* A decimal number from the environment; def when unset or malformed. Never allocates. */
static int64_t mlk_env_int(const char *text, int64_t def, const char **end)
{
    int64_t v = 0;
    const char *p = text;
    if (!p || *p < '0' || *p > '9') {
        if (end)
            *end = p;
        return def;
    }
    while (*p >= '0' && *p <= '9' && v < (INT64_MAX - 9) / 10)
        v = v * 10 + (*p++ - '0');
    if (end)
        *end = p;
    return v;
}

static int64_t mlk_pow2_at_least(int64_t x)
{
    int64_t v = 1;
    while (v < x && v < ((int64_t)1 << 40))
        v <<= 1;
    return v;
}

/* ------------------------------------------------------------------ the unwinder */

static struct {
    uintptr_t lo, hi; /* an object's address span */
} mlk_self_span, mlk_unw_span;

typedef struct {
    uintptr_t addr;
    uintptr_t lo, hi;
} mlk_span_query;

static int mlk_span_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    mlk_span_query *q = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
        if (a < lo)
            lo = a;
        if (a + info->dlpi_phdr[i].p_memsz > hi)
            hi = a + info->dlpi_phdr[i].p_memsz;
    }
    if (q->addr >= lo && q->addr < hi) {
        q->lo = lo;
        q->hi = hi;
        return 1;
    }
    return 0;
}

void mlk_span_of(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
    mlk_span_query q = {(uintptr_t)addr, 0, 0};
    dl_iterate_phdr(mlk_span_cb, &q);
    *lo = q.lo;
    *hi = q.hi;
}

/* Bumped by a dlclose that unloaded an object (heap_maps.c). libunwind's x86-64 trace cache is per thread, keyed by
 * return address, and 1.6 never invalidates it: after an object is unloaded and another mapped at its address, a
 * cached frame shape would send the fast path through the wrong stack slots. A thread whose cache predates the last
 * unload therefore takes the slow path (unw_step, whose register-state cache unw_flush_cache does invalidate) from
 * then on: about 30 times slower, two sigprocmask calls per frame. */
static _Atomic unsigned mlk_unwind_gen;

#ifdef MLK_HEAP_HAVE_UNWIND
#define MLK_STR_(x) #x
#define MLK_STR(x) MLK_STR_(x) /* the name a libunwind macro expands to: unw_step is _ULx86_64_step */

static struct {
    int (*backtrace)(void **, int);
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    void (*flush_cache)(unw_addr_space_t, unw_word_t, unw_word_t);
    unw_addr_space_t *local_as;
} mlk_unw;

/* Caching stays libunwind's default (UNW_CACHE_GLOBAL, a lock on a cache miss only): Debian's 1.6.2 is built without
 * --enable-per-thread-cache, and there UNW_CACHE_PER_THREAD (heaptrack's setting) silently shares one cache between
 * threads without its lock. */
static bool mlk_unw_load(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    mlk_unw.backtrace = (int (*)(void **, int))dlsym(h, "unw_backtrace");
    mlk_unw.getcontext = (int (*)(unw_context_t *))dlsym(h, MLK_STR(unw_tdep_getcontext));
    mlk_unw.init_local = (int (*)(unw_cursor_t *, unw_context_t *))dlsym(h, MLK_STR(unw_init_local));
    mlk_unw.step = (int (*)(unw_cursor_t *))dlsym(h, MLK_STR(unw_step));
    mlk_unw.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(h, MLK_STR(unw_get_reg));
    mlk_unw.flush_cache = (void (*)(unw_addr_space_t, unw_word_t, unw_word_t))dlsym(h, MLK_STR(unw_flush_cache));
    mlk_unw.local_as = (unw_addr_space_t *)dlsym(h, MLK_STR(unw_local_addr_space));
    if (!mlk_unw.backtrace || !mlk_unw.getcontext || !mlk_unw.init_local || !mlk_unw.step || !mlk_unw.get_reg ||
        !mlk_unw.flush_cache || !mlk_unw.local_as)
        return false; /* kept loaded: dlclose here would bump the generation for nothing */
    mlk_span_of((const void *)mlk_unw.backtrace, &mlk_unw_span.lo, &mlk_unw_span.hi);
    return true;
}

/* unw_step from here: slower (a register-state lookup per frame), but its cache follows unw_flush_cache. */
static int mlk_unw_slow(void **out, int cap)
{
    unw_context_t uc;
    unw_cursor_t c;
    if (mlk_unw.getcontext(&uc) < 0 || mlk_unw.init_local(&c, &uc) < 0)
        return 0;
    int n = 0;
    while (n < cap) {
        unw_word_t ip = 0;
        if (mlk_unw.get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
            break;
        out[n++] = (void *)ip;
        if (mlk_unw.step(&c) <= 0)
            break;
    }
    return n;
}

static int mlk_unw_raw(void **out, int cap)
{
    unsigned gen = atomic_load_explicit(&mlk_unwind_gen, memory_order_acquire) + 1;
    if (!mlk_heap_self.unwind_gen)
        mlk_heap_self.unwind_gen = gen; /* this thread's trace cache starts now */
    return mlk_heap_self.unwind_gen == gen ? mlk_unw.backtrace(out, cap) : mlk_unw_slow(out, cap);
}

void mlk_sites_dlclosed(void)
{
    if (!mlk_sites_mode)
        return;
    atomic_fetch_add_explicit(&mlk_unwind_gen, 1, memory_order_release);
    mlk_unw.flush_cache(*mlk_unw.local_as, 0, 0);
}
#else
static bool mlk_unw_load(void)
{
    return false;
}

static int mlk_unw_raw(void **out, int cap)
{
    (void)out, (void)cap;
    return 0;
}

void mlk_sites_dlclosed(void)
{
}
#endif

static int64_t mlk_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static bool mlk_in_span(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
    return a >= lo && a < hi;
}

/* The caller's stack, innermost first, without the shim's and libunwind's own frames (the shim's operator new
 * also sits in the middle of a C++ allocation's stack). The caller has set in_sites. */
static int mlk_capture(uintptr_t *pcs)
{
    void *raw[MLK_HEAP_SITES_DEPTH + 16];
    /* The clock costs a tenth of a warm stack here (a VM's clock_gettime): one stack in 16 is timed, one in 64 in
     * exact mode, evenly, so the mean stays unbiased. */
    uint64_t nth = (uint64_t)atomic_fetch_add_explicit(&mlk_sites_stat.stacks, 1, memory_order_relaxed);
    bool timed = nth % (mlk_sites_mode == MLK_HEAP_SITES_EXACT ? 64 : 16) == 0;
    int64_t t0 = timed ? mlk_now_ns() : 0;
    int n = mlk_unw_raw(raw, (int)(sizeof raw / sizeof raw[0]));
    int d = 0;
    for (int i = 0; i < n && d < MLK_HEAP_SITES_DEPTH; i++) {
        uintptr_t a = (uintptr_t)raw[i];
        if (mlk_in_span(a, mlk_self_span.lo, mlk_self_span.hi) || mlk_in_span(a, mlk_unw_span.lo, mlk_unw_span.hi))
            continue;
        pcs[d++] = a;
    }
    if (timed) {
        atomic_fetch_add_explicit(&mlk_sites_stat.unwind_ns, mlk_now_ns() - t0, memory_order_relaxed);
        atomic_fetch_add_explicit(&mlk_sites_stat.timed, 1, memory_order_relaxed);
    }
    return d;
}

/* ------------------------------------------------------------------ the site table */

/* Site records are handed out in order (index 0 is reserved for what no stack names), so a worker's snapshot copies
 * a prefix and the records' pages are touched one after another. An open-addressing index, twice the records' size,
 * maps a stack's hash to its record: a slot is claimed by compare-and-swap of its key, then its record index is
 * published; a reader that finds the key waits for the index (a few instructions). */
typedef struct mlk_site {
    _Atomic int64_t bytes;
    _Atomic int64_t blocks_x1024;
    _Atomic int64_t win_bytes;  /* exact: the live blocks allocated while a window was open (mlk_heap_sites_window) */
    _Atomic int64_t win_blocks;
    _Atomic int32_t ready; /* kind, depth and pcs are written */
    int32_t kind;
    int32_t depth;
    int32_t pad;
    uintptr_t pcs[MLK_HEAP_SITES_DEPTH];
} mlk_site;

typedef struct mlk_site_slot {
    _Atomic uint64_t key;
    _Atomic uint32_t site_plus1;
    uint32_t pad;
} mlk_site_slot;

static mlk_site *mlk_sites;
static mlk_site_slot *mlk_site_index;
static int64_t mlk_max_sites, mlk_index_mask;
static _Atomic int64_t mlk_n_sites = 1;

static uint64_t mlk_stack_hash(int kind, const uintptr_t *pcs, int depth)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)kind;
    for (int i = 0; i < depth; i++)
        h = mlk_sites_mix(h ^ pcs[i]) + (uint64_t)i;
    return h ? h : 1;
}

/* The record of this stack, created if new; 0 when the table is full (counted as dropped). */
static uint32_t mlk_site_find(int kind, const uintptr_t *pcs, int depth)
{
    uint64_t h = mlk_stack_hash(kind, pcs, depth);
    for (int64_t probe = 0, i = (int64_t)(h & (uint64_t)mlk_index_mask); probe <= mlk_index_mask;
         probe++, i = (i + 1) & mlk_index_mask) {
        mlk_site_slot *s = &mlk_site_index[i];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == 0) {
            /* A full table takes no new keys: probe chains stay as short as at half load. */
            if (atomic_load_explicit(&mlk_n_sites, memory_order_relaxed) >= mlk_max_sites)
                break;
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(&s->key, &expected, h, memory_order_acq_rel,
                                                        memory_order_acquire)) {
                int64_t idx = atomic_fetch_add_explicit(&mlk_n_sites, 1, memory_order_relaxed);
                if (idx >= mlk_max_sites) {
                    idx = 0; /* lost the race for the last record: this key names site 0 from now on */
                } else {
                    mlk_site *r = &mlk_sites[idx];
                    r->kind = kind;
                    r->depth = depth;
                    memcpy(r->pcs, pcs, (size_t)depth * sizeof *pcs);
                    atomic_store_explicit(&r->ready, 1, memory_order_release);
                }
                atomic_store_explicit(&s->site_plus1, (uint32_t)idx + 1, memory_order_release);
                return (uint32_t)idx;
            }
            k = expected;
        }
        if (k == h) {
            uint32_t v;
            while (!(v = atomic_load_explicit(&s->site_plus1, memory_order_acquire)))
                MLK_PAUSE();
            return v - 1;
        }
    }
    return 0;
}

void mlk_sites_adjust(uint32_t site, int64_t bytes, int64_t blocks_x1024)
{
    if (!mlk_sites_mode)
        return;
    atomic_fetch_add_explicit(&mlk_sites[site].bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&mlk_sites[site].blocks_x1024, blocks_x1024, memory_order_relaxed);
}

/* The calling allocation's or mapping's site. The caller has set in_sites. */
static uint32_t mlk_site_here(int kind)
{
    uintptr_t pcs[MLK_HEAP_SITES_DEPTH];
    int depth = mlk_capture(pcs);
    uint32_t site = depth ? mlk_site_find(kind, pcs, depth) : 0;
    if (!site && depth)
        atomic_fetch_add_explicit(&mlk_sites_stat.dropped_sites, 1, memory_order_relaxed);
    return site;
}

uint32_t mlk_sites_mapping_site(void)
{
    if (!mlk_sites_mode || mlk_heap_self.in_sites)
        return 0;
    int saved = errno;
    mlk_heap_self.in_sites = 1;
    uint32_t site = mlk_site_here(MLK_HEAP_SITE_MMAP);
    mlk_heap_self.in_sites = 0;
    errno = saved;
    return site;
}

/* ------------------------------------------------------------------ the live-block table */

/* 256 stripes, each an open-addressing table of its own with linear probing and backward-shift deletion (no
 * tombstones, so churn never fills it), behind its own spinlock. A record packs the block's usable size (40 bits)
 * and its site (24 bits); the block's weight is a function of its size, recomputed when it is freed. A stripe takes
 * no more than 7/8 of its slots: past that an insert is refused and counted as dropped. */
#define MLK_STRIPES 256
#define MLK_SITE_BITS MLK_SITES_SITE_BITS
#define MLK_REC_WIN ((uint64_t)1 << 63) /* allocated while a window was open: counted exactly, apart */
#define MLK_SIZE_MAX (((uint64_t)1 << (63 - MLK_SITE_BITS)) - 1)

typedef struct mlk_stripe {
    _Alignas(64) _Atomic int lock;
    uint32_t used;
} mlk_stripe;

typedef struct mlk_block {
    uintptr_t addr; /* 0: free slot */
    uint64_t rec;
} mlk_block;

static mlk_stripe *mlk_stripes;
static mlk_block *mlk_blocks;
static uint64_t mlk_stripe_mask; /* slots per stripe - 1 */

static uint64_t mlk_rec(int64_t n_bytes, uint32_t site)
{
    uint64_t n = n_bytes > 0 ? (uint64_t)n_bytes : 1;
    if (n > MLK_SIZE_MAX)
        n = MLK_SIZE_MAX;
    return n << MLK_SITE_BITS | site;
}

static int64_t mlk_rec_size(uint64_t rec)
{
    return (int64_t)((rec & ~MLK_REC_WIN) >> MLK_SITE_BITS);
}

static uint32_t mlk_rec_site(uint64_t rec)
{
    return (uint32_t)(rec & ((1u << MLK_SITE_BITS) - 1));
}

static void mlk_filter_add(const void *p, int d)
{
    if (!mlk_sites_filter)
        return;
    unsigned char *f = &mlk_sites_filter[mlk_sites_filter_slot(p)];
    unsigned char v = __atomic_load_n(f, __ATOMIC_RELAXED);
    /* 255 sticks: a saturated slot only costs lookups, a wrong decrement would lose a block. */
    while (v != 255 && !(d < 0 && v == 0) &&
           !__atomic_compare_exchange_n(f, &v, (unsigned char)(v + d), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static bool mlk_block_insert(void *p, uint64_t rec)
{
    uint64_t h = mlk_sites_mix((uint64_t)(uintptr_t)p);
    mlk_stripe *s = &mlk_stripes[h >> 56];
    mlk_block *t = &mlk_blocks[(h >> 56) * (mlk_stripe_mask + 1)];
    mlk_filter_add(p, 1);
    mlk_spin_lock(&s->lock);
    bool ok = s->used < (mlk_stripe_mask + 1) / 8 * 7;
    if (ok) {
        uint64_t i = h & mlk_stripe_mask;
        while (t[i].addr && t[i].addr != (uintptr_t)p)
            i = (i + 1) & mlk_stripe_mask;
        if (!t[i].addr)
            s->used++;
        t[i].addr = (uintptr_t)p; /* an address already present is a block freed behind the shim's back */
        t[i].rec = rec;
    }
    mlk_spin_unlock(&s->lock);
    if (!ok)
        mlk_filter_add(p, -1);
    return ok;
}

static uint64_t mlk_block_remove(void *p)
{
    uint64_t h = mlk_sites_mix((uint64_t)(uintptr_t)p);
    mlk_stripe *s = &mlk_stripes[h >> 56];
    mlk_block *t = &mlk_blocks[(h >> 56) * (mlk_stripe_mask + 1)];
    uint64_t rec = 0;
    mlk_spin_lock(&s->lock);
    uint64_t i = h & mlk_stripe_mask;
    while (t[i].addr && t[i].addr != (uintptr_t)p)
        i = (i + 1) & mlk_stripe_mask;
    if (t[i].addr) {
        rec = t[i].rec;
        s->used--;
        /* Backward shift: pull later members of the probe run into the hole unless their home lies after it. */
        for (uint64_t j = i;;) {
            j = (j + 1) & mlk_stripe_mask;
            if (!t[j].addr)
                break;
            uint64_t home = mlk_sites_mix((uint64_t)t[j].addr) & mlk_stripe_mask;
            bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (stays)
                continue;
            t[i] = t[j];
            i = j;
        }
        t[i].addr = 0;
    }
    mlk_spin_unlock(&s->lock);
    if (rec)
        mlk_filter_add(p, -1);
    return rec;
}

/* ------------------------------------------------------------------ sampling */

/* P(sampled) for n bytes, and the block's weight 1 / P: each sampled block stands for the blocks of its size the
 * sampler skipped, so a site's sum of weights is an unbiased estimate of its live bytes (and blocks). */
static double mlk_p_sampled(int64_t n_bytes)
{
    return mlk_sites_mode == MLK_HEAP_SITES_EXACT ? 1.0 : -expm1(-(double)n_bytes * mlk_sample_inv);
}

static void mlk_weigh(uint64_t rec, int sign)
{
    int64_t n = mlk_rec_size(rec);
    if (rec & MLK_REC_WIN) {
        mlk_site *r = &mlk_sites[mlk_rec_site(rec)];
        atomic_fetch_add_explicit(&r->win_bytes, sign * n, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->win_blocks, sign, memory_order_relaxed);
        return;
    }
    if (mlk_sites_mode == MLK_HEAP_SITES_EXACT) {
        mlk_sites_adjust(mlk_rec_site(rec), sign * n, sign * 1024);
        return;
    }
    double p = mlk_p_sampled(n);
    int64_t wb = (int64_t)llround((double)n / p), wc = (int64_t)llround(1024.0 / p);
    mlk_sites_adjust(mlk_rec_site(rec), sign * wb, sign * wc);
}

static uint64_t mlk_rand(void)
{
    uint64_t x = mlk_heap_self.rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return mlk_heap_self.rng = x;
}

/* The bytes to the next sample: exponential with mean T. */
static int64_t mlk_draw(void)
{
    double u = ((double)(mlk_rand() >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
    double d = -log(u) * (double)mlk_sample_bytes;
    return d < 1 ? 1 : d > 1e15 ? (int64_t)1e15 : (int64_t)d;
}

void mlk_sites_sample(void *p, int64_t n_bytes)
{
    mlk_heap_thread *self = &mlk_heap_self;
    if (n_bytes <= 0 || self->in_sites || !p)
        return;
    bool window = atomic_load_explicit(&mlk_sites_window, memory_order_relaxed);
    if (mlk_sites_mode == MLK_HEAP_SITES_SAMPLE && !window) {
        if (!self->rng) { /* this thread's first countdown: this allocation had none to cross */
            self->rng = mlk_sites_mix((uint64_t)(uintptr_t)self ^ (uint64_t)mlk_now_ns()) | 1;
            self->sample_left = mlk_draw() - n_bytes;
            if (self->sample_left > 0)
                return;
        }
        self->sample_left = mlk_draw();
    }
    int saved = errno;
    self->in_sites = 1;
    uint32_t site = mlk_site_here(MLK_HEAP_SITE_HEAP);
    uint64_t rec = mlk_rec(n_bytes, site) | (window ? MLK_REC_WIN : 0);
    if (mlk_block_insert(p, rec)) {
        mlk_weigh(rec, 1);
        atomic_fetch_add_explicit(&mlk_sites_stat.live_blocks, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&mlk_sites_stat.dropped_blocks, 1, memory_order_relaxed);
    }
    self->in_sites = 0;
    errno = saved;
}

uint64_t mlk_sites_take(void *p)
{
    if (!mlk_sites_maybe(p))
        return 0;
    uint64_t rec = mlk_block_remove(p);
    if (rec && !mlk_sites_rec_own(rec)) {
        mlk_weigh(rec, -1);
        atomic_fetch_sub_explicit(&mlk_sites_stat.live_blocks, 1, memory_order_relaxed);
    }
    return rec;
}

bool mlk_sites_own(void *p)
{
    return p && mlk_block_insert(p, mlk_rec(1, MLK_SITES_OWN));
}

void mlk_sites_restore(void *p, uint64_t rec)
{
    if (!rec)
        return;
    if (mlk_sites_rec_own(rec)) {
        (void)mlk_block_insert(p, rec); /* no room: its free will be counted, a few bytes off; never a crash */
        return;
    }
    if (mlk_block_insert(p, rec)) {
        mlk_weigh(rec, 1);
        atomic_fetch_add_explicit(&mlk_sites_stat.live_blocks, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&mlk_sites_stat.dropped_blocks, 1, memory_order_relaxed);
    }
}

/* ------------------------------------------------------------------ set-up */

static int mlk_mode_of(const char *v)
{
    if (!v || !*v || !strcmp(v, "off") || !strcmp(v, "0"))
        return MLK_HEAP_SITES_OFF;
    if (!strcmp(v, "sample") || !strcmp(v, "on") || !strcmp(v, "1"))
        return MLK_HEAP_SITES_SAMPLE;
    if (!strcmp(v, "exact"))
        return MLK_HEAP_SITES_EXACT;
    return -1;
}

void mlk_sites_init(void)
{
    int mode = mlk_mode_of(getenv(MLK_HEAP_SITES_ENV));
    if (mode < 0) {
        mlk_heap_note("MLK_HEAP_SITES: expected off, sample or exact; allocation sites are off");
        return;
    }
    if (mode == MLK_HEAP_SITES_OFF)
        return;
    mlk_sample_bytes = mlk_env_int(getenv(MLK_HEAP_SITES_INTERVAL_ENV), MLK_HEAP_SITES_DEFAULT_INTERVAL, NULL);
    if (mlk_sample_bytes < 1)
        mlk_sample_bytes = 1;
    mlk_sample_inv = 1.0 / (double)mlk_sample_bytes;
    const char *end = NULL, *max = getenv(MLK_HEAP_SITES_MAX_ENV);
    bool exact = mode == MLK_HEAP_SITES_EXACT;
    int64_t sites = mlk_env_int(max, exact ? 131072 : 16384, &end);
    int64_t blocks = mlk_env_int(end && *end == ',' ? end + 1 : NULL, exact ? 1 << 20 : 1 << 16, NULL);
    mlk_max_sites = sites < 2 ? 2 : sites > MLK_SITES_OWN - 1 ? MLK_SITES_OWN - 1 : sites;
    int64_t n_index = mlk_pow2_at_least(2 * mlk_max_sites);
    mlk_index_mask = n_index - 1;
    int64_t per_stripe = mlk_pow2_at_least((blocks + MLK_STRIPES - 1) / MLK_STRIPES);
    if (per_stripe < 16)
        per_stripe = 16;
    mlk_stripe_mask = (uint64_t)per_stripe - 1;

    long page = sysconf(_SC_PAGESIZE);
    if (page > 0)
        mlk_page_bytes = page;
    mlk_heap_self.in_sites = 1; /* nothing dlopen allocates is sampled (sampling is not on yet anyway) */
    mlk_span_of((const void *)mlk_sites_init, &mlk_self_span.lo, &mlk_self_span.hi);
    bool unwinder = mlk_unw_load();
    mlk_sites = mlk_raw_map((size_t)mlk_max_sites * sizeof *mlk_sites, false);
    mlk_site_index = mlk_raw_map((size_t)n_index * sizeof *mlk_site_index, true);
    mlk_stripes = mlk_raw_map(MLK_STRIPES * sizeof *mlk_stripes, true);
    mlk_blocks = mlk_raw_map((size_t)per_stripe * MLK_STRIPES * sizeof *mlk_blocks, true);
    unsigned char *filter = exact ? NULL : mlk_raw_map((size_t)1 << MLK_SITES_FILTER_BITS, true);
    mlk_heap_self.in_sites = 0;
    if (!unwinder) {
        mlk_heap_note("MLK_HEAP_SITES: libunwind.so.8 (Debian libunwind8) could not be loaded: allocation sites "
                      "are off");
        return;
    }
    if (!mlk_sites || !mlk_site_index || !mlk_stripes || !mlk_blocks || (!exact && !filter)) {
        mlk_heap_note("MLK_HEAP_SITES: the site tables could not be mapped: allocation sites are off");
        return;
    }
    mlk_sites_filter = filter;
    mlk_sites_mode = mode; /* last: from here on every allocation may be sampled */
}

/* ------------------------------------------------------------------ own memory */

/* The site records are handed out in order, and nothing reads past the last one handed out (snapshots copy a prefix):
 * their touched pages are those of the records in use, counted here rather than prefaulted (16384 records of 304 B in
 * sample mode would put 4.75 MiB in every worker's RSS, 38 MiB in exact mode). A site's record is written once, when
 * its first stack is taken; the window's counters live in it. */
int64_t mlk_sites_resident(void)
{
    int64_t r = mlk_prefaulted;
    if (mlk_sites_mode && mlk_sites) {
        int64_t n = atomic_load_explicit(&mlk_n_sites, memory_order_relaxed);
        r += mlk_pages_of((n < mlk_max_sites ? n : mlk_max_sites) * (int64_t)sizeof *mlk_sites);
    }
    return r;
}

/* ------------------------------------------------------------------ exported */

MLK_EXPORT void mlk_heap_sites_get_info(mlk_heap_sites_info *out)
{
    if (!out)
        return;
    mlk_heap_sites_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    i.mode = mlk_sites_mode;
    if (mlk_sites_mode) {
        int64_t n = atomic_load_explicit(&mlk_n_sites, memory_order_acquire);
        i.sample_bytes = mlk_sites_mode == MLK_HEAP_SITES_SAMPLE ? mlk_sample_bytes : 0;
        i.n_sites = n < mlk_max_sites ? n : mlk_max_sites;
        i.max_sites = mlk_max_sites;
        i.max_blocks = (int64_t)(mlk_stripe_mask + 1) / 8 * 7 * MLK_STRIPES;
        i.live_blocks = atomic_load_explicit(&mlk_sites_stat.live_blocks, memory_order_relaxed);
        i.stacks = atomic_load_explicit(&mlk_sites_stat.stacks, memory_order_relaxed);
        int64_t timed = atomic_load_explicit(&mlk_sites_stat.timed, memory_order_relaxed);
        i.unwind_ns = atomic_load_explicit(&mlk_sites_stat.unwind_ns, memory_order_relaxed);
        if (timed && timed < i.stacks) /* one stack in 16 (64) is timed: the total, estimated */
            i.unwind_ns = (int64_t)((double)i.unwind_ns * (double)i.stacks / (double)timed);
        i.dropped_sites = atomic_load_explicit(&mlk_sites_stat.dropped_sites, memory_order_relaxed);
        i.dropped_blocks = atomic_load_explicit(&mlk_sites_stat.dropped_blocks, memory_order_relaxed);
    }
    mlk_maps_limits(&i.max_mappings, &i.dropped_mappings);
    size_t n = out->struct_size && out->struct_size < sizeof i ? out->struct_size : sizeof i;
    memcpy(out, &i, n);
    out->struct_size = (uint32_t)n;
}

MLK_EXPORT int64_t mlk_heap_sites_snapshot(int64_t *bytes, int64_t *blocks_x1024, int64_t cap)
{
    if (!mlk_sites_mode || cap <= 0)
        return 0;
    int64_t n = atomic_load_explicit(&mlk_n_sites, memory_order_acquire);
    if (n > mlk_max_sites)
        n = mlk_max_sites;
    if (n > cap)
        n = cap;
    for (int64_t i = 0; i < n; i++) {
        if (bytes)
            bytes[i] = atomic_load_explicit(&mlk_sites[i].bytes, memory_order_relaxed);
        if (blocks_x1024)
            blocks_x1024[i] = atomic_load_explicit(&mlk_sites[i].blocks_x1024, memory_order_relaxed);
    }
    return n;
}

MLK_EXPORT int mlk_heap_site_stack(int64_t site, int *kind, uintptr_t *pcs, int cap)
{
    if (!mlk_sites_mode || site <= 0 || site >= mlk_max_sites ||
        site >= atomic_load_explicit(&mlk_n_sites, memory_order_acquire))
        return 0;
    const mlk_site *r = &mlk_sites[site];
    if (!atomic_load_explicit(&r->ready, memory_order_acquire))
        return 0;
    int d = r->depth < cap ? r->depth : cap;
    if (d > 0 && pcs)
        memcpy(pcs, r->pcs, (size_t)d * sizeof *pcs);
    if (kind)
        *kind = r->kind;
    return d;
}

MLK_EXPORT int mlk_heap_sites_window(int on)
{
    if (mlk_sites_mode != MLK_HEAP_SITES_SAMPLE)
        return 0;
    atomic_store_explicit(&mlk_sites_window, on ? 1 : 0, memory_order_release);
    return 1;
}

MLK_EXPORT int64_t mlk_heap_sites_window_snapshot(int64_t *bytes, int64_t *blocks, int64_t cap)
{
    if (mlk_sites_mode != MLK_HEAP_SITES_SAMPLE || cap <= 0)
        return 0;
    int64_t n = atomic_load_explicit(&mlk_n_sites, memory_order_acquire);
    if (n > mlk_max_sites)
        n = mlk_max_sites;
    if (n > cap)
        n = cap;
    for (int64_t i = 0; i < n; i++) {
        if (bytes)
            bytes[i] = atomic_load_explicit(&mlk_sites[i].win_bytes, memory_order_relaxed);
        if (blocks)
            blocks[i] = atomic_load_explicit(&mlk_sites[i].win_blocks, memory_order_relaxed);
    }
    return n;
}
