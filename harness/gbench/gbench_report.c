/* gbench_report.c: reads a Google Benchmark JSON report into mlk_gbr, through the store's JSON reader (db_json.h:
 * SQLite's json_each). It must never read past the text it is given, nor keep a pointer into it: every string is
 * copied. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_json.h"
#include "gbench_report.h"
#include "text.h"

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

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* A scalar other than true, false and null: the only values read as context fields. */
static bool plain_scalar(const db_json_item *it)
{
    return it->type == DB_JSON_TEXT || it->type == DB_JSON_INTEGER || it->type == DB_JSON_REAL;
}

/* The context: a few fields for the run record, and every key as a description line. */
static int read_context(db_store *db, mlk_gbr *r, mlk_error *err)
{
    db_json_item *v = NULL;
    int n = 0, rc = db_json_items(db, r->text, "$.context", &v, &n, err);
    if (rc)
        return mlk_fail_prefix(err, "import-gbench: reading the context: ");
    r->n_cpus = r->mhz = NAN;
    bool oom = false;
    for (int i = 0; i < n; i++) {
        const db_json_item *it = &v[i];
        const char *k = it->key, *val = it->json ? it->json : it->text; /* an object or array as its JSON */
        if (!k || !val)
            continue;
        char **slot = !strcmp(k, "executable")           ? &r->exe
                      : !strcmp(k, "date")               ? &r->date
                      : !strcmp(k, "host_name")          ? &r->host
                      : !strcmp(k, "library_build_type") ? &r->build
                                                         : NULL;
        if (slot && !*slot && plain_scalar(it) && !(*slot = dup_or_null(it->text)))
            oom = true;
        if (!strcmp(k, "num_cpus"))
            r->n_cpus = plain_scalar(it) ? it->num : NAN;
        if (!strcmp(k, "mhz_per_cpu"))
            r->mhz = plain_scalar(it) ? it->num : NAN;
        mlk_buf_printf(&r->ctx, "    ");
        for (const char *p = k; *p; p++) /* a key is one line of the description: no control characters */
            mlk_buf_printf(&r->ctx, "%c", (unsigned char)*p < 0x20 ? ' ' : *p);
        mlk_buf_printf(&r->ctx, ": %s\n", val);
    }
    db_json_items_free(v, n);
    return oom || r->ctx.failed ? mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory") : MLK_OK;
}

/* Google Benchmark's own fields of an entry; every other numeric key is a counter. */
static const char *const own_keys[] = {
    "name",          "family_index",   "per_family_instance_index", "run_name",       "run_type",
    "repetitions",   "repetition_index", "threads",                 "iterations",     "real_time",
    "cpu_time",      "time_unit",      "aggregate_name",            "aggregate_unit", "error_occurred",
    "error_message", "label",          "big_o",                     "rms",            "cpu_coefficient",
    "real_coefficient", NULL};

static bool own_key(const char *k)
{
    for (int i = 0; own_keys[i]; i++)
        if (!strcmp(own_keys[i], k))
            return true;
    return false;
}

/* The numeric top-level keys of an entry that are not Google Benchmark's own fields: its user counters (and the
 * MemoryManager's figures, which are measurements too). -1 when out of memory. */
static int read_counters(const db_json_item *m, int n, mlk_gbr_entry *e)
{
    int cap = 0;
    for (int i = 0; i < n; i++) {
        if ((m[i].type != DB_JSON_INTEGER && m[i].type != DB_JSON_REAL) || own_key(m[i].key))
            continue;
        if (e->n_counters == cap) {
            cap = cap ? cap * 2 : 8;
            mlk_gbr_counter *p = realloc(e->counters, sizeof *p * (size_t)cap);
            if (!p)
                return -1;
            e->counters = p;
        }
        mlk_gbr_counter *c = &e->counters[e->n_counters];
        if (!(c->key = strdup(m[i].key)))
            return -1;
        c->v = m[i].num;
        e->n_counters++;
    }
    return 0;
}

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

/* The first member key of m: its text (an object's JSON, NULL for null), copied; NULL when absent. *oom is set
 * when a copy fails. */
/* Made safe (text.h): a benchmark's names become cells' names, shown by compare, history and reports. */
static char *member_text(const db_json_item *m, int n, const char *key, bool *oom)
{
    const db_json_item *it = db_json_find(m, n, key);
    size_t cap = it && it->text ? 6 * strlen(it->text) + 1 : 0; /* "\u009b" for a 2-byte C1: at most x6 */
    char *s = cap ? malloc(cap) : NULL;
    if (s)
        mlk_text_safe(it->text, s, cap, 0);
    if (it && it->text && !s)
        *oom = true;
    return s;
}

/* The first member key of m as a number (true 1, false 0); NaN when absent or not a number. */
static double member_num(const db_json_item *m, int n, const char *key)
{
    const db_json_item *it = db_json_find(m, n, key);
    return it ? it->num : NAN;
}

/* error_occurred as SQL reads it: a number truncated, text by its leading digits. */
static bool member_flag(const db_json_item *m, int n, const char *key)
{
    const db_json_item *it = db_json_find(m, n, key);
    if (!it)
        return false;
    if (!isnan(it->num))
        return (long long)it->num != 0;
    return it->type == DB_JSON_TEXT && it->text && atoll(it->text) != 0;
}

/* Entry idx of "benchmarks", whose members are m[0..n). */
static int read_entry(const db_json_item *m, int n, int idx, mlk_gbr *r, mlk_gbr_entry *e, mlk_error *err)
{
    bool oom = false;
    e->name = member_text(m, n, "name", &oom);
    e->run_name = member_text(m, n, "run_name", &oom);
    char *type = member_text(m, n, "run_type", &oom);
    e->is_agg = type && !strcmp(type, "aggregate");
    free(type);
    e->agg = member_text(m, n, "aggregate_name", &oom);
    e->unit = member_text(m, n, "time_unit", &oom);
    e->error = member_flag(m, n, "error_occurred");
    e->error_msg = member_text(m, n, "error_message", &oom);
    e->label = member_text(m, n, "label", &oom);
    e->iterations = member_num(m, n, "iterations");
    e->real = member_num(m, n, "real_time");
    e->cpu = member_num(m, n, "cpu_time");
    e->repetitions = member_num(m, n, "repetitions");
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    if (!e->name || !*e->name)
        return mlk_fail(err, MLK_E_PARSE, "%s: benchmarks[%d] has no name", r->name, idx);
    if (!mlk_gbr_unit_ns(e->unit))
        return mlk_fail(err, MLK_E_PARSE, "%s: benchmarks[%d] (%s): unknown time_unit '%s' (expected ns, us, ms or s)",
                        r->name, idx, e->name, e->unit);
    if (!e->run_name && !(e->run_name = family_of(e)))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    if (read_counters(m, n, e))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    return MLK_OK;
}

/* Every object of "benchmarks", in order. */
static int read_entries(db_store *db, mlk_gbr *r, mlk_error *err)
{
    db_json_item *b = NULL;
    int nb = 0, rc = db_json_items(db, r->text, "$.benchmarks", &b, &nb, err);
    if (rc)
        return mlk_fail_prefix(err, "import-gbench: reading the benchmarks: ");
    int cap = 0;
    for (int i = 0; i < nb && !rc; i++) {
        if (b[i].type != DB_JSON_OBJECT)
            continue;
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
        db_json_item *m = NULL;
        int nm = 0;
        if ((rc = db_json_items(db, b[i].text, "$", &m, &nm, err)))
            mlk_fail_prefix(err, "import-gbench: reading benchmarks[%s]: ", b[i].key);
        else
            rc = read_entry(m, nm, atoi(b[i].key), r, e, err);
        db_json_items_free(m, nm);
    }
    db_json_items_free(b, nb);
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

int mlk_gbr_read(db_store *db, const char *text, size_t len, const char *name, mlk_gbr *r, mlk_error *err)
{
    memset(r, 0, sizeof *r);
    r->name = name ? name : "(report)";
    if (!(r->text = clean_json(text, len)))
        return mlk_fail(err, MLK_E_NOMEM, "import-gbench: out of memory");
    db_json_type bench = DB_JSON_ABSENT, ctx = DB_JSON_ABSENT;
    int rc = db_json_type_at(db, r->text, "$.benchmarks", &bench, err);
    if (rc == MLK_E_PARSE)
        return mlk_fail(err, MLK_E_PARSE, "%s: not valid JSON", r->name);
    if (rc)
        return rc;
    if (bench != DB_JSON_ARRAY)
        return mlk_fail(err, MLK_E_PARSE, "%s: no \"benchmarks\" array: not a Google Benchmark JSON report",
                        r->name);
    if ((rc = db_json_type_at(db, r->text, "$.context", &ctx, err)))
        return rc;
    if (ctx == DB_JSON_OBJECT && (rc = read_context(db, r, err)))
        return rc;
    return read_entries(db, r, err);
}
