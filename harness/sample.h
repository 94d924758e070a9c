/* sample.h: one measurement taken after a step, and its line format on the worker→parent pipe.
 * It must never lose a field in transit: encode and decode are exact inverses (tested). */
#ifndef MLK_SAMPLE_H
#define MLK_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe.h"
#include "scenario.h"

/* Steps beyond the pipeline's: the allocator's release call, and the end-of-iteration sample. */
#define MLK_STEP_TRIM ((int)MLK_STEP_COUNT)
#define MLK_STEP_ITERATION ((int)MLK_STEP_COUNT + 1)
#define MLK_STEP_ANY_COUNT ((int)MLK_STEP_COUNT + 2)

typedef enum { MLK_PHASE_SETUP = 0, MLK_PHASE_WARMUP, MLK_PHASE_MEASURE, MLK_PHASE_TEARDOWN, MLK_PHASE_COUNT } mlk_phase;

typedef struct mlk_sample {
    int phase;       /* mlk_phase */
    int iteration;   /* 0-based over warmup+measured; -1 in setup and teardown */
    int step;        /* mlk_step, MLK_STEP_TRIM or MLK_STEP_ITERATION */
    int64_t wall_ns, cpu_ns;  /* the step's own duration (0 for the iteration sample) */
    int64_t minflt, majflt;   /* faults during the step */
    mlk_mem m;       /* figures right after the step; m.vm_hwm_kib is the step's own peak */
} mlk_sample;

/* Names: "load_engine".., "malloc_trim", "iteration"; phases "setup", "warmup", "measure", "teardown". */
const char *mlk_any_step_name(int step);
int mlk_any_step_from_name(const char *name);
const char *mlk_phase_name(int phase);
int mlk_phase_from_name(const char *name);

/* "S\t..." line, with a trailing newline, into buf; returns its length (< len) or -1 if it does not fit. */
int mlk_sample_encode(const mlk_sample *s, char *buf, size_t len);
/* Parse a line made by mlk_sample_encode (newline optional). Returns 0, or -1 if malformed. */
int mlk_sample_decode(const char *line, mlk_sample *s);

#endif
