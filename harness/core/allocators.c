/* allocators.c: allocator table (Debian packages and preload paths), detection through marker symbols and
 * dladdr, and each allocator's own release call resolved with dlsym. It must never call glibc's malloc_trim
 * under another allocator: there it means nothing. */
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <stdbool.h>
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

int64_t mlk_allocator_allocated(mlk_alloc_kind kind)
{
    switch (kind) {
    case MLK_ALLOC_GLIBC: {
        struct mallinfo2 mi = mallinfo2();
        return (int64_t)(mi.uordblks + mi.hblkhd);
    }
    /* jemalloc's stats.allocated counts the blocks parked in each thread's cache as allocated: it moves in steps of
     * whole cache flushes while the program's own bytes stay put (a bounded cache read as a leak when tried), so
     * jemalloc, like mimalloc, leaves heap: off to resident memory. */
    case MLK_ALLOC_TCMALLOC: {
        int (*get)(const char *, size_t *) =
            (int (*)(const char *, size_t *))dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
        size_t v = 0;
        return get && get("generic.current_allocated_bytes", &v) ? (int64_t)v : -1;
    }
    default: return -1;
    }
}

int64_t mlk_allocator_held(mlk_alloc_kind kind)
{
    switch (kind) {
    case MLK_ALLOC_GLIBC: {
        struct mallinfo2 mi = mallinfo2();
        return (int64_t)(mi.arena + mi.hblkhd);
    }
    case MLK_ALLOC_JEMALLOC: {
        int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
            (int (*)(const char *, void *, size_t *, void *, size_t))dlsym(RTLD_DEFAULT, "mallctl");
        uint64_t epoch = 1;
        size_t v = 0, len = sizeof v;
        /* Its statistics are refreshed only when the epoch is written. */
        if (!mallctl || mallctl("epoch", NULL, NULL, &epoch, sizeof epoch) ||
            mallctl("stats.resident", &v, &len, NULL, 0))
            return -1;
        return (int64_t)v;
    }
    case MLK_ALLOC_TCMALLOC: {
        int (*get)(const char *, size_t *) =
            (int (*)(const char *, size_t *))dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
        size_t heap = 0, unmapped = 0;
        if (!get || !get("generic.heap_size", &heap) || !get("tcmalloc.pageheap_unmapped_bytes", &unmapped))
            return -1;
        return (int64_t)(heap - unmapped);
    }
    case MLK_ALLOC_MIMALLOC: {
        void (*info)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *) =
            (void (*)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *))dlsym(
                RTLD_DEFAULT, "mi_process_info");
        size_t t[8] = {0};
        if (!info)
            return -1;
        info(&t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7]);
        return (int64_t)t[5]; /* current_commit */
    }
    default: return -1;
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
