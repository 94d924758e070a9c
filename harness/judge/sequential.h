/* sequential.h: `iterations: auto` (issue 23): at each decision point the cell's judgement so far says whether every
 * series is decided, so a clean cell stops early and a doubtful one runs on. It must never call a series decided on
 * one look: a verdict counts once it held at two decision points in a row (the run 1.5 times longer). */
#ifndef MLK_SEQUENTIAL_H
#define MLK_SEQUENTIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "series.h"
#include "stream.h"

/* What the decisions so far remember, per series. Zero it (mlk_seq_init) before the first point. */
typedef struct mlk_seq {
    int points;                              /* decision points seen */
    int held[MLK_SERIES_COUNT];              /* consecutive points with the same class of verdict (leak or not) */
    bool leak[MLK_SERIES_COUNT];             /* that class: a leak */
    int first_leak_n[MLK_SERIES_COUNT];      /* the iterations at the point where the current run of leaks began */
    double first_leak_slope[MLK_SERIES_COUNT]; /* its late slope then */
    double last_slope[MLK_SERIES_COUNT];     /* the late slope at the point before */
    bool decided[MLK_SERIES_COUNT];          /* at the last point */
    bool settling[MLK_SERIES_COUNT];         /* at the last point: a leak that may still settle (see .c) */
} mlk_seq;

void mlk_seq_init(mlk_seq *q);

/* One decision point: j is the cell's judgement after n measured iterations. Returns true when every judged series
 * is decided: its class of verdict held at this point and the one before (pass and plateau), or the two before (a
 * leak: a pool that fills over the first 50 iterations is one until then), and a leak does not slow down: its late slope is at least 3/4 of the whole run's, of its value at the point before, and the
 * late part's second half at least 3/4 as fast as its first (a cache or pool filling up decelerates; a leak keeps
 * its pace). A leak of anonymous or mapped
 * memory while the live heap is judged and does not leak is settling (a pool the allocator fills, pages touched
 * deeper): it is decided only once it held at four points in a row, over a run at least eight times as long as
 * when it was first seen, without its late slope falling below 3/4 of what it was then. */
bool mlk_seq_point(mlk_seq *q, const mlk_judgement *j, int n);
/* The same, with the cell's stream (stream.h): a plateau is decided only once its series made no new high (by more
 * than two quanta) in the last third of the run: a staircase of size classes (a buffer realloc'd in place, 24 B/iter
 * under tcmalloc, a step every 10 to 20 iterations) reads as a plateau between its steps. c may be NULL. */
bool mlk_seq_point_stream(mlk_seq *q, const mlk_judgement *j, const mlk_cell_stream *c, int n);

/* The run ended at its bound (why: "max" or "budget") after n iterations with j its final judgement, and
 * mlk_seq_point(q, j, n) said not every series is decided. A cell with a decided leak stays a leak; else, when a
 * series is undecided and leaks or just stopped leaking, j becomes INCONCLUSIVE and its detail names those series.
 * Returns true when j was changed. */
bool mlk_seq_conclude(const mlk_seq *q, mlk_judgement *j, int n, const char *why);

/* The judged series of j undecided at the last point, comma-separated, into out ("" for none). */
void mlk_seq_undecided(const mlk_seq *q, const mlk_judgement *j, char *out, size_t len);

#endif
