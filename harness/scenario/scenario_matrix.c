/* scenario_matrix.c: the scenario's matrix (scalar and variant axes) and engine options, and the checks that
 * no cell sets an option twice. It must never keep a partly built axis list: on failure s->axes is untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario_internal.h"

/* Axes the harness applies itself (which engine, environment, preload, calls between steps); never engine
 * options. The one list: plan.c asks mlk_scenario_is_harness_axis. */
static const char *const harness_axes[] = {"engine", "model", "allocator", "malloc_trim", "glibc_tunables",
                                           "malloc_conf", "allocator_env", "tool"};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}

static bool is_harness_axis(const char *s)
{
    return in_list(s, harness_axes, sizeof harness_axes / sizeof harness_axes[0]);
}

bool mlk_scenario_is_harness_axis(const char *name) { return is_harness_axis(name); }

/* Engine names as the engine: key takes them (they name a plugin file, engine_<name>.so). */
bool mlk_scn_ident_ok(const char *s)
{
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    size_t n = strlen(s);
    /* A letter or digit first: ".." or "-x" would read as a path or an option where names are joined into paths
     * (engine_NAME.so) and argument vectors. */
    return n && n <= 128 && strchr(alnum, s[0]) && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* The longest string execve takes (one argument or one environment entry, its NUL included): the kernel's
 * MAX_ARG_STRLEN, 32 pages. Anything longer fails the worker's execve with E2BIG, after the run has started. */
static size_t exec_strlen_max(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return (size_t)(page > 0 ? page : 4096) * 32;
}

int mlk_scn_exec_string(const char *what, const char *prefix, const char *value, size_t len, const char *name,
                        mlk_loc loc, mlk_error *err)
{
    size_t n = strlen(prefix) + len + 1, max = exec_strlen_max();
    if (n <= max)
        return MLK_OK;
    return mlk_yfail(err, name, loc, "%s: '%.24s...' would reach the worker as a string of %zu bytes%s%s%s, longer "
                     "than execve takes in one argument or environment entry (%zu bytes, MAX_ARG_STRLEN): the "
                     "worker could not start", what, value, n, prefix[0] ? " (" : "", prefix, prefix[0] ? "...)" : "",
                     max);
}

/* Each entry of an environment axis value, as the worker's environment will hold it. */
static int check_env_value(const mlk_axis *a, const mlk_ynode *v, const char *name, const char *what, mlk_error *err)
{
    if (!strcmp(a->name, "glibc_tunables"))
        return mlk_scn_exec_string(what, "GLIBC_TUNABLES=", v->text, strlen(v->text), name, v->loc, err);
    if (!strcmp(a->name, "malloc_conf"))
        return mlk_scn_exec_string(what, "MALLOC_CONF=", v->text, strlen(v->text), name, v->loc, err);
    if (strcmp(a->name, "allocator_env"))
        return MLK_OK;
    for (const char *p = v->text; *p;) { /* split on spaces, as the runner does */
        size_t n = strcspn(p, " ");
        int rc = n ? mlk_scn_exec_string(what, "", p, n, name, v->loc, err) : MLK_OK;
        if (rc)
            return rc;
        p += n + (p[n] == ' ');
    }
    return MLK_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Key/value mappings
 * ---------------------------------------------------------------------------------------------- */

void mlk_scn_kvs_free(mlk_kv *kv, int n)
{
    for (int i = 0; kv && i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

int mlk_scn_kvs(const mlk_ynode *map, const char *what, const char *skip, const char *name, mlk_kv **out, int *n,
                mlk_error *err)
{
    char d[64];
    int cap = map->n_items / 2, count = 0, rc = MLK_OK;
    mlk_kv *kv = mlk_ycalloc((size_t)(cap ? cap : 1), sizeof *kv);
    if (!kv)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < map->n_items && !rc; i += 2) {
        const mlk_ynode *k = map->items[i], *v = map->items[i + 1];
        if (skip && !strcmp(k->text, skip))
            continue;
        if (!k->text[0] || mlk_ynull(k))
            rc = mlk_yfail(err, name, k->loc, "%s: expected an option name, got %s", what,
                           mlk_ydescribe(k, d, sizeof d));
        else if (v->kind != MLK_YSCALAR || mlk_ynull(v))
            rc = mlk_yfail(err, name, v->loc, "%s.%.64s: expected a scalar value (string, number or boolean), got %s",
                           what, k->text, mlk_ydescribe(v, d, sizeof d));
        if (rc)
            break;
        if (!rc) /* it reaches the worker as one argument, "--opt key=value" */
            rc = mlk_scn_exec_string(what, "", v->text, strlen(k->text) + 1 + strlen(v->text), name, v->loc, err);
        if (rc)
            break;
        mlk_kv *e = &kv[count++]; /* counted first: a half-filled pair is still freed */
        e->loc = v->loc;
        if (!(e->key = mlk_ystrdup(k->text)) || !(e->value = mlk_ystrdup(v->text)))
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    }
    if (rc) {
        mlk_scn_kvs_free(kv, count);
        return rc;
    }
    *out = kv;
    *n = count;
    return MLK_OK;
}

static const mlk_kv *kvs_find(const mlk_kv *kv, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(kv[i].key, key))
            return &kv[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------------
 * Axes
 * ---------------------------------------------------------------------------------------------- */

void mlk_scn_axes_free(mlk_axis *axes, int n)
{
    for (int i = 0; axes && i < n; i++) {
        mlk_axis *a = &axes[i];
        for (int j = 0; j < a->n_values; j++) {
            free(a->values[j]);
            if (a->variants) {
                mlk_scn_kvs_free(a->variants[j].options, a->variants[j].n_options);
                if (a->variants[j].model)
                    mlk_scn_model_free(a->variants[j].model);
                free(a->variants[j].model);
            }
        }
        free(a->name);
        free(a->values);
        free(a->value_locs);
        free(a->variants);
    }
    free(axes);
}

/* A scalar value of a scalar axis; harness axes are checked here, engine options by the engine. */
static int check_scalar_value(const mlk_axis *a, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char d[64], what[96];
    snprintf(what, sizeof what, "matrix.%.64s", a->name);
    if (v->kind != MLK_YSCALAR || mlk_ynull(v))
        return mlk_yfail(err, name, v->loc, "%s: expected a scalar value (string, number or boolean), got %s", what,
                         mlk_ydescribe(v, d, sizeof d));
    if (!strcmp(a->name, "allocator") && mlk_alloc_from_name(v->text) < 0)
        return mlk_yfail(err, name, v->loc, "%s: expected glibc, jemalloc, tcmalloc or mimalloc, got %s", what,
                         mlk_ydescribe(v, d, sizeof d));
    if (!strcmp(a->name, "tool") && mlk_tool_from_name(v->text) < 0)
        return mlk_yfail(err, name, v->loc, "%s: expected none, memcheck, massif or lsan, got %s", what,
                         mlk_ydescribe(v, d, sizeof d));
    if (!strcmp(a->name, "engine") && !mlk_scn_ident_ok(v->text))
        return mlk_yfail(err, name, v->loc, "%s: expected an engine name (letters, digits, '.', '_', '-'; a letter or digit first), got %s",
                         what, mlk_ydescribe(v, d, sizeof d));
    int rc = check_env_value(a, v, name, what, err);
    if (rc)
        return rc;
    bool b;
    if (!strcmp(a->name, "malloc_trim"))
        return mlk_yget_bool(v, what, name, &b, err);
    return MLK_OK;
}

/* An allocator of the user's own, {name: N, preload: /abs/lib.so}: kept as the value's one option "preload" (the
 * plan checks the file). Without preload, name must be one of the registry's. */
static int parse_allocator(mlk_axis *a, int j, const mlk_ynode *v, const mlk_ynode *vn, const char *name,
                           mlk_error *err)
{
    char d[64];
    for (int i = 0; i < v->n_items; i += 2) {
        const mlk_ynode *k = v->items[i];
        if (strcmp(k->text, "name") && strcmp(k->text, "preload"))
            return mlk_yfail(err, name, k->loc, "matrix.allocator: unknown key %s (expected name and preload)",
                             mlk_ydescribe(k, d, sizeof d));
    }
    if (!mlk_scn_ident_ok(a->values[j]))
        return mlk_yfail(err, name, vn->loc, "matrix.allocator: expected a plain name (a letter or digit first, then "
                         "letters, digits, '.', '_', '-'), got '%.64s'", a->values[j]);
    const mlk_ynode *pre = mlk_ymap_get(v, "preload");
    if (!pre) {
        if (mlk_alloc_from_name(a->values[j]) < 0)
            return mlk_yfail(err, name, vn->loc, "matrix.allocator: '%.64s' is not one of %s; give preload: "
                             "/absolute/path/lib.so for an allocator of your own", a->values[j], mlk_alloc_names());
        return MLK_OK;
    }
    if (pre->kind != MLK_YSCALAR || mlk_ynull(pre) || pre->text[0] != '/')
        return mlk_yfail(err, name, pre->loc, "matrix.allocator.preload: expected an absolute path to a shared "
                         "library, got %s", mlk_ydescribe(pre, d, sizeof d));
    return mlk_scn_kvs(v, "matrix.allocator", "name", name, &a->variants[j].options, &a->variants[j].n_options, err);
}

/* A variant: a mapping with a `name:` and engine options. */
static int parse_variant(mlk_axis *a, int j, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char d[64], what[96];
    snprintf(what, sizeof what, "matrix.%.64s", a->name);
    if (v->kind != MLK_YMAP)
        return mlk_yfail(err, name, v->loc,
                         "%s: expected every value to be a mapping with name: (a variant), as the first is; got %s",
                         what, mlk_ydescribe(v, d, sizeof d));
    const mlk_ynode *vn = mlk_ymap_get(v, "name");
    if (!vn)
        return mlk_yfail(err, name, v->loc, "%s: expected the variant to have a name: key", what);
    int rc = mlk_yget_string(vn, what, name, &a->values[j], err);
    if (rc)
        return rc;
    if (!a->values[j][0])
        return mlk_yfail(err, name, vn->loc, "%s: expected a non-empty variant name", what);
    a->value_locs[j] = vn->loc;
    if (!strcmp(a->name, "allocator"))
        return parse_allocator(a, j, v, vn, name, err);
    if (!strcmp(a->name, "model")) {
        /* A model axis value is a model of its own, not engine options. */
        if (!(a->variants[j].model = mlk_ycalloc(1, sizeof *a->variants[j].model)))
            return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
        return mlk_scn_model_map(a->variants[j].model, v, true, name, err);
    }
    return mlk_scn_kvs(v, what, "name", name, &a->variants[j].options, &a->variants[j].n_options, err);
}

/* Fill a (zeroed, name set) from the axis's value node; what was allocated stays in a for the caller to free. */
static int parse_axis_values(mlk_axis *a, const mlk_ynode *v, const char *name, mlk_error *err)
{
    const mlk_ynode *const *items = (const mlk_ynode *const *)&v;
    int n = 1;
    if (v->kind == MLK_YSEQ) {
        items = (const mlk_ynode *const *)v->items;
        n = v->n_items;
    }
    if (!n || mlk_ynull(v))
        return mlk_yfail(err, name, v->loc, "matrix.%.64s: expected a value or a non-empty list of values, got %s",
                         a->name, n ? "nothing" : "an empty list");
    bool variant = items[0]->kind == MLK_YMAP, model = !strcmp(a->name, "model");
    bool alloc = !strcmp(a->name, "allocator");
    for (int j = 0; alloc && j < n; j++)
        variant = variant || items[j]->kind == MLK_YMAP; /* the registry's names and the user's own side by side */
    if (variant && is_harness_axis(a->name) && !model && !alloc)
        return mlk_yfail(err, name, items[0]->loc,
                         "matrix.%.64s: expected scalar values (variants are for engine options)", a->name);
    if (model && !variant)
        return mlk_yfail(err, name, items[0]->loc,
                         "matrix.model: expected mappings {name: N, generate: ARCH ...} or {name: N, path: FILE}");
    a->values = mlk_ycalloc((size_t)n, sizeof *a->values);
    a->value_locs = mlk_ycalloc((size_t)n, sizeof *a->value_locs);
    a->variants = variant ? mlk_ycalloc((size_t)n, sizeof *a->variants) : NULL;
    if (!a->values || !a->value_locs || (variant && !a->variants))
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    for (int j = 0; j < n; j++) {
        int rc;
        a->n_values = j + 1; /* counted first: a half-filled value is still freed */
        if (variant && !(alloc && items[j]->kind == MLK_YSCALAR)) {
            rc = parse_variant(a, j, items[j], name, err);
        } else if (!(rc = check_scalar_value(a, items[j], name, err))) {
            a->value_locs[j] = items[j]->loc;
            if (!(a->values[j] = mlk_ystrdup(items[j]->text)))
                rc = mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
        }
        if (rc)
            return rc;
        for (int k = 0; k < j; k++)
            if (!strcmp(a->values[k], a->values[j]))
                return mlk_yfail(err, name, a->value_locs[j],
                                 "matrix.%.64s: duplicate value '%.64s' (first at %d:%d; expected distinct values)",
                                 a->name, a->values[j], a->value_locs[k].line, a->value_locs[k].col);
    }
    return MLK_OK;
}

int mlk_scn_matrix(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char d[64];
    if (v->kind != MLK_YMAP || !v->n_items)
        return mlk_yfail(err, name, v->loc, "matrix: expected a mapping of at least one axis (axis: [values]), got %s",
                         v->kind == MLK_YMAP ? "an empty mapping" : mlk_ydescribe(v, d, sizeof d));
    int n = v->n_items / 2, rc = MLK_OK;
    mlk_axis *axes = mlk_ycalloc((size_t)n, sizeof *axes);
    if (!axes)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    int64_t cells = 1;
    int built = 0;
    for (int i = 0; i < n && !rc; i++) {
        const mlk_ynode *k = v->items[2 * i];
        mlk_axis *a = &axes[built++];
        a->loc = k->loc;
        if (!k->text[0] || mlk_ynull(k))
            rc = mlk_yfail(err, name, k->loc, "matrix: expected an axis name, got %s", mlk_ydescribe(k, d, sizeof d));
        else if (!(a->name = mlk_ystrdup(k->text)))
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
        else
            rc = parse_axis_values(a, v->items[2 * i + 1], name, err);
        if (!rc && (cells *= a->n_values) > MLK_MAX_CELLS)
            rc = mlk_yfail(err, name, k->loc, "matrix: expected at most %d cells, got more from this axis on",
                           MLK_MAX_CELLS);
    }
    if (rc) {
        mlk_scn_axes_free(axes, built);
        return rc;
    }
    s->axes = axes;
    s->n_axes = n;
    return MLK_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Options set twice in a cell
 * ---------------------------------------------------------------------------------------------- */

/* Where a variant axis before this one sets key, or NULL (so the later one is reported). */
static const mlk_kv *variant_option(const mlk_scenario *s, const mlk_axis *before, const char *key)
{
    for (const mlk_axis *a = s->axes; a < before; a++) {
        for (int j = 0; a->variants && j < a->n_values; j++) {
            const mlk_kv *kv = kvs_find(a->variants[j].options, a->variants[j].n_options, key);
            if (kv)
                return kv;
        }
    }
    return NULL;
}

/* Harness settings a variant may carry beside engine options, so that one axis can change one thing at a time
 * (`{name: trim, malloc_trim: on}`, `{name: je, allocator: jemalloc}`) instead of a product of harness axes. The
 * engine, the model and the tool stay axes: they change what runs, not how memory is handed out. */
static const char *const variant_harness[] = {"allocator", "malloc_trim", "glibc_tunables", "malloc_conf",
                                              "allocator_env"};

bool mlk_scenario_variant_harness_key(const char *key)
{
    return in_list(key, variant_harness, sizeof variant_harness / sizeof variant_harness[0]);
}

/* A harness setting in a variant: one the variant may set, with a value checked as its axis would be. */
static int variant_harness_value(const mlk_axis *a, const mlk_kv *kv, const char *name, mlk_error *err)
{
    if (!is_harness_axis(kv->key))
        return MLK_OK;
    if (!mlk_scenario_variant_harness_key(kv->key))
        return mlk_yfail(err, name, kv->loc,
                         "matrix.%.64s: '%.64s' is a harness setting a variant cannot change (expected it as an "
                         "axis; a variant may set engine options, allocator, malloc_trim, glibc_tunables, "
                         "malloc_conf and allocator_env)",
                         a->name, kv->key);
    if (!strcmp(kv->key, "allocator") && mlk_alloc_from_name(kv->value) < 0)
        return mlk_yfail(err, name, kv->loc, "matrix.%.64s: allocator: expected one of %s, got '%.64s'", a->name,
                         mlk_alloc_names(), kv->value);
    if (!strcmp(kv->key, "malloc_trim") && mlk_scenario_bool(kv->value) < 0)
        return mlk_yfail(err, name, kv->loc, "matrix.%.64s: malloc_trim: expected a boolean (on/off), got '%.64s'",
                         a->name, kv->value);
    return MLK_OK;
}

static int check_variant_options(const mlk_scenario *s, const mlk_axis *a, const char *name, mlk_error *err)
{
    for (int j = 0; j < a->n_values; j++) {
        for (int o = 0; o < a->variants[j].n_options; o++) {
            const mlk_kv *kv = &a->variants[j].options[o];
            const mlk_axis *other = mlk_scenario_axis(s, kv->key);
            const mlk_kv *twice = variant_option(s, a, kv->key);
            int rc = variant_harness_value(a, kv, name, err);
            if (rc)
                return rc;
            if (other && (!other->variants || is_harness_axis(kv->key)))
                return mlk_yfail(err, name, kv->loc,
                                 "matrix.%.64s: option '%.64s' is also the axis at %d:%d (expected it in one place)",
                                 a->name, kv->key, other->loc.line, other->loc.col);
            if (twice)
                return mlk_yfail(
                    err, name, kv->loc,
                    "matrix.%.64s: option '%.64s' is also set by another variant axis at %d:%d (expected it "
                    "in one place)",
                    a->name, kv->key, twice->loc.line, twice->loc.col);
        }
    }
    return MLK_OK;
}

int mlk_scn_check_options(const mlk_scenario *s, const char *name, mlk_error *err)
{
    for (int i = 0; i < s->n_engine_options; i++) {
        const mlk_kv *kv = &s->engine_options[i];
        const mlk_axis *a = mlk_scenario_axis(s, kv->key);
        if (is_harness_axis(kv->key))
            return mlk_yfail(
                err, name, kv->loc,
                "engine_options.%.64s: a harness setting, not an engine option (expected it under matrix:)", kv->key);
        if (a && !a->variants)
            return mlk_yfail(err, name, kv->loc,
                             "engine_options.%.64s: also the matrix axis at %d:%d (expected it in one place)", kv->key,
                             a->loc.line, a->loc.col);
    }
    const mlk_axis *model = mlk_scenario_axis(s, "model");
    if (model && s->model.loc.line)
        return mlk_yfail(err, name, model->loc, "matrix.model: the top-level model: at %d:%d too (expected one of the two)",
                         s->model.loc.line, s->model.loc.col);
    for (int i = 0; i < s->n_axes; i++) {
        int rc = s->axes[i].variants && strcmp(s->axes[i].name, "model") && strcmp(s->axes[i].name, "allocator")
                     ? check_variant_options(s, &s->axes[i], name, err)
                                                                          : MLK_OK;
        if (rc)
            return rc;
    }
    return MLK_OK;
}

/* ------------------------------------------------------------------------------------------------
 * What one cell gets
 * ---------------------------------------------------------------------------------------------- */

static const char *kv_value(const mlk_kv *kv, int n, const char *engine, const char *key)
{
    const char *v = NULL;
    size_t el = engine ? strlen(engine) : 0;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        if (!strcmp(k, key) || (el && !strncmp(k, engine, el) && k[el] == '.' && !strcmp(k + el + 1, key)))
            v = kv[i].value; /* the last one wins, as the plan hands them to the engine in order */
    }
    return v;
}

const char *mlk_scenario_cell_value(const mlk_scenario *s, int64_t idx, const char *engine, const char *key)
{
    if (!s || !key || idx < 0 || idx >= mlk_scenario_n_cells(s))
        return NULL;
    const char *v = kv_value(s->engine_options, s->n_engine_options, engine, key), *from_variant = NULL;
    for (int a = s->n_axes - 1; a >= 0; a--) { /* the last axis varies fastest */
        const mlk_axis *ax = &s->axes[a];
        int j = (int)(idx % ax->n_values);
        idx /= ax->n_values;
        if (!ax->variants) {
            if (!strcmp(ax->name, key) ||
                (engine && !strncmp(ax->name, engine, strlen(engine)) && ax->name[strlen(engine)] == '.' &&
                 !strcmp(ax->name + strlen(engine) + 1, key)))
                v = ax->values[j];
        } else if (!strcmp(ax->name, key)) {
            v = ax->values[j]; /* a model or allocator axis: its value's name */
        } else if (strcmp(ax->name, "model") && strcmp(ax->name, "allocator")) {
            const char *x = kv_value(ax->variants[j].options, ax->variants[j].n_options, engine, key);
            from_variant = x ? x : from_variant;
        }
    }
    return from_variant ? from_variant : v;
}
