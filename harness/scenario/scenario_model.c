/* scenario_model.c: a scenario's model: a path, or {path: ...} / {generate: ARCH, options...}, with optional inputs,
 * checked against the generator's architectures and options. It must never touch the file system: paths are checked
 * by the plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_internal.h"

/* ------------------------------------------------------------------------------------------------
 * model: a path, or {path: ...} / {generate: ARCH, options...}, with optional inputs
 * ---------------------------------------------------------------------------------------------- */

typedef enum { GEN_BOOL, GEN_INT, GEN_FLOAT, GEN_DTYPE } gen_type;

static const struct {
    const char *key;
    gen_type type;
    int64_t lo; /* GEN_INT: least value (GEN_FLOAT: values must be > 0) */
} gen_opts[] = {
    {"external_data", GEN_BOOL, 0}, {"batch", GEN_INT, 1},      {"seed", GEN_INT, 0},
    {"width_mult", GEN_FLOAT, 0},   {"image_size", GEN_INT, 1}, {"layers", GEN_INT, 1},
    {"hidden", GEN_INT, 1},         {"heads", GEN_INT, 1},      {"seq", GEN_INT, 1},
    {"mlp_hidden", GEN_INT, 1},     {"dynamic", GEN_BOOL, 0},   {"dtype", GEN_DTYPE, 0},
    {"quantize", GEN_DTYPE, 1},
};
#define N_GEN_OPTS ((int)(sizeof gen_opts / sizeof gen_opts[0]))
#define GEN_KEYS                                                                                                      \
    "external_data, batch, seed, width_mult, image_size, layers, hidden, heads, seq, mlp_hidden, dynamic, dtype, quantize"
/* The reference engine's generator's architectures (its ref_gen_arch_names): the harness never links the engine (it
 * runs `refengine gen`), so the names are repeated here, once, to refuse a typo at its line:col. */
#define GEN_ARCH_LIST(X) X("chain") X("mlp") X("mobilenetv2") X("resnet18") X("resnet50") X("transformer")
#define X_JOIN(n) ", " n
static const char gen_archs_text[] = GEN_ARCH_LIST(X_JOIN);
#undef X_JOIN
#define GEN_ARCHS (gen_archs_text + 2)

static bool known_arch(const char *a)
{
#define X_NAME(n) n,
    static const char *const archs[] = {GEN_ARCH_LIST(X_NAME)};
#undef X_NAME
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (!strcmp(a, archs[i]))
            return true;
    return false;
}

static int gen_opt_index(const char *key)
{
    for (int i = 0; i < N_GEN_OPTS; i++)
        if (!strcmp(gen_opts[i].key, key))
            return i;
    return -1;
}

static int check_gen_value(const mlk_ynode *v, int i, const char *name, mlk_error *err)
{
    char what[48];
    snprintf(what, sizeof what, "model.%s", gen_opts[i].key);
    bool b;
    int64_t x;
    double f;
    if (gen_opts[i].type == GEN_BOOL)
        return mlk_yget_bool(v, what, name, &b, err);
    if (gen_opts[i].type == GEN_INT)
        return mlk_yget_int(v, what, gen_opts[i].lo, gen_opts[i].lo ? INT32_MAX : INT64_MAX, name, &x, err);
    if (gen_opts[i].type == GEN_DTYPE) { /* lo 0: dtype (float, float16); 1: quantize (none, uint8) */
        char *s = NULL;
        int rc = mlk_yget_string(v, what, name, &s, err);
        const char *w0 = gen_opts[i].lo ? "none" : "float", *w1 = gen_opts[i].lo ? "uint8" : "float16";
        if (!rc && strcmp(s, w0) && strcmp(s, w1))
            rc = mlk_yfail(err, name, v->loc, "%s: '%s' is not one of %s, %s", what, s, w0, w1);
        free(s);
        return rc;
    }
    return mlk_yget_number(v, what, 0.0, 1e9, name, &f, err);
}

int mlk_scn_model_inputs(mlk_model_spec *m, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char d[64];
    if (v->kind != MLK_YSEQ || !v->n_items)
        return mlk_yfail(err, name, v->loc, "model.inputs: expected a non-empty list of .pb paths, got %s",
                         v->kind == MLK_YSEQ ? "an empty list" : mlk_ydescribe(v, d, sizeof d));
    m->inputs = mlk_ycalloc((size_t)v->n_items, sizeof *m->inputs);
    m->input_locs = mlk_ycalloc((size_t)v->n_items, sizeof *m->input_locs);
    if (!m->inputs || !m->input_locs)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < v->n_items; i++) {
        int rc = mlk_yget_string(v->items[i], "model.inputs", name, &m->inputs[i], err);
        if (rc)
            return rc;
        m->n_inputs = i + 1;
        m->input_locs[i] = v->items[i]->loc;
        if (!m->inputs[i][0])
            return mlk_yfail(err, name, v->items[i]->loc, "model.inputs: expected a path, got an empty string");
    }
    return MLK_OK;
}

/* First pass over a model mapping: path xor generate, and every key known. */
static int check_model_keys(const mlk_ynode *v, bool allow_name, const char *name, mlk_error *err)
{
    bool gen = mlk_ymap_get(v, "generate") != NULL, source = false;
    if (!gen && !mlk_ymap_get(v, "path"))
        return mlk_yfail(err, name, v->loc, "model: expected a `path:` or a `generate:` key, got neither");
    for (int i = 0; i < v->n_items; i += 2) {
        const mlk_ynode *k = v->items[i];
        if (!strcmp(k->text, "path") || !strcmp(k->text, "generate")) {
            if (source)
                return mlk_yfail(err, name, k->loc, "model: expected either path or generate, not both");
            source = true;
            continue;
        }
        if (!strcmp(k->text, "inputs") || (allow_name && !strcmp(k->text, "name")))
            continue;
        if (gen_opt_index(k->text) < 0)
            return mlk_yfail(err, name, k->loc,
                             "model: unknown %s '%.64s' (expected one of: path, generate, inputs, %s)",
                             gen ? "generator option" : "key", k->text, GEN_KEYS);
        if (!gen)
            return mlk_yfail(err, name, k->loc,
                             "model: '%.64s' is a generator option (expected it with generate:, not path:)", k->text);
    }
    return MLK_OK;
}

int mlk_scn_model_map(mlk_model_spec *m, const mlk_ynode *v, bool allow_name, const char *name, mlk_error *err)
{
    m->loc = v->loc;
    int rc = check_model_keys(v, allow_name, name, err);
    if (rc)
        return rc;
    const mlk_ynode *path = mlk_ymap_get(v, "path"), *gen = mlk_ymap_get(v, "generate"),
                    *in = mlk_ymap_get(v, "inputs");
    if (path) {
        m->kind = MLK_MODEL_PATH;
        if ((rc = mlk_yget_string(path, "model.path", name, &m->path, err)))
            return rc;
        if (!m->path[0])
            return mlk_yfail(err, name, path->loc, "model.path: expected a path, got an empty string");
    } else {
        m->kind = MLK_MODEL_GENERATE;
        if ((rc = mlk_yget_string(gen, "model.generate", name, &m->generate, err)))
            return rc;
        if (!known_arch(m->generate))
            return mlk_yfail(err, name, gen->loc, "model.generate: unknown architecture '%.64s' (expected one of: %s)",
                             m->generate, GEN_ARCHS);
        int n_opts = v->n_items / 2 - 1 - (in != NULL) - (allow_name && mlk_ymap_get(v, "name"));
        m->gen = mlk_ycalloc((size_t)(n_opts > 0 ? n_opts : 1), sizeof *m->gen);
        if (!m->gen)
            return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
        for (int i = 0; i < v->n_items; i += 2) {
            int g = gen_opt_index(v->items[i]->text);
            if (g < 0)
                continue;
            if ((rc = check_gen_value(v->items[i + 1], g, name, err)))
                return rc;
            mlk_kv *kv = &m->gen[m->n_gen++]; /* counted first: a half-filled pair is still freed */
            kv->loc = v->items[i + 1]->loc;
            if (!(kv->key = mlk_ystrdup(v->items[i]->text)) || !(kv->value = mlk_ystrdup(v->items[i + 1]->text)))
                return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
        }
    }
    return in ? mlk_scn_model_inputs(m, in, name, err) : MLK_OK;
}

void mlk_scn_model_free(mlk_model_spec *m)
{
    free(m->path);
    free(m->generate);
    mlk_scn_kvs_free(m->gen, m->n_gen);
    for (int i = 0; i < m->n_inputs; i++)
        free(m->inputs[i]);
    free(m->inputs);
    free(m->input_locs);
}

int mlk_scn_model_parse(mlk_model_spec *m, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char d[64];
    m->loc = v->loc;
    if (v->kind == MLK_YMAP && m->n_inputs && mlk_ymap_get(v, "inputs"))
        return mlk_yfail(err, name, mlk_ymap_get(v, "inputs")->loc,
                         "model.inputs: the inputs are given twice (here and as a top-level inputs:)");
    if (v->kind == MLK_YMAP)
        return mlk_scn_model_map(m, v, false, name, err);
    if (v->kind != MLK_YSCALAR || mlk_ynull(v) || !v->text[0])
        return mlk_yfail(err, name, v->loc, "model: expected a path or a mapping with path: or generate:, got %s",
                         mlk_ydescribe(v, d, sizeof d));
    m->kind = MLK_MODEL_PATH;
    return mlk_yget_string(v, "model", name, &m->path, err);
}

