/* conformance_case.c: runs one ONNX backend test case (model.onnx + test_data_set_*) and compares outputs.
 * It must never call a case passed unless every output of every data set matched within tolerance. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"
#include "tensor.h"

#define MAX_IO 32

/* An engine status becomes skip (unsupported) or fail (anything else); long messages are cut. */
static void from_status(ref_case_result *res, int rc, const char *stage, const ref_error *err)
{
    res->verdict = rc == REF_E_UNSUPPORTED ? REF_CASE_SKIP : REF_CASE_FAIL;
    int n = snprintf(res->msg, sizeof res->msg, "%.80s: %.500s", stage, err->msg);
    (void)n;
}

static double bf16_to_double(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static bool is_float(int dt)
{
    return dt == REF_DT_FLOAT || dt == REF_DT_DOUBLE || dt == REF_DT_FLOAT16 || dt == REF_DT_BFLOAT16;
}

/* IEEE binary16 bits to double, for comparing float16 outputs. */
static double half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exp == 0)
        return sign * ldexp(mant, -24);
    if (exp == 31)
        return mant ? NAN : sign * INFINITY;
    return sign * ldexp(mant + 1024, exp - 25);
}

static double value_at(const ref_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case REF_DT_FLOAT: return ((const float *)t->data)[i];
    case REF_DT_DOUBLE: return ((const double *)t->data)[i];
    case REF_DT_INT64: return (double)((const int64_t *)t->data)[i];
    case REF_DT_INT32: return ((const int32_t *)t->data)[i];
    case REF_DT_INT16: return ((const int16_t *)t->data)[i];
    case REF_DT_INT8: return ((const int8_t *)t->data)[i];
    case REF_DT_UINT8: case REF_DT_BOOL: return ((const uint8_t *)t->data)[i];
    case REF_DT_UINT16: return ((const uint16_t *)t->data)[i];
    case REF_DT_FLOAT16: return half_to_double(((const uint16_t *)t->data)[i]);
    case REF_DT_BFLOAT16: return bf16_to_double(((const uint16_t *)t->data)[i]);
    case REF_DT_UINT32: return ((const uint32_t *)t->data)[i];
    case REF_DT_UINT64: return (double)((const uint64_t *)t->data)[i];
    default: return 0;
    }
}

double ref_case_value(const ref_tensor *t, int64_t i)
{
    return value_at(t, i);
}

bool ref_case_is_float(int dtype)
{
    return is_float(dtype);
}

/* Compare got with want: shape and type exactly, values within atol + rtol*|want| for floats, exactly
 * for the rest. NaN matches NaN. Returns 0, or writes why into why. */
/* Sequences and optionals: the same count (and presence), then element by element. */
static int compare_values(const ref_tensor *got, const ref_tensor *want, double rtol, double atol, char *why,
                          size_t len)
{
    int gn, wn, gh, wh;
    ref_error err = {0};
    if (ref_value_count(got, &gn, &gh, &err) || ref_value_count(want, &wn, &wh, &err)) {
        snprintf(why, len, "%s", err.msg);
        return -1;
    }
    if (gn != wn || gh != wh) {
        snprintf(why, len, "%d elements (has value %d), expected %d (has value %d)", gn, gh, wn, wh);
        return -1;
    }
    for (int i = 0; i < gn; i++) {
        ref_tensor g, w;
        char inner[200];
        ref_value_element(got, i, &g, NULL);
        ref_value_element(want, i, &w, NULL);
        if (ref_case_compare(&g, &w, rtol, atol, inner, sizeof inner)) {
            snprintf(why, len, "element %d: %s", i, inner);
            return -1;
        }
    }
    return 0;
}

int ref_case_compare(const ref_tensor *got, const ref_tensor *want, double rtol, double atol, char *why,
                     size_t len)
{
    char a[96], b[96];
    if (want->dtype == REF_DT_SEQUENCE || want->dtype == REF_DT_OPTIONAL) {
        if (got->dtype != want->dtype) {
            snprintf(why, len, "type %s, expected %s", ref_dtype_name(got->dtype), ref_dtype_name(want->dtype));
            return -1;
        }
        return compare_values(got, want, rtol, atol, why, len);
    }
    if (got->dtype != want->dtype) {
        snprintf(why, len, "type %s, expected %s", ref_dtype_name(got->dtype), ref_dtype_name(want->dtype));
        return -1;
    }
    if (!ref_shape_equal(got, want)) {
        snprintf(why, len, "shape %s, expected %s", ref_shape_str(got, a, sizeof a),
                 ref_shape_str(want, b, sizeof b));
        return -1;
    }
    int64_t n = ref_tensor_numel(want);
    if (want->dtype == REF_DT_STRING) {
        for (int64_t i = 0; i < n; i++) {
            const char *g = (const char *)got->data + i * REF_STRING_BYTES, *w = (const char *)want->data + i * REF_STRING_BYTES;
            if (strncmp(g, w, REF_STRING_BYTES)) {
                snprintf(why, len, "element %lld is \"%.63s\", expected \"%.63s\"", (long long)i, g, w);
                return -1;
            }
        }
        return 0;
    }
    if (!is_float(want->dtype)) {
        size_t bytes = ref_tensor_nbytes(want);
        if (bytes && memcmp(got->data, want->data, bytes)) {
            for (int64_t i = 0; i < n; i++)
                if (value_at(got, i) != value_at(want, i)) {
                    snprintf(why, len, "element %lld is %g, expected %g", (long long)i, value_at(got, i),
                             value_at(want, i));
                    return -1;
                }
        }
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        double g = value_at(got, i), w = value_at(want, i);
        if (isnan(g) && isnan(w))
            continue;
        if (isinf(w) && g == w)
            continue;
        if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
            snprintf(why, len, "element %lld is %.9g, expected %.9g (rtol %g, atol %g)", (long long)i, g, w,
                     rtol, atol);
            return -1;
        }
    }
    return 0;
}

static void free_set(int n, ref_tensor *t, char **names)
{
    for (int j = 0; j < n; j++) {
        ref_tensor_data_free(&t[j]);
        ref_string_free(names[j]);
    }
}

/* Load dir/prefix_K.pb for K = 0.. into t[] (MAX_IO entries); returns the count, or -1 with res set. kinds[K]
 * (when kinds is given) is REF_DT_SEQUENCE or REF_DT_OPTIONAL for a SequenceProto or OptionalProto file.
 * A set with more files than t[] holds is skipped, naming the limit, rather than cut short. */
static int load_set(const char *dir, const char *prefix, const int *kinds, ref_tensor *t, char **names,
                    ref_case_result *res)
{
    int n = 0;
    for (;; n++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, n);
        if (access(path, R_OK))
            break;
        if (n == MAX_IO) {
            res->verdict = REF_CASE_SKIP;
            snprintf(res->msg, sizeof res->msg, "%.500s: more than %d %s files", dir, MAX_IO, prefix);
            free_set(n, t, names);
            return -1;
        }
        ref_error err = {0};
        int kind = kinds ? kinds[n] : 0;
        int rc = kind == REF_DT_SEQUENCE || kind == REF_DT_OPTIONAL ? ref_value_load_pb(path, kind, &t[n], &names[n], &err)
                                                                   : ref_tensor_load_pb(path, &t[n], &names[n], &err);
        if (rc) {
            from_status(res, rc, path, &err);
            free_set(n, t, names);
            return -1;
        }
    }
    return n;
}

/* Which graph input each loaded tensor feeds: by name when every name matches, else by position. */
static void map_inputs(const ref_compiled *c, int n, char **names, int *slot)
{
    size_t ni = ref_compiled_n_inputs(c);
    bool by_name = true;
    for (int j = 0; j < n; j++) {
        slot[j] = j;
        bool found = false;
        for (size_t i = 0; names[j] && i < ni; i++) {
            ref_value_desc d;
            ref_compiled_input(c, i, &d);
            if (!strcmp(d.name, names[j])) {
                found = true;
                slot[j] = (int)i;
            }
        }
        by_name = by_name && found;
    }
    if (!by_name)
        for (int j = 0; j < n; j++)
            slot[j] = j;
}

static void run_set(ref_compiled *c, const char *set_dir, const ref_case_opts *o, ref_case_result *res)
{
    ref_tensor in[MAX_IO], want[MAX_IO];
    char *in_names[MAX_IO] = {0}, *out_names[MAX_IO] = {0};
    int slot[MAX_IO], in_kinds[MAX_IO] = {0}, out_kinds[MAX_IO] = {0};
    for (size_t i = 0; i < MAX_IO; i++) { /* sequences and optionals by position, as the files are ordered */
        ref_value_desc d;
        if (i < ref_compiled_n_inputs(c) && !ref_compiled_input(c, i, &d))
            in_kinds[i] = d.shape.dtype;
        if (i < ref_compiled_n_outputs(c) && !ref_compiled_output(c, i, &d))
            out_kinds[i] = d.shape.dtype;
    }
    int n_in = load_set(set_dir, "input", in_kinds, in, in_names, res);
    if (n_in < 0)
        return;
    int n_out = load_set(set_dir, "output", out_kinds, want, out_names, res);
    if (n_out < 0) {
        free_set(n_in, in, in_names);
        return;
    }
    ref_request *r = NULL;
    ref_error err = {0};
    int rc = ref_request_new(c, &r, &err);
    if (rc) {
        from_status(res, rc, "create_request", &err);
        goto out;
    }
    map_inputs(c, n_in, in_names, slot);
    for (int j = 0; j < n_in; j++) {
        ref_value_desc d;
        /* ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns; take them as what the model declares. */
        if (!ref_compiled_input(c, (size_t)slot[j], &d) && d.shape.dtype == REF_DT_BFLOAT16 &&
            in[j].dtype == REF_DT_UINT16)
            in[j].dtype = REF_DT_BFLOAT16;
    }
    for (int j = 0; j < n_in; j++)
        if ((rc = ref_request_set_input(r, (size_t)slot[j], &in[j], &err))) {
            /* A data set that contradicts the model's own declared input (a few ONNX 1.12 cases do) says
             * nothing about the engine: skip it, naming the contradiction. */
            from_status(res, rc == REF_E_SHAPE ? REF_E_UNSUPPORTED : rc,
                        rc == REF_E_SHAPE ? "test data contradicts the model's declared input" : "set_input", &err);
            goto out;
        }
    for (int it = 0; it < o->iterations; it++)
        if ((rc = ref_infer(r, &err))) {
            from_status(res, rc, "infer", &err);
            goto out;
        }
    if ((size_t)n_out != ref_compiled_n_outputs(c)) {
        snprintf(res->msg, sizeof res->msg, "%d reference outputs for %zu graph outputs", n_out,
                 ref_compiled_n_outputs(c));
        res->verdict = REF_CASE_FAIL;
        goto out;
    }
    for (int j = 0; j < n_out; j++) {
        ref_tensor got;
        ref_request_output(r, (size_t)j, &got, &err);
        if (got.dtype == REF_DT_BFLOAT16 && want[j].dtype == REF_DT_UINT16)
            want[j].dtype = REF_DT_BFLOAT16; /* the same bit-pattern convention as for inputs */
        double frac = 1;
        char line[256];
        int bad = ref_case_compare_declared(&got, &want[j], o->rtol, o->atol, o->within, &frac, line, sizeof line);
        if (bad) {
            res->verdict = REF_CASE_FAIL;
            snprintf(res->msg, sizeof res->msg, "output %d: %s%s%s", j, line, o->within ? "; declared: " : "",
                     o->within ? o->within->why : "");
            goto out;
        }
        if (line[0] && frac < res->worst) { /* a passed statistical output: keep the worst one's numbers */
            res->worst = frac;
            snprintf(res->msg, sizeof res->msg, "output %d: %s; declared: %s", j, line, o->within->why);
        }
    }
out:
    ref_request_free(r);
    free_set(n_in, in, in_names);
    free_set(n_out, want, out_names);
}

/* The shapes of the first data set's inputs become shape.NAME options: compile plans for what the inputs bring
 * (by name when every name matches a graph input, else by position, as map_inputs does). */
static void shapes_from_data(const ref_model *m, const char *case_dir, ref_options *o)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/test_data_set_0", case_dir);
    ref_tensor in[MAX_IO];
    char *names[MAX_IO] = {0};
    ref_case_result ignored;
    int n = load_set(dir, "input", NULL, in, names, &ignored);
    size_t ni = ref_model_n_inputs(m);
    bool by_name = n > 0;
    for (int j = 0; j < n; j++) {
        bool found = false;
        for (size_t i = 0; names[j] && i < ni; i++)
            found = found || !strcmp(names[j], ref_model_input_name(m, i));
        by_name = by_name && found;
    }
    for (int j = 0; j < n && (size_t)j < ni; j++)
        ref_options_set_shape(o, by_name ? names[j] : ref_model_input_name(m, (size_t)j), &in[j], NULL);
    if (n > 0)
        free_set(n, in, names);
}

/* Cases whose reference outputs contradict the ONNX specification itself: skipped, naming the contradiction. */
static const struct {
    const char *name, *why;
} contradicted[] = {
    {"test_adam_multiple", "the reference outputs use epsilon=1e-2, which the node omits (the spec's default is 1e-6)"},
};

/* Cases whose outputs are random draws: numpy's global generator made them, and no engine can reproduce them. */
static const char *const random_cases[] = {
    "test_bernoulli", "test_bernoulli_double", "test_bernoulli_seed",
    "test_bernoulli_expanded", "test_bernoulli_double_expanded", "test_bernoulli_seed_expanded",
};

void ref_case_run(const char *case_dir, const ref_case_opts *o, ref_case_result *res)
{
    char path[4096];
    res->verdict = REF_CASE_PASS;
    res->msg[0] = '\0';
    res->worst = 2; /* above any fraction: the first statistical output's numbers are kept */
    const char *base = strrchr(case_dir, '/') ? strrchr(case_dir, '/') + 1 : case_dir;
    ref_case_opts declared = *o;
    declared.within = ref_case_within_find(base);
    o = &declared;
    for (size_t i = 0; i < sizeof contradicted / sizeof contradicted[0]; i++)
        if (!strcmp(base, contradicted[i].name)) {
            res->verdict = REF_CASE_SKIP;
            snprintf(res->msg, sizeof res->msg, "test data contradicts the ONNX spec: %s", contradicted[i].why);
            return;
        }
    for (size_t i = 0; i < sizeof random_cases / sizeof random_cases[0]; i++)
        if (!strcmp(base, random_cases[i])) {
            res->verdict = REF_CASE_SKIP;
            snprintf(res->msg, sizeof res->msg, "random outputs: the reference draws come from numpy's global "
                     "generator (Bernoulli, RandomUniformLike), which no engine reproduces");
            return;
        }
    snprintf(path, sizeof path, "%s/model.onnx", case_dir);
    ref_model *m = NULL;
    ref_compiled *c = NULL;
    ref_error err = {0};
    int rc = ref_model_read(path, &o->engine, &m, &err);
    if (rc) {
        from_status(res, rc, "read_model", &err);
        return;
    }
    ref_options eo = o->engine;
    if (o->shapes_from_data)
        shapes_from_data(m, case_dir, &eo);
    if ((rc = ref_compile(m, &eo, &c, &err))) {
        /* As in run_set: data contradicting the model's declared inputs says nothing about the engine. */
        bool contradicts = rc == REF_E_SHAPE && strstr(err.msg, "option shape.");
        from_status(res, contradicts ? REF_E_UNSUPPORTED : rc,
                    contradicts ? "test data contradicts the model's declared input" : "compile", &err);
        ref_model_free(m);
        return;
    }
    DIR *d = opendir(case_dir);
    int n_sets = 0;
    for (struct dirent *e; d && res->verdict == REF_CASE_PASS && (e = readdir(d));) {
        if (strncmp(e->d_name, "test_data_set_", 14))
            continue;
        snprintf(path, sizeof path, "%s/%s", case_dir, e->d_name);
        run_set(c, path, o, res);
        n_sets++;
    }
    if (d)
        closedir(d);
    if (!n_sets && res->verdict == REF_CASE_PASS) {
        res->verdict = REF_CASE_FAIL;
        snprintf(res->msg, sizeof res->msg, "no test_data_set_* folder");
    }
    ref_compiled_free(c);
    ref_model_free(m);
}
