/* plan_cells.c: expands the matrix into cells (last axis varies fastest), splits harness settings from engine
 * options, and checks every option value with the engine before anything runs.
 * It must never let an engine option through unchecked: a typo would otherwise surface mid-run. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocators.h"
#include "plan.h"
#include "strbuf.h"

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
    int n = s->n_engine_options + s->n_axes + 1;
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
        mlk_buf b = {0};
        mlk_buf_printf(&b, "%s=%s", s->axes[a].name, s->axes[a].values[pick[a]]);
        parts[k++] = mlk_buf_take(&b);
    }
    if (!mlk_scenario_axis(s, "allocator")) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "allocator=%s", c->allocator);
        parts[k++] = mlk_buf_take(&b);
    }
    qsort(parts, (size_t)k, sizeof *parts, cmp_str);
    mlk_buf key = {0};
    mlk_buf_printf(&key, "engine=%s;model=%s;pipeline=", s->engine, p->model_hash ? p->model_hash : "?");
    for (int i = 0; i < s->n_pipeline; i++)
        mlk_buf_printf(&key, "%s%s", i ? "," : "", mlk_step_name(s->pipeline[i]));
    for (int i = 0; i < k; i++) {
        mlk_buf_printf(&key, ";%s", parts[i] ? parts[i] : "?");
        free(parts[i]);
    }
    free(parts);
    return mlk_buf_take(&key);
}

static int build_cell(mlk_plan *p, mlk_cell *c, const int *pick, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    c->allocator = "glibc";
    int rc = MLK_OK;
    for (int i = 0; i < s->n_engine_options && !rc; i++)
        rc = add_opt(c, s->engine_options[i].key, s->engine_options[i].value, err);
    mlk_buf json = {0}, label = {0};
    mlk_buf_printf(&json, "{");
    for (int a = 0; a < s->n_axes && !rc; a++) {
        const mlk_axis *ax = &s->axes[a];
        const char *v = ax->values[pick[a]];
        mlk_buf_printf(&json, "%s", a ? "," : "");
        mlk_buf_json(&json, ax->name);
        mlk_buf_printf(&json, ":");
        mlk_buf_json(&json, v);
        mlk_buf_printf(&label, "%s%s=%s", a ? " " : "", ax->name, v[0] ? v : "\"\"");
        if (!strcmp(ax->name, "allocator"))
            c->allocator = v;
        else if (!strcmp(ax->name, "malloc_trim"))
            c->trim = mlk_scenario_bool(v) == 1;
        else if (!strcmp(ax->name, "glibc_tunables"))
            c->glibc_tunables = v;
        else if (!strcmp(ax->name, "malloc_conf"))
            c->malloc_conf = v;
        else if (!strcmp(ax->name, "allocator_env"))
            c->allocator_env = v;
        else if (ax->variants)
            for (int i = 0; i < ax->variants[pick[a]].n_options && !rc; i++)
                rc = add_opt(c, ax->variants[pick[a]].options[i].key, ax->variants[pick[a]].options[i].value, err);
        else
            rc = add_opt(c, ax->name, v, err);
    }
    mlk_buf_printf(&json, "}");
    if (!s->n_axes)
        mlk_buf_printf(&label, "(single cell)");
    c->axes_json = mlk_buf_take(&json);
    c->label = mlk_buf_take(&label);
    if (!rc && (!c->axes_json || !c->label))
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    return rc;
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

/* Keys of allocator_env must be allocator tunables; "K=V K2=V2". */
static const char *bad_env(const char *list)
{
    static const char *const prefixes[] = {"TCMALLOC_", "MIMALLOC_", "MALLOC_", "JE_", NULL};
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
            return "keys must start with TCMALLOC_, MIMALLOC_, MALLOC_ or JE_";
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
            const mlk_allocator_info *a = mlk_allocator_find(v, &e);
            if (!a || mlk_allocator_check(a, &e))
                return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: %s", s->path, l.line, l.col, e.msg);
        } else if (!strcmp(ax->name, "allocator_env") && bad_env(v)) {
            return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: allocator_env '%s': %s", s->path, l.line, l.col, v,
                            bad_env(v));
        }
    }
    return MLK_OK;
}

int mlk_plan_check_cells(mlk_plan *p, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    void *dl = dlopen(p->engine_lib, RTLD_NOW | RTLD_LOCAL);
    engine_get_api_fn get = dl ? (engine_get_api_fn)dlsym(dl, ENGINE_ENTRY_SYMBOL) : NULL;
    const engine_api *api = get ? get() : NULL;
    int rc = MLK_OK;
    if (!api || api->abi_version != ENGINE_ABI_VERSION || api->struct_size < sizeof(engine_api)) {
        rc = mlk_fail(err, MLK_E_ENGINE, "%s: not a compatible engine plugin (%s)", p->engine_lib,
                      dl ? "wrong ABI version" : dlerror());
        goto out;
    }
    for (int i = 0; i < s->n_engine_options && !rc; i++)
        rc = check_one(api, s->path, s->engine_options[i].key, s->engine_options[i].value, s->engine_options[i].loc,
                       err);
    for (int a = 0; a < s->n_axes && !rc; a++) {
        const mlk_axis *ax = &s->axes[a];
        if (mlk_is_harness_axis(ax->name)) {
            rc = check_harness_axis(s, ax, err);
            continue;
        }
        for (int i = 0; i < ax->n_values && !rc; i++) {
            if (!ax->variants) {
                rc = check_one(api, s->path, ax->name, ax->values[i], ax->value_locs[i], err);
                continue;
            }
            const mlk_variant *var = &ax->variants[i];
            for (int k = 0; k < var->n_options && !rc; k++)
                rc = check_one(api, s->path, var->options[k].key, var->options[k].value, var->options[k].loc, err);
        }
    }
out:
    if (dl)
        dlclose(dl);
    return rc;
}
