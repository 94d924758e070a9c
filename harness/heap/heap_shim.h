/* heap_shim.h: what libmemleak_heap.so exports: exact live-heap accounting under any allocator.
 * The shim must never change what an allocation returns: it only counts, then forwards to the next definition. */
#ifndef MLK_HEAP_SHIM_H
#define MLK_HEAP_SHIM_H

#include <stdint.h>

typedef struct mlk_heap_stats {
    int64_t live_bytes;    /* usable bytes of every block allocated and not yet freed */
    int64_t peak_bytes;    /* highest live_bytes since the last mlk_heap_reset_peak */
    int64_t n_allocs;      /* malloc, calloc, realloc(NULL), memalign family, operator new */
    int64_t n_frees;       /* free of non-NULL, realloc to 0, operator delete */
    int64_t n_reallocs;    /* realloc of a live block */
    int64_t total_bytes;   /* usable bytes ever allocated */
    /* Appended (issue 9): what the process has mapped through mmap/mremap and not unmapped, as the shim saw the
     * calls (the allocator's own mappings included: it maps like anyone); -1 when mappings are not followed. */
    int64_t mapped_bytes;
    int64_t n_mappings;
    /* Appended (issue 12): the highest mapped_bytes since the last mlk_heap_reset_peak, -1 when not followed. */
    int64_t mapped_peak_bytes;
    /* Appended: the resident bytes of the shim's own tables (site records, live-block and mapping tables), which it
     * maps itself and touches as they fill: memory the harness put in the process, never the engine's, so RssAnon
     * minus it is what the process holds; -1 when the shim does not say. */
    int64_t shim_bytes;
} mlk_heap_stats;

/* Resolve with dlsym(RTLD_DEFAULT, MLK_HEAP_STATS_SYMBOL): present only when the shim is preloaded. */
#define MLK_HEAP_STATS_SYMBOL "mlk_heap_get_stats"
#define MLK_HEAP_RESET_PEAK_SYMBOL "mlk_heap_reset_peak"
typedef void (*mlk_heap_get_stats_fn)(mlk_heap_stats *out);
typedef void (*mlk_heap_reset_peak_fn)(void);

void mlk_heap_get_stats(mlk_heap_stats *out);
void mlk_heap_reset_peak(void);

#endif
