/* cli_util.h: helpers the refengine subcommands share: /proc memory figures, timing, input filling.
 * None of them may allocate through the engine: they measure it. */
#ifndef REF_CLI_UTIL_H
#define REF_CLI_UTIL_H

#include <stdint.h>

#include "refengine.h"

typedef struct ref_proc_mem {
    int64_t vm_peak_kib, vm_size_kib, vm_hwm_kib, vm_rss_kib, rss_anon_kib, rss_file_kib, rss_shmem_kib;
    int64_t threads;
} ref_proc_mem;

/* Read /proc/self/status; fields it lacks stay -1. Returns 0, or -errno. */
int ref_cli_proc_mem(ref_proc_mem *out);
/* Reset VmHWM to the current RSS (writes 5 to /proc/self/clear_refs); 0 or -errno. */
int ref_cli_reset_hwm(void);

/* Monotonic clock in nanoseconds. */
int64_t ref_cli_now_ns(void);

/* Fill t (shape and dtype set, data pointing at room for it) with deterministic values from seed:
 * floats uniform in [-1, 1), integers in [0, 4), bools alternating. */
void ref_cli_fill(ref_tensor *t, uint64_t seed);

/* Exit status for a failed engine call: 2 when the model, its inputs or the options were refused (malformed,
 * unsupported, a shape out of bounds...), 1 for anything else (out of memory, a call out of order). */
int ref_cli_exit_status(int rc);

/* Quantile q in [0,1] of n values (sorts v in place). */
double ref_cli_quantile(double *v, int n, double q);

#endif
