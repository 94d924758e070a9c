/* cmd_shapes.c: the input shapes of each cell, from the model's graph inputs and the scenario (cmd_shapes.h).
 * It must never let a dim run as 1 unannounced, nor read a model file it was not given by the plan. */
#include <stdlib.h>
#include <string.h>

#include "cmd_shapes.h"
#include "onnx/file.h"
#include "onnx/model_inputs.h"
#include "shapes.h"
#include "strbuf.h"
#include "text.h"

/* The cell's value of engine option key, or NULL. */
static const char *opt(const mlk_cell *c, const char *key)
{
    for (int i = 0; i < c->n_opts; i++)
        if (c->opts[i].key && !strcmp(c->opts[i].key, key))
            return c->opts[i].value;
    return NULL;
}

/* The schedule's dim called name, or NULL. */
static const mlk_shape_dim *scheduled(const mlk_shapes *sh, const char *name)
{
    for (int d = 0; sh && name[0] && d < sh->n_dims; d++)
        if (!strcmp(sh->dims[d].name, name))
            return &sh->dims[d];
    return NULL;
}

/* Input in's shape for cell c into buf ("1x3x{H: cycle 256}x640"); *unset gets the first dim nothing sets (-1). */
static void shape_of(const mlk_plan *p, const mlk_cell *c, const onnx_input *in, char *buf, size_t len, int *unset)
{
    char key[200];
    size_t at = 0;
    *unset = -1;
    buf[0] = '\0';
    snprintf(key, sizeof key, "shape.%s", in->name);
    const char *whole = opt(c, key);
    if (whole) {
        snprintf(buf, len, "%s (shape.%s)", whole, in->name);
        return;
    }
    if (in->rank <= 0) {
        snprintf(buf, len, in->rank < 0 ? "(no shape in the model)" : "scalar");
        return;
    }
    for (int k = 0; k < in->rank && k < ONNX_INPUT_MAX_RANK && at < len; k++) {
        const onnx_input_dim *d = &in->dims[k];
        const mlk_shape_dim *sd = scheduled(p->s->shapes, d->param);
        const char *v = NULL;
        char piece[160];
        if (d->param[0]) {
            snprintf(key, sizeof key, "dim.%s", d->param);
            v = opt(c, key);
        }
        if (d->value > 0)
            snprintf(piece, sizeof piece, "%lld", (long long)d->value);
        else if (sd) {
            char sched[120];
            mlk_shape_dim_format(sd, sched, sizeof sched);
            snprintf(piece, sizeof piece, "{%s}", sched);
        } else if (v)
            snprintf(piece, sizeof piece, "%s", v);
        else {
            snprintf(piece, sizeof piece, "1?");
            if (*unset < 0)
                *unset = k;
        }
        int w = snprintf(buf + at, len - at, "%s%s", k ? "x" : "", piece);
        at += w > 0 ? (size_t)w : 0;
    }
}

/* One model: its inputs read once, each cell of it printed and checked. */
static int one_model(const mlk_plan *p, int m, const bool *only, FILE *out, bool strict, char **texts,
                     mlk_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0, n = 0;
    onnx_input *in = NULL;
    onnx_error oe = {0};
    if (p->models[m].n_inputs || onnx_file_read(p->models[m].path, NULL, &buf, &len, &oe) ||
        onnx_model_inputs(buf, len, &in, &n, &oe)) {
        free(buf);
        return MLK_OK; /* inputs from .pb files, or a model only its engine reads: the worker reports */
    }
    free(buf);
    bool *warned = calloc(n ? n : 1, sizeof *warned);
    int rc = warned ? MLK_OK : mlk_fail(err, MLK_E_NOMEM, "out of memory");
    if (out && n) /* names come from the model: shown safe (text.h) */
        mlk_fprintf_safe(out, "  input shapes of %s (1? = set by nothing: runs as 1):\n", p->models[m].path);
    for (int i = 0; i < p->n_cells && !rc; i++) {
        const mlk_cell *c = &p->cells[i];
        if (c->model != m || (only && !only[i]))
            continue;
        mlk_buf line = {0};
        for (size_t j = 0; j < n && !rc; j++) {
            char shape[512];
            int k;
            shape_of(p, c, &in[j], shape, sizeof shape, &k);
            mlk_buf_printf(&line, "%s%s: %s", j ? "; " : "", in[j].name, shape);
            if (k < 0 || warned[j])
                continue;
            const char *param = in[j].dims[k].param;
            char how[700];
            if (param[0])
                snprintf(how, sizeof how, "dim %d '%s' of input '%s' is set by nothing: it runs as 1 (set it with "
                         "shapes: {%s: ...} or the engine option dim.%s)", k, param, in[j].name, param, param);
            else
                snprintf(how, sizeof how, "dim %d of input '%s' has neither a size nor a name: it runs as 1 (give "
                         "shape.%s: 1x3x224x224 or model inputs: [x.pb])", k, in[j].name, in[j].name);
            if (strict)
                rc = mlk_fail(err, MLK_E_USAGE, "%s: %s (--strict)", p->models[m].path, how);
            else
                fprintf(stderr, "memleak-run: warning: %s: %s\n", p->models[m].path, how);
            warned[j] = true;
        }
        if (!rc && line.failed)
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
        if (!rc && out && line.s)
            mlk_fprintf_safe(out, "  %3d  %s\n", i, line.s);
        if (!rc && texts && line.s)
            texts[i] = mlk_buf_take(&line);
        mlk_buf_free(&line);
    }
    free(warned);
    free(in);
    return rc;
}

int mlk_cmd_shapes(const mlk_plan *p, const bool *only, FILE *out, bool strict, char **texts, mlk_error *err)
{
    int rc = MLK_OK;
    for (int m = 0; m < p->n_models && !rc; m++)
        rc = one_model(p, m, only, out, strict, texts, err);
    return rc;
}
