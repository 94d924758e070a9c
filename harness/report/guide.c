/* guide.c: the guide report's rows: which cells of the run test each recommendation of OpenVINO's memory guide
 * (pairs of cells whose settings differ in that one knob, or single cells), and each row's verdict computed from the
 * measured figures against guide.h's thresholds. It must never pick cells by their axis names or values as written:
 * it compares the settings each cell got (mlk_scenario_cell_value), so any scenario that varies a knob is read. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "guide_internal.h"

const char *const mlk_guide_claims[MLK_GUIDE_N_ROWS] = {
#define MLK_X_(id, key, claim) claim,
    MLK_GUIDE_ROWS(MLK_X_)
#undef MLK_X_
};
const char *const mlk_guide_keys[MLK_GUIDE_N_ROWS] = {
#define MLK_X_(id, key, claim) key,
    MLK_GUIDE_ROWS(MLK_X_)
#undef MLK_X_
};

const char *mlk_guide_verdict_name(guide_verdict v)
{
    static const char *const names[] = {"not tested", "holds", "holds partly", "does not hold here"};
    return v >= GV_UNTESTED && v <= GV_NOT ? names[v] : "?";
}

/* ---- settings ---- */

/* The value of key in a cell, normalised: the harness's defaults filled in, booleans as on/off. */
static void setting(const mlk_scenario *s, const guide_fig *f, const char *key, char *out, size_t len)
{
    const char *v = !strcmp(key, "allocator") ? f->allocator
                    : !strcmp(key, "engine")  ? f->c->engine
                    : !strcmp(key, "model")   ? f->c->model
                                              : mlk_scenario_cell_value(s, f->c->idx, f->c->engine, key);
    if (!v && !strcmp(key, "mmap"))
        v = "on"; /* on by default in OpenVINO, ONNX Runtime and ref alike */
    if (!v && !strcmp(key, "malloc_trim"))
        v = "off";
    int b = v ? mlk_scenario_bool(v) : -1;
    snprintf(out, len, "%s", b == 1 ? "on" : b == 0 ? "off" : v ? v : "");
}

static bool in_keys(const char *const *keys, int n, const char *k)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(keys[i], k))
            return true;
    return false;
}

/* Every setting some cell of the scenario may get: engine options, harness settings, engine and model. */
static int setting_keys(const mlk_scenario *s, const char **keys, int cap)
{
    static const char *const fixed[] = {"engine", "model", "allocator", "malloc_trim", "glibc_tunables",
                                        "malloc_conf", "allocator_env", "mmap"};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        keys[n++] = fixed[i];
    for (int i = 0; i < s->n_engine_options && n < cap; i++)
        if (!in_keys(keys, n, s->engine_options[i].key))
            keys[n++] = s->engine_options[i].key;
    for (int a = 0; a < s->n_axes && n < cap; a++) {
        const mlk_axis *ax = &s->axes[a];
        if (!ax->variants) {
            if (!in_keys(keys, n, ax->name))
                keys[n++] = ax->name;
            continue;
        }
        for (int j = 0; j < ax->n_values && ax->variants[j].options; j++)
            for (int o = 0; o < ax->variants[j].n_options && n < cap; o++)
                if (!in_keys(keys, n, ax->variants[j].options[o].key))
                    keys[n++] = ax->variants[j].options[o].key;
    }
    return n;
}

/* Whether cells a and b get the same settings but for key. */
static bool differ_only_in(const mlk_guide *g, const char *const *keys, int n_keys, int a, int b, const char *key)
{
    char va[512], vb[512];
    for (int k = 0; k < n_keys; k++) {
        const char *name = strchr(keys[k], '.') && strncmp(keys[k], "dim.", 4) ? strchr(keys[k], '.') + 1 : keys[k];
        setting(g->s, &g->figs[a], name, va, sizeof va);
        setting(g->s, &g->figs[b], name, vb, sizeof vb);
        if (strcmp(name, key) && strcmp(va, vb))
            return false;
    }
    setting(g->s, &g->figs[a], key, va, sizeof va);
    setting(g->s, &g->figs[b], key, vb, sizeof vb);
    return strcmp(va, vb) != 0;
}

/* ---- what each row compares ---- */

/* Whether cell t holds the recommended value of the row's knob and b the value it is compared with. */
static bool is_pair(const mlk_guide *g, int row, int t, int b)
{
    char vt[512], vb[512];
    const char *key = mlk_guide_keys[row];
    setting(g->s, &g->figs[t], key, vt, sizeof vt);
    setting(g->s, &g->figs[b], key, vb, sizeof vb);
    switch (row) {
    case MLK_GUIDE_MMAP:
    case MLK_GUIDE_TRIM:
        return !strcmp(vt, "on") && !strcmp(vb, "off");
    case MLK_GUIDE_THREADS:
        return *vt && *vb && atof(vt) > 0 && atof(vb) > atof(vt);
    case MLK_GUIDE_TRIM_THRESHOLD:
        return strstr(vt, "trim_threshold") && !strstr(vb, "trim_threshold") && !strstr(vt, "arena_max") && !*vb;
    case MLK_GUIDE_ARENA_MAX:
        return strstr(vt, "arena_max") && !strstr(vt, "trim_threshold") && !*vb;
    case MLK_GUIDE_JEMALLOC:
        return !strcmp(vt, "jemalloc") && !strcmp(vb, "glibc");
    default:
        return false;
    }
}

static bool lower(double test, double base, double abs_min)
{
    return !isnan(test) && !isnan(base) && base - test >= fmax(MLK_GUIDE_LOWER_REL * base, abs_min);
}

static guide_verdict of_two(bool a, bool b) { return a && b ? GV_HOLDS : a || b ? GV_PARTLY : GV_NOT; }

/* One pair's verdict on its row's two memory figures, and why in a few words. */
static void judge_pair(const mlk_guide *g, int row, guide_pair *p)
{
    const guide_fig *t = &g->figs[p->test], *b = &g->figs[p->base];
    bool x, y;
    const char *nx, *ny;
    switch (row) {
    case MLK_GUIDE_MMAP:
        x = lower(t->compile_hwm_kib, b->compile_hwm_kib, MLK_GUIDE_LOWER_ABS_KIB), nx = "compile VmHWM";
        y = lower(t->anon_kib, b->anon_kib, MLK_GUIDE_LOWER_ABS_KIB), ny = "RssAnon after compile";
        break;
    case MLK_GUIDE_THREADS:
        x = lower(t->compile_hwm_kib, b->compile_hwm_kib, MLK_GUIDE_LOWER_ABS_KIB), nx = "compile VmHWM";
        y = lower(t->compile_req_bytes, b->compile_req_bytes, MLK_GUIDE_LOWER_ABS_KIB * 1024.0), ny = "requested peak";
        break;
    default: /* the allocator rows: the level VmRSS after compile settles at, and that it settles no later */
        x = lower(t->rss_stable_kib, b->rss_stable_kib, MLK_GUIDE_LOWER_ABS_KIB), nx = "VmRSS after compile";
        y = t->stable_at > 0 && (b->stable_at == 0 || t->stable_at <= b->stable_at), ny = "stable no later";
        break;
    }
    p->v = of_two(x, y);
    snprintf(p->why, sizeof p->why, "%s %s, %s %s", nx, x ? "lower" : "not lower", ny,
             y ? (row >= MLK_GUIDE_TRIM ? "yes" : "lower") : (row >= MLK_GUIDE_TRIM ? "no" : "not lower"));
}

static guide_verdict combine(const guide_verdict *v, int n)
{
    int holds = 0, nots = 0;
    for (int i = 0; i < n; i++) {
        holds += v[i] == GV_HOLDS;
        nots += v[i] == GV_NOT;
    }
    return !n ? GV_UNTESTED : holds == n ? GV_HOLDS : nots == n ? GV_NOT : GV_PARTLY;
}

/* Cells that ran to the end: a crashed, timed out or failed cell measured nothing to compare. */
static bool measured(const guide_fig *f)
{
    const char *st = f->c->status;
    return st && (!strcmp(st, "pass") || !strcmp(st, "leak") || !strcmp(st, "plateau"));
}

/* A cell that never started (pending) or whose attempt was killed (running) is in no pair: a 100,000-cell run stopped
 * early pairs only the cells that ran, not every cell with every other. */
static bool ran(const guide_fig *f)
{
    const char *st = f->c->status;
    return st && strcmp(st, "pending") && strcmp(st, "running");
}

static void pair_row(mlk_guide *g, int row, const char *const *keys, int n_keys)
{
    guide_row *r = &g->rows[row];
    guide_verdict v[32];
    for (int t = 0; t < g->n_figs; t++)
        for (int b = 0; ran(&g->figs[t]) && b < g->n_figs && r->n_pairs < 32; b++) {
            if (t == b || !ran(&g->figs[b]) || !differ_only_in(g, keys, n_keys, t, b, mlk_guide_keys[row]) || !is_pair(g, row, t, b))
                continue;
            if (!measured(&g->figs[t]) || !measured(&g->figs[b])) {
                const guide_fig *f = measured(&g->figs[t]) ? &g->figs[b] : &g->figs[t];
                const char *why = f->c->detail && *f->c->detail ? f->c->detail : f->c->error ? f->c->error : "";
                size_t n = strlen(why);
                if (!r->unmeasured[0]) /* nested exceptions name the cause last: keep the end of a long message */
                    snprintf(r->unmeasured, sizeof r->unmeasured, "%s %s: %s%s", f->label,
                             f->c->status ? f->c->status : "unfinished", n > 200 ? "..." : "",
                             n > 200 ? why + n - 200 : why);
                continue;
            }
            guide_pair *p = &r->pairs[r->n_pairs];
            p->test = t;
            p->base = b;
            judge_pair(g, row, p);
            v[r->n_pairs++] = p->v;
        }
    r->v = combine(v, r->n_pairs);
    if (r->n_pairs)
        snprintf(r->verdict_text, sizeof r->verdict_text, "%s (%s)", mlk_guide_verdict_name(r->v), r->pairs[0].why);
}

/* ---- rows judged per cell ---- */

static bool glibc_plain(const mlk_guide *g, const guide_fig *f)
{
    char trim[16], tun[512];
    setting(g->s, f, "malloc_trim", trim, sizeof trim);
    setting(g->s, f, "glibc_tunables", tun, sizeof tun);
    return !strcmp(f->allocator, "glibc") && strcmp(trim, "on") && !*tun;
}

static void cell_rows(mlk_guide *g)
{
    guide_row *peak = &g->rows[MLK_GUIDE_COMPILE_PEAK], *plat = &g->rows[MLK_GUIDE_PLATEAU];
    int short_loops = 0;
    for (int i = 0; i < g->n_figs; i++) {
        const guide_fig *f = &g->figs[i];
        if (!isnan(f->compile_rise_kib) && !isnan(f->other_peak_kib) && peak->n_cells < 64) {
            peak->cells[peak->n_cells] = i;
            peak->cell_v[peak->n_cells++] = f->compile_rise_kib >= f->other_peak_kib ? GV_HOLDS : GV_NOT;
        }
        if (glibc_plain(g, f) && f->n_compiles >= 4 && f->judged && plat->n_cells < 64) {
            bool leak = f->mem.verdict == MLK_VERDICT_LEAK;
            bool grew = f->stable_at > 0 && f->rss_stable_kib - f->rss_first_kib >= MLK_GUIDE_LOWER_ABS_KIB;
            plat->cells[plat->n_cells] = i;
            plat->cell_v[plat->n_cells++] = leak || !f->stable_at ? GV_NOT : grew ? GV_HOLDS : GV_PARTLY;
            short_loops += f->n_compiles < MLK_GUIDE_MIN_RECOMPILES;
        }
    }
    peak->v = combine(peak->cell_v, peak->n_cells);
    plat->v = combine(plat->cell_v, plat->n_cells);
    int held = 0;
    for (int i = 0; i < peak->n_cells; i++)
        held += peak->cell_v[i] == GV_HOLDS;
    if (peak->n_cells)
        snprintf(peak->verdict_text, sizeof peak->verdict_text, "%s (compile needed the most in %d of %d cells)",
                 mlk_guide_verdict_name(peak->v), held, peak->n_cells);
    if (plat->n_cells) {
        const guide_fig *f = &g->figs[plat->cells[0]];
        snprintf(plat->verdict_text, sizeof plat->verdict_text, "%s (%s; memleak: %s%s)",
                 mlk_guide_verdict_name(plat->v),
                 f->stable_at ? (f->rss_stable_kib - f->rss_first_kib >= MLK_GUIDE_LOWER_ABS_KIB
                                     ? "grows, then stable"
                                     : "stable from the start, no growth to tame")
                              : "no stable point",
                 mlk_verdict_name(f->mem.verdict), short_loops ? "; fewer than 200 recompilations" : "");
    }
}

/* The remedies' first-inference latency against the cells they are compared with. */
static void latency_row(mlk_guide *g)
{
    guide_row *r = &g->rows[MLK_GUIDE_LATENCY];
    static const int remedies[] = {MLK_GUIDE_TRIM, MLK_GUIDE_TRIM_THRESHOLD, MLK_GUIDE_ARENA_MAX, MLK_GUIDE_JEMALLOC};
    guide_verdict v[4];
    int n = 0, cost = 0;
    for (size_t i = 0; i < sizeof remedies / sizeof *remedies; i++) {
        const guide_row *x = &g->rows[remedies[i]];
        if (!x->n_pairs)
            continue;
        const guide_fig *t = &g->figs[x->pairs[0].test], *b = &g->figs[x->pairs[0].base];
        /* Cells run one after another on a shared machine: the first inference is judged against the cell's own
         * steady inferences, so a load that slows a whole cell does not read as the remedy's cost. */
        double dr = t->infer_first_ratio - b->infer_first_ratio;
        bool costs = !isnan(dr) && dr >= MLK_GUIDE_LATENCY_REL * b->infer_first_ratio &&
                     t->infer_first_ms - t->infer_steady_ms >= MLK_GUIDE_LATENCY_ABS_MS;
        cost += costs;
        v[n++] = costs ? GV_HOLDS : GV_NOT;
        if (r->n_pairs < 32)
            r->pairs[r->n_pairs++] = x->pairs[0];
    }
    r->v = combine(v, n);
    if (n)
        snprintf(r->verdict_text, sizeof r->verdict_text, "%s (%d of %d remedies slow the first inference, against steady, by >= 10%%)",
                 mlk_guide_verdict_name(r->v), cost, n);
}

int mlk_guide_build(const db_guide_run *run, mlk_guide **out, mlk_error *err)
{
    mlk_guide *g = calloc(1, sizeof *g);
    if (!g)
        return mlk_fail(err, MLK_E_NOMEM, "guide: out of memory");
    g->run = run;
    const char *text = run->scenario_text ? run->scenario_text : "";
    int rc = mlk_scenario_parse(text, strlen(text), run->scenario_name ? run->scenario_name : "scenario", &g->s, err);
    if (rc) {
        mlk_fail_prefix(err, "guide: the run's stored scenario: ");
        goto fail;
    }
    if (!(g->figs = calloc((size_t)(run->n_cells ? run->n_cells : 1), sizeof *g->figs))) {
        rc = mlk_fail(err, MLK_E_NOMEM, "guide: out of memory");
        goto fail;
    }
    for (int i = 0; i < run->n_cells; i++, g->n_figs++)
        if ((rc = mlk_guide_fig(g->s, &run->cells[i], &g->figs[i], err)))
            goto fail;
    const char *keys[256];
    int n_keys = setting_keys(g->s, keys, 256);
    for (int row = 0; row < MLK_GUIDE_N_ROWS; row++)
        if (mlk_guide_keys[row])
            pair_row(g, row, keys, n_keys);
    cell_rows(g);
    latency_row(g);
    *out = g;
    return MLK_OK;
fail:
    mlk_guide_free(g);
    return rc;
}

void mlk_guide_free(mlk_guide *g)
{
    if (!g)
        return;
    mlk_scenario_free(g->s);
    free(g->figs);
    free(g);
}

int mlk_guide_n_tested(const mlk_guide *g)
{
    int n = 0;
    for (int row = 0; g && row < MLK_GUIDE_N_ROWS; row++)
        n += mlk_guide_keys[row] && g->rows[row].v != GV_UNTESTED;
    return n;
}
