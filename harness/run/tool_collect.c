/* tool_collect.c: a tool cell after its worker ended: its tool's output read (memcheck XML, LeakSanitizer logs,
 * massif's file), stored, and judged, with the lines the final table shows. It must never judge a tool cell by RSS. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellrun.h"
#include "fmt.h"
#include "store_tools.h"
#include "text.h"
#include "tool_collect.h"

/* Sites and records beyond these are stored (sites: up to MAX_SITES) but not listed. */
#define MAX_SITES 20
#define TABLE_RECORDS 5
#define TABLE_FRAMES 4

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (used < len)
        vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* ---- memcheck and lsan ---------------------------------------------------------------------------------- */

static int cmp_leak(const void *a, const void *b)
{
    const mlk_leak *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->total_bytes < y->total_bytes ? 1 : x->total_bytes > y->total_bytes ? -1 : 0;
}

static void leaks_table(const mlk_leak_report *r, char *out, size_t len)
{
    mlk_leak *sorted = r->n ? malloc(sizeof *sorted * (size_t)r->n) : NULL;
    if (!sorted)
        return;
    memcpy(sorted, r->leaks, sizeof *sorted * (size_t)r->n);
    qsort(sorted, (size_t)r->n, sizeof *sorted, cmp_leak);
    static const char *const kind_text[] = {"definitely lost", "indirectly lost", "possibly lost", "still reachable"};
    for (int i = 0; i < r->n && i < TABLE_RECORDS; i++) {
        const mlk_leak *l = &sorted[i];
        char head[160], stack[1200];
        snprintf(head, sizeof head, "%s %lld B in %lld block%s", kind_text[l->kind], (long long)l->bytes,
                 (long long)l->blocks, l->blocks == 1 ? "" : "s");
        mlk_tool_stack_str(l->frames, l->n_frames, TABLE_FRAMES, stack, sizeof stack);
        append(out, len, "      %s at %s\n", head, stack);
    }
    if (r->n > TABLE_RECORDS) {
        char more[64];
        snprintf(more, sizeof more, "%d", r->n - TABLE_RECORDS);
        append(out, len, "      ... and %s more record%s (memleak-run report lists them all)\n", more,
               r->n - TABLE_RECORDS == 1 ? "" : "s");
    }
    free(sorted);
}

static void judge_leaks(const char *tool, const mlk_leak_report *r, bool finished, mlk_tool_result *res)
{
    int64_t bytes[MLK_LEAK_KIND_COUNT], blocks[MLK_LEAK_KIND_COUNT], engine = 0;
    mlk_leaks_sum(r, bytes, blocks, &engine);
    const char *verdict = !finished || r->complete ? engine > 0 ? "leak" : "pass" : "error";
    snprintf(res->status, sizeof res->status, "%s", verdict);
    int n = snprintf(res->detail, sizeof res->detail,
                     "%s: definitely lost %lld B in %lld blocks (%lld B by the engine), indirectly lost %lld B", tool,
                     (long long)bytes[0], (long long)blocks[0], (long long)engine, (long long)bytes[1]);
    /* LeakSanitizer reports neither kind: not measured, so not printed as 0 */
    if (strcmp(tool, "lsan") && n < (int)sizeof res->detail)
        n += snprintf(res->detail + n, sizeof res->detail - (size_t)n, ", possibly lost %lld B, still reachable %lld B",
                      (long long)bytes[2], (long long)bytes[3]);
    if (r->n_other_errors && n < (int)sizeof res->detail)
        n += snprintf(res->detail + n, sizeof res->detail - (size_t)n, "; %lld other error%s, the first: %.200s",
                      (long long)r->n_other_errors, r->n_other_errors == 1 ? "" : "s", r->first_error);
    if (!r->complete && n < (int)sizeof res->detail)
        n += snprintf(res->detail + n, sizeof res->detail - (size_t)n, "; its report stops early");
    if (n < (int)sizeof res->detail)
        snprintf(res->detail + n, sizeof res->detail - (size_t)n, ": %s", verdict);
    snprintf(res->table, sizeof res->table, "      %s\n", res->detail);
    leaks_table(r, res->table, sizeof res->table);
}

static int collect_leaks(db_store *db, int64_t cell_id, const mlk_cell *c, const mlk_tool_run *t,
                         const char *const *harness, bool finished, mlk_tool_result *res, mlk_error *err)
{
    mlk_leak_report r;
    mlk_error perr = {0};
    const char *tool = mlk_tool_name(c->tool);
    const char *slash = strrchr(t->out, '/');
    int rc = c->tool == MLK_TOOL_MEMCHECK ? mlk_memcheck_parse(t->out, &r, &perr)
                                          : mlk_lsan_parse_logs(t->dir, slash ? slash + 1 : t->out, &r, &perr);
    if (rc) {
        snprintf(res->detail, sizeof res->detail, "%s: its report could not be read: %.600s", tool, perr.msg);
        mlk_leak_report_free(&r);
        return db_tool_clear(db, cell_id, err);
    }
    mlk_leaks_attribute(&r, harness);
    res->have = true;
    judge_leaks(tool, &r, finished, res);
    rc = db_leaks_store(db, cell_id, tool, &r, err);
    mlk_leak_report_free(&r);
    return rc;
}

/* ---- massif --------------------------------------------------------------------------------------------- */

static int collect_massif(db_store *db, int64_t cell_id, const mlk_tool_run *t, mlk_tool_result *res, mlk_error *err)
{
    mlk_heap_peak pk;
    mlk_error perr = {0};
    if (mlk_massif_parse(t->out, &pk, &perr)) {
        snprintf(res->detail, sizeof res->detail, "massif: its output could not be read: %.600s", perr.msg);
        mlk_heap_peak_free(&pk);
        return db_tool_clear(db, cell_id, err);
    }
    res->have = true;
    snprintf(res->status, sizeof res->status, "pass");
    if (!pk.found) {
        snprintf(res->detail, sizeof res->detail, "massif: no peak snapshot in %d snapshots (nothing allocated?)",
                 pk.n_snapshots);
    } else {
        snprintf(res->detail, sizeof res->detail,
                 "massif: peak heap %lld B (%lld B asked for + %lld B allocator overhead) at snapshot %d of %d",
                 (long long)(pk.heap_bytes + pk.extra_bytes), (long long)pk.heap_bytes, (long long)pk.extra_bytes,
                 pk.snapshot, pk.n_snapshots);
    }
    snprintf(res->table, sizeof res->table, "      %s\n", res->detail);
    for (int i = 0; i < pk.n_sites && i < 3; i++) {
        char bytes[32], stack[1200];
        mlk_fmt_bytes(bytes, sizeof bytes, (double)pk.sites[i].bytes, false);
        mlk_tool_stack_str(pk.sites[i].frames, pk.sites[i].n_frames, TABLE_FRAMES, stack, sizeof stack);
        append(res->table, sizeof res->table, "      %s at %s\n", bytes, stack);
    }
    int rc = db_heap_peak_store(db, cell_id, &pk, MAX_SITES, err);
    mlk_heap_peak_free(&pk);
    return rc;
}

int mlk_tool_collect(db_store *db, int64_t cell_id, const mlk_plan *p, const mlk_cell *c, const mlk_tool_run *t,
                     const char *self_exe, bool finished, mlk_tool_result *res, mlk_error *err)
{
    memset(res, 0, sizeof *res);
    const char *harness[] = {self_exe, p->tools ? p->tools->lsan_worker : NULL, "memleak-run", "memleak-worker-lsan",
                             NULL};
    if (!harness[1])
        harness[1] = "memleak-worker-lsan";
    int rc;
    switch (c->tool) {
    case MLK_TOOL_MEMCHECK:
    case MLK_TOOL_LSAN: rc = collect_leaks(db, cell_id, c, t, harness, finished, res, err); break;
    case MLK_TOOL_MASSIF: rc = collect_massif(db, cell_id, t, res, err); break;
    default: return MLK_OK;
    }
    /* what ran, beside what it found (issue 25): the tool's own executable, its arguments, the environment it read;
     * after the findings, whose store replaces the cell's tool rows */
    char *program = NULL, *args = NULL, *env = rc ? NULL : mlk_cellrun_tool_env(p, c, t);
    if (!rc)
        rc = !env || mlk_tool_describe(p, c, t, self_exe, &program, &args)
                 ? mlk_fail(err, MLK_E_NOMEM, "out of memory recording what cell %d ran", c->idx)
                 : db_tool_exec_store(db, cell_id, program, args, env, err);
    free(program);
    free(args);
    free(env);
    /* the table and detail quote the tool's stacks: function and file names of the engine, shown on a terminal */
    char shown[sizeof res->table];
    snprintf(res->table, sizeof res->table, "%s", mlk_text_safe(res->table, shown, sizeof shown, MLK_TEXT_KEEP_NL));
    snprintf(res->detail, sizeof res->detail, "%s", mlk_text_safe(res->detail, shown, sizeof res->detail, 0));
    return rc;
}

