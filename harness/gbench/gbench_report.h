/* gbench_report.h: a Google Benchmark JSON report read into plain structs, through the store's JSON reader
 * (db_json.h: SQLite's JSON functions; no parser of our own, no new dependency). It must never trust the report:
 * missing fields are NaN or NULL, never 0. Internal to gbench_import.c and its tests. */
#ifndef MLK_GBENCH_REPORT_H
#define MLK_GBENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"
#include "store.h"
#include "strbuf.h"

typedef struct mlk_gbr_counter {
    char *key;
    double v;
} mlk_gbr_counter;

/* One entry of "benchmarks": a repetition (run_type iteration) or an aggregate over repetitions. */
typedef struct mlk_gbr_entry {
    char *name, *run_name, *agg, *unit, *error_msg, *label;
    bool is_agg, error;
    double real, cpu, iterations, repetitions; /* NaN when absent */
    mlk_gbr_counter *counters;
    int n_counters;
} mlk_gbr_entry;

typedef struct mlk_gbr {
    const char *name; /* the file, for messages */
    char *text;       /* the report, NaN and Infinity turned into null */
    mlk_gbr_entry *e;
    int n;
    char *exe, *date, *host, *build; /* from the context; NULL when absent */
    double n_cpus, mhz;
    mlk_buf ctx;      /* the context as "key: json" lines for the description */
} mlk_gbr;

/* Read text (len bytes) into *r (name: the file, for messages; borrowed). Every object of "benchmarks" becomes an
 * entry, in order; its numeric top-level keys other than Google Benchmark's own fields are its counters. An entry
 * without run_name (reports before 1.5) gets its name less the "_<aggregate>" suffix. NaN, Infinity and other bare
 * words outside strings are read as null. Returns 0, or MLK_E_PARSE (not JSON, no "benchmarks" array, an entry
 * without a name or with an unknown time_unit: the message names the file and the entry's index), MLK_E_NOMEM,
 * MLK_E_DB. db only lends its JSON functions: nothing is written. *r must be freed with mlk_gbr_free either way. */
int mlk_gbr_read(db_store *db, const char *text, size_t len, const char *name, mlk_gbr *r, mlk_error *err);
void mlk_gbr_free(mlk_gbr *r);

/* Nanoseconds per time_unit ("ns", "us", "ms", "s"; NULL counts as "ns", the library's default); 0 if unknown. */
double mlk_gbr_unit_ns(const char *unit);

#endif
