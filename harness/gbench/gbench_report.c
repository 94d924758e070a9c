/* gbench_report.c: reads a Google Benchmark JSON report with SQLite's json_each/json_extract into mlk_gbr.
 * It must never read past the text it is given, nor keep a pointer into it: every string is copied. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbench_report.h"

/* ---- reading ---- */

static bool word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Copy text into out (when not NULL), turning bare words other than true/false/null (NaN, Infinity, -nan, ...)
 * outside strings into null: Google Benchmark prints NaN for a 0/0 counter (the cv of a counter that is always 0),
 * and it is not JSON. Returns the length of the result. */
static size_t scan_json(const char *text, size_t len, char *out)
{
    size_t o = 0;
    bool in_str = false;
#define PUT(ch) (out ? (void)(out[o++] = (ch)) : (void)o++) /* ch is evaluated only with out: no side effects */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            PUT(c);
            if (c == '\\' && i + 1 < len) {
                i++;
                PUT(text[i]);
            }
            else if (c == '"')
                in_str = false;
            continue;
        }
        in_str = c == '"';
        if ((c >= '0' && c <= '9') || (c == '-' && i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '9')) {
            for (; i < len && text[i] && strchr("0123456789.eE+-", text[i]); i++) /* a number: its 'e' is no word */
                PUT(text[i]);
            i--;
            continue;
        }
        size_t j = i + (c == '-' && i + 1 < len && word_char(text[i + 1]));
        if (!word_char(text[j])) {
            PUT(c);
            continue;
        }
        size_t k = j;
        while (k < len && word_char(text[k]))
            k++;
        size_t wl = k - j;
        bool keep = j == i && ((wl == 4 && (!memcmp(text + j, "true", 4) || !memcmp(text + j, "null", 4))) ||
                               (wl == 5 && !memcmp(text + j, "false", 5)));
        for (size_t x = 0; x < (keep ? wl : 4); x++)
            PUT(keep ? text[j + x] : "null"[x]);
        i = k - 1;
    }
#undef PUT
    return o;
}

static char *clean_json(const char *text, size_t len)
{
    size_t n = scan_json(text, len, NULL);
    char *out = malloc(n + 1);
    if (out)
        out[scan_json(text, len, out)] = '\0';
    return out;
}

static int sql_fail(sqlite3 *h, mlk_error *err, const char *what)
{
    return mlk_fail(err, MLK_E_DB, "import-gbench: %s: %s", what, sqlite3_errmsg(h));
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

static double col_num(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);
    return t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, i) : NAN;
}

/* The context: a few fields for the run record, and every key as a description line. */
static int read_context(sqlite3 *h, mlk_gbr *r, mlk_error *err)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT key, CASE WHEN type IN ('object', 'array') THEN value ELSE json_quote(value) END, "
                      "CASE WHEN type IN ('text', 'integer', 'real') THEN value END FROM json_each(?1, '$.context')";
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return sql_fail(h, err, "reading the context");
    sqlite3_bind_text(st, 1, r->text, -1, SQLITE_STATIC);
    r->n_cpus = r->mhz = NAN;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0), *v = (const char *)sqlite3_column_text(st, 1);
        if (!k || !v)
            continue;
        char **slot = !strcmp(k, "executable")           ? &r->exe
                      : !strcmp(k, "date")               ? &r->date
                      : !strcmp(k, "host_name")          ? &r->host
                      : !strcmp(k, "library_build_type") ? &r->build
                                                         : NULL;
        if (slot && !*slot)
            *slot = col_dup(st, 2);
        if (!strcmp(k, "num_cpus"))
            r->n_cpus = col_num(st, 2);
        if (!strcmp(k, "mhz_per_cpu"))
            r->mhz = col_num(st, 2);
        mlk_buf_printf(&r->ctx, "    ");
        for (const char *p = k; *p; p++) /* a key is one line of the description: no control characters */
            mlk_buf_printf(&r->ctx, "%c", (unsigned char)*p < 0x20 ? ' ' : *p);
        mlk_buf_printf(&r->ctx, ": %s\n", v);
    }
    sqlite3_finalize(st);
    return r->ctx.failed ? mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory") : MLK_OK;
}

/* The numeric top-level keys of an entry that are not Google Benchmark's own fields: its user counters (and the
 * MemoryManager's figures, which are measurements too). */
static int read_counters(sqlite3_stmt *st, const char *entry, mlk_gbr_entry *e)
{
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, entry, -1, SQLITE_STATIC);
    int cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (e->n_counters == cap) {
            cap = cap ? cap * 2 : 8;
            mlk_gbr_counter *p = realloc(e->counters, sizeof *p * (size_t)cap);
            if (!p)
                return -1;
            e->counters = p;
        }
        mlk_gbr_counter *c = &e->counters[e->n_counters];
        if (!(c->key = col_dup(st, 0)))
            return -1;
        c->v = sqlite3_column_double(st, 1);
        e->n_counters++;
    }
    return 0;
}

#define OWN_KEYS                                                                                                  \
    "'name', 'family_index', 'per_family_instance_index', 'run_name', 'run_type', 'repetitions', "                 \
    "'repetition_index', 'threads', 'iterations', 'real_time', 'cpu_time', 'time_unit', 'aggregate_name', "        \
    "'aggregate_unit', 'error_occurred', 'error_message', 'label', 'big_o', 'rms', 'cpu_coefficient', "            \
    "'real_coefficient'"

double mlk_gbr_unit_ns(const char *unit)
{
    if (!unit || !strcmp(unit, "ns"))
        return 1;
    return !strcmp(unit, "us") ? 1e3 : !strcmp(unit, "ms") ? 1e6 : !strcmp(unit, "s") ? 1e9 : 0;
}

/* A run_name for reports that predate it: the name without its aggregate's suffix. */
static char *family_of(const mlk_gbr_entry *e)
{
    size_t n = strlen(e->name), k = e->agg ? strlen(e->agg) : 0;
    if (e->is_agg && k && n > k + 1 && e->name[n - k - 1] == '_' && !strcmp(e->name + n - k, e->agg))
        n -= k + 1;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, e->name, n);
        s[n] = '\0';
    }
    return s;
}

static int read_entry(sqlite3_stmt *st, sqlite3_stmt *cst, mlk_gbr *r, mlk_gbr_entry *e, mlk_error *err)
{
    int idx = sqlite3_column_int(st, 0);
    e->name = col_dup(st, 1);
    e->run_name = col_dup(st, 2);
    const unsigned char *type = sqlite3_column_text(st, 3);
    e->is_agg = type && !strcmp((const char *)type, "aggregate");
    e->agg = col_dup(st, 4);
    e->unit = col_dup(st, 5);
    e->error = sqlite3_column_int(st, 6) != 0;
    e->error_msg = col_dup(st, 7);
    e->label = col_dup(st, 8);
    e->iterations = col_num(st, 9);
    e->real = col_num(st, 10);
    e->cpu = col_num(st, 11);
    e->repetitions = col_num(st, 12);
    if (!e->name || !*e->name)
        return mlk_fail(err, MLK_E_PARSE, "%s: benchmarks[%d] has no name", r->name, idx);
    if (!mlk_gbr_unit_ns(e->unit))
        return mlk_fail(err, MLK_E_PARSE, "%s: benchmarks[%d] (%s): unknown time_unit '%s' (expected ns, us, ms or s)",
                        r->name, idx, e->name, e->unit);
    if (!e->run_name && !(e->run_name = family_of(e)))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    if (read_counters(cst, (const char *)sqlite3_column_text(st, 13), e))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    return MLK_OK;
}

static int read_entries(sqlite3 *h, mlk_gbr *r, mlk_error *err)
{
    const char *sql = "SELECT b.key, json_extract(b.value, '$.name'), json_extract(b.value, '$.run_name'), "
                      "json_extract(b.value, '$.run_type'), json_extract(b.value, '$.aggregate_name'), "
                      "json_extract(b.value, '$.time_unit'), json_extract(b.value, '$.error_occurred'), "
                      "json_extract(b.value, '$.error_message'), json_extract(b.value, '$.label'), "
                      "json_extract(b.value, '$.iterations'), json_extract(b.value, '$.real_time'), "
                      "json_extract(b.value, '$.cpu_time'), json_extract(b.value, '$.repetitions'), b.value "
                      "FROM json_each(?1, '$.benchmarks') b WHERE b.type = 'object' ORDER BY b.id";
    const char *csql = "SELECT key, value FROM json_each(?1) WHERE type IN ('integer', 'real') AND key NOT IN (" OWN_KEYS
                       ")";
    sqlite3_stmt *st = NULL, *cst = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, csql, -1, &cst, NULL) != SQLITE_OK) {
        int rc = sql_fail(h, err, "reading the benchmarks");
        sqlite3_finalize(st);
        return rc;
    }
    sqlite3_bind_text(st, 1, r->text, -1, SQLITE_STATIC);
    int rc = MLK_OK, cap = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        if (r->n == cap) {
            cap = cap ? cap * 2 : 32;
            mlk_gbr_entry *p = realloc(r->e, sizeof *p * (size_t)cap);
            if (!p) {
                rc = mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
                break;
            }
            r->e = p;
        }
        mlk_gbr_entry *e = &r->e[r->n++];
        memset(e, 0, sizeof *e);
        rc = read_entry(st, cst, r, e, err);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(cst);
    return rc;
}

void mlk_gbr_free(mlk_gbr *r)
{
    for (int i = 0; i < r->n; i++) {
        mlk_gbr_entry *e = &r->e[i];
        free(e->name), free(e->run_name), free(e->agg), free(e->unit), free(e->error_msg), free(e->label);
        for (int k = 0; k < e->n_counters; k++)
            free(e->counters[k].key);
        free(e->counters);
    }
    free(r->e);
    free(r->text), free(r->exe), free(r->date), free(r->host), free(r->build);
    mlk_buf_free(&r->ctx);
}

int mlk_gbr_read(sqlite3 *h, const char *text, size_t len, const char *name, mlk_gbr *r, mlk_error *err)
{
    memset(r, 0, sizeof *r);
    r->name = name ? name : "(report)";
    if (!(r->text = clean_json(text, len)))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT json_valid(?1), json_type(?1, '$.benchmarks'), json_type(?1, '$.context')",
                           -1, &st, NULL) != SQLITE_OK)
        return sql_fail(h, err, "checking the report");
    sqlite3_bind_text(st, 1, r->text, -1, SQLITE_STATIC);
    int rc = MLK_OK;
    if (sqlite3_step(st) != SQLITE_ROW || !sqlite3_column_int(st, 0))
        rc = mlk_fail(err, MLK_E_PARSE, "%s: not valid JSON", r->name);
    else if (!sqlite3_column_text(st, 1) || strcmp((const char *)sqlite3_column_text(st, 1), "array"))
        rc = mlk_fail(err, MLK_E_PARSE, "%s: no \"benchmarks\" array: not a Google Benchmark JSON report", r->name);
    bool has_ctx = sqlite3_column_text(st, 2) && !strcmp((const char *)sqlite3_column_text(st, 2), "object");
    sqlite3_finalize(st);
    if (!rc && has_ctx)
        rc = read_context(h, r, err);
    if (!rc)
        rc = read_entries(h, r, err);
    return rc;
}
