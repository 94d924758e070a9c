/* allocators.c: allocator table (Debian packages and preload paths), detection through marker symbols and
 * dladdr, and each allocator's own release call resolved with dlsym. It must never call glibc's malloc_trim
 * under another allocator: there it means nothing. */
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "allocators.h"
#include "heap_shim.h"


#define MLK_X_(e, n, pkg, lib, marker, release) [MLK_ALLOC_##e] = {n, pkg, lib, marker, release},
static const mlk_allocator_info table[MLK_ALLOC_COUNT] = {MLK_ALLOC_LIST(MLK_X_)};
#undef MLK_X_

const mlk_allocator_info *mlk_allocator_find(const char *name, mlk_error *err)
{
    for (int i = 0; i < MLK_ALLOC_COUNT; i++)
        if (!strcmp(table[i].name, name))
            return &table[i];
    mlk_fail(err, MLK_E_NOTFOUND, "unknown allocator '%s' (expected one of: %s)", name, mlk_alloc_names());
    return NULL;
}

int mlk_allocator_check(const mlk_allocator_info *a, mlk_error *err)
{
    if (!a->preload || access(a->preload, R_OK) == 0)
        return MLK_OK;
    return mlk_fail(err, MLK_E_NOTFOUND, "allocator %s needs %s, which is missing: install the Debian package %s",
                    a->name, a->preload, a->package);
}

/* The first loaded object (in load order, so preloads first) whose own code is malloc, skipping the heap shim:
 * the allocator that really serves the process, whatever it is called. */
typedef struct {
    char path[512];
} malloc_owner;

static int find_owner(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    malloc_owner *o = arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0; /* the executable */
    /* Tools that replace malloc to watch it (sanitizer runtimes, valgrind's preloads) stand in for glibc's malloc:
     * they are the harness's instruments, not an allocator under test. */
    static const char *const instruments[] = {"/libasan.", "/liblsan.", "/libtsan.", "/libmsan.", "/vgpreload_"};
    for (size_t i = 0; i < sizeof instruments / sizeof *instruments; i++)
        if (strstr(info->dlpi_name, instruments[i]))
            return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    Dl_info m, shim;
    void *fm = dlsym(h, "malloc"), *fs = dlsym(h, MLK_HEAP_STATS_SYMBOL);
    bool own = fm && dladdr(fm, &m) && m.dli_fname && !strcmp(m.dli_fname, info->dlpi_name);
    bool is_shim = fs && dladdr(fs, &shim) && shim.dli_fname && !strcmp(shim.dli_fname, info->dlpi_name);
    dlclose(h);
    if (!own || is_shim)
        return 0;
    snprintf(o->path, sizeof o->path, "%s", info->dlpi_name);
    return 1;
}

void mlk_allocator_detect(mlk_alloc_kind *kind, char *path, size_t path_len)
{
    *kind = MLK_ALLOC_GLIBC;
    malloc_owner owner = {{0}};
    dl_iterate_phdr(find_owner, &owner);
    const char *probe_sym = "malloc_trim";
    for (int i = MLK_ALLOC_JEMALLOC; i < MLK_ALLOC_COUNT; i++)
        if (dlsym(RTLD_DEFAULT, table[i].marker)) {
            *kind = (mlk_alloc_kind)i;
            probe_sym = table[i].marker;
            break;
        }
    /* dladdr of malloc itself would name the heap shim when it is preloaded first; the marker names the
     * library that really serves allocations. Under glibc, malloc_trim lives in libc. */
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, probe_sym);
    path[0] = '\0';
    if (sym && dladdr(sym, &info) && info.dli_fname)
        snprintf(path, path_len, "%s", info.dli_fname);
    /* No marker of ours, yet malloc is not libc's: a scenario's own allocator (allocator: {preload: ...}). */
    if (*kind == MLK_ALLOC_GLIBC && owner.path[0] && !strstr(owner.path, "/libc.so")) {
        *kind = MLK_ALLOC_CUSTOM;
        snprintf(path, path_len, "%s", owner.path);
    }
}

typedef int (*tc_get_fn)(const char *, size_t *);
typedef int (*je_ctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*mi_info_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *);

/* The allocator's statistics calls, looked up once: the probe asks on every sample, and dlsym costs about as much
 * as the rest of a sample. The allocator is preloaded before main, so what is found first stays right. */
static struct {
    bool done;
    tc_get_fn tc_get;
    je_ctl_fn je_ctl;
    mi_info_fn mi_info;
} stats_fns;

static void resolve_stats_fns(void)
{
    if (stats_fns.done)
        return;
    stats_fns.tc_get = (tc_get_fn)dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    stats_fns.je_ctl = (je_ctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
    stats_fns.mi_info = (mi_info_fn)dlsym(RTLD_DEFAULT, "mi_process_info");
    stats_fns.done = true;
}

void mlk_allocator_figures(mlk_alloc_kind kind, bool want_allocated, int64_t *allocated, int64_t *held)
{
    resolve_stats_fns();
    *allocated = -1;
    *held = -1;
    switch (kind) {
    case MLK_ALLOC_GLIBC: {
        struct mallinfo2 mi = mallinfo2(); /* one walk of the arenas serves both figures */
        if (want_allocated)
            *allocated = (int64_t)(mi.uordblks + mi.hblkhd);
        *held = (int64_t)(mi.arena + mi.hblkhd);
        return;
    }
    /* jemalloc's stats.allocated counts the blocks parked in each thread's cache as allocated: they move in steps of
     * whole cache flushes while the program's own bytes stay put (a bounded cache read as a leak when tried). Its
     * merged arena statistics count those cached bytes (tcache_bytes, and 5.3's tcache_stashed_bytes), so the
     * difference is the program's live bytes: a 64 B/iter leak read +64 B/iter under 500 blocks of churn a thread. */
    case MLK_ALLOC_JEMALLOC: {
        uint64_t epoch = 1;
        size_t v = 0, len = sizeof v;
        /* Its statistics are refreshed only when the epoch is written. */
        if (!stats_fns.je_ctl || stats_fns.je_ctl("epoch", NULL, NULL, &epoch, sizeof epoch))
            return;
        if (!stats_fns.je_ctl("stats.resident", &v, &len, NULL, 0))
            *held = (int64_t)v;
        size_t all = 0, cached = 0, stashed = 0;
        len = sizeof all;
        /* 4096 is MALLCTL_ARENAS_ALL: the arenas' merged statistics. */
        if (want_allocated && !stats_fns.je_ctl("stats.allocated", &all, &len, NULL, 0) &&
            !stats_fns.je_ctl("stats.arenas.4096.tcache_bytes", &cached, &len, NULL, 0)) {
            if (stats_fns.je_ctl("stats.arenas.4096.tcache_stashed_bytes", &stashed, &len, NULL, 0))
                stashed = 0; /* before 5.3 */
            *allocated = (int64_t)all - (int64_t)cached - (int64_t)stashed;
        }
        return;
    }
    case MLK_ALLOC_TCMALLOC: {
        size_t v = 0, heap = 0, unmapped = 0;
        if (!stats_fns.tc_get)
            return;
        if (want_allocated && stats_fns.tc_get("generic.current_allocated_bytes", &v))
            *allocated = (int64_t)v;
        if (stats_fns.tc_get("generic.heap_size", &heap) && stats_fns.tc_get("tcmalloc.pageheap_unmapped_bytes", &unmapped))
            *held = (int64_t)(heap - unmapped);
        return;
    }
    case MLK_ALLOC_MIMALLOC: {
        size_t t[8] = {0};
        if (!stats_fns.mi_info)
            return;
        stats_fns.mi_info(&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]);
        *held = (int64_t)t[5]; /* current_commit */
        return;
    }
    default: return;
    }
}

int mlk_allocator_release(mlk_alloc_kind kind)
{
    switch (kind) {
    case MLK_ALLOC_GLIBC:
        malloc_trim(0);
        return 0;
    case MLK_ALLOC_JEMALLOC: {
        int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
            (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
        /* 4096 is MALLCTL_ARENAS_ALL: purge every arena. */
        return mallctl && mallctl("arena.4096.purge", NULL, NULL, NULL, 0) == 0 ? 0 : -1;
    }
    case MLK_ALLOC_TCMALLOC: {
        void (*rel)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory");
        if (!rel)
            return -1;
        rel();
        return 0;
    }
    case MLK_ALLOC_MIMALLOC: {
        void (*collect)(bool) = (void (*)(bool))dlsym(RTLD_DEFAULT, "mi_collect");
        if (!collect)
            return -1;
        collect(true);
        return 0;
    }
    default:
        return -1;
    }
}
