/* verdict.h: from a cell's samples (an array: tests, imports) to its per-step statistics.
 * It must never judge warmup samples: only the measured phase counts. */
#ifndef MLK_VERDICT_H
#define MLK_VERDICT_H

#include <stdbool.h>

#include "detect.h"
#include "sample.h"
#include "scenario.h"
#include "store.h"

/* One entry per distinct step of the measured phase (pipeline steps and malloc_trim), in pipeline order.
 * out has room for MLK_STEP_ANY_COUNT entries; returns how many were written, or -1 when memory runs out. */
int mlk_step_stats(const mlk_sample *samples, int n, db_step_stats *out);

/* Theil-Sen slope of y (n values), NaN when n < 2. */
double mlk_slope_or_nan(const double *y, int n);

#endif
