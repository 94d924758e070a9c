/* heap_sites.h: what libmemleak_heap.so exports about allocation sites (issue 9): the call stacks of sampled (or
 * all) allocations and of every mapping, with each site's live bytes, so a worker can name the sites that grow.
 * It must never allocate through malloc on the counting path nor change what any interposed call returns. */
#ifndef MLK_HEAP_SITES_H
#define MLK_HEAP_SITES_H

#include <stdint.h>

/* Read once, when the shim loads. MLK_HEAP_SITES: off (also when unset), sample, exact.
 * MLK_HEAP_SITES_INTERVAL: the mean sampling interval in bytes (sample mode; default below).
 * MLK_HEAP_SITES_MAX: "SITES,BLOCKS" table capacities (tests of the overflow behaviour; defaults by mode). */
#define MLK_HEAP_SITES_ENV "MLK_HEAP_SITES"
#define MLK_HEAP_SITES_INTERVAL_ENV "MLK_HEAP_SITES_INTERVAL"
#define MLK_HEAP_SITES_MAX_ENV "MLK_HEAP_SITES_MAX"
#define MLK_HEAP_SITES_DEFAULT_INTERVAL (512 * 1024) /* as jemalloc's heap profiler (lg_prof_sample: 19) */
#define MLK_HEAP_SITES_DEPTH 32 /* return addresses kept per stack, the shim's own frames left out */

enum { MLK_HEAP_SITES_OFF = 0, MLK_HEAP_SITES_SAMPLE = 1, MLK_HEAP_SITES_EXACT = 2 };
enum { MLK_HEAP_SITE_HEAP = 0, MLK_HEAP_SITE_MMAP = 1 }; /* malloc family and operator new; mmap and mremap */

typedef struct mlk_heap_sites_info {
    uint32_t struct_size;     /* sizeof of the shim's struct: members past it were not filled */
    int32_t mode;             /* as running: OFF also when asked for but the unwinder could not be loaded */
    int64_t sample_bytes;     /* the mean sampling interval (sample mode), else 0 */
    int64_t n_sites;          /* site indices in use are 0 .. n_sites-1; site 0 holds what no stack could name
                                 (the site table was full, or the stack could not be taken) */
    int64_t max_sites, max_blocks, max_mappings;
    int64_t live_blocks;      /* sampled heap blocks tracked now */
    int64_t stacks;           /* stacks taken so far (sampled allocations and mappings) */
    int64_t unwind_ns;        /* their total cost, in ns */
    int64_t dropped_sites;    /* stacks counted under site 0 because the site table was full */
    int64_t dropped_blocks;   /* sampled blocks the live-block table had no room for: not attributed */
    int64_t dropped_mappings; /* mappings the mapping table had no room for: not counted anywhere */
} mlk_heap_sites_info;

/* Resolve with dlsym(RTLD_DEFAULT, ...): present only when the shim is preloaded. None of them allocates. */
#define MLK_HEAP_SITES_INFO_SYMBOL "mlk_heap_sites_get_info"
#define MLK_HEAP_SITES_SNAPSHOT_SYMBOL "mlk_heap_sites_snapshot"
#define MLK_HEAP_SITE_STACK_SYMBOL "mlk_heap_site_stack"
#define MLK_HEAP_SITE_MAPPINGS_SYMBOL "mlk_heap_site_mappings"
#define MLK_HEAP_SITES_WINDOW_SYMBOL "mlk_heap_sites_window"
#define MLK_HEAP_SITES_WINDOW_SNAPSHOT_SYMBOL "mlk_heap_sites_window_snapshot"

/* Fills out (up to out->struct_size bytes when the caller sets it, else all). */
typedef void (*mlk_heap_sites_info_fn)(mlk_heap_sites_info *out);
/* Live bytes (an unbiased estimate when sampled: each sampled block weighs size / P(sampled)) and live blocks
 * times 1024 of sites 0 .. cap-1 into the arrays; mapped bytes and mappings for an mmap site. Returns how many
 * sites were copied (min(n_sites, cap)). */
typedef int64_t (*mlk_heap_sites_snapshot_fn)(int64_t *bytes, int64_t *blocks_x1024, int64_t cap);
/* Site i's kind and its stack, innermost return address first, into pcs (up to cap). Returns the depth; 0 for
 * site 0, a site still being written, or i out of range. */
typedef int (*mlk_heap_site_stack_fn)(int64_t site, int *kind, uintptr_t *pcs, int cap);
/* The live mappings made from site (or from any site when site < 0): start and length of each, up to cap.
 * Returns how many there are (may exceed cap). */
typedef int64_t (*mlk_heap_site_mappings_fn)(int64_t site, uintptr_t *starts, uint64_t *lengths, int64_t cap);

/* Sample mode only (issue 23): a window. While on, every allocation's stack is taken (no sampling) and its block is
 * counted exactly, apart from the sampled figures, in the site's window counters, until it is freed (also after the
 * window closes). Returns 1 when the shim samples (the window is set), 0 otherwise (nothing changes). */
typedef int (*mlk_heap_sites_window_fn)(int on);
/* The window counters of sites 0 .. cap-1: live bytes and live blocks (exact) of the blocks allocated in windows.
 * Returns how many sites were copied. */
typedef int64_t (*mlk_heap_sites_window_snapshot_fn)(int64_t *bytes, int64_t *blocks, int64_t cap);

void mlk_heap_sites_get_info(mlk_heap_sites_info *out);
int mlk_heap_sites_window(int on);
int64_t mlk_heap_sites_window_snapshot(int64_t *bytes, int64_t *blocks, int64_t cap);
int64_t mlk_heap_sites_snapshot(int64_t *bytes, int64_t *blocks_x1024, int64_t cap);
int mlk_heap_site_stack(int64_t site, int *kind, uintptr_t *pcs, int cap);
int64_t mlk_heap_site_mappings(int64_t site, uintptr_t *starts, uint64_t *lengths, int64_t cap);

#endif
