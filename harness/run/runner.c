/* runner.c: a run from start to end: run record, cells, one worker per cell with samples streamed into the db,
 * verdicts and step statistics, progress, the final table, resume. It must never mark a cell finished before its
 * samples are committed, so a SIGKILL of memleak-run leaves only whole cells or cells to run again. */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db_stops.h"
#include "sequential.h"
#include "cellrun.h"
#include "db_resolution.h"
#include "keep.h"
#include "meta.h"
#include "run_lock.h"
#include "runner.h"
#include "table.h"
#include "text.h"
#include "tool_collect.h"
#include "series.h"
#include "verdict.h"



typedef struct {
    db_store *db;
    int64_t cell_id, seq;
    mlk_error *err;
    const mlk_run_opts *o;
    const mlk_plan *p;
    int k, n_run;          /* this cell's position among the cells run now */
    time_t started;
    int iters_per_cell;
    int done_cells;
    const char *label;     /* the cell running now */
    int cell_iters;        /* its iterations: warmup + iterations, or tool_iterations for a tool cell */
    time_t cell_started;
    mlk_cell_stream *stream; /* the cell's samples, folded for its verdict as they arrive */
    mlk_keep *keep;          /* which of them the store keeps */
    char duration_text[32];  /* duration:, for the progress line */
    bool by_duration;        /* this cell measures for duration_s (a tool cell counts its iterations) */
    /* iterations: auto (issue 23): the decisions so far, the measured iterations seen, when the first measured sample
     * was taken (worker's monotonic clock, -1 before), and why the parent stopped the cell (NULL: it did not). */
    mlk_seq decisions;
    int measured;
    int64_t measure_t0_ns;
    const char *stop_reason;
    int64_t run_id;
    const mlk_proc_id *me;   /* this process's claim on the run (run_lock.h) */
    time_t last_beat;
} run_ctx;

static int on_batch(void *arg, const mlk_sample *s, int n, const mlk_engine_metric *m, int n_metrics)
{
    run_ctx *x = arg;
    int64_t first = x->seq;
    int rc = db_samples_insert(x->db, x->cell_id, s, n, &x->seq, x->err);
    /* A sample's seq is its index in the cell, so a metric's sample index is its seq. */
    for (int i = 0; !rc && i < n_metrics; i++)
        rc = db_metric_insert(x->db, x->cell_id, m[i].sample, m[i].name, m[i].value, x->err);
    for (int i = 0; !rc && i < n; i++) {
        if (mlk_cell_stream_push(x->stream, &s[i]) || mlk_keep_note(x->keep, &s[i], first + i))
            rc = mlk_fail(x->err, MLK_E_NOMEM, "out of memory folding a cell's samples");
        if (s[i].phase == MLK_PHASE_MEASURE && x->measure_t0_ns < 0)
            x->measure_t0_ns = s[i].m.wall_ns;
        x->measured += s[i].phase == MLK_PHASE_MEASURE && s[i].step == MLK_STEP_ITERATION;
    }
    int n_drops = 0;
    const int64_t(*drops)[2] = rc ? NULL : mlk_keep_drops(x->keep, &n_drops);
    if (n_drops && !(rc = db_samples_drop(x->db, x->cell_id, drops, n_drops, x->err)))
        mlk_keep_drops_done(x->keep);
    return rc;
}

static void fmt_eta(char *buf, size_t len, double s)
{
    if (s < 0 || !isfinite(s))
        snprintf(buf, len, "?");
    else if (s < 90)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 5400)
        snprintf(buf, len, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else
        snprintf(buf, len, "%.1fh", s / 3600);
}

static void on_tick(void *arg, int iteration)
{
    run_ctx *x = arg;
    /* The claim's sign of life, for those who cannot check this process itself (run_lock.h); a failed write here
     * costs nothing now, and the next sample insert will fail the same way and stop the run. */
    if (difftime(time(NULL), x->last_beat) >= DB_RUN_BEAT_S) {
        mlk_error ignore = {0};
        db_run_beat(x->db, x->run_id, x->me, &ignore);
        x->last_beat = time(NULL);
    }
    if (x->o->quiet || !x->o->progress_tty)
        return;
    double elapsed = difftime(time(NULL), x->started);
    if (x->by_duration) {
        /* By duration: time is what is known; the iteration count is whatever fits. */
        double cell_el = difftime(time(NULL), x->cell_started), d = x->p->s->duration_s;
        double total_s = (double)x->n_run * d, done_s = (double)x->done_cells * d + (cell_el < d ? cell_el : d);
        char el[32], rem[32];
        fmt_eta(el, sizeof el, cell_el);
        fmt_eta(rem, sizeof rem, total_s - done_s);
        printf("\r\033[K[cell %d/%d] %.60s | iteration %d | %s of %s | run left %s", x->k + 1, x->n_run, x->label,
               iteration + 1, el, x->duration_text, rem);
        fflush(stdout);
        return;
    }
    /* The ETA assumes every cell as long as this one; a tool cell runs tool_iterations and no warmup. */
    double done = (double)x->done_cells * x->iters_per_cell + (iteration + 1);
    double total = (double)x->n_run * x->iters_per_cell;
    char eta[32];
    fmt_eta(eta, sizeof eta, done > 0 ? elapsed / done * (total - done) : -1);
    printf("\r\033[K[cell %d/%d] %.60s | iteration %d/%d | ETA %s", x->k + 1, x->n_run, x->label,
           iteration + 1, x->cell_iters, eta);
    fflush(stdout);
}

/* iterations: auto: the worker measured n iterations and waits. Stop when the judge has decided every series, or the
 * cell's measured time is past its budget. The judge failing (no memory) lets the worker go on: the end judges. */
static bool on_decide(void *arg, int n)
{
    run_ctx *x = arg;
    mlk_judgement j;
    if (mlk_judge_stream(x->p->s, x->stream, &j) != 0)
        return false;
    if (mlk_seq_point_stream(&x->decisions, &j, x->stream, n)) {
        x->stop_reason = "decided";
        return true;
    }
    const mlk_sample *last = mlk_cell_stream_last(x->stream);
    double budget_ns = x->p->s->auto_budget_s * 1e9;
    if (budget_ns > 0 && last && x->measure_t0_ns >= 0 && (double)(last->m.wall_ns - x->measure_t0_ns) >= budget_ns) {
        x->stop_reason = "budget";
        return true;
    }
    return false;
}

/* iterations: auto, once the cell is judged: the last decision (at its bound the cell was not stopped by the parent),
 * an undecided series made inconclusive, and the row of cell_stops. */
static int conclude_auto(run_ctx *x, mlk_judgement *j, mlk_error *err)
{
    const char *why = x->stop_reason;
    if (!why) /* ran to its bound: judge that point too */
        why = mlk_seq_point_stream(&x->decisions, j, x->stream, x->measured) ? "decided" : "max";
    if (strcmp(why, "decided"))
        mlk_seq_conclude(&x->decisions, j, x->measured, why);
    char undecided[160];
    mlk_seq_undecided(&x->decisions, j, undecided, sizeof undecided);
    return db_cell_stop_store(x->db, x->cell_id, x->measured, why, x->decisions.points, undecided, err);
}

static const char *end_status(const mlk_cellrun *r, const mlk_judgement *j)
{
    switch (r->end) {
    case MLK_END_DONE: return mlk_verdict_name(j->verdict);
    case MLK_END_OOM: return "oom";
    case MLK_END_CRASHED: return "crashed";
    case MLK_END_TIMEOUT: return "timeout";
    case MLK_END_HUNG: return "hung";
    default: return "error";
    }
}

static void describe(const mlk_cellrun *r, const mlk_judgement *j, double timeout_s, char *out, size_t len)
{
    int last = r->n_total ? r->last.iteration : -1;
    switch (r->end) {
    case MLK_END_DONE: snprintf(out, len, "%.590s", j->detail); break;
    case MLK_END_CRASHED:
        snprintf(out, len, "crashed(%s) in iteration %d%s%.400s", sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?",
                 last, r->error[0] ? ": " : "", r->error);
        break;
    case MLK_END_TIMEOUT: snprintf(out, len, "killed after timeout_s=%g in iteration %d", timeout_s, last); break;
    case MLK_END_HUNG:
        snprintf(out, len, "hung: no sample for %.0f s (stall_s) after %s of iteration %d; killed", r->stalled_s,
                 r->n_total ? mlk_step_name(r->last.step) : "start", last);
        break;
    case MLK_END_OOM: snprintf(out, len, "out of memory in iteration %d%s%.400s", last, r->error[0] ? ": " : "", r->error); break;
    default:
        snprintf(out, len, "%s%s%.400s (exit %d)", r->error_step, r->error_step[0] ? ": " : "",
                 r->error[0] ? r->error : "worker failed", r->exit_code);
    }
}

/* Every judged series' verdict, for the report and compare. */
static int store_series(db_store *db, int64_t cell_id, const mlk_judgement *j, mlk_error *err)
{
    db_series_result out[MLK_SERIES_COUNT];
    int n = 0;
    for (int k = 0; k < MLK_SERIES_COUNT; k++) {
        const mlk_series_result *s = &j->s[k];
        if (!s->judged)
            continue;
        out[n++] = (db_series_result){.series = mlk_series_name(k), .unit = mlk_series_unit(k),
                                      .verdict = mlk_verdict_name(s->r.verdict), .detail = s->r.detail,
                                      .slope = s->r.slope, .late_slope = s->r.late_slope, .mk_p = s->r.mk_p,
                                      .growth = s->r.growth, .floor = s->floor, .quantum = s->quantum,
                                      .noise = s->r.noise, .n = s->r.n};
    }
    return db_series_results_store(db, cell_id, out, n, err);
}

/* Judge, store and remember one finished cell. tr: a tool cell's report (issue 6), which judges it instead of the
 * series; NULL for a plain cell. */
static int finish_cell(run_ctx *x, const mlk_cell *c, mlk_cellrun *r, const mlk_tool_result *tr, mlk_table_row *row,
                       mlk_error *err)
{
    mlk_judgement j;
    memset(&j, 0, sizeof j);
    bool judged = !tr && r->end == MLK_END_DONE;
    /* The judge fails only for want of memory: the parent's failure, not the cell's. The run stops (exit 3) and the
     * cell stays unfinished, so --resume judges it again. */
    if (judged && mlk_judge_stream(x->p->s, x->stream, &j) != 0)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory judging cell [%s]", c->label);
    if (judged && x->p->s->iterations_auto && !x->by_duration) {
        int arc = conclude_auto(x, &j, err);
        if (arc)
            return arc;
    }
    const mlk_detect_result *d = &j.s[j.deciding].r;
    const char *status = end_status(r, &j);
    char detail[600];
    describe(r, &j, x->p->s->timeout_s, detail, sizeof detail);
    if (tr && r->end == MLK_END_DONE) {
        status = tr->have ? tr->status : "error";
        snprintf(detail, sizeof detail, "%.590s", tr->detail);
    } else if (tr && tr->detail[0]) {
        size_t used = strlen(detail);
        snprintf(detail + used, sizeof detail - used, "; %.590s", tr->detail);
    }
    if (tr)
        snprintf(row->tool, sizeof row->tool, "%s", tr->table);
    row->n_steps = mlk_cell_stream_step_stats(x->stream, row->steps);
    int rc = row->n_steps < 0 ? mlk_fail(err, MLK_E_NOMEM, "out of memory computing step statistics") : MLK_OK;
    if (rc)
        row->n_steps = 0;
    if (!rc)
        rc = db_step_stats_insert(x->db, x->cell_id, row->steps, row->n_steps, err);
    int64_t head, stride, tail_from, iters;
    if (!rc && mlk_keep_summary(x->keep, &head, &stride, &tail_from, &iters))
        rc = db_resolution_store(x->db, x->cell_id, head, stride, tail_from, iters, err);
    if (!rc && judged)
        rc = store_series(x->db, x->cell_id, &j, err);
    if (!rc && r->alloc_active[0])
        rc = db_cell_set_allocator(x->db, x->cell_id, r->alloc_active, r->alloc_lib, r->heap, err);
    db_cell_result res = {.status = status, .signal = r->signal, .exit_code = r->exit_code,
                          .metric = judged ? j.metric : NULL, .slope = judged ? d->slope : NAN,
                          .late_slope = judged ? d->late_slope : NAN, .mk_p = judged ? d->mk_p : NAN,
                          .growth = judged ? d->growth : NAN, .detail = detail,
                          .error = r->error[0] ? r->error : NULL};
    if (!rc)
        rc = db_cell_finish(x->db, x->cell_id, &res, err);
    row->cell = c;
    snprintf(row->status, sizeof row->status, "%s", status);
    if (r->end == MLK_END_CRASHED && sigabbrev_np(r->signal))
        snprintf(row->status, sizeof row->status, "crashed(SIG%s)", sigabbrev_np(r->signal));
    snprintf(row->detail, sizeof row->detail, "%s", detail);
    row->heap = r->heap;
    row->slope = judged ? d->slope : NAN;
    row->slope_counts = judged && strcmp(mlk_series_unit(j.deciding), "bytes");
    row->series_line[0] = '\0';
    if (judged && (j.verdict != MLK_VERDICT_PASS || j.heap_blind))
        snprintf(row->series_line, sizeof row->series_line, "      %.400s\n", j.detail);
    else if (!judged && !tr && detail[0]) /* a cell that ended early says why under its row, --quiet or not */
        snprintf(row->series_line, sizeof row->series_line, "      %.400s\n", detail);
    row->ran = true;
    return rc;
}

/* A verdict that fails the run, unless the scenario expects it of this cell (expect:, issue 22). */
static bool is_finding(const mlk_plan *p, int i, const char *status)
{
    return strcmp(status, "pass") && strcmp(status, "plateau") &&
           !mlk_scenario_expected(p->s, p->cells[i].label, status);
}

/* Start the run, or take up run `resume`, claimed for this process (and its shard): a second process on the same
 * cells is refused before it touches any of them. */
static int begin(const mlk_plan *p, db_store *db, const mlk_run_opts *o, const mlk_proc_id *me, int64_t resume,
                 int64_t *run_id, mlk_error *err)
{
    if (resume > 0) {
        *run_id = resume;
        int rc = db_run_claim(db, resume, me, o->shard_index, o->shard_count, false, err);
        if (!rc && (rc = db_run_reopen(db, resume, err)))
            db_run_release(db, resume, me, NULL);
        return rc;
    }
    mlk_meta meta;
    mlk_meta_collect(&meta, o->commit, o->branch);
    char uuid[40];
    if (o->run_key)
        snprintf(uuid, sizeof uuid, "%.39s", o->run_key);
    else
        mlk_random_uuid(uuid);
    /* Absolute: --resume parses the stored text under this name, and finds the models next to it from any folder. */
    char abs[PATH_MAX + 1], cwd[PATH_MAX];
    const char *spath = p->s->path;
    if (spath && spath[0] != '/' && getcwd(cwd, sizeof cwd) &&
        snprintf(abs, sizeof abs, "%s/%s", cwd, spath) < (int)sizeof abs)
        spath = abs;
    db_run_meta m = {.uuid = uuid, .scenario_name = p->s->name, .scenario_path = spath, .scenario_text = p->s->text,
                     .tool_version = MLK_VERSION, .argv = o->argv_text};
    mlk_meta_fill(&meta, &m);
    int rc = db_run_begin(db, &m, run_id, err);
    return rc ? rc : db_run_claim(db, *run_id, me, o->shard_index, o->shard_count, false, err);
}

int mlk_run_check_resume(const mlk_plan *p, db_store *db, int64_t run_id, mlk_error *err)
{
    int rc = MLK_OK;
    for (int i = 0; i < p->n_cells && !rc; i++) {
        const mlk_cell *c = &p->cells[i];
        const mlk_plan_model *m = &p->models[c->model];
        char *model = NULL, *hash = NULL;
        rc = db_cell_identity(db, run_id, i, &model, &hash, err);
        bool moved = model && strcmp(model, m->path);
        if (!rc && hash && m->hash && strcmp(hash, m->hash))
            rc = mlk_fail(err, MLK_E_USAGE, "--resume %lld: cell %d [%.80s]: the model is not the one the run "
                          "measured: %s hashes %s%s, the run's cells were measured on %s (hash %s): %s. Nothing was "
                          "run; start a new run for this model", (long long)run_id, i, c->label, m->path, m->hash,
                          m->hash_sampled ? " (sampled)" : "", model ? model : "?", hash,
                          moved ? "another file (the run was stored with a path relative to another folder, or the "
                                  "scenario's folder moved)"
                                : "the file or its external data changed since");
        free(model);
        free(hash);
    }
    return rc;
}

static bool in_shard(const mlk_run_opts *o, int idx)
{
    return (!o->only || o->only[idx]) && (o->shard_count <= 0 || idx % o->shard_count == o->shard_index);
}

int mlk_run(const mlk_plan *p, db_store *db, const mlk_run_opts *o, int64_t resume, int64_t *run_id, bool *finding,
            mlk_error *err)
{
    mlk_proc_id me;
    mlk_proc_self(&me);
    int rc = begin(p, db, o, &me, resume, run_id, err);
    if (rc)
        return rc;
    mlk_error ignore = {0};
    int64_t *ids = calloc((size_t)p->n_cells, sizeof *ids);
    bool *todo = calloc((size_t)p->n_cells, sizeof *todo);
    mlk_table_row *rows = calloc((size_t)p->n_cells, sizeof *rows);
    if (!ids || !todo || !rows) {
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
        goto out;
    }
    int n_run = 0;
    for (int i = 0; i < p->n_cells && !rc; i++) {
        const mlk_cell *c = &p->cells[i];
        char *status = NULL;
        rows[i].cell = c;
        rows[i].slope = NAN;
        if (!in_shard(o, i))
            continue;
        if (resume > 0 && !(rc = db_cell_lookup(db, *run_id, i, &ids[i], &status, err)) && ids[i] &&
            strcmp(status, "pending") && strcmp(status, "running")) {
            snprintf(rows[i].status, sizeof rows[i].status, "%s", status);
            snprintf(rows[i].detail, sizeof rows[i].detail, "finished before the resume");
            rows[i].slope = NAN;
            *finding |= is_finding(p, i, status);
        } else if (!rc) {
            db_cell_def def = {i, c->engine, p->models[c->model].path, p->models[c->model].hash, c->axes_json,
                               c->config_key,
                               c->allocator};
            if (!ids[i])
                rc = db_cell_insert(db, *run_id, &def, &ids[i], err);
            todo[i] = true;
            n_run++;
        }
        free(status);
    }
    run_ctx x = {.db = db, .err = err, .o = o, .p = p, .n_run = n_run, .started = time(NULL),
                 .iters_per_cell = p->s->warmup + p->s->iterations, .run_id = *run_id, .me = &me,
                 .last_beat = time(NULL)};
    fmt_eta(x.duration_text, sizeof x.duration_text, p->s->duration_s);
    for (int i = 0; i < p->n_cells && !rc && !mlk_run_interrupted; i++) {
        if (!todo[i])
            continue;
        const mlk_cell *c = &p->cells[i];
        x.cell_id = ids[i];
        x.seq = 0;
        x.label = c->label;
        if ((rc = db_cell_start(db, ids[i], err)))
            break;
        if (!o->quiet && !o->progress_tty)
            printf("cell %d/%d [%s]: running\n", x.k + 1, n_run, c->label), fflush(stdout);
        mlk_cellrun r;
        memset(&r, 0, sizeof r);
        /* Tool cells (issue 6): the tool writes its report into a folder of the cell's, read into the db here. */
        bool tooled = c->tool != MLK_TOOL_NONE;
        x.cell_iters = tooled ? p->s->tool_iterations : p->s->warmup + p->s->iterations;
        mlk_tool_run tool_run;
        mlk_tool_result tres;
        memset(&tres, 0, sizeof tres);
        if (tooled && (rc = mlk_tool_run_begin(p, c, &tool_run, err)))
            break;
        mlk_cellrun_opts co = {o->self_exe, o->heap_shim, tooled ? &tool_run : NULL, on_batch, on_tick, &x,
                               p->s->iterations_auto && !tooled && p->s->duration_s <= 0 ? on_decide : NULL};
        mlk_seq_init(&x.decisions);
        x.measured = 0;
        x.measure_t0_ns = -1;
        x.stop_reason = NULL;
        x.cell_started = time(NULL);
        x.by_duration = !tooled && p->s->duration_s > 0;
        x.stream = mlk_cell_stream_new();
        x.keep = mlk_keep_new(MLK_KEEP_HEAD, MLK_KEEP_TAIL, MLK_KEEP_MID);
        if (!x.stream || !x.keep)
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory starting a cell");
        if (!rc)
            rc = mlk_cellrun_exec(p, c, &co, &r, err);
        if (!rc && tooled && r.end != MLK_END_INTERRUPTED)
            rc = mlk_tool_collect(db, ids[i], p, c, &tool_run, o->self_exe, r.end == MLK_END_DONE, &tres, err);
        if (!rc && r.end != MLK_END_INTERRUPTED)
            rc = finish_cell(&x, c, &r, tooled ? &tres : NULL, &rows[i], err);
        if (!rc && r.end != MLK_END_INTERRUPTED) /* where it grew (issue 9): the db and the table's rows */
            rc = mlk_cellrun_sites_finish(db, ids[i], &r, &rows[i], err);
        if (tooled)
            mlk_tool_run_end(&tool_run, getenv("MLK_KEEP_TOOL_OUTPUT") ? "MLK_KEEP_TOOL_OUTPUT is set"
                                        : r.end == MLK_END_DONE && !tres.have ? "its report could not be read" : NULL);
        mlk_cellrun_free(&r);
        mlk_cell_stream_free(x.stream);
        mlk_keep_free(x.keep);
        x.stream = NULL;
        x.keep = NULL;
        if (rc || r.end == MLK_END_INTERRUPTED)
            break;
        *finding |= is_finding(p, i, rows[i].status);
        if (!o->quiet) { /* the detail may quote an engine's message: names of the model's nodes, made safe */
            fputs(o->progress_tty ? "\r\033[K" : "", stdout);
            mlk_fprintf_safe(stdout, "cell %d/%d [%s]: %s: %s\n", x.k + 1, n_run, c->label, rows[i].status,
                             rows[i].detail);
            fflush(stdout);
        }
        x.k++;
        x.done_cells++;
    }
    const char *final = rc ? "failed" : mlk_run_interrupted ? "interrupted" : "done";
    db_run_finish(db, *run_id, final, rc ? &ignore : err);
    if (!rc && !mlk_run_interrupted)
        mlk_table_print(stdout, p, rows, p->n_cells);
out:
    db_run_release(db, *run_id, &me, rc ? &ignore : err);
    free(ids);
    free(todo);
    free(rows);
    return rc;
}
