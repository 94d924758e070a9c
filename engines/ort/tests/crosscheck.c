/* crosscheck.c: runs one model through engine_ref.so and engine_ort.so (engines/engine.h) on the harness's
 * deterministic inputs and compares every output. It must never judge by anything but the outputs it read back.
 *
 * usage: ort_crosscheck [--lib-dir DIR] [--rtol X] [--opt k=v] [--ref-opt k=v] [--ort-opt k=v] [--maps FILE]
 *                       [--metrics] [--infers N] [--within F] [--basis-model FILE | --basis-nudge N|auto]
 *                       [--basis-ort-opt k=v] [--basis-k K] MODEL
 * --opt goes to both engines, --ref-opt / --ort-opt to one. --maps FILE prints how many KiB of FILE each engine
 * has mapped after read_model, compile_model and infer (what mmap on/off means, read from /proc/self/maps);
 * --metrics prints each engine's metrics after the last infer.
 * Outputs agree when max|ort - ref| <= rtol * max|ref| for every output (the error relative to the output's own
 * scale; an element-wise ratio is meaningless at values near zero). --within F is the statistical check for
 * ill-conditioned outputs (a quantized model whose activations land one quantization step apart now and then): an
 * output agrees when at least the fraction F of its elements are within rtol * max|ref|; it prints that fraction
 * and the mean and max difference. Use it only where a case says why.
 * A basis sets the tolerance from ORT's own difference instead of a number picked by hand: ORT runs a second time,
 * on FILE (--basis-model: e.g. the float32 twin of a float16 model, same inputs) or on the inputs with every float
 * value moved N steps of its type up (--basis-nudge: how far an ill-conditioned model moves on its own; auto: the
 * fewest of 1, 2, 4, ... 512 steps that move any output, as a small input may take a few to move at all), and each
 * output is judged against that difference D, printed beside it: element-wise, max|ort - ref| <= K * max D (or
 * rtol * max|ref| when larger); with --within, the share of values within rtol * max|ref| at least ORT's own
 * divided by K, the share outside at most K times ORT's own, the fraction F (0 allowed with a basis) at least, and
 * the mean |ort - ref| at most K times ORT's own mean, unless every value is within. K is 2 by default.
 * --basis-ort-opt k=v (repeatable) is another basis: ORT with these options too (graph_optimization=disable: its fused
 * integer kernels against the float Quantize/Dequantize it runs unfused, two readings of one quantized model) against
 * ORT. Given beside --basis-model or --basis-nudge, an output agrees when either basis accepts it.
 * Exit 0 agree, 1 disagree, 2 usage or error. */
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

/* One run's outputs, converted to float. */
typedef struct {
    size_t n_out;
    engine_tensor_info info[MAX_OUT];
    float *vals[MAX_OUT];
    size_t n_vals[MAX_OUT];
    char names[MAX_OUT][128];
} run_outputs;

typedef struct {
    const char *which;
    mlk_plugin plugin;
    const engine_api *api; /* &plugin.api once open */
    engine_kv opts[MAX_OPTS];
    size_t n_opts;
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

static int keep_outputs(const engine_run *e, engine_request *r, run_outputs *o, engine_error *err)
{
    for (size_t i = 0; i < o->n_out; i++) {
        const void *data;
        size_t nbytes;
        if (e->api->output(r, i, &o->info[i], &data, &nbytes, err))
            return -1;
        snprintf(o->names[i], sizeof o->names[i], "%s", o->info[i].name ? o->info[i].name : "?");
        o->info[i].name = o->names[i];
        size_t n = 1;
        for (int k = 0; k < o->info[i].rank; k++)
            n *= (size_t)o->info[i].dims[k];
        free(o->vals[i]);
        o->vals[i] = malloc((n ? n : 1) * sizeof(float));
        if (!o->vals[i])
            return -1;
        for (size_t k = 0; k < n; k++)
            o->vals[i][k] = to_float(o->info[i].dtype, data, k);
        o->n_vals[i] = n;
        (void)nbytes;
    }
    return 0;
}

static void outputs_free(run_outputs *o)
{
    for (size_t i = 0; i < MAX_OUT; i++)
        free(o->vals[i]);
}

/* --basis-nudge: the engine's set_input, called with every float input value moved nudge_ulps steps of its own
 * type toward +inf (a static pair, as the engine ABI's set_input has no context of the caller's). */
static int (*nudge_real_set_input)(engine_request *, size_t, const engine_tensor_info *, const void *, size_t,
                                   engine_error *);
static int nudge_ulps;

static void nudge(int dtype, void *p, size_t nbytes)
{
    for (int u = 0; u < nudge_ulps; u++) {
        if (dtype == 1)
            for (size_t k = 0; k < nbytes / 4; k++)
                ((float *)p)[k] = nextafterf(((float *)p)[k], INFINITY);
        else if (dtype == 11)
            for (size_t k = 0; k < nbytes / 8; k++)
                ((double *)p)[k] = nextafter(((double *)p)[k], INFINITY);
        else if (dtype == 10)
            for (size_t k = 0; k < nbytes / 2; k++) {
                uint16_t *h = (uint16_t *)p + k;
                if ((*h & 0x7c00) == 0x7c00) /* infinities and NaN stay */
                    continue;
                *h = *h == 0x8000 ? 0x0001 : *h & 0x8000 ? (uint16_t)(*h - 1) : (uint16_t)(*h + 1);
            }
    }
}

static int nudged_set_input(engine_request *r, size_t i, const engine_tensor_info *info, const void *data,
                            size_t nbytes, engine_error *err)
{
    void *copy = malloc(nbytes ? nbytes : 1);
    if (!copy) {
        snprintf(err->msg, sizeof err->msg, "input %zu: out of memory for a nudged copy of %zu bytes", i, nbytes);
        return -1;
    }
    memcpy(copy, data, nbytes);
    nudge(info->dtype, copy, nbytes);
    int rc = nudge_real_set_input(r, i, info, copy, nbytes, err);
    free(copy);
    return rc;
}

static void print_metrics(const engine_run *e, engine_ctx *ctx)
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

/* The whole pipeline once, with n_infers runs, the outputs of the last into *o; inputs nudged when nudged is set. */
static int run_engine(const engine_run *e, const char *model, run_outputs *o, int nudged, const char *maps_file,
                      int n_infers, int show_metrics)
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
    o->n_out = a->n_outputs(c);
    if (o->n_out > MAX_OUT) {
        snprintf(err.msg, sizeof err.msg, "%zu outputs, at most %d compared", o->n_out, MAX_OUT);
        goto done;
    }
    if (mlk_inputs_new(NULL, 0, &in, &merr)) {
        snprintf(err.msg, sizeof err.msg, "%.500s", merr.msg);
        goto done;
    }
    engine_api nudging = *a;
    nudging.set_input = nudged_set_input;
    nudge_real_set_input = a->set_input;
    if (a->create_request(c, &r, &err) || mlk_inputs_apply(in, nudged ? &nudging : a, c, r, NULL, NULL, &err))
        goto done;
    for (int i = 0; i < n_infers; i++)
        if (a->infer(r, &err))
            goto done;
    long after_infer = mapped_kib(maps_file);
    if (show_metrics)
        print_metrics(e, ctx);
    if (keep_outputs(e, r, o, &err))
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

/* ORT's own difference, the basis of the tolerances (--basis-model / --basis-nudge): ORT run a second way. */
typedef struct {
    const run_outputs *out; /* NULL: no basis, rtol alone */
    const char *what;       /* how the second run differs, for the report */
    double k;               /* ref may differ from ORT by k times ORT's own difference */
} basis;

static int same_dims(const engine_tensor_info *a, const engine_tensor_info *b)
{
    int same = a->rank == b->rank;
    for (int k = 0; same && k < a->rank; k++)
        same = a->dims[k] == b->dims[k];
    return same;
}

/* Output i: ref against ort, by rtol or the fraction within, each scaled by the basis when there is one. */
static int compare_one(const run_outputs *ref, const run_outputs *ort, const basis *bs, size_t i, double rtol,
                       double within)
{
    const char *name = ref->info[i].name;
    const float *pv[2] = {ref->vals[i], ort->vals[i]};
    mlk_within w, own = {0};
    char line[256], own_line[256] = "";
    mlk_within_measure(ref->n_vals[i], float_pair, pv, rtol, &w);
    if (bs->out) {
        const float *po[2] = {ort->vals[i], bs->out->vals[i]};
        mlk_within_measure(ort->n_vals[i], float_pair, po, rtol, &own);
        snprintf(own_line, sizeof own_line, "max %.3g, mean %.3g; %.4f of %zu values within %.1g of max|ort| %.4g",
                 own.max, own.mean, own.frac, own.n, rtol, own.scale);
    }
    int ok;
    if (within >= 0) { /* --within given */
        double need = bs->out ? mlk_within_need(&own, bs->k, within) : within;
        /* every value within rtol passes as the element-wise check would; else the share and the mean */
        ok = w.n_in == w.n || (mlk_within_ok(&w, need) && (!bs->out || w.mean <= bs->k * own.mean));
        mlk_within_format(&w, rtol, need, line, sizeof line);
        printf("%s: output %zu (%s): %s\n", ok ? "ok" : "FAIL", i, name, line);
    } else {
        /* element-wise: within rtol of the scale, or of k times ORT's own largest difference when that is larger */
        double bound = rtol * (w.scale > 0 ? w.scale : 1);
        if (bs->out && bs->k * own.max > bound)
            bound = bs->k * own.max;
        ok = w.max <= bound;
        size_t at = 0; /* where the largest difference is, for the reader */
        for (size_t k = 0; k < ref->n_vals[i]; k++)
            if (!(fabsf(pv[0][k] - pv[1][k]) <= fabsf(pv[0][at] - pv[1][at])))
                at = k;
        printf("%s: output %zu (%s, %zu values): max|ort-ref| %.3g at %zu (ref %.6g, ort %.6g), max|ref| %.4g, "
               "relative %.3g, bound %.3g (rtol %.1g%s)\n",
               ok ? "ok" : "FAIL", i, name, ref->n_vals[i], w.max, at, ref->n_vals[i] ? pv[0][at] : 0.0,
               ref->n_vals[i] ? pv[1][at] : 0.0, w.scale, w.scale > 0 ? w.max / w.scale : w.max, bound, rtol,
               bs->out ? " or k x ORT's own max" : "");
    }
    if (bs->out)
        printf("  ORT's own difference (%s, k %g): %s\n", bs->what, bs->k, own_line);
    return !ok;
}

/* Every output against ort, by the basis bs (or, when bs2 has outputs, by whichever of the two accepts it). */
static int compare(const run_outputs *ref, const run_outputs *ort, const basis *bs, const basis *bs2, double rtol,
                   double within)
{
    int bad = 0;
    if (bs2->out && bs2->out->n_out != ort->n_out) {
        printf("FAIL: ort has %zu outputs, the basis %zu (%s)\n", ort->n_out, bs2->out->n_out, bs2->what);
        return 1;
    }
    if (ref->n_out != ort->n_out || (bs->out && bs->out->n_out != ort->n_out)) {
        printf("FAIL: ref has %zu outputs, ort %zu, the basis %zu\n", ref->n_out, ort->n_out,
               bs->out ? bs->out->n_out : ort->n_out);
        return 1;
    }
    for (size_t i = 0; i < ref->n_out; i++) {
        const engine_tensor_info *a = &ref->info[i], *b = &ort->info[i];
        if (a->dtype != b->dtype || !same_dims(a, b)) {
            printf("FAIL: output %zu (%s): dtype/shape differ between ref and ort\n", i, a->name);
            bad = 1;
        } else if (bs->out && !same_dims(b, &bs->out->info[i])) { /* a float32 basis of a float16 model */
            printf("FAIL: output %zu (%s): its shape differs between ort and the basis (%s)\n", i, a->name, bs->what);
            bad = 1;
        } else if (compare_one(ref, ort, bs, i, rtol, within)) {
            if (bs2->out && bs->out) /* the second basis may still accept it */
                printf("  output %zu: by the other basis:\n", i);
            bad |= !(bs2->out && bs->out) || compare_one(ref, ort, bs2, i, rtol, within);
        }
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

/* --basis-nudge auto: the fewest steps of 1, 2, 4, ... NUDGE_MAX that move any output of ORT's. */
#define NUDGE_AUTO (-1)
#define NUDGE_MAX 512

/* The command line, parsed. */
typedef struct {
    char lib_dir[4100];
    double rtol, within, k;
    const char *model, *maps, *basis_model;
    int n_infers, show_metrics, nudge;
    int n_owned;
    char *owned[MAX_OPTS]; /* copies made for --opt, so each engine splits its own string */
    int n_alt;
    char *alt[MAX_OPTS]; /* --basis-ort-opt, split when the basis engine is made */
} xc_args;

#define XC_USAGE                                                                                                   \
    "usage: ort_crosscheck [--lib-dir DIR] [--rtol X] [--opt k=v] [--ref-opt k=v] [--ort-opt k=v] [--maps FILE]\n" \
    "                      [--metrics] [--infers N] [--within F] [--basis-model FILE | --basis-nudge N|auto]\n"        \
    "                      [--basis-ort-opt k=v] [--basis-k K] MODEL\n"

static int parse_args(int argc, char **argv, xc_args *x, engine_run *ref, engine_run *ort)
{
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        const char *bad = NULL;
        if (!strcmp(argv[i], "--lib-dir") && more)
            snprintf(x->lib_dir, sizeof x->lib_dir, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--rtol") && more)
            x->rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--within") && more)
            x->within = atof(argv[++i]);
        else if (!strcmp(argv[i], "--maps") && more)
            x->maps = argv[++i];
        else if (!strcmp(argv[i], "--metrics"))
            x->show_metrics = 1;
        else if (!strcmp(argv[i], "--infers") && more)
            x->n_infers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--basis-model") && more)
            x->basis_model = argv[++i];
        else if (!strcmp(argv[i], "--basis-nudge") && more) {
            char *end;
            const char *v = argv[++i];
            x->nudge = !strcmp(v, "auto") ? NUDGE_AUTO : (int)strtol(v, &end, 10);
            if (strcmp(v, "auto") && (*end || x->nudge < 1))
                bad = "--basis-nudge takes 1 to 1000 (steps of the input's type) or auto";
        } else if (!strcmp(argv[i], "--basis-ort-opt") && more && x->n_alt < MAX_OPTS) {
            if (!strchr(argv[++i], '='))
                bad = "--basis-ort-opt takes key=value";
            x->alt[x->n_alt++] = argv[i];
        } else if (!strcmp(argv[i], "--basis-k") && more)
            x->k = atof(argv[++i]);
        else if (!strcmp(argv[i], "--opt") && more && x->n_owned < MAX_OPTS) {
            char *a = argv[++i], *b = x->owned[x->n_owned++] = strdup(a);
            if (!b || add_opt(ref, a) || add_opt(ort, b))
                bad = "bad --opt";
        } else if (!strcmp(argv[i], "--ref-opt") && more) {
            if (add_opt(ref, argv[++i]))
                bad = "bad --ref-opt";
        } else if (!strcmp(argv[i], "--ort-opt") && more) {
            if (add_opt(ort, argv[++i]))
                bad = "bad --ort-opt";
        } else if (argv[i][0] != '-' && !x->model)
            x->model = argv[i];
        else
            bad = "";
        if (bad) {
            fprintf(stderr, "%s%s%s", *bad ? "crosscheck: " : "", bad, *bad ? "\n" : XC_USAGE);
            return -1;
        }
    }
    const char *bad = !x->model || x->n_infers < 1 ? "a model is required (and --infers >= 1)"
                      : x->basis_model && x->nudge ? "--basis-model and --basis-nudge are two bases: give one"
                      : x->within > 1 || (x->within < 0 && x->within != -1) ? "--within takes a fraction, 0 to 1"
                      : x->within == 0 && !x->basis_model && !x->nudge && !x->n_alt
                          ? "--within 0 accepts anything without a basis"
                      : x->nudge < NUDGE_AUTO || x->nudge > 1000
                          ? "--basis-nudge takes 1 to 1000 (steps of the input's type) or auto"
                      : !(x->k >= 1) ? "--basis-k must be at least 1 (a tighter bound would fail ORT itself)"
                                     : NULL;
    if (bad)
        fprintf(stderr, "crosscheck: %s\n", bad);
    return bad ? -1 : 0;
}

/* Whether any output value of b differs from a's (NaN against NaN is the same). */
static int moved(const run_outputs *a, const run_outputs *b)
{
    for (size_t i = 0; i < a->n_out && i < b->n_out; i++)
        for (size_t k = 0; k < a->n_vals[i] && k < b->n_vals[i]; k++)
            if (a->vals[i][k] != b->vals[i][k] && !(isnan(a->vals[i][k]) && isnan(b->vals[i][k])))
                return 1;
    return 0;
}

/* ORT's second run into *own, as the arguments ask, and what it was into what; -1 when a run fails. With
 * --basis-nudge auto, runs with 1, 2, 4, ... steps until one moves any output (all NUDGE_MAX: D stays 0). */
static int run_basis(const engine_run *ort, const xc_args *x, const run_outputs *ort_out, run_outputs *own,
                     char *what, size_t len)
{
    if (x->basis_model) {
        snprintf(what, len, "ORT on %s against ORT on the model", x->basis_model);
        return run_engine(ort, x->basis_model, own, 0, NULL, 1, 0);
    }
    int n = x->nudge == NUDGE_AUTO ? 1 : x->nudge;
    for (;; n *= 2) {
        nudge_ulps = n;
        if (run_engine(ort, x->model, own, 1, NULL, 1, 0))
            return -1;
        if (x->nudge != NUDGE_AUTO || n >= NUDGE_MAX || moved(ort_out, own))
            break;
    }
    snprintf(what, len, "ORT on every float input moved %d step(s) up against ORT%s", n,
             x->nudge == NUDGE_AUTO ? " (auto: the fewest that moved it)" : "");
    return 0;
}

/* --basis-ort-opt: ORT once more, on the model and inputs, with those options after the others (later ones win). */
static int run_alt(const engine_run *ort, const xc_args *x, run_outputs *alt_out, char *what, size_t len)
{
    engine_run alt = *ort;
    char copies[MAX_OPTS][256];
    size_t at = (size_t)snprintf(what, len, "ORT with");
    for (int i = 0; i < x->n_alt; i++) {
        snprintf(copies[i], sizeof copies[i], "%s", x->alt[i]);
        if (at < len)
            at += (size_t)snprintf(what + at, len - at, " %s", x->alt[i]);
        if (add_opt(&alt, copies[i])) {
            fprintf(stderr, "crosscheck: --basis-ort-opt %s: more than %d options in all\n", x->alt[i], MAX_OPTS);
            return -1;
        }
    }
    if (at < len)
        snprintf(what + at, len - at, " against ORT");
    return run_engine(&alt, x->model, alt_out, 0, NULL, 1, 0);
}

int main(int argc, char **argv)
{
    engine_run ref = {.which = "ref"}, ort = {.which = "ort"};
    run_outputs ref_out = {0}, ort_out = {0}, own_out = {0}, alt_out = {0};
    xc_args x = {.rtol = 1e-4, .within = -1, .k = 2, .n_infers = 1};
    char self[4000], what[600], alt_what[600] = "";
    basis bs = {.what = what}, bs2 = {.what = alt_what};
    int rc = 2;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        snprintf(x.lib_dir, sizeof x.lib_dir, "%s/../lib", self);
    }
    if (parse_args(argc, argv, &x, &ref, &ort))
        goto out;
    bs.k = bs2.k = x.k;
    if (!open_engine(&ref, x.lib_dir) && !open_engine(&ort, x.lib_dir) &&
        !run_engine(&ref, x.model, &ref_out, 0, x.maps, x.n_infers, x.show_metrics) &&
        !run_engine(&ort, x.model, &ort_out, 0, x.maps, x.n_infers, x.show_metrics)) {
        int based = x.basis_model || x.nudge;
        if ((!based || !run_basis(&ort, &x, &ort_out, &own_out, what, sizeof what)) &&
            (!x.n_alt || !run_alt(&ort, &x, &alt_out, alt_what, sizeof alt_what))) {
            bs.out = based ? &own_out : NULL;
            if (x.n_alt) /* the only basis, or the second */
                *(based ? &bs2 : &bs) = (basis){.out = &alt_out, .what = alt_what, .k = x.k};
            rc = compare(&ref_out, &ort_out, &bs, &bs2, x.rtol, x.within);
        }
    }
    printf("%s: %s\n", x.model, rc == 0 ? "outputs agree" : rc == 1 ? "outputs DISAGREE" : "error");
out:
    outputs_free(&ref_out);
    outputs_free(&ort_out);
    outputs_free(&own_out);
    outputs_free(&alt_out);
    for (int i = 0; i < x.n_owned; i++)
        free(x.owned[i]);
    mlk_plugin_deinit(&ref.plugin);
    mlk_plugin_deinit(&ort.plugin);
    return rc;
}
