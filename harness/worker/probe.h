/* probe.h: the per-step memory and time probe: /proc/self/status fields, VmHWM reset, faults, wall and CPU time.
 * It must never allocate after mlk_probe_open: a sample is taken between engine steps and must not disturb them. */
#ifndef MLK_PROBE_H
#define MLK_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"
#include "status.h"

typedef struct mlk_probe mlk_probe;

/* Open /proc/self/status and clear_refs once, and find the heap shim if it is preloaded. */
int mlk_probe_open(mlk_probe **out, mlk_error *err);
void mlk_probe_free(mlk_probe *p);

/* Reset VmHWM to the current RSS (and the shim's peak), so the next read gives this step's own peak. */
void mlk_probe_reset_peak(mlk_probe *p);
/* Read every figure now. Returns 0, or -errno when /proc/self/status cannot be read (out is then partly written:
 * never send it). */
int mlk_probe_read(mlk_probe *p, mlk_mem *out);
/* Tests only: let the next n reads succeed and fail the ones after with -EIO (n < 0 disarms). Not thread-safe. */
void mlk_probe_fail_after(int64_t n);
/* Only the clocks and fault counters (what a step's start needs to give durations and deltas): no /proc read,
 * which is most of a sample's cost. Memory fields are left untouched. */
void mlk_probe_mark(mlk_probe *p, mlk_mem *out);
/* True when the heap shim answered. */
bool mlk_probe_has_heap(const mlk_probe *p);

#endif
