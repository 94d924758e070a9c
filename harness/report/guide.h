/* guide.h: OpenVINO's memory-optimization guide, measured (issue 21): one row per recommendation of the guide, with what
 * it claims, the cells of one run that test it, the figures measured in that run and a verdict computed from them
 * against stated thresholds (holds, holds partly, does not hold here); and every cell judged by both memleak's
 * detector and `detector: openvino`, with the reason where they disagree. It must never query the db itself (it reads
 * db_guide.h's structs) nor decide a verdict from anything but the measured figures and the thresholds below. */
#ifndef MLK_GUIDE_H
#define MLK_GUIDE_H

#include <stdio.h>

#include "db_guide.h"
#include "status.h"

/* The thresholds every verdict is computed against, in one place (printed under the table). */
#define MLK_GUIDE_LOWER_REL 0.05      /* a memory figure is "lower" when it drops by at least 5% ... */
#define MLK_GUIDE_LOWER_ABS_KIB 1024  /* ... and at least 1 MiB */
#define MLK_GUIDE_STABLE_REL 0.02     /* VmRSS after compile is stable from the first iteration that it stays within */
#define MLK_GUIDE_STABLE_ABS_KIB 2048 /* max(2%, 2 MiB) of its final level (median of the last quarter) ever after */
#define MLK_GUIDE_STABLE_TAIL 0.75    /* a stable point found only in the last quarter is none */
#define MLK_GUIDE_LATENCY_REL 0.10    /* a latency costs when it rises by at least 10% ... */
#define MLK_GUIDE_LATENCY_ABS_MS 0.05 /* ... and 0.05 ms */
#define MLK_GUIDE_MIN_RECOMPILES 200  /* the loop rows' verdicts need this many compiles in a cell, else "too short" */

typedef struct mlk_guide mlk_guide;

/* Build the guide of run r (loaded with db_guide_load; borrowed until mlk_guide_free): parse the scenario it ran
 * (stored in the run) to know each cell's settings, derive each cell's figures, judge each cell with both detectors,
 * and match cells to the guide's recommendations. A run whose cells test none of them gives rows that say so.
 * MLK_E_PARSE when the stored scenario does not parse, MLK_E_NOMEM. *out is freed with mlk_guide_free. */
int mlk_guide_build(const db_guide_run *r, mlk_guide **out, mlk_error *err);
void mlk_guide_free(mlk_guide *g);

/* Rows comparing cells that differ in one of the guide's knobs (mmap, compile_threads, malloc_trim, the tunables,
 * the allocator) found in the run; 0: the run varies none of them (`report` then writes no guide.md). */
int mlk_guide_n_tested(const mlk_guide *g);

/* The guide as Markdown: the recommendations table, the thresholds, the per-cell figures, and the two detectors side
 * by side. MLK_E_IO naming what when a write fails. */
int mlk_guide_write_md(const mlk_guide *g, FILE *f, const char *what, mlk_error *err);

#endif
