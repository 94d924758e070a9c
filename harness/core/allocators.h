/* allocators.h: the allocators memleak sweeps: where each comes from (Debian package, LD_PRELOAD path), which
 * one is really active in a process, and its own call to give memory back. It must never guess silently:
 * a missing library is an error that names the package. */
#ifndef MLK_ALLOCATORS_H
#define MLK_ALLOCATORS_H

#include <stdint.h>

#include "names.h"
#include "status.h"


typedef struct mlk_allocator_info {
    const char *name;    /* as scenarios spell it */
    const char *package; /* the Debian package that provides it */
    const char *preload; /* path to LD_PRELOAD, or NULL for glibc */
    const char *marker;  /* a symbol only this allocator exports, or NULL for glibc */
    const char *release; /* what malloc_trim: on calls, for reports */
} mlk_allocator_info;

/* The allocator named name, or NULL (err lists the names). */
const mlk_allocator_info *mlk_allocator_find(const char *name, mlk_error *err);
/* 0 when the allocator can be used here; MLK_E_NOTFOUND naming the file and the package otherwise. */
int mlk_allocator_check(const mlk_allocator_info *a, mlk_error *err);

/* A scenario's own allocator (allocator: {name: N, preload: /abs/lib.so}): 0 when path is an absolute path to a
 * readable x86-64 ELF shared object that defines malloc and free; otherwise MLK_E_PARSE, MLK_E_NOTFOUND or MLK_E_IO
 * naming the allocator, the file and what is wrong. The library is read, never loaded. */
int mlk_allocator_check_preload(const char *name, const char *path, mlk_error *err);

/* In a worker: which allocator serves malloc, found by marker symbols, and the library file that holds it
 * (dladdr). kind and path are written; path gets "" when unknown. */
void mlk_allocator_detect(mlk_alloc_kind *kind, char *path, size_t path_len);
/* The active allocator's own figures; -1 where unknown; never allocates.
 * allocated (only when want_allocated): its count of bytes the program has allocated and not freed: glibc's
 *   mallinfo2 (in-use chunks, mmapped ones included), jemalloc's stats.allocated less what its thread caches hold
 *   (stats.arenas.<all>.tcache_bytes) and tcmalloc's generic.current_allocated_bytes. -1 for the others: mimalloc
 *   2.0.9 keeps no such count, and a scenario's own allocator is unknown. What heap: off judges the heap on.
 * held: what it holds from the system, live blocks and its own caches alike: glibc's mallinfo2 (arena + mmapped),
 *   jemalloc's stats.resident, tcmalloc's heap size less what it unmapped, mimalloc's committed bytes
 *   (mi_process_info). Resident memory beyond it is what malloc cannot explain. */
void mlk_allocator_figures(mlk_alloc_kind kind, bool want_allocated, int64_t *allocated, int64_t *held);

/* Ask the active allocator to give free memory back to the OS: malloc_trim(0), jemalloc's arena purge,
 * tcmalloc's ReleaseFreeMemory or mi_collect(true). Returns 0, or -1 when its call cannot be found. */
int mlk_allocator_release(mlk_alloc_kind kind);


#endif
