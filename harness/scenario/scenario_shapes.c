/* scenario_shapes.c: the scenario's `shapes:` mapping (symbolic dim -> range, cycle or choice) into a shape schedule.
 * It must never accept a schedule the worker could not carry: every limit of shapes.h is checked here, at file:line:col. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_internal.h"

#define FORMS                                                                                                          \
    "[LO, HI] (a seeded choice in that range), {range: [LO, HI], step: N}, {cycle: [a, b, ...]}, {choice: [a, b, ...]} " \
    "or one size"

static int size_of(const mlk_ynode *n, const char *what, const char *name, int64_t *out, mlk_error *err)
{
    return mlk_yget_int(n, what, 1, MLK_SHAPE_MAX_SIZE, name, out, err);
}

/* A list of sizes (cycle, choice). */
static int size_list(const mlk_ynode *v, const char *what, const char *name, mlk_shape_dim *d, mlk_error *err)
{
    char got[64];
    if (v->kind != MLK_YSEQ || v->n_items < 1 || v->n_items > MLK_SHAPE_MAX_VALUES)
        return mlk_yfail(err, name, v->loc, "%s: expected a list of 1 to %d sizes, got %s", what, MLK_SHAPE_MAX_VALUES,
                         mlk_ydescribe(v, got, sizeof got));
    for (int i = 0; i < v->n_items; i++) {
        int rc = size_of(v->items[i], what, name, &d->values[i], err);
        if (rc)
            return rc;
    }
    d->n_values = v->n_items;
    return MLK_OK;
}

static int range_of(const mlk_ynode *v, const char *what, const char *name, mlk_shape_dim *d, mlk_error *err)
{
    char got[64];
    if (v->kind != MLK_YSEQ || v->n_items != 2)
        return mlk_yfail(err, name, v->loc, "%s: expected [LO, HI], got %s", what, mlk_ydescribe(v, got, sizeof got));
    int rc = size_of(v->items[0], what, name, &d->lo, err);
    if (!rc)
        rc = size_of(v->items[1], what, name, &d->hi, err);
    if (!rc && d->hi < d->lo)
        return mlk_yfail(err, name, v->loc, "%s: the range's high end %lld is below its low end %lld", what,
                         (long long)d->hi, (long long)d->lo);
    d->kind = MLK_SHAPE_RANGE;
    d->step = 1;
    return rc;
}

/* {range: [LO, HI], step: N} or {cycle: [...]} or {choice: [...]}. */
static int dim_map(const mlk_ynode *v, const char *what, const char *name, mlk_shape_dim *d, mlk_error *err)
{
    const mlk_ynode *step = NULL;
    int kinds = 0;
    char sub[128];
    for (int i = 0; i < v->n_items; i += 2) {
        const mlk_ynode *k = v->items[i], *x = v->items[i + 1];
        snprintf(sub, sizeof sub, "%.60s.%.40s", what, k->text);
        int rc;
        if (!strcmp(k->text, "range")) {
            rc = range_of(x, sub, name, d, err);
        } else if (!strcmp(k->text, "cycle") || !strcmp(k->text, "choice")) {
            d->kind = k->text[1] == 'y' ? MLK_SHAPE_CYCLE : MLK_SHAPE_CHOICE;
            rc = size_list(x, sub, name, d, err);
        } else if (!strcmp(k->text, "step")) {
            step = x;
            continue;
        } else {
            return mlk_yfail(err, name, k->loc, "%s: unknown key '%.40s' (expected range, step, cycle or choice)",
                             what, k->text);
        }
        if (rc)
            return rc;
        kinds++;
    }
    if (kinds != 1)
        return mlk_yfail(err, name, v->loc, "%s: expected exactly one of range, cycle or choice", what);
    if (step && d->kind != MLK_SHAPE_RANGE)
        return mlk_yfail(err, name, step->loc, "%s: step goes with range only", what);
    if (step) {
        snprintf(sub, sizeof sub, "%.60s.step", what);
        int rc = size_of(step, sub, name, &d->step, err);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

static int dim_of(const mlk_ynode *k, const mlk_ynode *v, const char *name, mlk_shape_dim *d, mlk_error *err)
{
    char what[96], got[64];
    if (!k->text[0] || strlen(k->text) >= sizeof d->name || strchr(k->text, '=') || strchr(k->text, ' '))
        return mlk_yfail(err, name, k->loc, "shapes: '%.64s' is not a dim name (1 to %d characters, no '=' or space)",
                         k->text, MLK_SHAPE_NAME_MAX - 1);
    memcpy(d->name, k->text, strlen(k->text) + 1);
    snprintf(what, sizeof what, "shapes.%.60s", k->text);
    if (v->kind == MLK_YSEQ)
        return range_of(v, what, name, d, err);
    if (v->kind == MLK_YMAP)
        return dim_map(v, what, name, d, err);
    if (v->kind == MLK_YSCALAR && !mlk_ynull(v)) {
        d->kind = MLK_SHAPE_CYCLE;
        d->n_values = 1;
        return size_of(v, what, name, &d->values[0], err);
    }
    return mlk_yfail(err, name, v->loc, "%s: expected " FORMS ", got %s", what, mlk_ydescribe(v, got, sizeof got));
}

int mlk_scn_shapes(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char got[64];
    if (v->kind != MLK_YMAP || v->n_items == 0)
        return mlk_yfail(err, name, v->loc, "shapes: expected a mapping of symbolic dim: schedule, got %s",
                         mlk_ydescribe(v, got, sizeof got));
    if (v->n_items / 2 > MLK_SHAPE_MAX_DIMS)
        return mlk_yfail(err, name, v->loc, "shapes: at most %d dims, got %d", MLK_SHAPE_MAX_DIMS, v->n_items / 2);
    mlk_shapes *sh = mlk_ycalloc(1, sizeof *sh);
    if (!sh)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < v->n_items; i += 2) {
        int rc = dim_of(v->items[i], v->items[i + 1], name, &sh->dims[sh->n_dims], err);
        if (rc) {
            free(sh);
            return rc;
        }
        sh->n_dims++;
    }
    s->shapes = sh;
    s->shapes_loc = v->loc;
    return MLK_OK;
}
