/* stream.h: a cell's samples folded as they arrive into bounded state, from which its verdict and step statistics
 * are computed: the parent's memory must not grow with the run's length. It must never keep a sample it was given.
 *
 * Per-iteration series (the judged signals, each step's VmRSS and heap) are kept exactly up to MLK_STREAM_POINTS
 * iterations; past that, as means of blocks of `stride` consecutive iterations (stride doubles, neighbours merge,
 * so the state stays at most MLK_STREAM_POINTS values per series and every block covers the same span). The
 * detector takes the stride and judges per iteration (detect.h). Medians and quantiles of per-step figures
 * (latency, heap and RSS deltas) are exact up to MLK_STREAM_RESERVOIR values and, past that, come from a uniform
 * sample of that size (Vitter's algorithm R, seeded: the same stream gives the same figures). Peaks, counts and
 * final values are exact whatever the length. */
#ifndef MLK_STREAM_H
#define MLK_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"
#include "store.h"

#define MLK_STREAM_POINTS 4096
#define MLK_STREAM_RESERVOIR 4096

/* A series of per-iteration values, exact then block means (see above). */
typedef struct mlk_block_series {
    double *v;        /* MLK_STREAM_POINTS, allocated on the first push */
    int n;            /* whole blocks in v */
    int64_t stride;   /* iterations per block (a power of two) */
    double part_sum;  /* the block being filled */
    int64_t part_n;
    int64_t pushed;   /* values pushed in all */
} mlk_block_series;

int mlk_block_series_push(mlk_block_series *b, double x);
void mlk_block_series_clear(mlk_block_series *b);

typedef struct mlk_cell_stream mlk_cell_stream;

/* NULL when memory runs out. */
mlk_cell_stream *mlk_cell_stream_new(void);
void mlk_cell_stream_free(mlk_cell_stream *c);

/* Fold one sample in (the cell's samples in the order the worker sent them). 0, or -1 when memory runs out (the
 * stream is then unusable: judging it fails). */
int mlk_cell_stream_push(mlk_cell_stream *c, const mlk_sample *s);

/* The last sample pushed, NULL before the first. */
const mlk_sample *mlk_cell_stream_last(const mlk_cell_stream *c);
/* Samples pushed so far. */
int64_t mlk_cell_stream_count(const mlk_cell_stream *c);
/* True once a push failed for want of memory. */
bool mlk_cell_stream_failed(const mlk_cell_stream *c);

/* Kind's end-of-iteration series of the measured phase (series.h's kinds), or NULL when some measured iteration
 * lacked the figure or there was none. */
const mlk_block_series *mlk_cell_stream_series(const mlk_cell_stream *c, int kind);

/* Under a shape schedule (samples with a shape number), kind's series less what it moved across iterations that met a
 * set of input shapes first: growth left there came on shapes met before. NULL without a schedule or the series. */
const mlk_block_series *mlk_cell_stream_shaped(const mlk_cell_stream *c, int kind);
/* Distinct sets of input shapes the cell met (0 without a schedule); *new_measured (may be NULL): how many of them it
 * met first in the measured phase. */
int mlk_cell_stream_shapes(const mlk_cell_stream *c, int *new_measured);

/* One entry per distinct step of the measured phase (pipeline steps and malloc_trim) in the order they first came,
 * then the end-of-iteration entry (the cell as a whole). out has room for MLK_STEP_ANY_COUNT entries; returns how
 * many were written, or -1 when memory runs out. */
int mlk_cell_stream_step_stats(const mlk_cell_stream *c, db_step_stats *out);

#endif
