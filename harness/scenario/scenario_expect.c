/* scenario_expect.c: a scenario's known findings, `expect: [{cells: K=V,..., verdict: leak, reason: text}]`, parsed
 * with file:line:col errors, and which expectation covers a cell. It must never let an expectation match a cell by
 * part of a value (cell_filter.h) nor accept a verdict that is not a failing one. */
#include <stdlib.h>
#include <string.h>

#include "cell_filter.h"
#include "scenario_internal.h"

#define MAX_EXPECT 256

static const char *const verdicts[] = {"leak", "plateau", "crashed", "timeout", "hung", "oom", "error"};

static bool known_verdict(const char *v)
{
    for (size_t i = 0; i < sizeof verdicts / sizeof *verdicts; i++)
        if (!strcmp(v, verdicts[i]))
            return true;
    return false;
}

void mlk_scn_expect_free(mlk_expect *e, int n)
{
    for (int i = 0; e && i < n; i++)
        free(e[i].cells), free(e[i].verdict), free(e[i].reason);
    free(e);
}

/* One {cells, verdict, reason} mapping into e. */
static int one(const mlk_ynode *m, const char *name, mlk_expect *e, mlk_error *err)
{
    char got[64];
    if (m->kind != MLK_YMAP)
        return mlk_yfail(err, name, m->loc, "expect: each item is a mapping {cells: K=V, verdict: leak, reason: ...}, "
                                            "got %s", mlk_ydescribe(m, got, sizeof got));
    e->loc = m->loc;
    for (int i = 0; i < m->n_items; i += 2) {
        const mlk_ynode *k = m->items[i], *v = m->items[i + 1];
        char **slot = !strcmp(k->text, "cells") ? &e->cells : !strcmp(k->text, "verdict") ? &e->verdict
                      : !strcmp(k->text, "reason") ? &e->reason : NULL;
        if (!slot)
            return mlk_yfail(err, name, k->loc, "expect: unknown key '%.64s' (expected cells, verdict, reason)",
                             k->text);
        int rc = mlk_yget_string(v, k->text, name, slot, err);
        if (rc)
            return rc;
    }
    if (!e->cells)
        return mlk_yfail(err, name, m->loc, "expect: an item needs cells: KEY=VALUE,... (the cells it covers)");
    mlk_error fe = {0};
    if (mlk_filter_check(e->cells, "expect.cells", &fe) || !*e->cells)
        return mlk_yfail(err, name, m->loc, "%s", *e->cells ? fe.msg : "expect.cells: empty");
    if (!e->verdict && !(e->verdict = strdup("leak")))
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    if (!known_verdict(e->verdict))
        return mlk_yfail(err, name, m->loc,
                         "expect: verdict '%.32s' is not a finding (expected leak, plateau, crashed, timeout, hung, "
                         "oom or error)", e->verdict);
    return MLK_OK;
}

int mlk_scn_expect(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err)
{
    char got[64];
    if (v->kind != MLK_YSEQ || v->n_items == 0 || v->n_items > MAX_EXPECT)
        return mlk_yfail(err, name, v->loc, "expect: expected a list of 1 to %d {cells: K=V, verdict: leak} items, "
                                            "got %s", MAX_EXPECT, mlk_ydescribe(v, got, sizeof got));
    mlk_expect *e = mlk_ycalloc((size_t)v->n_items, sizeof *e);
    if (!e)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < v->n_items; i++) {
        int rc = one(v->items[i], name, &e[i], err);
        if (rc) {
            mlk_scn_expect_free(e, v->n_items);
            return rc;
        }
    }
    s->expect = e;
    s->n_expect = v->n_items;
    return MLK_OK;
}

const mlk_expect *mlk_scenario_expected(const mlk_scenario *s, const char *label, const char *status)
{
    for (int i = 0; s && status && i < s->n_expect; i++)
        if (!strcmp(s->expect[i].verdict, status) && mlk_filter_match(s->expect[i].cells, label))
            return &s->expect[i];
    return NULL;
}
