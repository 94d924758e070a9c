/* scenario.h: a memleak scenario file (YAML) parsed into a plain struct, with file:line:col on every error.
 * It must never run anything or touch the file system beyond reading the scenario file itself. */
#ifndef MLK_SCENARIO_H
#define MLK_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "heap_sites.h"
#include "names.h"
#include "shapes.h"
#include "status.h"

/* Where a YAML node starts, 1-based. */
typedef struct mlk_loc {
    int line, col;
} mlk_loc;

typedef struct mlk_kv {
    char *key;
    char *value; /* scalars keep their YAML text: "on", "2", "0.5" */
    mlk_loc loc; /* of the value */
} mlk_kv;

typedef enum { MLK_MODEL_PATH = 0, MLK_MODEL_GENERATE = 1 } mlk_model_kind;

typedef struct mlk_model_spec {
    mlk_model_kind kind;
    char *path;       /* MLK_MODEL_PATH: as written; relative paths are relative to the scenario's folder */
    char *generate;   /* MLK_MODEL_GENERATE: the architecture ("mlp", "mobilenetv2", ...) */
    mlk_kv *gen;      /* the other keys of the generate mapping: external_data, batch, seed, width_mult,
                         image_size, layers, hidden, heads, seq, mlp_hidden, dynamic */
    int n_gen;
    char **inputs;    /* optional: `inputs: [a.pb, b.pb]`, serialized TensorProto per graph input */
    mlk_loc *input_locs;
    int n_inputs;
    mlk_loc loc;
} mlk_model_spec;

/* One value of a variant axis: the engine options that value sets (see mlk_axis). */
typedef struct mlk_variant {
    mlk_kv *options; /* may be empty (a baseline variant) */
    int n_options;
    mlk_model_spec *model; /* the `model` axis only: the value's model (path or generate), options unused */
} mlk_variant;

/* A matrix axis. Each value is a scalar kept as written, or, for a variant axis, a mapping:
 *     matrix:
 *       fault:
 *         - {name: none}
 *         - {name: leak, inject_leak_bytes: 65536}
 *         - {name: retention, inject_retention_bytes: 65536, inject_retention_cap: 4M}
 * There values[i] is the mapping's `name:` (unique in the axis) and variants[i] holds its other keys, which
 * are engine options for the cells of that value. An axis is all scalars or all mappings; variants is NULL
 * for a scalar axis. A single scalar or mapping stands for a one-value list. Axis names: `allocator`
 * (glibc|jemalloc|tcmalloc|mimalloc, checked here, or a mapping {name: N, preload: /abs/lib.so} for an allocator of
 * the user's own, which may stand beside the registry's names: its variant holds the one option "preload"), `malloc_trim` (a boolean, checked here), `glibc_tunables`,
 * `malloc_conf`, `allocator_env` and `tool` are harness settings, never variant axes nor engine options; any other
 * scalar axis is an engine option of that name, checked by the engine. The options of a cell are
 * engine_options, then its scalar engine-option axes, then its variants' options; the parser refuses a name
 * set in two of these places, except that a variant may override an engine_options key. */
typedef struct mlk_axis {
    char *name;
    char **values; /* at least one, all distinct */
    mlk_loc *value_locs;
    int n_values;
    mlk_variant *variants; /* NULL, or n_values entries */
    mlk_loc loc;
} mlk_axis;



typedef enum { MLK_DETECTOR_MEMLEAK = 0, MLK_DETECTOR_OPENVINO = 1 } mlk_detector_kind;

/* What a scenario gets for each key it leaves out, in one table: X(field of mlk_scenario, value). The comments of
 * the fields below, the README and every module that needs a default (the judge's floor) read it from here. */
#define MLK_DEFAULT_LEAK_BYTES_PER_ITER 1024
#define MLK_DEFAULT_TOOL_ITERATIONS 3 /* a tool cell's iterations: valgrind runs them ~50x slower */
#define MLK_AUTO_MIN 30    /* iterations: auto: the first decision point */
#define MLK_AUTO_MAX 1000  /* ... and the most a cell runs */
#define MLK_SCENARIO_DEFAULTS(X)                                                                                     \
    X(iterations, 100) X(warmup, 10) X(leak_bytes_per_iter, MLK_DEFAULT_LEAK_BYTES_PER_ITER) X(regression_rel, 0.05) \
    X(regression_abs_kib, 256) X(latency_rel, 0.10) X(latency_alpha, 0.05) X(latency_abs_ms, 0.05)               \
    X(timeout_s, 600) X(heap, true) X(tool_iterations, MLK_DEFAULT_TOOL_ITERATIONS)                               \
    X(heap_sites, MLK_HEAP_SITES_SAMPLE) X(heap_sites_interval_kib, MLK_HEAP_SITES_DEFAULT_INTERVAL / 1024)         \
    X(duration_s, 0) X(stall_s, 300) X(shape_seed, 1)

typedef struct mlk_scenario {
    char *path;          /* as given to mlk_scenario_load, or the name passed to mlk_scenario_parse */
    char *text;          /* the whole file, NUL-terminated: stored with every run */
    char *name;          /* required: letters, digits, '.', '_', '-' */
    char *engine;        /* required: "ref", "ort", ... (same characters as name) */
    mlk_loc engine_loc;
    char *description;   /* optional free text; NULL when absent */
    mlk_model_spec model; /* required, unless the matrix has a `model` axis: a variant axis whose values are model
                             mappings, {name: mlp, generate: mlp, mlp_hidden: 256} or {name: x, path: x.onnx} */
    /* setup runs once, pipeline every iteration (warmup + iterations), teardown once. Defaults: setup
     * [load_engine, read_model], teardown [release_model, unload_engine]; pipeline required and non-empty.
     * The parser checks they form a sensible sequence: every step finds what it needs alive (a request for
     * infer, no request for release_compiled, nothing but the engine for unload_engine, ...), the pipeline
     * leaves alive exactly what it found (it repeats), and teardown releases everything. release_model may
     * come before release_compiled. */
    mlk_step *setup, *pipeline, *teardown;
    int n_setup, n_pipeline, n_teardown;
    int iterations;      /* measured iterations; default 100, >= 1 */
    int warmup;          /* unmeasured-for-verdict iterations first; default 10, >= 0 */
    mlk_axis *axes;      /* matrix: may be absent (one cell); an axis with no values is an error */
    int n_axes;
    mlk_kv *engine_options; /* fixed options for every cell */
    int n_engine_options;
    int64_t leak_bytes_per_iter; /* thresholds.leak_bytes_per_iter; default 1024: compare's growth floor, and, when
                                    the scenario sets it, the judge's floor of every byte series (older scenarios) */
    bool leak_floor_set;         /* the scenario set leak_bytes_per_iter */
    double floor_per_iter[MLK_SERIES_COUNT]; /* thresholds.floors.SERIES; -1: the judge's default for the series */
    /* What memleak-run compare calls a finding (thresholds.*; judge/alert.h holds the floors): a memory figure must
     * move by more than its floors, the table of alert.h unless the scenario sets regression_rel or
     * regression_abs_kib away from these defaults; growth per iteration by more than leak_bytes_per_iter; latency
     * by more than latency_rel (default 0.10) and latency_abs_ms (default 0.05: a few microseconds on a tiny step
     * are scheduling noise) across runs, or with a Mann-Whitney p below latency_alpha (default 0.05) over
     * repetitions. */
    double regression_rel;
    int64_t regression_abs_kib;
    double latency_rel, latency_alpha, latency_abs_ms;
    double timeout_s;    /* per cell; default 600. With duration_s, the time a cell may take beyond its duration */
    /* `duration: 8h` (or 90m, 1h30m, 45s, seconds): each cell measures iterations until that much time has passed
     * in the measured phase, instead of counting `iterations:` (the two exclude each other); 0: count. */
    double duration_s;
    bool iterations_set; /* the scenario gave `iterations:` */
    /* `iterations: auto`, or `iterations: {min: 30, max: 1000, budget: 10m}` (issue 23): each cell runs until the
     * judge has decided every series (sequentially, at iterations min, 1.5 min, ...), at least min, at most max
     * (then iterations = max), or until budget of measured time has passed; an undecided series at max or budget is
     * `inconclusive`. Defaults below; budget 0: none but timeout_s. */
    bool iterations_auto;
    int auto_min;
    double auto_budget_s;
    /* `stall_s`: a worker that sends nothing for this long is ended and the cell's finding is `hung` (distinct from
     * timeout, the cell's whole budget); default 300 (one step, compile included, may take that long); 0: off.
     * Tool cells (valgrind) are judged by timeout_s only. */
    double stall_s;
    int64_t memory_limit_mb; /* per worker; 0 = none (default) */
    mlk_detector_kind detector; /* `detector: memleak|openvino`; default memleak */
    bool heap;           /* `heap: on|off`: preload the heap-accounting shim; default on */
    /* Where memory grows (issue 9): `heap_sites: off|sample|exact` (default sample: a red cell names its growing
     * functions without a rerun, for about a tenth more time on a malloc-heavy loop) has the shim record the stacks of
     * sampled (every heap_sites_interval_kib KiB on average, default 512) or of all allocations and of every mmap,
     * and each cell names its growing sites. off, or heap: off: growing mappings are named by path only
     * (/proc/self/maps). Values MLK_HEAP_SITES_OFF, _SAMPLE, _EXACT (heap_sites.h). */
    int heap_sites;
    int64_t heap_sites_interval_kib;
    /* Tool cells (issue 6): `tool: none|memcheck|massif|lsan` runs every cell's worker under that tool, or set
     * it per cell as a `tool` matrix axis (not both). A tool cell runs tool_iterations iterations (default 3,
     * `tool_iterations: N`) and no warmup, is judged by the tool's report, never by RSS or the heap series, and
     * runs on glibc's malloc without the heap shim (the plan refuses another allocator: valgrind and ASan
     * replace malloc themselves). */
    /* Shape schedules (issue 12): `shapes: {seq: [16, 512], batch: {cycle: [1, 4]}}` gives named symbolic input dims a
     * size per iteration (shapes.h: a seeded choice in a range or among values, or a cycle), for every engine whose
     * plugin names its inputs' dims (engine.h input_dim_param). NULL without. Judged so that growth that comes only
     * with shapes never met before is a plateau and growth on shapes met before is a leak (series.h). */
    mlk_shapes *shapes;
    mlk_loc shapes_loc;
    int64_t shape_seed;  /* `shape_seed: N` for range and choice; default 1 */
    char *tool;          /* NULL for none */
    mlk_loc tool_loc;
    int tool_iterations;
    /* Known findings (issue 22): `expect: [{cells: "fault=leak,engine=ort", verdict: leak, reason: "upstream #123"}]`.
     * A cell whose axes match `cells` (cell_filter.h) and whose verdict is `verdict` (default leak) is reported with
     * its reason but fails neither the run's exit status nor junit.xml. NULL with 0 when absent. */
    struct mlk_expect *expect;
    int n_expect;
    /* Absolute caps (issue 22, as pytest-memray's limit_memory): `budgets: [{cells: "engine=ort", peak: 200MiB,
     * final_rss: 150MiB, heap: 64MiB, growth: 1KiB}]` (cells optional: every cell). A cell's whole iteration over
     * a cap is a finding of the run and of compare. NULL with 0 when absent. */
    struct mlk_budget *budgets;
    int n_budgets;
} mlk_scenario;

/* One budget: bytes (growth: bytes per iteration); < 0 where not capped. */
typedef struct mlk_budget {
    char *cells; /* KEY=VALUE,... or NULL for every cell */
    double peak_bytes, final_rss_bytes, heap_bytes, growth_bytes;
    mlk_loc loc;
} mlk_budget;

typedef struct mlk_expect {
    char *cells;   /* KEY=VALUE,... */
    char *verdict; /* leak, plateau, crashed, timeout, hung, oom or error */
    char *reason;  /* NULL when none given */
    mlk_loc loc;
} mlk_expect;

/* The budgets that apply to a cell with these axes, in order: the i-th from *at (start at 0), or NULL at the end. */
const mlk_budget *mlk_scenario_budget(const mlk_scenario *s, const char *label, int *at);

/* The expectation that covers a cell with these axes ("k=v k=v") ending with status, or NULL. Borrowed from s. */
const mlk_expect *mlk_scenario_expected(const mlk_scenario *s, const char *label, const char *status);

/* Read and parse a scenario file. On failure *out is untouched and err->msg starts with
 * "PATH:LINE:COL: " and says what was expected (MLK_E_PARSE), or names the file (MLK_E_IO, also for a file
 * over 4 MiB); MLK_E_NOMEM. Refused as MLK_E_PARSE: YAML syntax errors, anchors, aliases, tags, several
 * documents, duplicate keys, unknown keys (the message lists the accepted ones), wrong types or ranges,
 * missing required keys (at the document start), unknown steps, an empty matrix or axis, duplicate axis
 * values, an option set twice in a cell, more than MLK_MAX_CELLS cells. Files named in the scenario
 * (model path, inputs) are not checked here. The caller frees *out with mlk_scenario_free. */
int mlk_scenario_load(const char *path, mlk_scenario **out, mlk_error *err);

/* Parse scenario text (len bytes, no NUL needed); name stands for the file in messages. Fails as above. */
/* The shortest duration a cell can measure: the worker is given whole milliseconds (and always measures at least
 * one iteration), so anything shorter would reach it as 0. */
#define MLK_DURATION_MIN_S 0.001
/* "8h", "90m", "1h30m", "45s", "2.5h", "1d" or plain seconds into *seconds (at least MLK_DURATION_MIN_S, at most a
 * year). 0; -1 when text is not such a length (or over a year); -2 when it is shorter than MLK_DURATION_MIN_S. */
int mlk_parse_duration(const char *text, double *seconds);

int mlk_scenario_parse(const char *text, size_t len, const char *name, mlk_scenario **out, mlk_error *err);

void mlk_scenario_free(mlk_scenario *s);

/* A YAML 1.1 boolean word as scenarios write them (on/off, true/false, yes/no, in any case): 1, 0, or -1 for
 * anything else. Use it for values the parser checked as booleans (malloc_trim), which keep their text. */
int mlk_scenario_bool(const char *text);

/* True for axes the harness applies itself (engine, model, allocator, malloc_trim, glibc_tunables, malloc_conf,
 * allocator_env, tool); every other axis is an engine option. An `engine` axis overrides the top-level engine per cell,
 * and an option key "ENGINE.KEY" (engine_options, variants) applies only to that engine's cells, as KEY. */
bool mlk_scenario_is_harness_axis(const char *name);

/* The library value j of the allocator axis a preloads when the scenario gives one ({name: N, preload: PATH}), or
 * NULL for the registry's allocator of that name. */
const char *mlk_scenario_allocator_preload(const mlk_axis *a, int j);

/* Whether a variant may set this harness setting beside its engine options (allocator, malloc_trim, glibc_tunables,
 * malloc_conf, allocator_env): one axis can then change one thing at a time, e.g.
 *     guide: [{name: default}, {name: mmap_off, mmap: off}, {name: trim, malloc_trim: on}, {name: je, allocator: jemalloc}]
 * The parser refuses such a key where it is also an axis or set by another variant axis. */
bool mlk_scenario_variant_harness_key(const char *key);

/* The value cell idx (0 .. mlk_scenario_n_cells - 1, the last axis varying fastest, as the plan numbers cells) gets
 * for key: a variant's option, else a scalar axis value, else engine_options' (a key "ENGINE.KEY" counts as KEY for
 * that engine; engine may be NULL); for the axes `model` and `allocator`, the value's name. NULL when nothing sets
 * it (the engine's or harness's default applies). Borrowed from s. */
const char *mlk_scenario_cell_value(const mlk_scenario *s, int64_t idx, const char *engine, const char *key);

/* The axis named name, or NULL. */
const mlk_axis *mlk_scenario_axis(const mlk_scenario *s, const char *name);

/* Cells of the matrix: the product of the axes' value counts (1 without a matrix). The parser refuses a
 * matrix of more than MLK_MAX_CELLS cells, so this never overflows. */
#define MLK_MAX_CELLS 100000
int64_t mlk_scenario_n_cells(const mlk_scenario *s);

/* Tests only: let the next n of the parser's own allocations succeed and fail the ones after (n < 0
 * disarms). libyaml's allocations are not covered. Process-wide, not thread-safe. */
void mlk_scenario_fail_alloc_after(int64_t n);

#endif
