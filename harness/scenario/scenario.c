/* scenario.c: scenario files to mlk_scenario: reading the file and the top-level keys (the model is in
 * scenario_model.c, the step lists in scenario_steps.c, the matrix and engine options in scenario_matrix.c). It must never touch the
 * file system beyond reading the scenario, and never return a half-built scenario. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "scenario_internal.h"

/* A scenario is a page of YAML; refusing big files keeps a wrong path (a model, a log) from being slurped. */
#define MAX_FILE_BYTES ((size_t)4 << 20)
/* A week: beyond it a timeout is a typo, and the runner's nanosecond deadlines stay far from overflow. */
#define MAX_TIMEOUT_S (7 * 86400.0)

/* ------------------------------------------------------------------------------------------------
 * Top-level keys
 * ---------------------------------------------------------------------------------------------- */

typedef struct pctx {
    mlk_scenario *s;
    scn_locs L;
    const char *name;
    mlk_error *err;
} pctx;

/* name and engine end up in paths and database keys: keep them to a safe alphabet. */
static int get_ident(pctx *c, const mlk_ynode *v, const char *what, char **out)
{
    int rc = mlk_yget_string(v, what, c->name, out, c->err);
    if (rc)
        return rc;
    if (mlk_scn_ident_ok(*out))
        return MLK_OK;
    size_t n = strlen(*out);
    if (n && n <= 128 && strspn(*out, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n)
        return mlk_yfail(c->err, c->name, v->loc, "%s: expected a plain name starting with a letter or digit, got '%.64s'",
                         what, *out);
    return mlk_yfail(c->err, c->name, v->loc, "%s: expected 1 to 128 letters, digits, '.', '_' or '-', got '%.64s'",
                     what, *out);
}

static int k_name(pctx *c, const mlk_ynode *v)
{
    return get_ident(c, v, "name", &c->s->name);
}

static int k_engine(pctx *c, const mlk_ynode *v)
{
    c->s->engine_loc = v->loc;
    return get_ident(c, v, "engine", &c->s->engine);
}

static int k_description(pctx *c, const mlk_ynode *v)
{
    return mlk_yget_string(v, "description", c->name, &c->s->description, c->err);
}

static int k_model(pctx *c, const mlk_ynode *v)
{
    return mlk_scn_model_parse(&c->s->model, v, c->name, c->err);
}

/* `model: path.onnx` with `inputs: [in0.pb]` beside it (the short form) is model.inputs. */
static int k_inputs(pctx *c, const mlk_ynode *v)
{
    if (c->s->model.n_inputs)
        return mlk_yfail(c->err, c->name, v->loc, "inputs: the inputs are given twice (here and as model.inputs)");
    return mlk_scn_model_inputs(&c->s->model, v, c->name, c->err);
}

static int k_detector(pctx *c, const mlk_ynode *v)
{
    char d[64];
    if (v->kind == MLK_YSCALAR && !strcmp(v->text, "memleak"))
        c->s->detector = MLK_DETECTOR_MEMLEAK;
    else if (v->kind == MLK_YSCALAR && !strcmp(v->text, "openvino"))
        c->s->detector = MLK_DETECTOR_OPENVINO;
    else
        return mlk_yfail(c->err, c->name, v->loc, "detector: expected memleak or openvino, got %s",
                         mlk_ydescribe(v, d, sizeof d));
    return MLK_OK;
}

static int k_heap(pctx *c, const mlk_ynode *v)
{
    return mlk_yget_bool(v, "heap", c->name, &c->s->heap, c->err);
}

static int k_heap_sites(pctx *c, const mlk_ynode *v)
{
    static const char *const modes[] = {"off", "sample", "exact"};
    static const int values[] = {MLK_HEAP_SITES_OFF, MLK_HEAP_SITES_SAMPLE, MLK_HEAP_SITES_EXACT};
    for (int i = 0; v->kind == MLK_YSCALAR && i < 3; i++)
        if (!strcmp(v->text, modes[i])) {
            c->s->heap_sites = values[i];
            return MLK_OK;
        }
    /* `heap_sites: on` reads as a boolean in YAML 1.1: take it as the default mode, off as off. */
    int b = v->kind == MLK_YSCALAR ? mlk_scenario_bool(v->text) : -1;
    if (b >= 0) {
        c->s->heap_sites = b ? MLK_HEAP_SITES_SAMPLE : MLK_HEAP_SITES_OFF;
        return MLK_OK;
    }
    char d[64];
    return mlk_yfail(c->err, c->name, v->loc, "heap_sites: expected off, sample or exact, got %s",
                     mlk_ydescribe(v, d, sizeof d));
}

static int k_heap_sites_interval_kib(pctx *c, const mlk_ynode *v)
{
    return mlk_yget_int(v, "heap_sites_interval_kib", 1, 1 << 30, c->name, &c->s->heap_sites_interval_kib, c->err);
}

static int k_setup(pctx *c, const mlk_ynode *v)
{
    c->L.setup_default = false;
    c->L.setup_list = v->loc;
    return mlk_scn_steps(v, "setup", c->name, &c->s->setup, &c->L.setup, &c->s->n_setup, c->err);
}

static int k_pipeline(pctx *c, const mlk_ynode *v)
{
    c->L.pipeline_list = v->loc;
    int rc = mlk_scn_steps(v, "pipeline", c->name, &c->s->pipeline, &c->L.pipeline, &c->s->n_pipeline, c->err);
    if (!rc && !c->s->n_pipeline)
        rc = mlk_yfail(c->err, c->name, v->loc, "pipeline: expected a non-empty list of steps (%s)", mlk_step_names());
    return rc;
}

static int k_teardown(pctx *c, const mlk_ynode *v)
{
    c->L.teardown_default = false;
    c->L.teardown_list = v->loc;
    return mlk_scn_steps(v, "teardown", c->name, &c->s->teardown, &c->L.teardown, &c->s->n_teardown, c->err);
}

/* Iteration counts are capped so warmup + iterations still fits an int. */
static int k_iterations_auto(pctx *c, const mlk_ynode *v)
{
    char d[64];
    int64_t lo = MLK_AUTO_MIN, hi = MLK_AUTO_MAX;
    c->s->auto_budget_s = 0;
    for (int i = 0; v->kind == MLK_YMAP && i < v->n_items; i += 2) {
        const mlk_ynode *k = v->items[i], *x = v->items[i + 1];
        int rc = MLK_OK;
        if (!strcmp(k->text, "min"))
            rc = mlk_yget_int(x, "iterations.min", 3, 1000000000, c->name, &lo, c->err);
        else if (!strcmp(k->text, "max"))
            rc = mlk_yget_int(x, "iterations.max", 3, 1000000000, c->name, &hi, c->err);
        else if (!strcmp(k->text, "budget")) {
            if (x->kind != MLK_YSCALAR || mlk_parse_duration(x->text, &c->s->auto_budget_s))
                rc = mlk_yfail(c->err, c->name, x->loc, "iterations.budget: expected a length of time such as 10m, "
                               "1h or seconds, got %s", mlk_ydescribe(x, d, sizeof d));
        } else
            rc = mlk_yfail(c->err, c->name, k->loc, "iterations: unknown key '%s' (expected min, max, budget)",
                           k->text);
        if (rc)
            return rc;
    }
    if (lo > hi)
        return mlk_yfail(c->err, c->name, v->loc, "iterations: min (%lld) is more than max (%lld)", (long long)lo,
                         (long long)hi);
    c->s->iterations_auto = true;
    c->s->auto_min = (int)lo;
    c->s->iterations = (int)hi;
    c->s->iterations_set = true;
    return MLK_OK;
}

static int k_iterations(pctx *c, const mlk_ynode *v)
{
    if (c->s->duration_s > 0)
        return mlk_yfail(c->err, c->name, v->loc, "iterations: a scenario gives iterations or duration, not both");
    if (v->kind == MLK_YMAP || (v->kind == MLK_YSCALAR && v->plain && !strcmp(v->text, "auto")))
        return k_iterations_auto(c, v);
    int64_t x;
    int rc = mlk_yget_int(v, "iterations", 1, 1000000000, c->name, &x, c->err);
    if (!rc && c->s->duration_s > 0)
        return mlk_yfail(c->err, c->name, v->loc, "iterations: a scenario gives iterations or duration, not both");
    if (!rc) {
        c->s->iterations = (int)x;
        c->s->iterations_set = true;
    }
    return rc;
}

static int k_duration(pctx *c, const mlk_ynode *v)
{
    char d[64];
    if (c->s->iterations_set)
        return mlk_yfail(c->err, c->name, v->loc, "duration: a scenario gives iterations or duration, not both");
    int bad = v->kind != MLK_YSCALAR ? -1 : mlk_parse_duration(v->text, &c->s->duration_s);
    if (bad == -2)
        return mlk_yfail(c->err, c->name, v->loc, "duration: %s is shorter than the 1 ms a cell can measure (the "
                         "worker counts whole milliseconds)", mlk_ydescribe(v, d, sizeof d));
    if (bad)
        return mlk_yfail(c->err, c->name, v->loc,
                         "duration: expected a length of time such as 8h, 90m, 1h30m, 45s or seconds (at most a "
                         "year), got %s",
                         mlk_ydescribe(v, d, sizeof d));
    return MLK_OK;
}

static int k_stall_s(pctx *c, const mlk_ynode *v)
{
    double x = 0;
    /* 0 turns it off; mlk_yget_number's lower bound is exclusive */
    if (v->kind == MLK_YSCALAR && !strcmp(v->text, "0")) {
        c->s->stall_s = 0;
        return MLK_OK;
    }
    int rc = mlk_yget_number(v, "stall_s", 0.0, MAX_TIMEOUT_S, c->name, &x, c->err);
    if (!rc)
        c->s->stall_s = x;
    return rc;
}

static int k_warmup(pctx *c, const mlk_ynode *v)
{
    int64_t x;
    int rc = mlk_yget_int(v, "warmup", 0, 1000000000, c->name, &x, c->err);
    if (!rc)
        c->s->warmup = (int)x;
    return rc;
}

static int k_matrix(pctx *c, const mlk_ynode *v)
{
    return mlk_scn_matrix(c->s, v, c->name, c->err);
}

static int k_engine_options(pctx *c, const mlk_ynode *v)
{
    char d[64];
    if (v->kind != MLK_YMAP)
        return mlk_yfail(c->err, c->name, v->loc, "engine_options: expected a mapping of option: value, got %s",
                         mlk_ydescribe(v, d, sizeof d));
    return mlk_scn_kvs(v, "engine_options", NULL, c->name, &c->s->engine_options, &c->s->n_engine_options, c->err);
}

/* Threshold keys: the leak floor, and the floors compare judges regressions with. */
#define THRESHOLD_KEYS \
    "leak_bytes_per_iter, floors, regression_rel, regression_abs_kib, latency_rel, latency_abs_ms, latency_alpha"

/* thresholds.floors: {SERIES: N, ...}: the growth per iteration a series must reach to be a leak, in its unit. */
static int floors(pctx *c, const mlk_ynode *v)
{
    char d[64], what[96];
    if (v->kind != MLK_YMAP)
        return mlk_yfail(c->err, c->name, v->loc, "thresholds.floors: expected a mapping (heap: 16, fds: 0), got %s",
                         mlk_ydescribe(v, d, sizeof d));
    for (int i = 0; i < v->n_items; i += 2) {
        const mlk_ynode *k = v->items[i];
        int s = mlk_series_from_name(k->text);
        if (s < 0)
            return mlk_yfail(c->err, c->name, k->loc, "thresholds.floors: unknown series '%.64s' (expected one of: %s)",
                             k->text, mlk_series_names());
        snprintf(what, sizeof what, "thresholds.floors.%.40s", k->text);
        int rc = mlk_yget_number(v->items[i + 1], what, 0.0, 1e15, c->name, &c->s->floor_per_iter[s], c->err);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

static int threshold(pctx *c, const mlk_ynode *k, const mlk_ynode *v)
{
    const char *key = k->text;
    char what[64];
    snprintf(what, sizeof what, "thresholds.%.40s", key);
    int64_t x;
    double d;
    int rc;
    if (!strcmp(key, "leak_bytes_per_iter") || !strcmp(key, "regression_abs_kib")) {
        if ((rc = mlk_yget_int(v, what, 0, INT64_MAX / 1024, c->name, &x, c->err)))
            return rc;
        *(key[0] == 'l' ? &c->s->leak_bytes_per_iter : &c->s->regression_abs_kib) = x;
        c->s->leak_floor_set |= key[0] == 'l';
        return MLK_OK;
    }
    if (!strcmp(key, "floors"))
        return floors(c, v);
    if (!strcmp(key, "latency_abs_ms")) {
        if ((rc = mlk_yget_number(v, what, 0.0, 1e9, c->name, &d, c->err)))
            return rc;
        c->s->latency_abs_ms = d;
        return MLK_OK;
    }
    if (!strcmp(key, "regression_rel") || !strcmp(key, "latency_rel") || !strcmp(key, "latency_alpha")) {
        if ((rc = mlk_yget_number(v, what, 0.0, 1.0, c->name, &d, c->err)))
            return rc;
        if (!strcmp(key, "regression_rel"))
            c->s->regression_rel = d;
        else if (!strcmp(key, "latency_rel"))
            c->s->latency_rel = d;
        else
            c->s->latency_alpha = d;
        return MLK_OK;
    }
    return mlk_yfail(c->err, c->name, k->loc, "thresholds: unknown key '%.64s' (expected one of: " THRESHOLD_KEYS ")",
                     key);
}

static int k_thresholds(pctx *c, const mlk_ynode *v)
{
    char d[64];
    if (v->kind != MLK_YMAP)
        return mlk_yfail(c->err, c->name, v->loc, "thresholds: expected a mapping (leak_bytes_per_iter: N), got %s",
                         mlk_ydescribe(v, d, sizeof d));
    for (int i = 0; i < v->n_items; i += 2) {
        int rc = threshold(c, v->items[i], v->items[i + 1]);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

static int k_timeout_s(pctx *c, const mlk_ynode *v)
{
    return mlk_yget_number(v, "timeout_s", 0.0, MAX_TIMEOUT_S, c->name, &c->s->timeout_s, c->err);
}

static int k_memory_limit_mb(pctx *c, const mlk_ynode *v)
{
    return mlk_yget_int(v, "memory_limit_mb", 0, INT64_MAX >> 20, c->name, &c->s->memory_limit_mb, c->err);
}

static int k_tool(pctx *c, const mlk_ynode *v)
{
    char d[64];
    int t = v->kind == MLK_YSCALAR ? mlk_tool_from_name(v->text) : -1;
    if (t >= 0) {
        c->s->tool_loc = v->loc;
        return t != MLK_TOOL_NONE ? mlk_yget_string(v, "tool", c->name, &c->s->tool, c->err) : MLK_OK;
    }
    return mlk_yfail(c->err, c->name, v->loc, "tool: expected none, memcheck, massif or lsan, got %s",
                     mlk_ydescribe(v, d, sizeof d));
}

static int k_shapes(pctx *c, const mlk_ynode *v) { return mlk_scn_shapes(c->s, v, c->name, c->err); }

static int k_expect(pctx *c, const mlk_ynode *v) { return mlk_scn_expect(c->s, v, c->name, c->err); }

static int k_budgets(pctx *c, const mlk_ynode *v) { return mlk_scn_budgets(c->s, v, c->name, c->err); }

static int k_shape_seed(pctx *c, const mlk_ynode *v)
{
    return mlk_yget_int(v, "shape_seed", 0, INT64_MAX, c->name, &c->s->shape_seed, c->err);
}

static int k_tool_iterations(pctx *c, const mlk_ynode *v)
{
    int64_t x;
    int rc = mlk_yget_int(v, "tool_iterations", 1, 1000000000, c->name, &x, c->err);
    if (!rc)
        c->s->tool_iterations = (int)x;
    return rc;
}

static const struct {
    const char *key;
    int (*parse)(pctx *c, const mlk_ynode *v);
    bool required;
} top_keys[] = {
    {"name", k_name, true},
    {"description", k_description, false},
    {"engine", k_engine, true},
    {"model", k_model, true},
    {"detector", k_detector, false},
    {"heap", k_heap, false},
    {"heap_sites", k_heap_sites, false},
    {"heap_sites_interval_kib", k_heap_sites_interval_kib, false},
    {"setup", k_setup, false},
    {"pipeline", k_pipeline, true},
    {"teardown", k_teardown, false},
    {"iterations", k_iterations, false},
    {"warmup", k_warmup, false},
    {"matrix", k_matrix, false},
    {"engine_options", k_engine_options, false},
    {"thresholds", k_thresholds, false},
    {"timeout_s", k_timeout_s, false},
    {"duration", k_duration, false},
    {"stall_s", k_stall_s, false},
    {"memory_limit_mb", k_memory_limit_mb, false},
    {"tool", k_tool, false},
    {"tool_iterations", k_tool_iterations, false},
    {"shapes", k_shapes, false},
    {"shape_seed", k_shape_seed, false},
    {"expect", k_expect, false},
    {"inputs", k_inputs, false},
    {"budgets", k_budgets, false},
};
#define N_TOP_KEYS ((int)(sizeof top_keys / sizeof top_keys[0]))

/* Keys, or with required_only the required keys root lacks. `engine` and `model` may be given per cell as a matrix
 * axis instead (s: the scenario parsed so far, or NULL). */
static void key_list(char *buf, size_t cap, bool required_only, const mlk_ynode *root, const mlk_scenario *s)
{
    buf[0] = '\0';
    for (int i = 0; i < N_TOP_KEYS; i++) {
        if (required_only && (!top_keys[i].required || mlk_ymap_get(root, top_keys[i].key) ||
                              (s && mlk_scenario_axis(s, top_keys[i].key))))
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", top_keys[i].key);
    }
}

static int default_steps(const mlk_step *def, int n, mlk_loc at, mlk_step **steps, mlk_loc **locs, int *n_out)
{
    *steps = mlk_ycalloc((size_t)n, sizeof **steps);
    *locs = mlk_ycalloc((size_t)n, sizeof **locs);
    if (!*steps || !*locs)
        return MLK_E_NOMEM;
    for (int i = 0; i < n; i++) {
        (*steps)[i] = def[i];
        (*locs)[i] = at;
    }
    *n_out = n;
    return MLK_OK;
}

/* Required keys, then the default step lists, then the checks that need the whole scenario. */
static int finish(pctx *c, const mlk_ynode *root)
{
    static const mlk_step setup[] = {MLK_STEP_LOAD_ENGINE, MLK_STEP_READ_MODEL};
    static const mlk_step teardown[] = {MLK_STEP_RELEASE_MODEL, MLK_STEP_UNLOAD_ENGINE};
    mlk_scenario *s = c->s;
    if (!s->name || (!s->engine && !mlk_scenario_axis(s, "engine")) ||
        (!s->model.loc.line && !mlk_scenario_axis(s, "model")) || !s->pipeline) {
        char missing[256];
        key_list(missing, sizeof missing, true, root, s);
        return mlk_yfail(c->err, c->name, c->L.doc,
                         "missing required key%s: %s (required: name, engine or an engine axis, model or a model "
                         "axis, pipeline)",
                         strchr(missing, ',') ? "s" : "", missing);
    }
    if ((c->L.setup_default && default_steps(setup, 2, c->L.pipeline_list, &s->setup, &c->L.setup, &s->n_setup)) ||
        (c->L.teardown_default &&
         default_steps(teardown, 2, c->L.pipeline_list, &s->teardown, &c->L.teardown, &s->n_teardown)))
        return mlk_fail(c->err, MLK_E_NOMEM, "%s: out of memory", c->name);
    if (c->L.setup_default)
        c->L.setup_list = c->L.pipeline_list;
    if (c->L.teardown_default)
        c->L.teardown_list = c->L.pipeline_list;
    if (s->shapes)
        s->shapes->seed = (uint64_t)s->shape_seed; /* shape_seed may come before or after shapes */
    const mlk_axis *tool_axis = mlk_scenario_axis(s, "tool");
    if (s->tool && tool_axis)
        return mlk_yfail(c->err, c->name, tool_axis->loc,
                         "matrix.tool: tool is also set at %d:%d (expected it in one place: the top level or the "
                         "matrix)", s->tool_loc.line, s->tool_loc.col);
    int rc = mlk_scn_check_pipeline(s, &c->L, c->name, c->err);
    return rc ? rc : mlk_scn_check_options(s, c->name, c->err);
}

static int from_tree(pctx *c, const mlk_ynode *root)
{
    char d[64], keys[512];
    if (root->kind != MLK_YMAP) {
        key_list(keys, sizeof keys, false, root, NULL);
        return mlk_yfail(c->err, c->name, root->loc, "expected a mapping of scenario keys (%s), got %s", keys,
                         mlk_ydescribe(root, d, sizeof d));
    }
    for (int i = 0; i < root->n_items; i += 2) {
        const mlk_ynode *k = root->items[i];
        int t = 0;
        while (t < N_TOP_KEYS && strcmp(top_keys[t].key, k->text))
            t++;
        if (t == N_TOP_KEYS) {
            key_list(keys, sizeof keys, false, root, NULL);
            return mlk_yfail(c->err, c->name, k->loc, "unknown key '%.64s' (expected one of: %s)", k->text, keys);
        }
        int rc = top_keys[t].parse(c, root->items[i + 1]);
        if (rc)
            return rc;
    }
    return finish(c, root);
}

/* ------------------------------------------------------------------------------------------------
 * Public entry points
 * ---------------------------------------------------------------------------------------------- */

static mlk_scenario *scenario_new(const char *text, size_t len, const char *name)
{
    mlk_scenario *s = mlk_ycalloc(1, sizeof *s);
    if (!s)
        return NULL;
#define X_(field, value) s->field = value;
    MLK_SCENARIO_DEFAULTS(X_)
#undef X_
    for (int i = 0; i < MLK_SERIES_COUNT; i++)
        s->floor_per_iter[i] = -1;
    s->path = mlk_ystrdup(name);
    s->text = mlk_yalloc(len + 1);
    if (!s->path || !s->text) {
        mlk_scenario_free(s);
        return NULL;
    }
    if (len)
        memcpy(s->text, text, len);
    s->text[len] = '\0';
    return s;
}

int mlk_scenario_parse(const char *text, size_t len, const char *name, mlk_scenario **out, mlk_error *err)
{
    if (!name)
        name = "<scenario>";
    if ((!text && len) || !out)
        return mlk_fail(err, MLK_E_USAGE, "%s: mlk_scenario_parse needs text and out", name);
    if (!text)
        text = "";
    mlk_scenario *s = scenario_new(text, len, name);
    if (!s)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    pctx c = {.s = s, .name = name, .err = err};
    c.L.setup_default = c.L.teardown_default = true;
    mlk_ynode *root = NULL;
    int rc = mlk_yaml_parse(s->text, len, name, &root, &c.L.doc, err);
    if (!rc) {
        c.L.pipeline_list = c.L.doc;
        rc = from_tree(&c, root);
    }
    mlk_ynode_free(root);
    free(c.L.setup);
    free(c.L.pipeline);
    free(c.L.teardown);
    if (rc) {
        mlk_scenario_free(s);
        return rc;
    }
    *out = s;
    return MLK_OK;
}

/* The whole file, NUL-terminated, read up to the size fstat gave: a scenario must be a regular file under
 * MAX_FILE_BYTES (anything else is an input error, never a hang or a read without end). */
static int read_file(const char *path, char **out, size_t *len, mlk_error *err)
{
    int fd;
    int64_t size;
    int rc = mlk_open_regular(path, "scenario", &fd, &size, err);
    if (rc)
        return rc;
    if (size > (int64_t)MAX_FILE_BYTES) {
        close(fd);
        return mlk_fail(err, MLK_E_PARSE, "%s: %lld bytes, larger than %zu MiB; not a scenario file", path,
                        (long long)size, MAX_FILE_BYTES >> 20);
    }
    char *buf = mlk_yalloc((size_t)size + 1);
    if (!buf) {
        close(fd);
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", path);
    }
    size_t n = 0;
    while (!rc && n < (size_t)size) {
        ssize_t got = read(fd, buf + n, (size_t)size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = mlk_fail(err, MLK_E_IO, "%s: cannot read scenario: %s", path, strerror(errno));
        else if (got == 0)
            break; /* shrank while read */
        else
            n += (size_t)got;
    }
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return MLK_OK;
}

int mlk_scenario_load(const char *path, mlk_scenario **out, mlk_error *err)
{
    if (!path || !out)
        return mlk_fail(err, MLK_E_USAGE, "mlk_scenario_load needs a path and out");
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = mlk_scenario_parse(text, len, path, out, err);
    free(text);
    return rc;
}

void mlk_scenario_free(mlk_scenario *s)
{
    if (!s)
        return;
    free(s->path);
    free(s->text);
    free(s->name);
    free(s->engine);
    free(s->description);
    free(s->tool);
    free(s->shapes);
    mlk_scn_model_free(&s->model);
    free(s->setup);
    free(s->pipeline);
    free(s->teardown);
    mlk_scn_axes_free(s->axes, s->n_axes);
    mlk_scn_kvs_free(s->engine_options, s->n_engine_options);
    mlk_scn_expect_free(s->expect, s->n_expect);
    mlk_scn_budgets_free(s->budgets, s->n_budgets);
    free(s);
}

int mlk_scenario_bool(const char *text)
{
    return text ? mlk_ybool_word(text) : -1;
}

const mlk_axis *mlk_scenario_axis(const mlk_scenario *s, const char *name)
{
    for (int i = 0; s && name && i < s->n_axes; i++)
        if (!strcmp(s->axes[i].name, name))
            return &s->axes[i];
    return NULL;
}

const char *mlk_scenario_allocator_preload(const mlk_axis *a, int j)
{
    if (!a || !a->variants || j < 0 || j >= a->n_values)
        return NULL;
    for (int i = 0; i < a->variants[j].n_options; i++)
        if (!strcmp(a->variants[j].options[i].key, "preload"))
            return a->variants[j].options[i].value;
    return NULL;
}

int64_t mlk_scenario_n_cells(const mlk_scenario *s)
{
    int64_t n = 1;
    for (int i = 0; s && i < s->n_axes; i++)
        n *= s->axes[i].n_values;
    return n;
}
