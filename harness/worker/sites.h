/* sites.h: where a cell's memory grows, at normal speed (issue 9). The worker snapshots the heap shim's per-site
 * live bytes at a few checkpoints of the measured iterations, finds the sites that grow (heap blocks, still
 * reachable or not, and mappings), names them while the engine is still loaded, and sends them to the parent as "W"
 * lines. Without the shim's sites (heap_sites: off, heap: off) it diffs /proc/self/maps between two checkpoints.
 * It must never allocate between open and the end of the measured iterations, nor touch anything between a step's
 * two probes.
 *
 * Lines (tab-separated; a missing figure or string is an empty field; strings have tabs and newlines blanked):
 *   W site  SEQ KIND BYTES_PER_ITER BLOCKS_PER_ITER GROWTH_BYTES LIVE_BYTES LIVE_BLOCKS PATH
 *   W frame SEQ DEPTH OFFSET FN FILE LINE OBJ          (OFFSET in hex: the return address relative to OBJ's base)
 *   W info  MODE SAMPLE_BYTES N_CHECKPOINTS FIRST_IT LAST_IT N_SITES STACKS DROPPED_SITES DROPPED_BLOCKS
 *           DROPPED_MAPPINGS UNWIND_NS SYMBOLIZE_MS WINDOW_ITERS WINDOW_MS WINDOW_STACKS   (one line, sent last;
 *           the window's fields are empty when none ran)
 * When a window ran (issue 23), heap sites are those whose exact live bytes grew across its iterations: their rate,
 * blocks, growth and live figures are the window's; mmap sites are the sampled phase's.
 * KIND is heap, mmap or maps; MODE sample, exact or maps; the db's growth_sites and growth_site_frames match. */
#ifndef MLK_SITES_H
#define MLK_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MLK_SITES_CHECKPOINTS 16 /* at most; fewer when there are fewer measured iterations */
#define MLK_SITES_REPORTED 10    /* growing sites sent per cell, fastest first */

typedef struct mlk_sites mlk_sites;

/* Before the first step. NULL when sites are not asked for (MLK_HEAP_SITES is not in the environment: a tool cell,
 * or a parent that does not know them) or there is nothing to measure; allocates every buffer it will need.
 * adaptive (iterations: auto, where iterations is only a bound): a checkpoint every stride measured iterations,
 * stride doubled whenever the 16 are full (every other one kept), so that 8 to 16 span the run whenever it ends. */
mlk_sites *mlk_sites_open(int warmup, int iterations, bool adaptive);
/* After iteration's end-of-iteration sample was sent: takes a checkpoint when it is one. Never allocates. */
void mlk_sites_after_iteration(mlk_sites *s, int iteration);
/* After the measured iterations, before teardown (the engine is still loaded, so its frames can be named): sends
 * the growing sites, their stacks and the info line to fd. A stack starts at the site's caller: the frames of the
 * allocator's library, the C library, the loader and operator new above it are left out. */
void mlk_sites_report(mlk_sites *s, int fd);
void mlk_sites_free(mlk_sites *s);

/* Localizing after detecting (issue 23). When sampling recorded the stacks and the shim's live heap grew over the
 * measured iterations (a trend over the checkpoints of at least 8 B/iter), the worker runs a window of a few more
 * iterations, unprobed and unsent, in which the shim takes every allocation's stack and counts the blocks exactly:
 * the growing heap sites are then reported with their exact rates. The judged series are the measured phase's only.
 * mlk_sites_window_wanted: how many window iterations to run (0: none). begin keeps the sampled phase's mapping
 * sites aside (it allocates: the measured phase is over) and opens the window; after_iteration, after each window
 * iteration, takes a window checkpoint after every second one (never allocates); window_ms: time since begin; end closes it and notes its cost. All accept NULL. */
#define MLK_SITES_WINDOW 32 /* iterations at most, a checkpoint after every second: a leak every 10 shows 3 times */
int mlk_sites_window_wanted(mlk_sites *s);
void mlk_sites_window_begin(mlk_sites *s);
void mlk_sites_window_after_iteration(mlk_sites *s);
int64_t mlk_sites_window_ms(const mlk_sites *s);
void mlk_sites_window_end(mlk_sites *s);

/* ---- the pieces, for tests ---- */

/* How a series of n checkpoints (x: iteration, y: live bytes) grows: Theil-Sen slope overall and in each half (the
 * middle checkpoint in both), growth last - first, and Kendall's concordance (pairs rising minus falling over pairs
 * that differ). It grows when both slopes are > 0, the second half at least half as fast as the first, growth >=
 * min_growth and concordance >= 0.5. */
typedef struct mlk_site_trend {
    double slope, first_half, second_half, concordance;
    double growth;
    bool grows;
} mlk_site_trend;
void mlk_sites_trend(const double *x, const double *y, int n, double min_growth, mlk_site_trend *out);

/* The iteration of checkpoint j of k over measured iterations warmup .. warmup+iterations-1. */
int mlk_sites_checkpoint_iter(int warmup, int iterations, int k, int j);

/* One /proc/self/maps text (len bytes) as (path, bytes) per distinct path, anonymous mappings as "[anon]". Returns
 * how many paths were found (at most cap; path strings point into text, which it modifies). */
typedef struct mlk_maps_path {
    const char *path;
    int64_t bytes;
} mlk_maps_path;
int mlk_sites_maps_parse(char *text, size_t len, mlk_maps_path *out, int cap);

/* A name for pc (a return address) in this process: function (demangled when the C++ runtime is loaded), file and
 * line when the object has debug information, the object's path, and pc relative to its base. Strings are "" when
 * unknown. Uses libdw where built with it, else dladdr. */
typedef struct mlk_site_sym {
    char fn[512], file[512], obj[512];
    int line;
    uint64_t offset;
} mlk_site_sym;
typedef struct mlk_symbolizer mlk_symbolizer;
mlk_symbolizer *mlk_symbolizer_open(void);
void mlk_symbolize(mlk_symbolizer *z, uintptr_t pc, mlk_site_sym *out);
void mlk_symbolizer_close(mlk_symbolizer *z);

#endif
