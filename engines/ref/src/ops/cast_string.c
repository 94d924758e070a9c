/* cast_string.c: Cast and CastLike to and from strings (REF_STRING_BYTES slots), and StringNormalizer. Numbers
 * print as numpy prints them: the shortest digits that read back to the same float (%g style), integers in
 * decimal, bools as True/False; strings parse with strtod/strtoll (empty or junk is 0). It must never write a
 * string past its slot: every printed value fits in REF_STRING_BYTES - 1 bytes. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cast_half.h"
#include "cast_string.h"
#include "op.h"
#include "reduce_elem.h"

/* x (of dtype dt) printed into out (REF_STRING_BYTES, zero-padded). */
static void print_value(const void *x, int dt, int64_t i, char *out)
{
    memset(out, 0, REF_STRING_BYTES);
    if (dt == REF_DT_BOOL) {
        snprintf(out, REF_STRING_BYTES, "%s", ((const uint8_t *)x)[i] ? "True" : "False");
        return;
    }
    if (dt == REF_DT_FLOAT || dt == REF_DT_DOUBLE || dt == REF_DT_FLOAT16 || dt == REF_DT_BFLOAT16) {
        double v = dt == REF_DT_FLOAT16    ? ref_f16_to_f32(((const uint16_t *)x)[i])
                   : dt == REF_DT_BFLOAT16 ? ref_bf16_to_f32(((const uint16_t *)x)[i])
                                           : ref_elem_ld(x, dt, i);
        if (isnan(v) || isinf(v)) {
            snprintf(out, REF_STRING_BYTES, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
            return;
        }
        int max = dt == REF_DT_DOUBLE ? 17 : 9;
        for (int p = 1; p <= max; p++) {
            snprintf(out, REF_STRING_BYTES, "%.*g", p, v);
            double back = strtod(out, NULL);
            if (dt == REF_DT_DOUBLE ? back == v : (float)back == (float)v)
                break;
        }
        return;
    }
    snprintf(out, REF_STRING_BYTES, "%lld", (long long)ref_elem_ldi(x, dt, i));
}

static void parse_value(const char *s, void *y, int dt, int64_t i)
{
    char buf[REF_STRING_BYTES];
    memcpy(buf, s, REF_STRING_BYTES);
    buf[REF_STRING_BYTES - 1] = '\0';
    if (dt == REF_DT_BOOL) {
        ((uint8_t *)y)[i] = !strcasecmp(buf, "true") || strtod(buf, NULL) != 0;
        return;
    }
    double v = strtod(buf, NULL);
    if (dt == REF_DT_FLOAT16)
        ((uint16_t *)y)[i] = ref_f32_to_f16((float)v);
    else if (dt == REF_DT_BFLOAT16)
        ((uint16_t *)y)[i] = ref_f32_to_bf16((float)v);
    else if (dt == REF_DT_FLOAT || dt == REF_DT_DOUBLE)
        ref_elem_st(y, dt, i, v);
    else
        ref_elem_st(y, dt, i, (double)strtoll(buf, NULL, 10));
}

int ref_cast_string_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int64_t n = ref_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        if (x->dtype == REF_DT_STRING && y->dtype == REF_DT_STRING)
            memcpy((char *)y->data + i * REF_STRING_BYTES, (const char *)x->data + i * REF_STRING_BYTES,
                   REF_STRING_BYTES);
        else if (y->dtype == REF_DT_STRING)
            print_value(x->data, x->dtype, i, (char *)y->data + i * REF_STRING_BYTES);
        else
            parse_value((const char *)x->data + i * REF_STRING_BYTES, y->data, y->dtype, i);
    }
    return REF_OK;
}

/* ---- StringNormalizer: drop stopwords, change case; an all-dropped row leaves one empty string ---------- */

static bool same_word(const char *a, const char *b, bool sensitive)
{
    return sensitive ? !strcmp(a, b) : !strcasecmp(a, b);
}

static int norm_check(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    if (x->dtype != REF_DT_STRING || (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1)))
        return ref_fail(c->err, REF_E_SHAPE, "StringNormalizer needs strings of shape [C] or [1, C]");
    const char *act = ref_attr_str_or(c->node, "case_change_action", "NONE");
    if (strcmp(act, "NONE") && strcmp(act, "LOWER") && strcmp(act, "UPPER"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "StringNormalizer: case_change_action '%s'", act);
    return REF_OK;
}

static int norm_infer(ref_op_ctx *c)
{
    int rc = norm_check(c);
    return rc ? rc : ref_fail(c->err, REF_E_DYNAMIC, "StringNormalizer: the count kept is known when it runs");
}

static size_t norm_scratch_bytes(const ref_op_ctx *c) { return ref_tensor_nbytes(c->in[0]) + REF_STRING_BYTES; }

static int norm_run(ref_op_ctx *c)
{
    int rc = norm_check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    const char **stop = NULL;
    const ref_attr *sw = ref_node_attr(c->node, "stopwords");
    size_t n_stop = sw && sw->type == REF_ATTR_STRINGS ? sw->n : 0;
    stop = n_stop ? sw->strings : NULL;
    bool sensitive = ref_attr_int_or(c->node, "is_case_sensitive", 0) != 0;
    const char *act = ref_attr_str_or(c->node, "case_change_action", "NONE");
    char *kept = c->scratch;
    int64_t n = ref_tensor_numel(x), m = 0;
    if (c->scratch_bytes < norm_scratch_bytes(c))
        return ref_fail(c->err, REF_E_INVALID, "StringNormalizer: scratch of %zu bytes", c->scratch_bytes);
    for (int64_t i = 0; i < n; i++) {
        const char *s = (const char *)x->data + i * REF_STRING_BYTES;
        bool drop = false;
        for (size_t k = 0; k < n_stop && !drop; k++)
            drop = same_word(s, stop[k], sensitive);
        if (drop)
            continue;
        char *d = kept + m++ * REF_STRING_BYTES;
        memcpy(d, s, REF_STRING_BYTES);
        for (int k = 0; k < REF_STRING_BYTES && d[k]; k++)
            d[k] = !strcmp(act, "LOWER") ? (char)tolower((unsigned char)d[k])
                   : !strcmp(act, "UPPER") ? (char)toupper((unsigned char)d[k])
                                           : d[k];
    }
    if (m == 0) { /* ONNX keeps one empty string rather than an empty tensor */
        memset(kept, 0, REF_STRING_BYTES);
        m = 1;
    }
    ref_tensor y = {.dtype = REF_DT_STRING, .rank = x->rank};
    y.dims[0] = x->rank == 2 ? 1 : m;
    y.dims[1] = m;
    if ((rc = ref_op_output(c, 0, &y)))
        return rc;
    memcpy(c->out[0]->data, kept, (size_t)m * REF_STRING_BYTES);
    return REF_OK;
}

const ref_op ref_ops_string[] = {
    {.name = "StringNormalizer", .infer = norm_infer, .scratch_bytes = norm_scratch_bytes, .run = norm_run,
     .sets_outputs = true},
    {.name = NULL},
};
