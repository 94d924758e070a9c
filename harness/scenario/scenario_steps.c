/* scenario_steps.c: pipeline steps: their names, step lists in a scenario, and the check that setup, pipeline
 * and teardown form a runnable sequence. It must never accept a sequence the runner could not execute. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Steps
 * ---------------------------------------------------------------------------------------------- */

int mlk_scn_steps(const mlk_ynode *n, const char *what, const char *name, mlk_step **out, mlk_loc **locs, int *n_out,
                  mlk_error *err)
{
    char d[64];
    if (n->kind != MLK_YSEQ)
        return mlk_yfail(err, name, n->loc, "%s: expected a list of steps (%s), got %s", what, mlk_step_names(),
                         mlk_ydescribe(n, d, sizeof d));
    if (n->n_items > MLK_MAX_STEPS)
        return mlk_yfail(err, name, n->loc, "%s: %d steps, more than the %d a list may hold", what, n->n_items,
                         MLK_MAX_STEPS);
    mlk_step *steps = mlk_ycalloc((size_t)n->n_items, sizeof *steps);
    mlk_loc *l = mlk_ycalloc((size_t)n->n_items, sizeof *l);
    if (!steps || !l) {
        free(steps);
        free(l);
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    }
    for (int i = 0; i < n->n_items; i++) {
        const mlk_ynode *it = n->items[i];
        int s = it->kind == MLK_YSCALAR ? mlk_step_from_name(it->text) : -1;
        if (s < 0) {
            free(steps);
            free(l);
            return mlk_yfail(err, name, it->loc, "%s: unknown step %s (expected one of: %s)", what,
                             mlk_ydescribe(it, d, sizeof d), mlk_step_names());
        }
        steps[i] = (mlk_step)s;
        l[i] = it->loc;
    }
    *out = steps;
    *locs = l;
    *n_out = n->n_items;
    return MLK_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The pipeline as a state machine: what is alive (engine, model, compiled, request) before each step.
 * ---------------------------------------------------------------------------------------------- */

enum { HAS_ENGINE = 1, HAS_MODEL = 2, HAS_COMPILED = 4, HAS_REQUEST = 8 };

/* What each step needs alive, what must not be alive, and what it creates or releases. */
static const struct {
    unsigned need, refuse, add, drop;
    const char *missing, *present; /* why it cannot run: a needed thing is missing, a refused one present */
} rules[MLK_STEP_COUNT] = {
    [MLK_STEP_LOAD_ENGINE] = {0, HAS_ENGINE, HAS_ENGINE, 0, NULL, "the engine is already loaded"},
    [MLK_STEP_READ_MODEL] = {HAS_ENGINE, HAS_MODEL, HAS_MODEL, 0, "expected load_engine before it",
                             "the model is already read (expected release_model before reading it again)"},
    [MLK_STEP_COMPILE_MODEL] = {HAS_MODEL, HAS_COMPILED, HAS_COMPILED, 0, "expected read_model before it",
                                "a compiled model is alive (expected release_compiled before compiling again)"},
    [MLK_STEP_CREATE_REQUEST] = {HAS_COMPILED, HAS_REQUEST, HAS_REQUEST, 0, "expected compile_model before it",
                                 "a request is alive (expected release_request before creating another)"},
    [MLK_STEP_INFER] = {HAS_REQUEST, 0, 0, 0, "expected create_request before it", NULL},
    [MLK_STEP_RELEASE_REQUEST] = {HAS_REQUEST, 0, 0, HAS_REQUEST,
                                  "no request is alive (expected create_request before it)", NULL},
    [MLK_STEP_RELEASE_COMPILED] = {HAS_COMPILED, HAS_REQUEST, 0, HAS_COMPILED,
                                   "no compiled model is alive (expected compile_model before it)",
                                   "a request is alive (expected release_request before it)"},
    /* The engine ABI lets a model go before what was compiled from it. */
    [MLK_STEP_RELEASE_MODEL] = {HAS_MODEL, 0, 0, HAS_MODEL, "no model is alive (expected read_model before it)", NULL},
    [MLK_STEP_UNLOAD_ENGINE] = {HAS_ENGINE, HAS_MODEL | HAS_COMPILED | HAS_REQUEST, 0, HAS_ENGINE,
                                "the engine is not loaded (expected load_engine before it)",
                                "the model, compiled model and request must be released before it"},
};

/* Apply s to *state, or say why it cannot run there (NULL when it can). */
static const char *step_apply(mlk_step s, unsigned *state)
{
    if ((*state & rules[s].need) != rules[s].need)
        return rules[s].missing;
    if (*state & rules[s].refuse)
        return rules[s].present;
    *state = (*state | rules[s].add) & ~rules[s].drop;
    return NULL;
}

/* What the difference between two states asks for, e.g. "release_request, release_compiled". */
static void state_diff(unsigned have, unsigned want, char *buf, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *add, *drop;
    } parts[] = {{HAS_REQUEST, "create_request", "release_request"},
                 {HAS_COMPILED, "compile_model", "release_compiled"},
                 {HAS_MODEL, "read_model", "release_model"},
                 {HAS_ENGINE, "load_engine", "unload_engine"}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if ((have ^ want) & parts[i].bit) {
            size_t len = strlen(buf);
            snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
                     (have & parts[i].bit) ? parts[i].drop : parts[i].add);
        }
    }
}

static int run_list(const mlk_step *steps, const mlk_loc *locs, int n, mlk_loc list_loc, const char *what,
                    bool defaulted, unsigned *state, const char *name, mlk_error *err)
{
    for (int i = 0; i < n; i++) {
        const char *why = step_apply(steps[i], state);
        if (why)
            return mlk_yfail(err, name, defaulted ? list_loc : locs[i], "%s step %s%s: %s", what, mlk_step_name(steps[i]),
                             defaulted ? " (the default; write the list to change it)" : "", why);
    }
    return MLK_OK;
}

int mlk_scn_check_pipeline(const mlk_scenario *s, const scn_locs *L, const char *name, mlk_error *err)
{
    unsigned state = 0, before;
    char need[128];
    int rc = run_list(s->setup, L->setup, s->n_setup, L->setup_list, "setup", L->setup_default, &state, name, err);
    if (rc)
        return rc;
    before = state;
    if ((rc =
             run_list(s->pipeline, L->pipeline, s->n_pipeline, L->pipeline_list, "pipeline", false, &state, name, err)))
        return rc;
    if (state != before) {
        state_diff(state, before, need, sizeof need);
        return mlk_yfail(err, name, L->pipeline_list,
                         "pipeline: expected it to leave alive what setup left alive, as it repeats (add: %s)", need);
    }
    if ((rc = run_list(s->teardown, L->teardown, s->n_teardown, L->teardown_list, "teardown", L->teardown_default,
                       &state, name, err)))
        return rc;
    if (state) {
        state_diff(state, 0, need, sizeof need);
        return mlk_yfail(err, name, L->teardown_list, "teardown: expected it to release everything (add: %s)", need);
    }
    return MLK_OK;
}
