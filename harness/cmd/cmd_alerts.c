/* cmd_alerts.c: the alert options of compare and history, their findings list, and the alert summaries as text and
 * JSON (cmd_alerts.h). It must never print a finding outside its alert, nor a NaN into JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_alerts.h"
#include "cmd_util.h"
#include "text.h"

int mlk_alert_opt(const char *cmd, int argc, char **argv, int *i, mlk_alert_opts *o)
{
    const char *k = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(k, "--gate") && strcmp(k, "--floor") && strcmp(k, "--format") && strcmp(k, "--json"))
        return 0;
    if (!v)
        return mlk_cmd_usage(cmd, "an option needs a value");
    if (!strcmp(k, "--gate")) {
        int g = mlk_gate_from_name(v);
        if (g < 0)
            return mlk_cmd_usage(cmd, "--gate: expected memory, latency, all or none");
        o->gate = (mlk_gate)g;
    } else if (!strcmp(k, "--floor")) {
        mlk_alert_floors probe;
        mlk_error err = {0};
        mlk_alert_floors_init(&probe, NULL);
        if (mlk_alert_floors_parse(&probe, v, &err))
            return mlk_cmd_usage(cmd, err.msg);
        o->floor_spec = v;
    } else if (!strcmp(k, "--format")) {
        if (strcmp(v, "json") && strcmp(v, "text"))
            return mlk_cmd_usage(cmd, "--format: expected text or json");
        o->json = !strcmp(v, "json");
    } else {
        o->json_path = v;
    }
    ++*i;
    return 1;
}

mlk_finding *mlk_findings_add(mlk_findings *f)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        mlk_finding *p = realloc(f->v, sizeof *p * (size_t)cap);
        if (!p)
            return NULL;
        f->v = p;
        f->cap = cap;
    }
    mlk_finding *x = &f->v[f->n++];
    memset(x, 0, sizeof *x);
    return x;
}

void mlk_findings_free(mlk_findings *f)
{
    free(f->v);
    *f = (mlk_findings){0};
}

/* ---- text ---- */

void mlk_cmd_text(FILE *out, const char *s)
{
    mlk_fputs_safe(s, out, 0); /* the one rule for outside text (text.h): C1 and invalid UTF-8 too */
}

static void print_finding(FILE *out, const mlk_finding *x)
{
    char what[512];
    mlk_finding_text(what, sizeof what, x);
    fprintf(out, "      %-11s %-7s ", x->dir > 0 ? "regression" : "improvement", mlk_family_name(mlk_metric_family(x->metric)));
    mlk_cmd_text(out, what);
    if (!isnan(x->p))
        fprintf(out, " (U test p=%.2g)", x->p);
    fputc('\n', out);
}

static void print_alert(FILE *out, int rank, const mlk_alert *a, const mlk_finding *v, mlk_gate g)
{
    char head[1600];
    mlk_alert_headline(head, sizeof head, a, v);
    fprintf(out, "%3d. %s", rank, mlk_alert_fails(a, v, g) ? "[fails gate] " : "");
    mlk_cmd_text(out, head);
    fputc('\n', out);
    if (strcmp(v[a->first].cell, v[a->first].key)) {
        fputs("      config ", out);
        mlk_cmd_text(out, v[a->first].key);
        fputc('\n', out);
    }
    for (int i = a->first; i < a->first + a->n; i++)
        print_finding(out, &v[i]);
}

int mlk_alerts_print(FILE *out, const mlk_alert *a, int na, const mlk_finding *v, mlk_gate g)
{
    int reg = 0, imp = 0, failing = 0;
    for (int i = 0; i < na; i++) {
        reg += a[i].dir > 0;
        imp += a[i].dir < 0;
        failing += mlk_alert_fails(&a[i], v, g);
    }
    static const char *gates[] = {"memory", "latency", "all", "none"};
    if (!reg)
        fprintf(out, "ALERTS: none\n");
    else
        fprintf(out, "ALERTS: %d regression alert(s), %d failing the %s gate\n", reg, failing, gates[g]);
    for (int i = 0, rank = 1; i < na; i++)
        if (a[i].dir > 0)
            print_alert(out, rank++, &a[i], v, g);
    if (imp) {
        fprintf(out, "improvements (apart, never failing): %d\n", imp);
        for (int i = 0, rank = 1; i < na; i++)
            if (a[i].dir < 0)
                print_alert(out, rank++, &a[i], v, g);
    }
    return failing;
}

/* ---- JSON ---- */

static void json_num(mlk_buf *b, double v)
{
    if (isfinite(v))
        mlk_buf_printf(b, "%.15g", v);
    else
        mlk_buf_printf(b, "null");
}

static void json_finding(mlk_buf *b, const mlk_finding *x)
{
    mlk_buf_printf(b, "{\"step\":");
    mlk_buf_json(b, x->step);
    mlk_buf_printf(b, ",\"metric\":");
    mlk_buf_json(b, x->metric);
    mlk_buf_printf(b, ",\"family\":\"%s\",\"kind\":\"%s\",\"baseline\":", mlk_family_name(mlk_metric_family(x->metric)),
                   x->dir > 0 ? "regression" : "improvement");
    json_num(b, x->base);
    mlk_buf_printf(b, ",\"current\":");
    json_num(b, x->cur);
    mlk_buf_printf(b, ",\"delta_rel\":");
    json_num(b, x->rel);
    mlk_buf_printf(b, ",\"effect\":");
    json_num(b, x->effect);
    mlk_buf_printf(b, ",\"p_value\":");
    json_num(b, x->p);
    char text[512];
    mlk_finding_text(text, sizeof text, x);
    mlk_buf_printf(b, ",\"note\":");
    mlk_buf_json(b, x->note);
    mlk_buf_printf(b, ",\"text\":");
    mlk_buf_json(b, text);
    mlk_buf_printf(b, "}");
}

static void json_alert(mlk_buf *b, const mlk_alert *a, const mlk_finding *v, mlk_gate g)
{
    const mlk_finding *lead = &v[a->first];
    char head[1600];
    mlk_alert_headline(head, sizeof head, a, v);
    mlk_buf_printf(b, "{\"kind\":\"%s\",\"family\":\"%s\",\"fails_gate\":%s,\"cell\":",
                   a->dir > 0 ? "regression" : "improvement", mlk_family_name(a->family),
                   mlk_alert_fails(a, v, g) ? "true" : "false");
    mlk_buf_json(b, lead->cell);
    mlk_buf_printf(b, ",\"config_key\":");
    mlk_buf_json(b, lead->key);
    mlk_buf_printf(b, ",\"where\":");
    mlk_buf_json(b, lead->where);
    mlk_buf_printf(b, ",\"effect\":");
    json_num(b, a->effect);
    mlk_buf_printf(b, ",\"headline\":");
    mlk_buf_json(b, head);
    mlk_buf_printf(b, ",\"findings\":[");
    for (int i = a->first; i < a->first + a->n; i++) {
        if (i > a->first)
            mlk_buf_printf(b, ",");
        json_finding(b, &v[i]);
    }
    mlk_buf_printf(b, "]}");
}

void mlk_alerts_json(mlk_buf *b, const mlk_alert *a, int na, const mlk_finding *v, mlk_gate g)
{
    for (int pass = 0; pass < 2; pass++) {
        mlk_buf_printf(b, "%s\"%s\":[", pass ? "," : "", pass ? "improvements" : "alerts");
        int k = 0;
        for (int i = 0; i < na; i++)
            if ((a[i].dir > 0) == !pass) {
                if (k++)
                    mlk_buf_printf(b, ",");
                json_alert(b, &a[i], v, g);
            }
        mlk_buf_printf(b, "]");
    }
}

void mlk_floors_json(mlk_buf *b, const mlk_alert_floors *f, mlk_gate g)
{
    static const char *gates[] = {"memory", "latency", "all", "none"};
    mlk_buf_printf(b, "\"gate\":\"%s\",\"floors\":{\"metrics\":{", gates[g]);
    for (int m = 0, k = 0; m < MLK_M_COUNT; m++)
        if (m != MLK_M_WALL)
            mlk_buf_printf(b, "%s\"%s\":{\"rel\":%.15g,\"abs\":%.15g,\"unit\":\"%s\"}", k++ ? "," : "",
                           mlk_metric_name(m), f->rel[m], f->abs[m], mlk_metric_unit(m));
    mlk_buf_printf(b,
                   "},\"latency\":{\"rel\":%.15g,\"abs_ms\":%.15g,\"alpha\":%.15g,\"min_runs\":%d}}",
                   f->latency_rel, f->latency_abs_ms, f->latency_alpha, f->latency_min_runs);
}

int mlk_alerts_json_emit(const mlk_alert_opts *o, mlk_buf *b, mlk_error *err)
{
    if (b->failed)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory writing JSON");
    const char *s = b->s ? b->s : "{}";
    if (o->json)
        printf("%s\n", s);
    if (o->json_path) {
        FILE *f = fopen(o->json_path, "w");
        if (!f)
            return mlk_fail(err, MLK_E_IO, "cannot create %s: %s", o->json_path, strerror(errno));
        fprintf(f, "%s\n", s);
        int bad = ferror(f);
        if (fclose(f) || bad)
            return mlk_fail(err, MLK_E_IO, "cannot write %s", o->json_path);
    }
    return MLK_OK;
}
