/* scenario_budgets.c: a scenario's absolute memory caps, `budgets: [{cells: K=V,..., peak: 200MiB, final_rss: 150MiB,
 * heap: 64MiB, growth: 1KiB}]`, parsed with file:line:col errors, and which apply to a cell. It must never take a
 * size without knowing its unit, nor let a cap match a cell by part of a value (cell_filter.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cell_filter.h"
#include "scenario_internal.h"

#define MAX_BUDGETS 256

void mlk_scn_budgets_free(mlk_budget *b, int n)
{
    for (int i = 0; b && i < n; i++)
        free(b[i].cells);
    free(b);
}

/* "200MiB", "1.5 GiB", "512KiB", "4096B" -> bytes; -1 when not a size with its unit. */
static double size_of(const char *v)
{
    char *end;
    double x = strtod(v, &end);
    while (*end == ' ')
        end++;
    double scale = !strcmp(end, "B")     ? 1
                   : !strcmp(end, "KiB") ? 1024
                   : !strcmp(end, "MiB") ? 1024.0 * 1024
                   : !strcmp(end, "GiB") ? 1024.0 * 1024 * 1024
                                         : -1;
    return end == v || scale < 0 || !(x >= 0) || !isfinite(x) ? -1 : x * scale;
}

static int one(const mlk_ynode *m, const char *name, mlk_budget *b, mlk_error *err)
{
    char got[64];
    if (m->kind != MLK_YMAP)
        return mlk_yfail(err, name, m->loc, "budgets: each item is a mapping {cells: K=V, peak: 200MiB, ...}, got %s",
                         mlk_ydescribe(m, got, sizeof got));
    b->loc = m->loc;
    b->peak_bytes = b->final_rss_bytes = b->heap_bytes = b->growth_bytes = -1;
    int caps = 0;
    for (int i = 0; i < m->n_items; i += 2) {
        const mlk_ynode *k = m->items[i], *v = m->items[i + 1];
        if (!strcmp(k->text, "cells")) {
            int rc = mlk_yget_string(v, "budgets.cells", name, &b->cells, err);
            mlk_error fe = {0};
            if (!rc && (mlk_filter_check(b->cells, "budgets.cells", &fe) || !*b->cells))
                return mlk_yfail(err, name, v->loc, "%s", *b->cells ? fe.msg : "budgets.cells: empty");
            if (rc)
                return rc;
            continue;
        }
        double *slot = !strcmp(k->text, "peak")        ? &b->peak_bytes
                       : !strcmp(k->text, "final_rss") ? &b->final_rss_bytes
                       : !strcmp(k->text, "heap")      ? &b->heap_bytes
                       : !strcmp(k->text, "growth")    ? &b->growth_bytes
                                                       : NULL;
        if (!slot)
            return mlk_yfail(err, name, k->loc,
                             "budgets: unknown key '%.64s' (expected cells, peak, final_rss, heap, growth)", k->text);
        if (v->kind != MLK_YSCALAR || (*slot = size_of(v->text)) < 0)
            return mlk_yfail(err, name, v->loc, "budgets.%s: expected a size with its unit (200MiB, 512KiB, 64B), got %s",
                             k->text, mlk_ydescribe(v, got, sizeof got));
        caps++;
    }
    if (!caps)
        return mlk_yfail(err, name, m->loc, "budgets: an item caps nothing (give peak, final_rss, heap or growth)");
    return MLK_OK;
}

int mlk_scn_budgets(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char got[64];
    if (v->kind != MLK_YSEQ || v->n_items == 0 || v->n_items > MAX_BUDGETS)
        return mlk_yfail(err, name, v->loc, "budgets: expected a list of 1 to %d {cells: K=V, peak: 200MiB} items, "
                                            "got %s", MAX_BUDGETS, mlk_ydescribe(v, got, sizeof got));
    mlk_budget *b = mlk_ycalloc((size_t)v->n_items, sizeof *b);
    if (!b)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < v->n_items; i++) {
        int rc = one(v->items[i], name, &b[i], err);
        if (rc) {
            mlk_scn_budgets_free(b, v->n_items);
            return rc;
        }
    }
    s->budgets = b;
    s->n_budgets = v->n_items;
    return MLK_OK;
}

const mlk_budget *mlk_scenario_budget(const mlk_scenario *s, const char *label, int *at)
{
    for (; s && *at < s->n_budgets; (*at)++)
        if (!s->budgets[*at].cells || mlk_filter_match(s->budgets[*at].cells, label))
            return &s->budgets[(*at)++];
    return NULL;
}
