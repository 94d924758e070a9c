/* crosscheck.c: runs one model through several engine plugins (engines/engine.h) on the harness's deterministic
 * inputs and compares every output of each with the first engine's. It must never judge by anything but the outputs
 * it read back, and never call a model unreadable unless the engine said so at read_model or compile_model.
 *
 * usage: opencv_crosscheck [--lib-dir DIR] [--engines ref,opencv[,ort]] [--rtol X] [--opt k=v] [--eopt ENGINE:k=v]
 *                          [--metrics] [--infers N] MODEL
 * --engines defaults to ref, opencv, and ort when engine_ort.so is in the library folder; the first is the reference.
 * --opt goes to every engine, --eopt to one. --metrics prints each engine's metrics after the last infer.
 * Outputs agree when max|x - ref| <= rtol * max|ref| for every output (the error relative to the output's own scale).
 * Exit 0 every engine agrees, 1 an engine disagrees, 3 an engine other than the first could not read or compile the
 * model (a line "CANNOT READ: ENGINE: message"; the others are still compared), 2 usage or any other error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "inputs.h"
#include "plugin.h"

#define MAX_ENGINES 4
#define MAX_OPTS 32
#define MAX_OUT 16

typedef struct {
    char which[32];
    mlk_plugin plugin;
    const engine_api *api; /* &plugin.api once open */
    engine_kv opts[MAX_OPTS];
    size_t n_opts;
    size_t n_out;
    engine_tensor_info info[MAX_OUT];
    float *vals[MAX_OUT];  /* outputs converted to float */
    size_t n_vals[MAX_OUT];
    char names[MAX_OUT][128];
    const char *failed_at; /* the step that failed, NULL when the whole pipeline ran */
} engine_run;

static int open_engine(engine_run *e, const char *lib_dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%.4100s/engine_%.31s.so", lib_dir, e->which);
    mlk_error err = {0};
    if (mlk_plugin_init(&e->plugin, path, &err)) {
        fprintf(stderr, "crosscheck: %s\n", err.msg);
        return -1;
    }
    e->api = &e->plugin.api;
    if (!e->api->output || !e->api->n_outputs) {
        fprintf(stderr, "crosscheck: %s is not a plugin whose outputs can be read\n", path);
        return -1;
    }
    return 0;
}

static float to_float(int dtype, const void *p, size_t i)
{
    switch (dtype) {
    case 1: return ((const float *)p)[i];
    case 11: return (float)((const double *)p)[i];
    case 6: return (float)((const int32_t *)p)[i];
    case 7: return (float)((const int64_t *)p)[i];
    case 9: case 2: return (float)((const uint8_t *)p)[i];
    case 3: return (float)((const int8_t *)p)[i];
    default: return NAN;
    }
}

static int keep_outputs(engine_run *e, engine_request *r, engine_error *err)
{
    for (size_t i = 0; i < e->n_out; i++) {
        const void *data;
        size_t nbytes;
        if (e->api->output(r, i, &e->info[i], &data, &nbytes, err))
            return -1;
        snprintf(e->names[i], sizeof e->names[i], "%s", e->info[i].name ? e->info[i].name : "?");
        e->info[i].name = e->names[i];
        size_t n = 1;
        for (int k = 0; k < e->info[i].rank; k++)
            n *= (size_t)e->info[i].dims[k];
        free(e->vals[i]);
        e->vals[i] = malloc((n ? n : 1) * sizeof(float));
        if (!e->vals[i])
            return -1;
        for (size_t k = 0; k < n; k++)
            e->vals[i][k] = to_float(e->info[i].dtype, data, k);
        e->n_vals[i] = n;
        (void)nbytes;
    }
    return 0;
}

static void print_metrics(engine_run *e, engine_ctx *ctx)
{
    engine_metric m[32];
    size_t n = 0;
    if (!e->api->metrics || e->api->metrics(ctx, m, 32, &n))
        n = 0;
    printf("%s metrics after infer:%s", e->which, n ? "" : " none");
    for (size_t i = 0; i < n; i++)
        printf(" %s=%lld", m[i].name, (long long)m[i].value);
    printf("\n");
}

/* The whole pipeline once, with n_infers runs; the outputs of the last are kept. Returns 0, or -1 with
 * e->failed_at naming the step. */
static int run_engine(engine_run *e, const char *model, int n_infers, int show_metrics)
{
    engine_error err = {0};
    engine_ctx *ctx = NULL;
    engine_model *m = NULL;
    engine_compiled *c = NULL;
    engine_request *r = NULL;
    mlk_inputs *in = NULL;
    mlk_error merr = {0};
    int rc = -1;
    const engine_api *a = e->api;
    if ((e->failed_at = "load_engine", a->load(e->opts, e->n_opts, &ctx, &err)) ||
        (e->failed_at = "read_model", a->read_model(ctx, model, &m, &err)) ||
        (e->failed_at = "compile_model", a->compile(ctx, m, &c, &err)))
        goto done;
    e->failed_at = "compile_model";
    e->n_out = a->n_outputs(c);
    if (e->n_out > MAX_OUT) {
        snprintf(err.msg, sizeof err.msg, "%zu outputs, at most %d compared", e->n_out, MAX_OUT);
        goto done;
    }
    e->failed_at = "create_request";
    if (mlk_inputs_new(NULL, 0, &in, &merr)) {
        snprintf(err.msg, sizeof err.msg, "%.500s", merr.msg);
        goto done;
    }
    if (a->create_request(c, &r, &err) || mlk_inputs_apply(in, a, c, r, NULL, NULL, &err))
        goto done;
    e->failed_at = "infer";
    for (int i = 0; i < n_infers; i++)
        if (a->infer(r, &err))
            goto done;
    if (show_metrics)
        print_metrics(e, ctx);
    e->failed_at = "output";
    if (keep_outputs(e, r, &err))
        goto done;
    e->failed_at = NULL;
    rc = 0;
done:
    if (rc)
        printf("%s: %s failed: %s\n", e->which, e->failed_at, err.msg[0] ? err.msg : "(no message)");
    if (r)
        a->release_request(r);
    mlk_inputs_free(in);
    if (c)
        a->release_compiled(c);
    if (m)
        a->release_model(m);
    if (ctx)
        a->unload(ctx);
    return rc;
}

/* One engine's outputs against the reference's: 0 agree, 1 not. */
static int compare(const engine_run *ref, const engine_run *x, double rtol)
{
    int bad = 0;
    if (ref->n_out != x->n_out) {
        printf("FAIL: %s has %zu outputs, %s %zu\n", ref->which, ref->n_out, x->which, x->n_out);
        return 1;
    }
    for (size_t i = 0; i < ref->n_out; i++) {
        const engine_tensor_info *a = &ref->info[i], *b = &x->info[i];
        int same_shape = a->rank == b->rank && a->dtype == b->dtype;
        for (int k = 0; same_shape && k < a->rank; k++)
            same_shape = a->dims[k] == b->dims[k];
        if (!same_shape) {
            printf("FAIL: output %zu (%s): dtype/shape differ between %s and %s\n", i, a->name, ref->which, x->which);
            bad = 1;
            continue;
        }
        double scale = 0, diff = 0;
        size_t worst = 0;
        for (size_t k = 0; k < ref->n_vals[i]; k++) {
            double u = ref->vals[i][k], v = x->vals[i][k];
            if (fabs(u) > scale)
                scale = fabs(u);
            double d = isnan(u) || isnan(v) ? INFINITY : fabs(u - v);
            if (d > diff) {
                diff = d;
                worst = k;
            }
        }
        double rel = scale > 0 ? diff / scale : diff;
        int ok = rel <= rtol;
        printf("%s: %s output %zu (%s, %zu values): max|%s-%s| %.3g at %zu (%s %.6g, %s %.6g), max|%s| %.4g, "
               "relative %.3g (rtol %.1g)\n",
               ok ? "ok" : "FAIL", x->which, i, a->name, ref->n_vals[i], x->which, ref->which, diff, worst, ref->which,
               ref->n_vals[i] ? ref->vals[i][worst] : 0.0, x->which, ref->n_vals[i] ? x->vals[i][worst] : 0.0,
               ref->which, scale, rel, rtol);
        bad |= !ok;
    }
    return bad;
}

static int add_opt(engine_run *e, char *kv)
{
    char *eq = strchr(kv, '=');
    if (!eq || e->n_opts == MAX_OPTS)
        return -1;
    *eq = 0;
    e->opts[e->n_opts].key = kv;
    e->opts[e->n_opts++].value = eq + 1;
    return 0;
}

/* "ref,opencv,ort" into runs; ort is dropped (and said so) when its plugin is not in lib_dir and it was not asked
 * for by name. */
static int parse_engines(const char *list, int explicit_list, const char *lib_dir, engine_run *runs, int *n)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char path[4200];
        snprintf(path, sizeof path, "%.4100s/engine_%.31s.so", lib_dir, tok);
        if (!explicit_list && !strcmp(tok, "ort") && access(path, F_OK)) {
            printf("ort: engine_ort.so is not built (engines/ort/fetch.sh), left out\n");
            continue;
        }
        if (*n == MAX_ENGINES || strlen(tok) >= sizeof runs[0].which)
            return -1;
        snprintf(runs[(*n)++].which, sizeof runs[0].which, "%s", tok);
    }
    return *n >= 2 ? 0 : -1;
}

/* Options given before the engine list was known: "ENGINE:k=v" (or "*:k=v" for all). */
static int apply_opts(engine_run *runs, int n, char **opts, int n_opts)
{
    for (int i = 0; i < n_opts; i++) {
        char *colon = strchr(opts[i], ':');
        if (!colon)
            return -1;
        *colon = 0;
        int used = 0;
        for (int e = 0; e < n; e++) {
            if (strcmp(opts[i], "*") && strcmp(opts[i], runs[e].which))
                continue;
            char *kv = strdup(colon + 1);
            if (!kv || add_opt(&runs[e], kv)) {
                free(kv);
                return -1;
            }
            used = 1;
        }
        if (!used && strcmp(opts[i], "*"))
            fprintf(stderr, "crosscheck: --eopt for %s, which is not among the engines\n", opts[i]);
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: opencv_crosscheck [--lib-dir DIR] [--engines ref,opencv[,ort]] [--rtol X] [--opt k=v] "
                    "[--eopt ENGINE:k=v] [--metrics] [--infers N] MODEL\n");
}

int main(int argc, char **argv)
{
    engine_run runs[MAX_ENGINES];
    memset(runs, 0, sizeof runs);
    char self[4000], lib_dir[4100] = "", optbuf[MAX_OPTS][256];
    char *opts[MAX_OPTS];
    const char *model = NULL, *engines = "ref,opencv,ort";
    double rtol = 1e-4;
    int n_infers = 1, rc = 2, n_opts = 0, show_metrics = 0, n = 0, explicit_list = 0, disagree = 0, unreadable = 0;
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        snprintf(lib_dir, sizeof lib_dir, "%s/../lib", self);
    }
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--lib-dir") && more)
            snprintf(lib_dir, sizeof lib_dir, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--engines") && more)
            engines = argv[++i], explicit_list = 1;
        else if (!strcmp(argv[i], "--rtol") && more)
            rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--metrics"))
            show_metrics = 1;
        else if (!strcmp(argv[i], "--infers") && more)
            n_infers = atoi(argv[++i]);
        else if ((!strcmp(argv[i], "--opt") || !strcmp(argv[i], "--eopt")) && more && n_opts < MAX_OPTS) {
            int all = !strcmp(argv[i], "--opt");
            snprintf(optbuf[n_opts], sizeof optbuf[0], "%s%s", all ? "*:" : "", argv[++i]);
            opts[n_opts] = optbuf[n_opts];
            n_opts++;
        } else if (argv[i][0] != '-' && !model)
            model = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (!model || n_infers < 1 || parse_engines(engines, explicit_list, lib_dir, runs, &n) ||
        apply_opts(runs, n, opts, n_opts)) {
        usage();
        goto out;
    }
    for (int e = 0; e < n; e++)
        if (open_engine(&runs[e], lib_dir))
            goto out;
    if (run_engine(&runs[0], model, n_infers, show_metrics))
        goto out; /* without the reference there is nothing to compare with */
    for (int e = 1; e < n; e++) {
        if (run_engine(&runs[e], model, n_infers, show_metrics)) {
            const char *at = runs[e].failed_at;
            if (at && (!strcmp(at, "read_model") || !strcmp(at, "compile_model"))) {
                printf("CANNOT READ: %s: %s (failed at %s)\n", runs[e].which, model, runs[e].failed_at);
                unreadable = 1;
                continue;
            }
            goto out;
        }
        disagree |= compare(&runs[0], &runs[e], rtol);
    }
    rc = disagree ? 1 : unreadable ? 3 : 0;
out:
    printf("%s: %s\n", model, rc == 0 ? "outputs agree" : rc == 1 ? "outputs DISAGREE" : rc == 3 ? "outputs agree "
           "where read" : "error");
    for (int e = 0; e < MAX_ENGINES; e++) {
        for (size_t i = 0; i < MAX_OUT; i++)
            free(runs[e].vals[i]);
        for (size_t i = 0; i < runs[e].n_opts; i++)
            free((char *)runs[e].opts[i].key);
        mlk_plugin_deinit(&runs[e].plugin);
    }
    return rc;
}
