/* heap_maps.c: libmemleak_heap.so's mappings (issue 9): mmap, mmap64, munmap and mremap forwarded to the next
 * definition and followed in a table of what is mapped through them (the allocators' own mappings included: they
 * map like anyone), each mapping with its call site when sites are on; and dlclose, which may leave the unwinder's
 * caches stale. It must never change what a call returns or its errno, and never lose track on a full table other
 * than by counting what it had no room for.
 *
 * The table is an array of disjoint [start, end) ranges sorted by start, behind one spinlock. munmap, mremap and
 * mmap with MAP_FIXED make their syscall while holding it, so a range the kernel hands out again is never still in
 * the table when its new owner records it; a plain mmap records its new range after the call and first cuts out
 * whatever the table still held there (a range unmapped behind the shim's back, by a raw syscall). */
#include "heap_shim_internal.h"
#include "heap_sites.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define MLK_MAX_MAPPINGS 65536 /* the kernel's default vm.max_map_count is 65530 */

typedef void *(*mlk_mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*mlk_munmap_fn)(void *, size_t);
typedef void *(*mlk_mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*mlk_dlclose_fn)(void *);

static mlk_mmap_fn mlk_next_mmap;
static mlk_munmap_fn mlk_next_munmap;
static mlk_mremap_fn mlk_next_mremap;
static mlk_dlclose_fn mlk_next_dlclose;

typedef struct mlk_map {
    uintptr_t start, end;
    uint32_t site;
    uint32_t pad;
} mlk_map;

static _Atomic int mlk_map_lock;
static mlk_map *mlk_maps; /* NULL until the first mapping; MAP_FAILED when it could not be mapped */
static int64_t mlk_n_maps;
static _Atomic int64_t mlk_maps_high; /* the most entries the table ever held: its pages touched so far */
static _Atomic int64_t mlk_map_bytes, mlk_map_count, mlk_map_dropped;
/* The highest mlk_map_bytes since the last mlk_maps_reset_peak (issue 12: memory requested within a step, touched or
 * not: an untouched scratch mapping moves neither RSS nor HWM, and VmPeak cannot be reset). */
static _Atomic int64_t mlk_map_peak;

/* Before the shim resolved its next definitions (an allocator mapping from inside the first malloc, say), the
 * kernel directly: dlsym itself may allocate and come back here. */
/* The allocator's own object. Its mappings (arenas, extents) get no stack: it maps from inside malloc, holding its
 * own locks, and the unwinder's first use in a thread allocates its thread-local block through malloc, which would
 * wait for those locks forever. They are counted under site 0; what the engine asked for shows in the heap sites. */
static uintptr_t mlk_alloc_lo, mlk_alloc_hi;

void mlk_maps_resolve(const void *allocator)
{
    uintptr_t lo, hi;
    mlk_span_of(allocator, &lo, &hi);
    __atomic_store_n(&mlk_alloc_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&mlk_alloc_hi, hi, __ATOMIC_RELAXED);
    __atomic_store_n(&mlk_next_mmap, (mlk_mmap_fn)dlsym(RTLD_NEXT, "mmap"), __ATOMIC_RELEASE);
    __atomic_store_n(&mlk_next_munmap, (mlk_munmap_fn)dlsym(RTLD_NEXT, "munmap"), __ATOMIC_RELEASE);
    __atomic_store_n(&mlk_next_mremap, (mlk_mremap_fn)dlsym(RTLD_NEXT, "mremap"), __ATOMIC_RELEASE);
}

static void *mlk_real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    mlk_mmap_fn f = __atomic_load_n(&mlk_next_mmap, __ATOMIC_ACQUIRE);
    if (f)
        return f(addr, len, prot, flags, fd, off);
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    return r == -1 ? MAP_FAILED : (void *)r;
}

static int mlk_real_munmap(void *addr, size_t len)
{
    mlk_munmap_fn f = __atomic_load_n(&mlk_next_munmap, __ATOMIC_ACQUIRE);
    return f ? f(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

static void *mlk_real_mremap(void *old, size_t old_len, size_t new_len, int flags, void *want)
{
    mlk_mremap_fn f = __atomic_load_n(&mlk_next_mremap, __ATOMIC_ACQUIRE);
    if (f)
        return f(old, old_len, new_len, flags, want);
    long r = syscall(SYS_mremap, old, old_len, new_len, flags, want);
    return r == -1 ? MAP_FAILED : (void *)r;
}

static uintptr_t mlk_page_up(uintptr_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) & ~(page - 1);
}

/* ------------------------------------------------------------------ the table (callers hold the lock) */

static bool mlk_maps_usable(void)
{
    if (!mlk_maps) {
        long r = syscall(SYS_mmap, NULL, MLK_MAX_MAPPINGS * sizeof *mlk_maps, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        __atomic_store_n(&mlk_maps, r == -1 ? (mlk_map *)MAP_FAILED : (mlk_map *)r, __ATOMIC_RELAXED);
    }
    return mlk_maps != MAP_FAILED;
}

static void mlk_account(uint32_t site, int64_t bytes, int64_t count)
{
    int64_t now = atomic_fetch_add_explicit(&mlk_map_bytes, bytes, memory_order_relaxed) + bytes;
    atomic_fetch_add_explicit(&mlk_map_count, count, memory_order_relaxed);
    int64_t peak = atomic_load_explicit(&mlk_map_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&mlk_map_peak, &peak, now, memory_order_relaxed,
                                                                 memory_order_relaxed))
        ;
    mlk_sites_adjust(site, bytes, count * 1024);
}

/* The first entry whose end lies after a (ends are sorted too: the ranges are disjoint). */
static int64_t mlk_first_after(uintptr_t a)
{
    int64_t lo = 0, hi = mlk_n_maps;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (mlk_maps[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void mlk_remove_at(int64_t i)
{
    memmove(&mlk_maps[i], &mlk_maps[i + 1], (size_t)(mlk_n_maps - i - 1) * sizeof *mlk_maps);
    mlk_n_maps--;
}

static bool mlk_insert_at(int64_t i, uintptr_t start, uintptr_t end, uint32_t site)
{
    if (mlk_n_maps >= MLK_MAX_MAPPINGS)
        return false;
    memmove(&mlk_maps[i + 1], &mlk_maps[i], (size_t)(mlk_n_maps - i) * sizeof *mlk_maps);
    mlk_maps[i] = (mlk_map){start, end, site, 0};
    mlk_n_maps++;
    if (mlk_n_maps > atomic_load_explicit(&mlk_maps_high, memory_order_relaxed))
        atomic_store_explicit(&mlk_maps_high, mlk_n_maps, memory_order_relaxed);
    return true;
}

/* [a, b) is no longer mapped: drop, trim or split whatever the table holds there. */
static void mlk_cut(uintptr_t a, uintptr_t b)
{
    for (int64_t i = mlk_first_after(a); i < mlk_n_maps && mlk_maps[i].start < b;) {
        mlk_map m = mlk_maps[i];
        uintptr_t lo = m.start > a ? m.start : a, hi = m.end < b ? m.end : b;
        if (lo == m.start && hi == m.end) {
            mlk_account(m.site, -(int64_t)(m.end - m.start), -1);
            mlk_remove_at(i);
        } else if (lo == m.start) {
            mlk_account(m.site, -(int64_t)(hi - lo), 0);
            mlk_maps[i++].start = hi;
        } else if (hi == m.end) {
            mlk_account(m.site, -(int64_t)(hi - lo), 0);
            mlk_maps[i++].end = lo;
        } else { /* a hole in the middle: two mappings now, as the kernel sees it */
            mlk_maps[i].end = lo;
            if (mlk_insert_at(i + 1, hi, m.end, m.site)) {
                mlk_account(m.site, -(int64_t)(hi - lo), 1);
                i += 2;
            } else { /* no room for the right part: it is no longer counted */
                mlk_account(m.site, -(int64_t)(m.end - lo), 0);
                atomic_fetch_add_explicit(&mlk_map_dropped, 1, memory_order_relaxed);
                i++;
            }
        }
    }
}

static void mlk_add(uintptr_t start, uintptr_t end, uint32_t site)
{
    mlk_cut(start, end);
    if (mlk_insert_at(mlk_first_after(start), start, end, site))
        mlk_account(site, (int64_t)(end - start), 1);
    else
        atomic_fetch_add_explicit(&mlk_map_dropped, 1, memory_order_relaxed);
}

/* The site of the tracked mapping holding a, else fallback. */
static uint32_t mlk_site_at(uintptr_t a, uint32_t fallback)
{
    int64_t i = mlk_first_after(a);
    return i < mlk_n_maps && mlk_maps[i].start <= a ? mlk_maps[i].site : fallback;
}

/* ------------------------------------------------------------------ interposed */

/* A mapping's site: its stack, unless the allocator (or nobody resolved yet) is the caller. */
static uint32_t mlk_site_of_call(const void *caller)
{
    uintptr_t c = (uintptr_t)caller;
    if (c >= __atomic_load_n(&mlk_alloc_lo, __ATOMIC_RELAXED) && c < __atomic_load_n(&mlk_alloc_hi, __ATOMIC_RELAXED))
        return 0;
    if (!__atomic_load_n(&mlk_alloc_hi, __ATOMIC_RELAXED)) /* before the shim knows its allocator */
        return 0;
    return mlk_sites_mapping_site();
}

static void *mlk_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, const void *caller)
{
    if (mlk_heap_self.in_sites) /* the unwinder's own memory, while it takes a stack */
        return mlk_real_mmap(addr, len, prot, flags, fd, off);
    uint32_t site = mlk_site_of_call(caller);
    bool fixed = (flags & MAP_FIXED) != 0; /* replaces what was there: the syscall and the table move together */
    if (fixed)
        mlk_spin_lock(&mlk_map_lock);
    void *r = mlk_real_mmap(addr, len, prot, flags, fd, off);
    if (r != MAP_FAILED && len) {
        int saved = errno;
        if (!fixed)
            mlk_spin_lock(&mlk_map_lock);
        if (mlk_maps_usable())
            mlk_add((uintptr_t)r, (uintptr_t)r + mlk_page_up(len), site);
        mlk_spin_unlock(&mlk_map_lock);
        errno = saved;
    } else if (fixed) {
        mlk_spin_unlock(&mlk_map_lock);
    }
    return r;
}

MLK_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mlk_mmap(addr, len, prot, flags, fd, off, __builtin_return_address(0));
}

MLK_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return mlk_mmap(addr, len, prot, flags, fd, (off_t)off, __builtin_return_address(0));
}

MLK_EXPORT int munmap(void *addr, size_t len)
{
    if (mlk_heap_self.in_sites)
        return mlk_real_munmap(addr, len);
    mlk_spin_lock(&mlk_map_lock);
    int rc = mlk_real_munmap(addr, len);
    if (rc == 0 && len) {
        int saved = errno;
        if (mlk_maps_usable())
            mlk_cut((uintptr_t)addr, (uintptr_t)addr + mlk_page_up(len));
        errno = saved;
    }
    mlk_spin_unlock(&mlk_map_lock);
    return rc;
}

/* A moved or resized mapping keeps its site; one the shim never saw made takes the mremap's. */
MLK_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    if (mlk_heap_self.in_sites)
        return mlk_real_mremap(old, old_len, new_len, flags, want);
    uint32_t here = mlk_site_of_call(__builtin_return_address(0));
    mlk_spin_lock(&mlk_map_lock);
    void *r = mlk_real_mremap(old, old_len, new_len, flags, want);
    if (r != MAP_FAILED) {
        int saved = errno;
        if (mlk_maps_usable()) {
            uint32_t site = mlk_site_at((uintptr_t)old, here);
            if (!(flags & MREMAP_DONTUNMAP))
                mlk_cut((uintptr_t)old, (uintptr_t)old + mlk_page_up(old_len));
            if (new_len)
                mlk_add((uintptr_t)r, (uintptr_t)r + mlk_page_up(new_len), site);
        }
        errno = saved;
    }
    mlk_spin_unlock(&mlk_map_lock);
    return r;
}

static int mlk_subs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_subs;
    return 1;
}

/* How many objects the loader has unloaded so far. */
static unsigned long long mlk_objects_unloaded(void)
{
    unsigned long long subs = 0;
    dl_iterate_phdr(mlk_subs_cb, &subs);
    return subs;
}

MLK_EXPORT int dlclose(void *handle)
{
    mlk_dlclose_fn f = __atomic_load_n(&mlk_next_dlclose, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (mlk_dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
        if (!f) {
            errno = ENOSYS;
            return -1;
        }
        __atomic_store_n(&mlk_next_dlclose, f, __ATOMIC_RELEASE);
    }
    unsigned long long before = mlk_objects_unloaded();
    int rc = f(handle);
    int saved = errno;
    if (mlk_objects_unloaded() != before) /* most dlcloses only drop a reference (RTLD_NOLOAD look-ups) */
        mlk_sites_dlclosed();
    errno = saved;
    return rc;
}

/* ------------------------------------------------------------------ statistics */

void mlk_maps_stats(int64_t *bytes, int64_t *n)
{
    bool followed = __atomic_load_n(&mlk_maps, __ATOMIC_RELAXED) != MAP_FAILED;
    *bytes = followed ? atomic_load_explicit(&mlk_map_bytes, memory_order_relaxed) : -1;
    *n = followed ? atomic_load_explicit(&mlk_map_count, memory_order_relaxed) : -1;
}

int64_t mlk_maps_peak(void)
{
    bool followed = __atomic_load_n(&mlk_maps, __ATOMIC_RELAXED) != MAP_FAILED;
    return followed ? atomic_load_explicit(&mlk_map_peak, memory_order_relaxed) : -1;
}

void mlk_maps_reset_peak(void)
{
    atomic_store_explicit(&mlk_map_peak, atomic_load_explicit(&mlk_map_bytes, memory_order_relaxed),
                          memory_order_relaxed);
}

/* Entries are kept sorted from the table's start, so the pages touched are those below the high-water mark. */
int64_t mlk_maps_resident(void)
{
    int64_t page = (int64_t)sysconf(_SC_PAGESIZE);
    int64_t bytes = atomic_load_explicit(&mlk_maps_high, memory_order_relaxed) * (int64_t)sizeof(mlk_map);
    return page > 0 ? (bytes + page - 1) / page * page : bytes;
}

void mlk_maps_limits(int64_t *max, int64_t *dropped)
{
    *max = MLK_MAX_MAPPINGS;
    *dropped = atomic_load_explicit(&mlk_map_dropped, memory_order_relaxed);
}

MLK_EXPORT int64_t mlk_heap_site_mappings(int64_t site, uintptr_t *starts, uint64_t *lengths, int64_t cap)
{
    int64_t found = 0;
    mlk_spin_lock(&mlk_map_lock);
    for (int64_t i = 0; mlk_maps && mlk_maps != MAP_FAILED && i < mlk_n_maps; i++) {
        if (site >= 0 && mlk_maps[i].site != (uint32_t)site)
            continue;
        if (found < cap) {
            if (starts)
                starts[found] = mlk_maps[i].start;
            if (lengths)
                lengths[found] = mlk_maps[i].end - mlk_maps[i].start;
        }
        found++;
    }
    mlk_spin_unlock(&mlk_map_lock);
    return found;
}
