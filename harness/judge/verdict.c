/* verdict.c: per-step peaks, growth, heap deltas and latency quantiles of a cell's samples, through the streaming
 * state (stream.c computes them). It must never mix phases: measured samples only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantile.h"
#include "stream.h"
#include "verdict.h"

double mlk_slope_or_nan(const double *y, int n)
{
    double s;
    return n >= 2 && mlk_theil_sen(y, n, &s) == 0 ? s : NAN;
}

int mlk_step_stats(const mlk_sample *samples, int n, db_step_stats *out)
{
    mlk_cell_stream *c = mlk_cell_stream_new();
    int rc = c ? 0 : -1;
    for (int i = 0; !rc && i < n; i++)
        rc = mlk_cell_stream_push(c, &samples[i]);
    int written = rc ? -1 : mlk_cell_stream_step_stats(c, out);
    mlk_cell_stream_free(c);
    return written;
}
