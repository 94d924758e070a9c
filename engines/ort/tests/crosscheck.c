/* crosscheck.c: runs one model through engine_ref.so and engine_ort.so (engines/engine.h) on the harness's
 * deterministic inputs and compares every output. It must never judge by anything but the outputs it read back.
 *
 * usage: ort_crosscheck [--lib-dir DIR] [--rtol X] [--opt k=v] [--ref-opt k=v] [--ort-opt k=v] [--maps FILE]
 *                       [--metrics] [--infers N] [--within F] MODEL
 * --opt goes to both engines, --ref-opt / --ort-opt to one. --maps FILE prints how many KiB of FILE each engine
 * has mapped after read_model, compile_model and infer (what mmap on/off means, read from /proc/self/maps);
 * --metrics prints each engine's metrics after the last infer.
 * Outputs agree when max|ort - ref| <= rtol * max|ref| for every output (the error relative to the output's own
 * scale; an element-wise ratio is meaningless at values near zero). --within F is the statistical check for
 * ill-conditioned outputs (a quantized model whose activations land one quantization step apart now and then): an
 * output agrees when at least the fraction F of its elements are within rtol * max|ref|; it prints that fraction
 * and the mean and max difference. Use it only where a case says why. Exit 0 agree, 1 disagree, 2 usage or error. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "mlk_within.h"
#include "inputs.h"
#include "plugin.h"

#define MAX_OPTS 32
#define MAX_OUT 16

typedef struct {
    const char *which;
    mlk_plugin plugin;
    const engine_api *api; /* &plugin.api once open */
    engine_kv opts[MAX_OPTS];
    size_t n_opts;
    size_t n_out;
    engine_tensor_info info[MAX_OUT];
    float *vals[MAX_OUT]; /* outputs converted to float */
    size_t n_vals[MAX_OUT];
    char names[MAX_OUT][128];
} engine_run;

/* KiB of address space mapping file (its /proc/self/maps lines), or -1 without a file. */
static long mapped_kib(const char *file)
{
    if (!file)
        return -1;
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    long kib = 0;
    size_t len = strlen(file);
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        size_t l = strlen(line);
        unsigned long lo, hi;
        if (l >= len && !strcmp(line + l - len, file) && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            kib += (long)((hi - lo) / 1024);
    }
    if (f)
        fclose(f);
    return kib;
}

static int open_engine(engine_run *e, const char *lib_dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/engine_%s.so", lib_dir, e->which);
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
    case 10: { /* float16 */
        uint16_t h = ((const uint16_t *)p)[i];
        int e = (h >> 10) & 31, m = h & 1023;
        float v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexpf((float)(1024 + m), e - 25) : ldexpf((float)m, -24);
        return h & 0x8000 ? -v : v;
    }
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

/* The whole pipeline once, with n_infers runs; the outputs of the last are kept. */
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

static int run_engine(engine_run *e, const char *model, const char *maps_file, int n_infers, int show_metrics)
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
    if (a->load(e->opts, e->n_opts, &ctx, &err) || a->read_model(ctx, model, &m, &err))
        goto done;
    long after_read = mapped_kib(maps_file);
    if (a->compile(ctx, m, &c, &err))
        goto done;
    long after_compile = mapped_kib(maps_file);
    e->n_out = a->n_outputs(c);
    if (e->n_out > MAX_OUT) {
        snprintf(err.msg, sizeof err.msg, "%zu outputs, at most %d compared", e->n_out, MAX_OUT);
        goto done;
    }
    if (mlk_inputs_new(NULL, 0, &in, &merr)) {
        snprintf(err.msg, sizeof err.msg, "%.500s", merr.msg);
        goto done;
    }
    if (a->create_request(c, &r, &err) || mlk_inputs_apply(in, a, c, r, NULL, NULL, &err))
        goto done;
    for (int i = 0; i < n_infers; i++)
        if (a->infer(r, &err))
            goto done;
    long after_infer = mapped_kib(maps_file);
    if (show_metrics)
        print_metrics(e, ctx);
    if (keep_outputs(e, r, &err))
        goto done;
    if (maps_file)
        printf("%s KiB mapped from %s: after read_model %ld, compile_model %ld, infer %ld\n", e->which, maps_file,
               after_read,
               after_compile, after_infer);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "crosscheck: %s: %s\n", e->which, err.msg[0] ? err.msg : "failed");
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

/* Value k of ref's and ort's output, for the shared statistic. */
static void float_pair(const void *ctx, size_t k, double *r, double *o)
{
    const float *const *pv = ctx;
    *r = pv[0][k];
    *o = pv[1][k];
}

static int compare(const engine_run *ref, const engine_run *ort, double rtol, double within)
{
    int bad = 0;
    if (ref->n_out != ort->n_out) {
        printf("FAIL: ref has %zu outputs, ort %zu\n", ref->n_out, ort->n_out);
        return 1;
    }
    for (size_t i = 0; i < ref->n_out; i++) {
        const engine_tensor_info *a = &ref->info[i], *b = &ort->info[i];
        int same_shape = a->rank == b->rank && a->dtype == b->dtype;
        for (int k = 0; same_shape && k < a->rank; k++)
            same_shape = a->dims[k] == b->dims[k];
        if (!same_shape) {
            printf("FAIL: output %zu (%s): dtype/shape differ between ref and ort\n", i, a->name);
            bad = 1;
            continue;
        }
        double scale = 0, diff = 0;
        size_t worst = 0;
        for (size_t k = 0; k < ref->n_vals[i]; k++) {
            double x = ref->vals[i][k], y = ort->vals[i][k];
            if (fabs(x) > scale)
                scale = fabs(x);
            double d = isnan(x) || isnan(y) ? INFINITY : fabs(x - y);
            if (d > diff) {
                diff = d;
                worst = k;
            }
        }
        double rel = scale > 0 ? diff / scale : diff;
        int ok = rel <= rtol;
        if (within > 0) {
            const float *pv[2] = {ref->vals[i], ort->vals[i]};
            mlk_within w;
            char line[256];
            mlk_within_measure(ref->n_vals[i], float_pair, pv, rtol, &w);
            mlk_within_format(&w, rtol, within, line, sizeof line);
            ok = mlk_within_ok(&w, within);
            printf("%s: output %zu (%s): %s\n", ok ? "ok" : "FAIL", i, a->name, line);
            bad |= !ok;
            continue;
        }
        printf("%s: output %zu (%s, %zu values): max|ort-ref| %.3g at %zu (ref %.6g, ort %.6g), max|ref| %.4g, "
               "relative %.3g (rtol %.1g)\n",
               ok ? "ok" : "FAIL", i, a->name, ref->n_vals[i], diff, worst,
               ref->n_vals[i] ? ref->vals[i][worst] : 0.0, ref->n_vals[i] ? ort->vals[i][worst] : 0.0, scale, rel,
               rtol);
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

int main(int argc, char **argv)
{
    engine_run ref = {.which = "ref"}, ort = {.which = "ort"};
    char self[4000], lib_dir[4100] = "";
    double rtol = 1e-4, within = 0;
    const char *model = NULL, *maps = NULL;
    int n_infers = 1, rc = 2, n_owned = 0, show_metrics = 0;
    char *owned[MAX_OPTS]; /* copies made for --opt, so each engine splits its own string */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        snprintf(lib_dir, sizeof lib_dir, "%s/../lib", self);
    }
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--lib-dir") && more)
            snprintf(lib_dir, sizeof lib_dir, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--rtol") && more)
            rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--within") && more)
            within = atof(argv[++i]);
        else if (!strcmp(argv[i], "--maps") && more)
            maps = argv[++i];
        else if (!strcmp(argv[i], "--metrics"))
            show_metrics = 1;
        else if (!strcmp(argv[i], "--infers") && more)
            n_infers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--opt") && more && n_owned < MAX_OPTS) {
            char *a = argv[++i], *b = owned[n_owned++] = strdup(a);
            if (!b || add_opt(&ref, a) || add_opt(&ort, b)) {
                fprintf(stderr, "crosscheck: bad --opt\n");
                goto out;
            }
        } else if (!strcmp(argv[i], "--ref-opt") && more) {
            if (add_opt(&ref, argv[++i])) {
                fprintf(stderr, "crosscheck: bad --ref-opt\n");
                goto out;
            }
        } else if (!strcmp(argv[i], "--ort-opt") && more) {
            if (add_opt(&ort, argv[++i])) {
                fprintf(stderr, "crosscheck: bad --ort-opt\n");
                goto out;
            }
        } else if (argv[i][0] != '-' && !model)
            model = argv[i];
        else {
            fprintf(stderr, "usage: ort_crosscheck [--lib-dir DIR] [--rtol X] [--opt k=v] [--ref-opt k=v] "
                            "[--ort-opt k=v] [--maps FILE] [--metrics] [--infers N] [--within F] MODEL\n");
            goto out;
        }
    }
    if (!model || n_infers < 1) {
        fprintf(stderr, "crosscheck: a model is required (and --infers >= 1)\n");
        goto out;
    }
    if (!open_engine(&ref, lib_dir) && !open_engine(&ort, lib_dir) && !run_engine(&ref, model, maps, n_infers, show_metrics) &&
        !run_engine(&ort, model, maps, n_infers, show_metrics))
        rc = compare(&ref, &ort, rtol, within);
    printf("%s: %s\n", model, rc == 0 ? "outputs agree" : rc == 1 ? "outputs DISAGREE" : "error");
out:
    for (size_t i = 0; i < MAX_OUT; i++) {
        free(ref.vals[i]);
        free(ort.vals[i]);
    }
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    mlk_plugin_deinit(&ref.plugin);
    mlk_plugin_deinit(&ort.plugin);
    return rc;
}
