/* guide_internal.h: the guide report's own types, shared by its builder (guide.c), its per-cell figures
 * (guide_cells.c) and its Markdown writer (guide_md.c). It must never be included outside harness/report. */
#ifndef MLK_GUIDE_INTERNAL_H
#define MLK_GUIDE_INTERNAL_H

#include <stdbool.h>

#include "guide.h"
#include "scenario.h"
#include "series.h"

/* The guide's recommendations, in the guide's order: X(ID, key, claim). key: the setting the row compares cells on
 * (NULL: judged per cell). */
#define MLK_GUIDE_ROWS(X)                                                                                            \
    X(COMPILE_PEAK, NULL, "compilation is the most RAM-hungry stage")                                             \
    X(MMAP, "mmap", "mapping the weights (enable_mmap, on by default) lowers compile memory")                      \
    X(THREADS, "compile_threads", "fewer compilation threads lower the compile peak")                             \
    X(PLATEAU, NULL, "under glibc, VmRSS after compile grows to a stable point: not a leak")                       \
    X(TRIM, "malloc_trim", "malloc_trim(0) after compile tames VmRSS after compile")                               \
    X(TRIM_THRESHOLD, "glibc_tunables", "glibc.malloc.trim_threshold tames VmRSS after compile")                  \
    X(ARENA_MAX, "glibc_tunables", "glibc.malloc.arena_max tames VmRSS after compile")                            \
    X(JEMALLOC, "allocator", "jemalloc tames VmRSS after compile")                                                \
    X(LATENCY, NULL, "each of these remedies may cost first-inference latency")

enum {
#define MLK_X_(id, key, claim) MLK_GUIDE_##id,
    MLK_GUIDE_ROWS(MLK_X_)
#undef MLK_X_
        MLK_GUIDE_N_ROWS
};

typedef enum { GV_UNTESTED = 0, GV_HOLDS, GV_PARTLY, GV_NOT } guide_verdict;

/* One cell's figures, derived from its stored samples. NaN: not measured. */
typedef struct guide_fig {
    const db_guide_cell *c;
    char label[256];          /* the cell's axis values, "guide=trim" */
    /* effective settings (borrowed from the scenario; NULL: the default) */
    const char *mmap, *compile_threads, *malloc_trim, *tunables, *allocator;
    double compile_hwm_kib, compile_req_bytes, compile_ms, weights_mapped_bytes;
    double compile_rise_kib;  /* compile's VmHWM above VmRSS before it: what compiling itself needed */
    double other_peak_kib;    /* the highest rise of any other step (what it needed beyond what it found) */
    char other_step[32];
    int n_compiles;
    double rss_first_kib, rss_stable_kib, rss_last_kib; /* VmRSS after compile: first, final level, last */
    int stable_at;            /* 1-based compile from which it stays within the band of its final level; 0: none */
    double anon_kib;          /* RssAnon after compile, median over the measured iterations */
    double infer_first_ms, infer_steady_ms; /* medians: the first infer of each iteration, the later ones */
    double infer_first_ratio; /* first over steady: a remedy's cost, unmoved by the machine's load between cells */
    bool judged;
    mlk_judgement mem, ov;    /* memleak's detector and `detector: openvino` on the same samples */
    mlk_detect_result ov_rss; /* OpenVINO's rule on VmRSS after each iteration, as their memleaks tests use it */
    bool ov_rss_ok;
} guide_fig;

typedef struct guide_pair {
    int test, base;           /* indexes into figs: the recommended setting, and the one it is compared with */
    guide_verdict v;
    char why[160];
} guide_pair;

typedef struct guide_row {
    guide_verdict v;
    int cells[64];            /* PLATEAU, COMPILE_PEAK: the cells it judged */
    guide_verdict cell_v[64];
    int n_cells;
    guide_pair pairs[32];
    int n_pairs;
    char verdict_text[256];
    char unmeasured[320];     /* a pair the run meant to test whose cell did not finish: "guide=je crashed: ..." */
} guide_row;

struct mlk_guide {
    const db_guide_run *run;
    mlk_scenario *s;
    guide_fig *figs;
    int n_figs;
    guide_row rows[MLK_GUIDE_N_ROWS];
};

/* guide_cells.c: the figures of r's cell i under scenario s (judged with both detectors). 0, or MLK_E_NOMEM. */
int mlk_guide_fig(const mlk_scenario *s, const db_guide_cell *c, guide_fig *f, mlk_error *err);

extern const char *const mlk_guide_claims[MLK_GUIDE_N_ROWS];
extern const char *const mlk_guide_keys[MLK_GUIDE_N_ROWS];
const char *mlk_guide_verdict_name(guide_verdict v);

#endif
