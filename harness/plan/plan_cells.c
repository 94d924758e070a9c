/* plan_cells.c: expands the matrix into cells (last axis varies fastest), splits harness settings from engine
 * options, and checks every option value with the engine before anything runs.
 * It must never let an engine option through unchecked: a typo would otherwise surface mid-run. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocators.h"
#include "plan.h"
#include "plugin.h"
#include "strbuf.h"
#include "text.h"

int mlk_plan_cells(mlk_plan *p, mlk_error *err);
int mlk_plan_check_cells(mlk_plan *p, mlk_error *err);
int mlk_plan_keys(mlk_plan *p, mlk_error *err);

/* Axis value indexes of cell idx: the last axis varies fastest. */
static void pick_of(const mlk_scenario *s, int64_t idx, int *pick)
{
    for (int a = s->n_axes - 1; a >= 0; a--) {
        pick[a] = (int)(idx % s->axes[a].n_values);
        idx /= s->axes[a].n_values;
    }
}


/* "ENGINE.KEY" where ENGINE is one the plan uses: the key of that engine only. Returns KEY when it applies to
 * engine, NULL when it belongs to another engine; unscoped keys are returned as they are. */
static const char *scoped_key(const mlk_plan *p, const char *key, const char *engine)
{
    const char *dot = strchr(key, '.');
    if (!dot)
        return key;
    for (int i = 0; i < p->n_engines; i++)
        if (strlen(p->engines[i]) == (size_t)(dot - key) && !strncmp(p->engines[i], key, (size_t)(dot - key)))
            return strcmp(p->engines[i], engine) ? NULL : dot + 1;
    return key; /* a dotted option of the engine itself, such as dim.seq */
}

static int add_opt(mlk_cell *c, const char *k, const char *v, mlk_error *err)
{
    if (c->n_opts == MLK_CELL_MAX_OPTS)
        return mlk_fail(err, MLK_E_USAGE, "more than %d engine options in one cell", MLK_CELL_MAX_OPTS);
    c->opts[c->n_opts].key = k;
    c->opts[c->n_opts++].value = v;
    return MLK_OK;
}

/* Key: everything that makes two cells of two runs comparable. Sorted so axis order does not matter. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *config_key(const mlk_plan *p, const mlk_cell *c, const int *pick)
{
    const mlk_scenario *s = p->s;
    int n = s->n_engine_options + s->n_axes + 3;
    char **parts = calloc((size_t)n, sizeof *parts);
    if (!parts)
        return NULL;
    int k = 0;
    for (int i = 0; i < s->n_engine_options; i++) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "opt.%s=%s", s->engine_options[i].key, s->engine_options[i].value);
        parts[k++] = mlk_buf_take(&b);
    }
    for (int a = 0; a < s->n_axes; a++) {
        if (!strcmp(s->axes[a].name, "engine") || !strcmp(s->axes[a].name, "model"))
            continue; /* already at the front (the model by its content hash) */
        mlk_buf b = {0};
        mlk_buf_printf(&b, "%s=%s", s->axes[a].name, s->axes[a].values[pick[a]]);
        parts[k++] = mlk_buf_take(&b);
    }
    if (!mlk_scenario_axis(s, "allocator")) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "allocator=%s", c->allocator);
        parts[k++] = mlk_buf_take(&b);
    }
    if (c->tool != MLK_TOOL_NONE && !mlk_scenario_axis(s, "tool")) {
        /* a scenario-wide tool: its cells never line up with the same cells run without it */
        mlk_buf b = {0};
        mlk_buf_printf(&b, "tool=%s", mlk_tool_name(c->tool));
        parts[k++] = mlk_buf_take(&b);
    }
    if (s->shapes) {
        /* other traffic, other memory: a cell under one schedule never lines up with one under another or none */
        char d[2048];
        mlk_shapes_describe(s->shapes, d, sizeof d);
        mlk_buf b = {0};
        mlk_buf_printf(&b, "shapes=%s", d);
        parts[k++] = mlk_buf_take(&b);
    }
    qsort(parts, (size_t)k, sizeof *parts, cmp_str);
    mlk_buf key = {0};
    const char *hash = c->model < p->n_models ? p->models[c->model].hash : NULL;
    mlk_buf_printf(&key, "engine=%s;model=%s;pipeline=", c->engine, hash ? hash : "?");
    for (int i = 0; i < s->n_pipeline; i++)
        mlk_buf_printf(&key, "%s%s", i ? "," : "", mlk_step_name(s->pipeline[i]));
    for (int i = 0; i < k; i++) {
        mlk_buf_printf(&key, ";%s", parts[i] ? parts[i] : "?");
        free(parts[i]);
    }
    free(parts);
    return mlk_buf_take(&key);
}

/* The engine options of a cell, in order: engine_options, plain engine axes, variants; scoped keys filtered. */
static int cell_options(mlk_plan *p, mlk_cell *c, const int *pick, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    int rc = MLK_OK;
    for (int i = 0; i < s->n_engine_options && !rc; i++) {
        const char *k = scoped_key(p, s->engine_options[i].key, c->engine);
        if (k)
            rc = add_opt(c, k, s->engine_options[i].value, err);
    }
    for (int a = 0; a < s->n_axes && !rc; a++) {
        const mlk_axis *ax = &s->axes[a];
        if (mlk_scenario_is_harness_axis(ax->name))
            continue;
        if (!ax->variants) {
            const char *k = scoped_key(p, ax->name, c->engine);
            if (k)
                rc = add_opt(c, k, ax->values[pick[a]], err);
            continue;
        }
        const mlk_variant *var = &ax->variants[pick[a]];
        for (int i = 0; i < var->n_options && !rc; i++) {
            const char *k = scoped_key(p, var->options[i].key, c->engine);
            if (k && !mlk_scenario_variant_harness_key(k))
                rc = add_opt(c, k, var->options[i].value, err);
        }
    }
    return rc;
}

/* A harness setting of the cell, from its axis or a variant (scenario.h: mlk_scenario_variant_harness_key). */
static void set_harness(mlk_cell *c, const char *key, const char *v)
{
    if (!strcmp(key, "allocator"))
        c->allocator = v;
    else if (!strcmp(key, "malloc_trim"))
        c->trim = mlk_scenario_bool(v) == 1;
    else if (!strcmp(key, "glibc_tunables"))
        c->glibc_tunables = v;
    else if (!strcmp(key, "malloc_conf"))
        c->malloc_conf = v;
    else if (!strcmp(key, "allocator_env"))
        c->allocator_env = v;
}

/* Harness settings carried by the cell's variants (the parser made sure no axis sets them too). */
static void variant_harness(const mlk_scenario *s, mlk_cell *c, const int *pick)
{
    for (int a = 0; a < s->n_axes; a++) {
        const mlk_axis *ax = &s->axes[a];
        if (!ax->variants || !strcmp(ax->name, "model") || !strcmp(ax->name, "allocator"))
            continue;
        const mlk_variant *var = &ax->variants[pick[a]];
        for (int i = 0; i < var->n_options; i++)
            if (mlk_scenario_variant_harness_key(var->options[i].key))
                set_harness(c, var->options[i].key, var->options[i].value);
    }
}

static int build_cell(mlk_plan *p, mlk_cell *c, const int *pick, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    c->allocator = "glibc";
    c->engine = s->engine;
    c->tool = mlk_tool_from_name(s->tool);
    mlk_buf json = {0}, label = {0};
    mlk_buf_printf(&json, "{");
    for (int a = 0; a < s->n_axes; a++) {
        const mlk_axis *ax = &s->axes[a];
        const char *v = ax->values[pick[a]];
        mlk_buf_printf(&json, "%s", a ? "," : "");
        mlk_buf_json(&json, ax->name);
        mlk_buf_printf(&json, ":");
        mlk_buf_json(&json, v);
        char shown[512]; /* a label is shown, never parsed: a variant's name with ESC in it shows "\e" */
        mlk_buf_printf(&label, "%s%s=%s", a ? " " : "", ax->name,
                       v[0] ? mlk_text_safe(v, shown, sizeof shown, 0) : "\"\"");
        if (!strcmp(ax->name, "engine"))
            c->engine = v;
        else if (!strcmp(ax->name, "model"))
            c->model = pick[a];
        else if (!strcmp(ax->name, "allocator")) {
            c->allocator = v;
            c->allocator_preload = mlk_scenario_allocator_preload(ax, pick[a]);
        }
        else if (mlk_scenario_variant_harness_key(ax->name))
            set_harness(c, ax->name, v);
        else if (!strcmp(ax->name, "tool"))
            c->tool = mlk_tool_from_name(v);
    }
    mlk_buf_printf(&json, "}");
    variant_harness(s, c, pick);
    if (!s->n_axes)
        mlk_buf_printf(&label, "(single cell)");
    c->axes_json = mlk_buf_take(&json);
    c->label = mlk_buf_take(&label);
    c->engine_lib = mlk_plan_engine_lib(p, c->engine);
    if (!c->axes_json || !c->label)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    return cell_options(p, c, pick, err);
}

int mlk_plan_cells(mlk_plan *p, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    int64_t n = mlk_scenario_n_cells(s);
    p->cells = calloc((size_t)n, sizeof *p->cells);
    if (!p->cells)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory for %lld cells", (long long)n);
    int pick[64] = {0};
    if (s->n_axes > 64)
        return mlk_fail(err, MLK_E_USAGE, "%s: at most 64 matrix axes", s->path);
    for (int64_t idx = 0; idx < n; idx++) {
        pick_of(s, idx, pick);
        mlk_cell *c = &p->cells[idx];
        c->idx = (int)idx;
        p->n_cells = (int)idx + 1;
        int rc = build_cell(p, c, pick, err);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

int mlk_plan_keys(mlk_plan *p, mlk_error *err)
{
    int pick[64] = {0};
    for (int i = 0; i < p->n_cells; i++) {
        pick_of(p->s, i, pick);
        if (!(p->cells[i].config_key = config_key(p, &p->cells[i], pick)))
            return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    return MLK_OK;
}

/* Keys of allocator_env must be allocator tunables; "K=V K2=V2". TBB_ENABLE_SANITIZERS=1 belongs with them: oneTBB
 * dlopens its tbbbind with RTLD_DEEPBIND, so the hwloc it loads frees with glibc's free what libc allocated through
 * a preloaded allocator (OpenVINO's wheels abort under jemalloc, tcmalloc and mimalloc: oneTBB issue 1645); that
 * variable makes oneTBB load it without DEEPBIND. */
static const char *bad_env(const char *list)
{
    static const char *const prefixes[] = {"TCMALLOC_", "MIMALLOC_", "MALLOC_", "JE_", "TBB_ENABLE_SANITIZERS=", NULL};
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *eq = strchr(p, '='), *sp = strchr(p, ' ');
        if (!eq || (sp && sp < eq))
            return "each entry must be KEY=VALUE";
        bool ok = false;
        for (int i = 0; prefixes[i]; i++)
            ok |= !strncmp(p, prefixes[i], strlen(prefixes[i]));
        if (!ok)
            return "keys must start with TCMALLOC_, MIMALLOC_, MALLOC_ or JE_, or be TBB_ENABLE_SANITIZERS";
        p = sp ? sp : p + strlen(p);
    }
    return NULL;
}

static int check_one(const engine_api *api, const char *path, const char *k, const char *v, mlk_loc loc,
                     mlk_error *err)
{
    engine_kv kv = {k, v};
    engine_error e = {0};
    if (api->check_options(&kv, 1, &e))
        return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: %s", path, loc.line, loc.col, e.msg);
    return MLK_OK;
}

static int check_harness_axis(const mlk_scenario *s, const mlk_axis *ax, mlk_error *err)
{
    for (int i = 0; i < ax->n_values; i++) {
        mlk_loc l = ax->value_locs[i];
        const char *v = ax->values[i];
        if (!strcmp(ax->name, "allocator")) {
            mlk_error e = {0};
            const char *pre = mlk_scenario_allocator_preload(ax, i);
            const mlk_allocator_info *a = pre ? NULL : mlk_allocator_find(v, &e);
            if (pre ? mlk_allocator_check_preload(v, pre, &e) != 0 : !a || mlk_allocator_check(a, &e))
                return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: %s", s->path, l.line, l.col, e.msg);
        } else if (!strcmp(ax->name, "allocator_env") && bad_env(v)) {
            return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: allocator_env '%s': %s", s->path, l.line, l.col, v,
                            bad_env(v));
        }
    }
    return MLK_OK;
}

/* Every option the scenario gives, checked by the plugin of every engine it applies to. */
static int check_with(const mlk_plan *p, const engine_api *api, const char *engine, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    int rc = MLK_OK;
    for (int i = 0; i < s->n_engine_options && !rc; i++) {
        const char *k = scoped_key(p, s->engine_options[i].key, engine);
        if (k)
            rc = check_one(api, s->path, k, s->engine_options[i].value, s->engine_options[i].loc, err);
    }
    for (int a = 0; a < s->n_axes && !rc; a++) {
        const mlk_axis *ax = &s->axes[a];
        if (mlk_scenario_is_harness_axis(ax->name))
            continue;
        for (int i = 0; i < ax->n_values && !rc; i++) {
            if (!ax->variants) {
                const char *k = scoped_key(p, ax->name, engine);
                if (k)
                    rc = check_one(api, s->path, k, ax->values[i], ax->value_locs[i], err);
                continue;
            }
            const mlk_variant *var = &ax->variants[i];
            for (int j = 0; j < var->n_options && !rc; j++) {
                const char *k = scoped_key(p, var->options[j].key, engine);
                if (k && !mlk_scenario_variant_harness_key(k))
                    rc = check_one(api, s->path, k, var->options[j].value, var->options[j].loc, err);
            }
        }
    }
    return rc;
}

/* Tool cells (issue 6) run on glibc's malloc: valgrind and ASan replace malloc themselves, so a preloaded
 * allocator would be measured by nothing, or break the tool. The allocator axis or a variant can set another one. */
static int check_tool_allocator(const mlk_plan *p, mlk_error *err)
{
    const mlk_axis *ax = mlk_scenario_axis(p->s, "allocator");
    for (int i = 0; i < p->n_cells; i++) {
        const mlk_cell *c = &p->cells[i];
        if (c->tool == MLK_TOOL_NONE || (!c->allocator_preload && !strcmp(c->allocator, "glibc")))
            continue;
        if (!ax) /* set by a variant */
            return mlk_fail(err, MLK_E_PARSE, "%s: allocator %s in cell %d under tool %s: tool cells run on glibc",
                            p->s->path, c->allocator, c->idx, mlk_tool_name(c->tool));
        int j = 0;
        while (j < ax->n_values - 1 && strcmp(ax->values[j], c->allocator))
            j++;
        return mlk_fail(err, MLK_E_PARSE,
                        "%s:%d:%d: allocator %s in a cell under tool %s: %s replaces malloc itself, so tool cells "
                        "run on glibc (keep allocator and tool on separate scenarios, or use allocator glibc)",
                        p->s->path, ax->value_locs[j].line, ax->value_locs[j].col, c->allocator,
                        mlk_tool_name(c->tool), c->tool == MLK_TOOL_LSAN ? "AddressSanitizer" : "valgrind");
    }
    return MLK_OK;
}

/* An allocator or allocator_env a variant sets, checked as its axis would be. */
static int check_variant_harness(const mlk_scenario *s, const mlk_axis *ax, mlk_error *err)
{
    for (int j = 0; j < ax->n_values; j++) {
        for (int i = 0; i < ax->variants[j].n_options; i++) {
            const mlk_kv *kv = &ax->variants[j].options[i];
            mlk_error e = {0};
            const mlk_allocator_info *a = NULL;
            if (!strcmp(kv->key, "allocator") && (!(a = mlk_allocator_find(kv->value, &e)) || mlk_allocator_check(a, &e)))
                return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: %s", s->path, kv->loc.line, kv->loc.col, e.msg);
            if (!strcmp(kv->key, "allocator_env") && bad_env(kv->value))
                return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: allocator_env '%s': %s", s->path, kv->loc.line,
                                kv->loc.col, kv->value, bad_env(kv->value));
        }
    }
    return MLK_OK;
}

int mlk_plan_check_cells(mlk_plan *p, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    int rc = check_tool_allocator(p, err);
    for (int a = 0; a < s->n_axes && !rc; a++)
        if (mlk_scenario_is_harness_axis(s->axes[a].name))
            rc = check_harness_axis(s, &s->axes[a], err);
        else if (s->axes[a].variants)
            rc = check_variant_harness(s, &s->axes[a], err);
    for (int e = 0; e < p->n_engines && !rc; e++) {
        mlk_plugin plug;
        rc = mlk_plugin_init(&plug, p->engine_libs[e], err);
        if (!rc)
            rc = check_with(p, &plug.api, p->engines[e], err);
        if (rc && p->n_engines > 1)
            mlk_fail_prefix(err, "engine %s: ", p->engines[e]);
        mlk_plugin_deinit(&plug);
    }
    return rc;
}
