/* probe.h: the per-step memory and time probe: /proc/self/status fields, VmHWM reset, faults, wall and CPU time.
 * It must never allocate after mlk_probe_open: a sample is taken between engine steps and must not disturb them. */
#ifndef MLK_PROBE_H
#define MLK_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "heap_shim.h"
#include "status.h"

/* Figures of one moment. Memory in KiB as /proc reports it; -1 when the kernel does not give the field. */
typedef struct mlk_mem {
    int64_t vm_peak_kib, vm_size_kib, vm_hwm_kib, vm_rss_kib, rss_anon_kib, rss_file_kib, rss_shmem_kib;
    int64_t threads;
    int64_t minflt, majflt;  /* cumulative, from getrusage */
    int64_t wall_ns, cpu_ns; /* monotonic clock and process CPU time */
    bool have_heap;
    mlk_heap_stats heap;     /* valid when have_heap */
} mlk_mem;

typedef struct mlk_probe mlk_probe;

/* Open /proc/self/status and clear_refs once, and find the heap shim if it is preloaded. */
int mlk_probe_open(mlk_probe **out, mlk_error *err);
void mlk_probe_free(mlk_probe *p);

/* Reset VmHWM to the current RSS (and the shim's peak), so the next read gives this step's own peak. */
void mlk_probe_reset_peak(mlk_probe *p);
/* Read every figure now. Returns 0, or -errno when /proc/self/status cannot be read. */
int mlk_probe_read(mlk_probe *p, mlk_mem *out);
/* Only the clocks and fault counters (what a step's start needs to give durations and deltas): no /proc read,
 * which is most of a sample's cost. Memory fields are left untouched. */
void mlk_probe_mark(mlk_probe *p, mlk_mem *out);
/* True when the heap shim answered. */
bool mlk_probe_has_heap(const mlk_probe *p);

#endif
