/* tensor_read.c: TensorProto decoding (scan, validate, decode every *_data form) and the public .pb loader.
 * It must never size a buffer from a claim it has not checked against the bytes actually present. */
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../tensor.h"
#include "fileio.h"
#include "tensor_pb.h"

enum {
    F_DIMS = 1, F_DATA_TYPE = 2, F_SEGMENT = 3, F_FLOAT = 4, F_INT32 = 5, F_STRING = 6, F_INT64 = 7,
    F_NAME = 8, F_RAW = 9, F_DOUBLE = 10, F_UINT64 = 11, F_EXTERNAL = 13, F_LOCATION = 14
};

typedef struct scan {
    ref_tensor_pb *tp;
    size_t n_dims;
    size_t counts[F_UINT64 + 1]; /* values per *_data field */
    bool has_type, has_raw;
    uint64_t location;
} scan;

/* The *_data field ONNX stores each type's values in (0: none fits, e.g. unknown types). */
static uint32_t typed_field_of(int dtype)
{
    switch (dtype) {
    case REF_DT_FLOAT: return F_FLOAT;
    case REF_DT_INT32: case REF_DT_INT16: case REF_DT_INT8: case REF_DT_UINT16: case REF_DT_UINT8:
    case REF_DT_BOOL: case REF_DT_FLOAT16: case REF_DT_BFLOAT16: return F_INT32;
    case REF_DT_INT64: return F_INT64;
    case REF_DT_DOUBLE: return F_DOUBLE;
    case REF_DT_UINT32: case REF_DT_UINT64: return F_UINT64;
    case REF_DT_STRING: return F_STRING;
    default: return 0;
    }
}

static const char *field_name(uint32_t f)
{
    switch (f) {
    case F_FLOAT: return "float_data";
    case F_INT32: return "int32_data";
    case F_STRING: return "string_data";
    case F_INT64: return "int64_data";
    case F_DOUBLE: return "double_data";
    case F_UINT64: return "uint64_data";
    default: return "data";
    }
}

static ref_pb_kind kind_of(uint32_t f)
{
    return f == F_FLOAT ? REF_PB_KIND_FIXED32 : f == F_DOUBLE ? REF_PB_KIND_FIXED64 : REF_PB_KIND_VARINT;
}

static int scan_dims(scan *s, ref_pb *r, size_t at, int wire)
{
    ref_pb_rep it;
    int rc = ref_pb_rep_begin(r, at, wire, REF_PB_KIND_VARINT, &it);
    uint64_t v;
    while (!rc && (rc = ref_pb_rep_next(&it, &v)) == 0) {
        if ((int64_t)v < 0)
            return ref_pb_fail(r->tr, at, REF_E_PARSE, "dim %zu is negative (%lld)", s->n_dims, (long long)v);
        if (s->n_dims < REF_MAX_RANK)
            s->tp->t.dims[s->n_dims] = (int64_t)v;
        s->n_dims++;
    }
    return rc < 0 ? rc : REF_OK;
}

/* external_data entry: StringStringEntryProto {key = 1, value = 2}. */
static int scan_external_entry(scan *s, ref_pb *r)
{
    ref_pb e;
    int rc = ref_pb_sub(r, &e);
    const uint8_t *key = NULL, *val = NULL;
    size_t key_len = 0, val_len = 0, val_at = e.pos;
    while (!rc && ref_pb_more(&e)) {
        uint32_t f;
        int wire;
        size_t at = e.pos;
        if ((rc = ref_pb_tag(&e, &f, &wire)) != 0)
            break;
        if (f == 1) {
            rc = ref_pb_read_str(&e, at, wire, &key, &key_len);
        } else if (f == 2) {
            val_at = e.pos;
            rc = ref_pb_read_str(&e, at, wire, &val, &val_len);
        } else {
            rc = ref_pb_skip(&e, wire);
        }
    }
    if (rc || !key)
        return rc;
    ref_ext_ref *x = &s->tp->ext;
    bool is_off = key_len == 6 && !memcmp(key, "offset", 6), is_len = key_len == 6 && !memcmp(key, "length", 6);
    if (key_len == 8 && !memcmp(key, "location", 8)) {
        x->loc = val;
        x->loc_len = val_len;
        x->has_loc = true;
    } else if (is_off || is_len) {
        /* Decimal digits only: no sign, no spaces, no overflow. */
        uint64_t n = 0;
        if (!val_len)
            return ref_pb_fail(r->tr, val_at, REF_E_PARSE, "external_data %s is empty", is_off ? "offset" : "length");
        for (size_t i = 0; i < val_len; i++) {
            if (val[i] < '0' || val[i] > '9' || n > (UINT64_MAX - (uint64_t)(val[i] - '0')) / 10)
                return ref_pb_fail(r->tr, val_at, REF_E_PARSE, "external_data %s '%.*s' is not a byte count",
                                   is_off ? "offset" : "length", (int)(val_len > 32 ? 32 : val_len), val);
            n = n * 10 + (uint64_t)(val[i] - '0');
        }
        *(is_off ? &x->offset : &x->length) = n;
        *(is_off ? &x->has_offset : &x->has_length) = true;
    }
    return REF_OK;
}

static int scan_field(scan *s, ref_pb *r, uint32_t f, int wire, size_t at)
{
    ref_tensor_pb *tp = s->tp;
    ref_pb_trace *tr = r->tr;
    uint64_t v;
    size_t n;
    int rc;
    switch (f) {
    case F_DIMS:
        tr->field = "dims";
        return scan_dims(s, r, at, wire);
    case F_DATA_TYPE:
        tr->field = "data_type";
        s->has_type = true;
        rc = ref_pb_read_u64(r, at, wire, &v);
        tp->t.dtype = (int32_t)v;
        if (!rc && v > 0x7fffffff)
            return ref_pb_fail(tr, at, REF_E_PARSE, "data_type %llu out of range", (unsigned long long)v);
        return rc;
    case F_SEGMENT:
        tr->field = "segment";
        return ref_pb_fail(tr, at, REF_E_UNSUPPORTED, "segmented tensors are not supported");
    case F_FLOAT: case F_INT32: case F_INT64: case F_DOUBLE: case F_UINT64:
        tr->field = field_name(f);
        rc = ref_pb_rep_count(r, at, wire, kind_of(f), &n);
        s->counts[f] += n;
        return rc;
    case F_STRING:
        tr->field = "string_data";
        s->counts[f]++;
        if ((rc = ref_pb_expect(r, at, wire, REF_PB_LEN)) != 0)
            return rc;
        return ref_pb_skip(r, wire);
    case F_NAME:
        tr->field = "name";
        return ref_pb_read_str(r, at, wire, &tp->name, &tp->name_len);
    case F_RAW:
        tr->field = "raw_data";
        s->has_raw = true;
        return ref_pb_read_str(r, at, wire, &tp->raw, &tp->raw_len);
    case F_EXTERNAL:
        tr->field = "external_data";
        if ((rc = ref_pb_expect(r, at, wire, REF_PB_LEN)) != 0)
            return rc;
        return scan_external_entry(s, r);
    case F_LOCATION:
        tr->field = "data_location";
        return ref_pb_read_u64(r, at, wire, &s->location);
    default:
        return ref_pb_skip(r, wire);
    }
}

/* Shape, type and size checks once every field is known. */
static int check_shape(scan *s, ref_pb_trace *tr)
{
    ref_tensor_pb *tp = s->tp;
    tr->field = NULL;
    if (!s->has_type || tp->t.dtype == REF_DT_UNDEFINED)
        return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT " has no data_type",
                           REF_TPB_NAME_ARG(tp));
    if (!typed_field_of(tp->t.dtype))
        return ref_pb_fail(tr, tp->at, REF_E_UNSUPPORTED, "tensor " REF_TPB_NAME_FMT ": data type %d is not supported",
                           REF_TPB_NAME_ARG(tp), tp->t.dtype);
    if (s->n_dims > REF_MAX_RANK)
        return ref_pb_fail(tr, tp->at, REF_E_UNSUPPORTED, "tensor " REF_TPB_NAME_FMT ": rank %zu exceeds %d",
                           REF_TPB_NAME_ARG(tp), s->n_dims, REF_MAX_RANK);
    tp->t.rank = (int32_t)s->n_dims;
    size_t es = ref_dtype_size(tp->t.dtype);
    uint64_t numel = 1, limit = (uint64_t)INT64_MAX / (es ? es : 1);
    for (int i = 0; i < tp->t.rank; i++) {
        uint64_t d = (uint64_t)tp->t.dims[i];
        if (d && numel > limit / d)
            return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT ": element count overflows",
                               REF_TPB_NAME_ARG(tp));
        numel *= d;
    }
    if (numel * es > SIZE_MAX / 2)
        return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT ": %llu bytes is too large",
                           REF_TPB_NAME_ARG(tp), (unsigned long long)(numel * es));
    tp->nbytes = (size_t)(numel * es);
    return REF_OK;
}

static int check_data(scan *s, ref_pb_trace *tr)
{
    ref_tensor_pb *tp = s->tp;
    int rc = check_shape(s, tr);
    if (rc)
        return rc;
    if (s->location > 1)
        return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT ": data_location %llu is unknown",
                           REF_TPB_NAME_ARG(tp), (unsigned long long)s->location);
    tp->external = s->location == 1;
    uint32_t want = typed_field_of(tp->t.dtype);
    if (tp->t.dtype == REF_DT_STRING)
        return REF_OK; /* kept as shape only: compile refuses string tensors */
    for (uint32_t f = F_FLOAT; f <= F_UINT64; f++)
        if (s->counts[f] && f != want)
            return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT ": %s given for a %s tensor",
                               REF_TPB_NAME_ARG(tp), field_name(f), ref_dtype_name(tp->t.dtype));
    tp->typed_field = s->counts[want] ? want : 0;
    tp->n_typed = s->counts[want];
    if (tp->external) {
        if (tp->raw_len || tp->n_typed)
            return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT ": external data and embedded data",
                               REF_TPB_NAME_ARG(tp));
        return REF_OK;
    }
    if (tp->raw_len && tp->n_typed)
        return ref_pb_fail(tr, tp->at, REF_E_PARSE, "tensor " REF_TPB_NAME_FMT ": both raw_data and %s",
                           REF_TPB_NAME_ARG(tp), field_name(want));
    size_t es = ref_dtype_size(tp->t.dtype);
    uint64_t have = tp->n_typed ? (uint64_t)tp->n_typed * es : tp->raw_len;
    if (have != tp->nbytes) {
        char shape[128];
        return ref_pb_fail(tr, tp->at, REF_E_PARSE,
                           "tensor " REF_TPB_NAME_FMT ": %llu bytes of data, shape %s %s needs %zu",
                           REF_TPB_NAME_ARG(tp), (unsigned long long)have, ref_shape_str(&tp->t, shape, sizeof shape),
                           ref_dtype_name(tp->t.dtype), tp->nbytes);
    }
    return REF_OK;
}

int ref_tensor_pb_scan(ref_pb *msg, ref_tensor_pb *tp)
{
    memset(tp, 0, sizeof *tp);
    tp->msg = *msg;
    tp->at = msg->pos;
    tp->name = (const uint8_t *)"";
    scan s = {.tp = tp};
    while (ref_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = ref_pb_tag(msg, &f, &wire);
        if (!rc)
            rc = scan_field(&s, msg, f, wire, at);
        if (rc)
            return rc;
    }
    return check_data(&s, msg->tr);
}

static void store(uint8_t *dst, size_t i, size_t es, int dtype, uint64_t v)
{
    if (dtype == REF_DT_BOOL)
        v = v != 0;
    switch (es) {
    case 1: dst[i] = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(dst + 2 * i, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(dst + 4 * i, &x, 4); break; }
    default: memcpy(dst + 8 * i, &v, 8); break;
    }
}

int ref_tensor_pb_decode(const ref_tensor_pb *tp, void *dst)
{
    if (!tp->typed_field) {
        if (tp->raw_len)
            memcpy(dst, tp->raw, tp->raw_len);
        return REF_OK;
    }
    ref_pb r = tp->msg;
    size_t es = ref_dtype_size(tp->t.dtype), i = 0;
    while (ref_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        int rc = ref_pb_tag(&r, &f, &wire);
        if (rc)
            return rc;
        if (f != tp->typed_field) {
            if ((rc = ref_pb_skip(&r, wire)) != 0)
                return rc;
            continue;
        }
        r.tr->field = field_name(f);
        ref_pb_rep it;
        uint64_t v;
        rc = ref_pb_rep_begin(&r, at, wire, kind_of(f), &it);
        while (!rc && (rc = ref_pb_rep_next(&it, &v)) == 0) {
            if (i >= tp->n_typed) /* the scan counted them; more now means the bytes changed under us */
                return ref_pb_fail(r.tr, at, REF_E_PARSE, "more values than counted");
            store(dst, i++, es, tp->t.dtype, v);
        }
        if (rc < 0)
            return rc;
    }
    r.tr->field = NULL;
    return REF_OK;
}

/* ================================================================================================
 * Standalone TensorProto (test-data .pb files)
 * ============================================================================================== */

int ref_onnx_parse_tensor(const uint8_t *buf, size_t len, ref_tensor *t, void **data_out, char **name,
                          ref_error *err)
{
    ref_pb_trace tr;
    ref_pb_trace_init(&tr, err, "tensor");
    ref_pb r;
    ref_pb_init(&r, buf, len, &tr);
    ref_tensor_pb tp;
    int rc = ref_tensor_pb_scan(&r, &tp);
    if (rc)
        return rc;
    if (tp.external)
        return ref_pb_fail(&tr, 0, REF_E_UNSUPPORTED,
                           "tensor " REF_TPB_NAME_FMT ": external data in a standalone tensor",
                           REF_TPB_NAME_ARG(&tp));
    void *data = NULL;
    char *nm = NULL;
    if (tp.t.dtype != REF_DT_STRING && !(data = ref_aligned_alloc(tp.nbytes)))
        return ref_pb_fail(&tr, 0, REF_E_NOMEM, "out of memory for %zu bytes of tensor data", tp.nbytes);
    if (data && (rc = ref_tensor_pb_decode(&tp, data)) != 0)
        goto fail;
    if (name && !(nm = ref_strndup((const char *)tp.name, tp.name_len))) {
        rc = ref_pb_fail(&tr, 0, REF_E_NOMEM, "out of memory for the tensor name");
        goto fail;
    }
    *t = tp.t;
    t->data = NULL;
    *data_out = data;
    if (name)
        *name = nm;
    return REF_OK;
fail:
    ref_free(data);
    return rc;
}

int ref_tensor_load_pb(const char *path, ref_tensor *out, char **name, ref_error *err)
{
    if (!path || !out)
        return ref_fail(err, REF_E_INVALID, "ref_tensor_load_pb: path and out are required");
    uint8_t *buf;
    size_t len;
    int rc = ref_file_slurp(path, &buf, &len, err);
    if (rc)
        return rc;
    ref_tensor t;
    void *data;
    rc = ref_onnx_parse_tensor(buf, len, &t, &data, name, err);
    ref_free(buf);
    if (rc) {
        ref_fail_prefix(err, "%s: ", path);
        return rc;
    }
    t.data = data;
    *out = t;
    return REF_OK;
}

void ref_tensor_data_free(ref_tensor *t)
{
    if (!t)
        return;
    ref_free(t->data);
    t->data = NULL;
}

void ref_string_free(char *s) { ref_free(s); }
