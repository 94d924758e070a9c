/* series.h: a cell judged on every memory signal it has: live heap, anonymous memory malloc cannot explain, mapped
 * memory, descriptors, threads, mappings, each with its own quantum, floor and the trend detector, into one verdict.
 * It must never judge a series on raw RSS where malloc explains it, nor judge a sample outside the measured phase. */
#ifndef MLK_SERIES_H
#define MLK_SERIES_H

#include <stdbool.h>

#include "detect.h"
#include "sample.h"
#include "scenario.h"
#include "stream.h"

/* What a series is judged with, and its defaults (README: "Leak verdicts"). */
typedef struct mlk_series_def {
    double quantum;       /* resolution: 1 for exact bytes and counts, 4096 for what the kernel counts in pages */
    double floor;         /* default growth per iteration a leak must reach, in the series' unit */
} mlk_series_def;
const mlk_series_def *mlk_series_def_of(int kind);

typedef struct mlk_series_result {
    bool judged;          /* every measured iteration sample had the figure */
    mlk_detect_result r;  /* the detector's result (r.verdict: PASS, LEAK or PLATEAU) */
    double floor, quantum;
    /* Under a shape schedule: the series grew only across iterations that met new input shapes, so a growth the
     * detector called a leak is a plateau bounded by the set of shapes (by_shapes), or it grew on shapes met before
     * and r is that growth's judgement (on_repeats). */
    bool by_shapes, on_repeats;
    double raw_growth;    /* the detector's growth over the series as measured, before any of the above */
} mlk_series_result;

typedef struct mlk_judgement {
    mlk_verdict verdict;  /* LEAK when any series leaks, else PLATEAU when any plateaus, else PASS */
    int deciding;         /* the series the verdict rests on (the first leaking one, else the first judged) */
    const char *metric;   /* cells.metric for it: heap_live_bytes, rss_anon_bytes (anon without the heap shim),
                             anon_beyond_heap_bytes, vm_beyond_alloc_bytes (vm_size_bytes where the
                             allocator's holding is not known or the heap not judged), fds, threads, mappings */
    mlk_series_result s[MLK_SERIES_COUNT];
    int shapes, new_shapes; /* under a shape schedule: distinct input shape sets met, and met first while measured */
    char detail[640];     /* "leak: open file descriptors +1.0/iter (fds); live heap flat" */
    bool heap_blind;      /* heap: off under an allocator that counts no live bytes (mimalloc): detail says so */
} mlk_judgement;

/* Judge a cell from its folded samples (stream.h). The floors are the scenario's thresholds.floors, else, when the
 * scenario set leak_bytes_per_iter, that for every byte series, else mlk_series_def_of's. With `detector:
 * openvino`, only the primary series (heap, else anon) is judged, by OpenVINO's rule. Returns 0, or -1 when
 * memory runs out (out is then untouched). */
int mlk_judge_stream(const mlk_scenario *s, const mlk_cell_stream *c, mlk_judgement *out);
/* The same over samples[0..n) (a cell's, in order), folded first. */
int mlk_judge_cell(const mlk_scenario *s, const mlk_sample *samples, int n, mlk_judgement *out);

/* Whether the sample's byte series outside the heap leave out what the allocator holds: the heap is judged (shim or
 * the allocator's own count) and the allocator says what it holds. */
bool mlk_series_held_out(const mlk_sample *x);
/* The harness's own resident bytes in the measured process (the heap shim's tables), 0 when not known: the anon
 * series leaves them out, as every figure of anonymous memory beyond the heap must. */
int64_t mlk_series_shim_bytes(const mlk_sample *x);
/* The value of series kind in one sample, NAN when not measured (heap without the shim, descriptors unread...). */
double mlk_series_value(int kind, const mlk_sample *x);

#endif
