/* plan.c: resolves a scenario into a runnable plan: engine plugin, model (cached generation), inputs, option and
 * allocator checks, pipeline state check, and the cells of the matrix. It must never run a worker. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocators.h"
#include "files.h"
#include "interrupt.h"
#include "model_cache.h"
#include "model_id.h"
#include "plan.h"
#include "spawn.h"
#include "strbuf.h"
#include "tool_exec.h"

const char *mlk_plan_engine_lib(const mlk_plan *p, const char *name)
{
    for (int i = 0; i < p->n_engines; i++)
        if (!strcmp(p->engines[i], name))
            return p->engine_libs[i];
    return NULL;
}


static char *path_join(const char *dir, const char *name)
{
    mlk_buf b = {0};
    if (name[0] == '/' || !dir || !dir[0])
        mlk_buf_printf(&b, "%s", name);
    else
        mlk_buf_printf(&b, "%s/%s", dir, name);
    return mlk_buf_take(&b);
}

/* dir/name made absolute against the current folder, without resolving links (an engine finds external data next
 * to the path it is given): what the workers get and the db keeps, so --resume from another folder means the same
 * file. NULL when out of memory. */
static char *abs_path(const char *dir, const char *name)
{
    char *joined = path_join(dir, name);
    if (!joined || joined[0] == '/')
        return joined;
    char cwd[PATH_MAX];
    mlk_buf b = {0};
    if (getcwd(cwd, sizeof cwd))
        mlk_buf_printf(&b, "%s/%s", strcmp(cwd, "/") ? cwd : "", joined[0] == '.' && joined[1] == '/' ? joined + 2
                                                                                                      : joined);
    else
        mlk_buf_printf(&b, "%s", joined);
    free(joined);
    return mlk_buf_take(&b);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    mlk_buf b = {0};
    if (slash)
        mlk_buf_printf(&b, "%.*s", (int)(slash - path), path);
    else
        mlk_buf_printf(&b, ".");
    return mlk_buf_take(&b);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The plugin file of one engine, searched in the usual folders; the error points at where the scenario names it. */
static int find_engine(mlk_plan *p, const mlk_plan_opts *o, const char *engine, mlk_loc where, char **out,
                       mlk_error *err)
{
    const char *dirs[5];
    int n = 0;
    char *lib_dir = path_join(o->self_dir, "../lib"), *mlk_dir = path_join(o->self_dir, "../lib/memleak");
    if (o->engine_dir)
        dirs[n++] = o->engine_dir;
    if (getenv("MLK_ENGINE_DIR"))
        dirs[n++] = getenv("MLK_ENGINE_DIR");
    dirs[n++] = lib_dir;
    dirs[n++] = mlk_dir;
    dirs[n++] = o->self_dir;
    mlk_buf tried = {0};
    int rc = MLK_OK;
    *out = NULL;
    for (int i = 0; i < n && !*out && !rc; i++) {
        mlk_buf b = {0};
        mlk_buf_printf(&b, "%s/engine_%s.so", dirs[i], engine);
        char *cand = mlk_buf_take(&b);
        struct stat st;
        /* something there that is no plugin (a FIFO, a link to nothing) is an error, not a reason to look on */
        if (cand && !lstat(cand, &st) && (rc = mlk_check_regular(cand, "engine plugin", false, err)))
            mlk_fail_prefix(err, "%s:%d:%d: ", p->s->path, where.line, where.col);
        if (cand && !rc && access(cand, R_OK) == 0)
            *out = cand;
        else
            free(cand);
        mlk_buf_printf(&tried, "%s%s", i ? ", " : "", dirs[i]);
    }
    if (!*out && !rc) {
        const char *hint = !strcmp(engine, "ort")
                               ? "fetch ONNX Runtime with engines/ort/fetch.sh (ci/setup.sh does it) and rebuild"
                               : "build it, or point --engine-dir / MLK_ENGINE_DIR at the folder holding it";
        rc = mlk_fail(err, MLK_E_NOTFOUND, "%s:%d:%d: engine '%s' not found: no engine_%s.so in %s; %s", p->s->path,
                      where.line, where.col, engine, engine, tried.s ? tried.s : "?", hint);
    }
    mlk_buf_free(&tried);
    free(lib_dir);
    free(mlk_dir);
    return rc;
}

/* Every engine the scenario uses: the top-level one, or the values of its engine axis. */
static int find_engines(mlk_plan *p, const mlk_plan_opts *o, mlk_error *err)
{
    const mlk_scenario *s = p->s;
    const mlk_axis *ax = mlk_scenario_axis(s, "engine");
    int n = ax ? ax->n_values : 1;
    p->engines = calloc((size_t)n, sizeof *p->engines);
    p->engine_libs = calloc((size_t)n, sizeof *p->engine_libs);
    if (!p->engines || !p->engine_libs)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const char *name = ax ? ax->values[i] : s->engine;
        mlk_loc where = ax ? ax->value_locs[i] : s->engine_loc;
        if (!(p->engines[i] = strdup(name)))
            return mlk_fail(err, MLK_E_NOMEM, "out of memory");
        p->n_engines = i + 1;
        int rc = find_engine(p, o, name, where, &p->engine_libs[i], err);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

/* Map the generate mapping onto `refengine gen` flags. */
static int gen_argv(const mlk_model_spec *m, const char **argv, int max, char *key, size_t key_len)
{
    static const struct {
        const char *key, *flag;
        bool boolean;
    } map[] = {{"external_data", "--external-data", true}, {"dynamic", "--dynamic", true},
               {"batch", "--batch", false},                {"seed", "--seed", false},
               {"width_mult", "--width-mult", false},     {"image_size", "--image-size", false},
               {"layers", "--layers", false},             {"hidden", "--hidden", false},
               {"heads", "--heads", false},               {"seq", "--seq", false},
               {"mlp_hidden", "--mlp-hidden", false},     {"dtype", "--dtype", false},
               {"quantize", "--quantize", false}};
    int n = 0;
    size_t used = (size_t)snprintf(key, key_len, "gen-v1;arch=%s", m->generate);
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        for (int i = 0; i < m->n_gen; i++) {
            if (strcmp(m->gen[i].key, map[k].key))
                continue;
            if (used < key_len)
                used += (size_t)snprintf(key + used, key_len - used, ";%s=%s", map[k].key, m->gen[i].value);
            if (map[k].boolean) {
                if (mlk_scenario_bool(m->gen[i].value) == 1 && n < max)
                    argv[n++] = map[k].flag;
            } else if (n + 1 < max) {
                argv[n++] = map[k].flag;
                argv[n++] = m->gen[i].value;
            }
        }
    return n;
}

static int generate_model(mlk_plan *p, const mlk_plan_opts *o, const mlk_model_spec *m, mlk_plan_model *pm,
                          mlk_error *err)
{
    const char *argv[40] = {NULL, "gen", m->generate};
    char key[1024];
    int n = 3 + gen_argv(m, argv + 3, 30, key, sizeof key);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a(1469598103934665603ULL, key, strlen(key)));
    mlk_buf file = {0}, gen = {0}, tmp = {0}, tmp_file = {0};
    char *dir = NULL;
    int rc = mlk_model_cache_dir(o->model_cache, &dir, err), code = 0;
    if (rc)
        return rc;
    mlk_buf_printf(&file, "%s/%s-%s.onnx", dir, m->generate, hex);
    if (o->refengine)
        mlk_buf_printf(&gen, "%s", o->refengine);
    else if (getenv("MLK_REFENGINE"))
        mlk_buf_printf(&gen, "%s", getenv("MLK_REFENGINE"));
    else
        mlk_buf_printf(&gen, "%s/refengine", o->self_dir);
    if (file.failed || gen.failed) {
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
        goto out;
    }
    mlk_model_cache_sweep(dir); /* what runs killed while generating left behind */
    /* A cached model is used only when it still hashes to what was sealed beside it at generation. */
    bool cached = false;
    const char *why = NULL;
    if (access(file.s, F_OK) == 0 && (rc = mlk_model_cache_verify(file.s, &cached, &why, err)))
        goto out;
    if (!cached && access(file.s, F_OK) == 0)
        fprintf(stderr, "memleak-run: the cached model %s %s: generating it again\n", file.s, why);
    if (!cached) {
        /* Generated in a folder of its own, then renamed into the cache (its .data and .hash first, the model last):
         * a generator stopped or killed half way, or two runs at once, never leave the cache a partial model, and
         * the folder goes with whatever the generator left in it (its .tmp files). */
        mlk_buf_printf(&tmp, "%s/.gen-%ld-%s", dir, (long)getpid(), hex);
        mlk_buf_printf(&tmp_file, "%s/%s-%s.onnx", tmp.s ? tmp.s : "", m->generate, hex);
        if (tmp.failed || tmp_file.failed) {
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = mlk_mkdirs(tmp.s, err)))
            goto out;
        argv[0] = gen.s;
        argv[n++] = "--out";
        argv[n++] = tmp_file.s;
        argv[n] = NULL;
        if ((rc = mlk_spawn(argv, NULL, 0, 0, &code, err)) || code) {
            if (!rc)
                rc = mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: generating the model failed (%s exited with %d)",
                              p->s->path, m->loc.line, m->loc.col, gen.s, code);
        } else if (!(rc = mlk_model_cache_seal(tmp_file.s, err))) {
            static const char *const sides[] = {".data", ".hash"};
            for (size_t i = 0; i < 2 && !rc; i++) {
                char from[4200], to[4200];
                snprintf(from, sizeof from, "%s%s", tmp_file.s, sides[i]);
                snprintf(to, sizeof to, "%s%s", file.s, sides[i]);
                if (access(from, F_OK) == 0 ? rename(from, to) != 0 : unlink(to) != 0 && errno != ENOENT)
                    rc = mlk_fail(err, MLK_E_IO, "cannot move the generated model into the cache %s: %s", dir,
                                  strerror(errno));
            }
            if (!rc && rename(tmp_file.s, file.s))
                rc = mlk_fail(err, MLK_E_IO, "cannot move the generated model into the cache %s: %s", dir,
                              strerror(errno));
        }
        mlk_model_cache_remove(tmp.s);
        if (rc)
            goto out;
    }
    pm->path = mlk_buf_take(&file);
out:
    free(dir);
    mlk_buf_free(&file);
    mlk_buf_free(&gen);
    mlk_buf_free(&tmp);
    mlk_buf_free(&tmp_file);
    return rc;
}

/* A model or input the scenario names must be a regular file, checked before anything reads it: a folder, a FIFO or
 * /dev/zero is an input error at the scenario's place, not a hang. */
static int check_regular(const char *path, const char *what, const char *scenario, mlk_loc at, mlk_error *err)
{
    int fd;
    int64_t size;
    int rc = mlk_open_regular(path, what, &fd, &size, err);
    if (!rc)
        close(fd);
    else
        mlk_fail_prefix(err, "%s:%d:%d: ", scenario, at.line, at.col);
    return rc;
}

static int resolve_model(mlk_plan *p, const mlk_plan_opts *o, const mlk_model_spec *m, mlk_plan_model *pm,
                         mlk_error *err)
{
    char *sdir = dir_of(p->s->path);
    int rc = MLK_OK;
    if (m->kind == MLK_MODEL_GENERATE) {
        rc = generate_model(p, o, m, pm, err);
        char *abs = rc ? NULL : abs_path(NULL, pm->path); /* a --model-cache given relative */
        if (!rc && !abs)
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
        if (abs) {
            free(pm->path);
            pm->path = abs;
        }
    } else {
        pm->path = abs_path(sdir, m->path);
        rc = pm->path ? check_regular(pm->path, "model", p->s->path, m->loc, err)
                      : mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    if (!rc && m->n_inputs) {
        pm->inputs = calloc((size_t)m->n_inputs, sizeof *pm->inputs);
        for (int i = 0; pm->inputs && i < m->n_inputs && !rc; i++) {
            pm->inputs[i] = abs_path(sdir, m->inputs[i]);
            pm->n_inputs = i + 1;
            rc = pm->inputs[i] ? check_regular(pm->inputs[i], "input file", p->s->path, m->input_locs[i], err)
                               : mlk_fail(err, MLK_E_NOMEM, "out of memory");
            if (!rc && (rc = mlk_input_check(pm->inputs[i], err))) /* what the worker would refuse, refused now */
                mlk_fail_prefix(err, "%s:%d:%d: ", p->s->path, m->input_locs[i].line, m->input_locs[i].col);
        }
    }
    mlk_model_id id;
    if (!rc && (rc = mlk_model_identify(pm->path, &id, err)) && rc != MLK_E_INTERRUPTED && rc != MLK_E_NOMEM)
        mlk_fail_prefix(err, "%s:%d:%d: ", p->s->path, m->loc.line, m->loc.col);
    if (!rc) {
        pm->hash_sampled = id.sampled;
        pm->bytes = id.bytes;
        if (!(pm->hash = strdup(id.hash)))
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    free(sdir);
    return rc;
}

/* The scenario's model, or every value of its model axis. */
static int resolve_models(mlk_plan *p, const mlk_plan_opts *o, mlk_error *err)
{
    const mlk_axis *ax = mlk_scenario_axis(p->s, "model");
    int n = ax ? ax->n_values : 1;
    if (!(p->models = calloc((size_t)n, sizeof *p->models)))
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        p->n_models = i + 1;
        p->models[i].name = ax ? ax->values[i] : NULL;
        int rc = resolve_model(p, o, ax ? ax->variants[i].model : &p->s->model, &p->models[i], err);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

void mlk_plan_free(mlk_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_cells; i++) {
        free(p->cells[i].axes_json);
        free(p->cells[i].config_key);
        free(p->cells[i].label);
    }
    free(p->cells);
    for (int m = 0; m < p->n_models; m++) {
        for (int i = 0; i < p->models[m].n_inputs; i++)
            free(p->models[m].inputs[i]);
        free(p->models[m].inputs);
        free(p->models[m].path);
        free(p->models[m].hash);
    }
    free(p->models);
    for (int i = 0; i < p->n_engines; i++) {
        free(p->engines[i]);
        free(p->engine_libs[i]);
    }
    free(p->engines);
    free(p->engine_libs);
    mlk_tool_paths_free(p->tools);
    free(p);
}

/* plan_cells.c */
int mlk_plan_cells(mlk_plan *p, mlk_error *err);
int mlk_plan_check_cells(mlk_plan *p, mlk_error *err);
int mlk_plan_keys(mlk_plan *p, mlk_error *err);

int mlk_plan_build(const mlk_scenario *s, const mlk_plan_opts *o, mlk_plan **out, mlk_error *err)
{
    mlk_plan *p = calloc(1, sizeof *p);
    if (!p)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    p->s = s;
    int rc;
    if ((rc = find_engines(p, o, err)) || (rc = mlk_plan_cells(p, err)) ||
        (rc = mlk_plan_check_cells(p, err)) || (rc = resolve_models(p, o, err)) || (rc = mlk_plan_keys(p, err)) ||
        (rc = mlk_tool_resolve(p, o->self_dir, &p->tools, err))) {
        mlk_plan_free(p);
        return rc;
    }
    *out = p;
    return MLK_OK;
}
