/* cmd_alerts.h: what compare and history share about alerts: the --gate/--floor/--format/--json options, the findings
 * they collect, and the alert summaries printed as text or written as JSON (db/alerts.schema.json).
 * It must never print a finding outside its alert, nor JSON that does not parse (NaN is null). */
#ifndef MLK_CMD_ALERTS_H
#define MLK_CMD_ALERTS_H

#include <stdbool.h>
#include <stdio.h>

#include "alert.h"
#include "strbuf.h"

/* The options both commands take. */
typedef struct mlk_alert_opts {
    mlk_gate gate;          /* --gate memory|latency|all|none; default memory */
    const char *floor_spec; /* --floor KEY=VALUE,...: applied over the scenario's thresholds */
    bool json;              /* --format json: JSON on stdout instead of text */
    const char *json_path;  /* --json FILE: JSON into FILE as well as text on stdout */
} mlk_alert_opts;

/* If argv[*i] is one of the options above, take it (and its value) and return 1; 0 when it is not one; -1 (a message
 * printed for cmd) when its value is missing or bad. */
int mlk_alert_opt(const char *cmd, int argc, char **argv, int *i, mlk_alert_opts *o);
/* The options' lines for a usage text. */
#define MLK_ALERT_OPTS_USAGE                                                                                          \
    "  --gate memory|latency|all|none  which alerts fail the exit code (default memory)\n"                          \
    "  --floor KEY=VALUE,...   override the floors: memory_rel=0.05 and memory_abs=1MiB (every memory level),\n"  \
    "                          METRIC_rel / METRIC_abs (peak_kib_abs=2MiB), growth_bytes=1024, latency_rel=0.10,\n" \
    "                          latency_abs_ms=0.05, latency_alpha=0.05, latency_runs=3\n"                           \
    "  --format text|json      json: the alerts as one JSON document on stdout (db/alerts.schema.json)\n"         \
    "  --json FILE             the same JSON into FILE, text on stdout\n"

/* Write s (NULL as "") for a person to read, made safe by core/text.h (control characters of a foreign or older db
 * as \e, \xNN, \u009b; invalid UTF-8 as U+FFFD). Every stored string compare and history print goes through here. */
void mlk_cmd_text(FILE *out, const char *s);

/* A growable list of findings. */
typedef struct mlk_findings {
    mlk_finding *v;
    int n, cap;
} mlk_findings;
/* A new zeroed slot at the end (NULL out of memory). */
mlk_finding *mlk_findings_add(mlk_findings *f);
void mlk_findings_free(mlk_findings *f);

/* Print the alerts as text: regressions (gated ones marked), then improvements apart. Returns how many alerts
 * fail the gate. */
int mlk_alerts_print(FILE *out, const mlk_alert *a, int na, const mlk_finding *v, mlk_gate g);
/* Append {"alerts": [...], "improvements": [...]} members (no braces) for the JSON document. */
void mlk_alerts_json(mlk_buf *b, const mlk_alert *a, int na, const mlk_finding *v, mlk_gate g);
/* Append "floors": {...} and "gate": "..." members. */
void mlk_floors_json(mlk_buf *b, const mlk_alert_floors *f, mlk_gate g);
/* Write b's text to stdout (json) and/or o->json_path; MLK_E_IO naming the file. */
int mlk_alerts_json_emit(const mlk_alert_opts *o, mlk_buf *b, mlk_error *err);

#endif
