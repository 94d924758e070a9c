/* sample.h: one measurement taken after a step, and its line format on the worker→parent pipe.
 * It must never lose a field in transit: encode and decode are exact inverses (tested). */
#ifndef MLK_SAMPLE_H
#define MLK_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap_shim.h"
#include "names.h"

/* Figures of one moment. Memory in KiB as /proc reports it; -1 when the kernel does not give the field. */
typedef struct mlk_mem {
    int64_t vm_peak_kib, vm_size_kib, vm_hwm_kib, vm_rss_kib, rss_anon_kib, rss_file_kib, rss_shmem_kib;
    int64_t threads;
    int64_t fds;             /* open file descriptors; -1 when /proc/self/fd cannot be read */
    int64_t alloc_bytes;     /* without the heap shim: the allocator's own count of bytes in use; -1 otherwise */
    int64_t alloc_held;      /* what the allocator holds from the system (live and cached); -1 when unknown */
    int64_t minflt, majflt;  /* cumulative, from getrusage */
    int64_t wall_ns, cpu_ns; /* monotonic clock and process CPU time */
    bool have_heap;
    mlk_heap_stats heap;     /* valid when have_heap */
} mlk_mem;

typedef struct mlk_sample {
    int phase;       /* mlk_phase */
    int iteration;   /* 0-based over warmup+measured; -1 in setup and teardown */
    int step;        /* mlk_step, MLK_STEP_TRIM or MLK_STEP_ITERATION */
    int64_t wall_ns, cpu_ns;  /* the step's own duration (0 for the iteration sample) */
    int64_t minflt, majflt;   /* faults during the step */
    mlk_mem m;       /* figures right after the step; m.vm_hwm_kib is the step's own peak */
    /* Under a shape schedule (scenario `shapes:`), the iteration's input shapes: 1 for the first distinct set the
     * cell met, 2 for the second, ... (so a value above every earlier one is a set never met before); 0 outside
     * iterations and without a schedule (a zeroed sample has none). */
    int shape;
} mlk_sample;

/* "S\t..." line, with a trailing newline, into buf; returns its length (< len) or -1 if it does not fit. */
int mlk_sample_encode(const mlk_sample *s, char *buf, size_t len);
/* Parse a line made by mlk_sample_encode (newline optional). Returns 0, or -1 if malformed. */
int mlk_sample_decode(const char *line, mlk_sample *s);

#endif
