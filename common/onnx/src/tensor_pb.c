/* tensor_pb.c: TensorProto decoding: scan, validate, and decode every *_data form, packed and unpacked.
 * It must never size a buffer from a claim it has not checked against the bytes actually present. */
#include <stdio.h>
#include <string.h>

#include "onnx/tensor_pb.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX reader copies little-endian raw_data as is; port it before using a big-endian host"
#endif

enum { F_DIMS = 1, F_DATA_TYPE = 2, F_SEGMENT = 3, F_NAME = 8, F_RAW = 9, F_EXTERNAL = 13, F_LOCATION = 14 };

typedef struct scan {
    onnx_tensor_pb *tp;
    size_t n_dims;
    size_t counts[ONNX_TP_UINT64_DATA + 1]; /* values per *_data field */
    bool has_type, has_raw;
    uint64_t location;
} scan;

static const char *field_name(uint32_t f)
{
    switch (f) {
    case ONNX_TP_FLOAT_DATA: return "float_data";
    case ONNX_TP_INT32_DATA: return "int32_data";
    case ONNX_TP_STRING_DATA: return "string_data";
    case ONNX_TP_INT64_DATA: return "int64_data";
    case ONNX_TP_DOUBLE_DATA: return "double_data";
    case ONNX_TP_UINT64_DATA: return "uint64_data";
    default: return "data";
    }
}

static onnx_pb_kind kind_of(uint32_t f)
{
    return f == ONNX_TP_FLOAT_DATA ? ONNX_PB_KIND_FIXED32
         : f == ONNX_TP_DOUBLE_DATA ? ONNX_PB_KIND_FIXED64 : ONNX_PB_KIND_VARINT;
}

const char *onnx_shape_str(const int64_t *dims, int rank, char *buf, size_t len)
{
    if (!len)
        return buf;
    size_t used = 0;
    used += (size_t)snprintf(buf + used, len - used, "[");
    for (int i = 0; i < rank && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

/* ================================================================================================
 * Scan
 * ============================================================================================== */

static int scan_dims(scan *s, onnx_pb *r, size_t at, int wire)
{
    onnx_pb_rep it;
    int rc = onnx_pb_rep_begin(r, at, wire, ONNX_PB_KIND_VARINT, &it);
    uint64_t v;
    while (!rc && (rc = onnx_pb_rep_next(&it, &v)) == 0) {
        if ((int64_t)v < 0)
            return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "dim %zu is negative (%lld)", s->n_dims, (long long)v);
        if (s->n_dims < ONNX_MAX_RANK)
            s->tp->dims[s->n_dims] = (int64_t)v;
        s->n_dims++;
    }
    return rc < 0 ? rc : ONNX_OK;
}

/* offset and length are decimal digits only: no sign, no spaces, no overflow. */
static int parse_count(onnx_pb_trace *tr, size_t at, const char *what, const uint8_t *val, size_t len,
                       uint64_t *out)
{
    uint64_t n = 0;
    if (!len)
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external_data %s is empty", what);
    for (size_t i = 0; i < len; i++) {
        if (val[i] < '0' || val[i] > '9' || n > (UINT64_MAX - (uint64_t)(val[i] - '0')) / 10)
            return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external_data %s '%.*s' is not a byte count", what,
                                (int)(len > 32 ? 32 : len), val);
        n = n * 10 + (uint64_t)(val[i] - '0');
    }
    *out = n;
    return ONNX_OK;
}

/* external_data entry: StringStringEntryProto {key = 1, value = 2}. */
static int scan_external_entry(scan *s, onnx_pb *r)
{
    onnx_pb e;
    int rc = onnx_pb_sub(r, &e);
    const uint8_t *key = NULL, *val = NULL;
    size_t key_len = 0, val_len = 0, val_at = e.pos;
    while (!rc && onnx_pb_more(&e)) {
        uint32_t f;
        int wire;
        size_t at = e.pos;
        if ((rc = onnx_pb_tag(&e, &f, &wire)) != 0)
            break;
        if (f == 1) {
            rc = onnx_pb_read_str(&e, at, wire, &key, &key_len);
        } else if (f == 2) {
            val_at = e.pos;
            rc = onnx_pb_read_str(&e, at, wire, &val, &val_len);
        } else {
            rc = onnx_pb_skip(&e, wire);
        }
    }
    if (rc || !key)
        return rc;
    onnx_ext_ref *x = &s->tp->ext;
    if (key_len == 8 && !memcmp(key, "location", 8)) {
        x->loc = val;
        x->loc_len = val_len;
        x->has_loc = true;
    } else if (key_len == 6 && !memcmp(key, "offset", 6)) {
        rc = parse_count(r->tr, val_at, "offset", val, val_len, &x->offset);
        x->has_offset = !rc;
    } else if (key_len == 6 && !memcmp(key, "length", 6)) {
        rc = parse_count(r->tr, val_at, "length", val, val_len, &x->length);
        x->has_length = !rc;
    }
    return rc;
}

static int scan_field(scan *s, onnx_pb *r, uint32_t f, int wire, size_t at)
{
    onnx_tensor_pb *tp = s->tp;
    onnx_pb_trace *tr = r->tr;
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
        rc = onnx_pb_read_u64(r, at, wire, &v);
        tp->dtype = (int32_t)v;
        if (!rc && v > 0x7fffffff)
            return onnx_pb_fail(tr, at, ONNX_E_PARSE, "data_type %llu out of range", (unsigned long long)v);
        return rc;
    case F_SEGMENT:
        tr->field = "segment";
        return onnx_pb_fail(tr, at, ONNX_E_UNSUPPORTED, "segmented tensors are not supported");
    case ONNX_TP_FLOAT_DATA: case ONNX_TP_INT32_DATA: case ONNX_TP_INT64_DATA: case ONNX_TP_DOUBLE_DATA:
    case ONNX_TP_UINT64_DATA:
        tr->field = field_name(f);
        rc = onnx_pb_rep_count(r, at, wire, kind_of(f), &n);
        s->counts[f] += n;
        return rc;
    case ONNX_TP_STRING_DATA:
        tr->field = "string_data";
        s->counts[f]++;
        if ((rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN)) != 0)
            return rc;
        return onnx_pb_skip(r, wire);
    case F_NAME:
        tr->field = "name";
        return onnx_pb_read_str(r, at, wire, &tp->name, &tp->name_len);
    case F_RAW:
        tr->field = "raw_data";
        s->has_raw = true;
        return onnx_pb_read_str(r, at, wire, &tp->raw, &tp->raw_len);
    case F_EXTERNAL:
        tr->field = "external_data";
        if ((rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN)) != 0)
            return rc;
        return scan_external_entry(s, r);
    case F_LOCATION:
        tr->field = "data_location";
        return onnx_pb_read_u64(r, at, wire, &s->location);
    default:
        return onnx_pb_skip(r, wire);
    }
}

/* Shape, type and size checks once every field is known. */
static int check_shape(scan *s, onnx_pb_trace *tr)
{
    onnx_tensor_pb *tp = s->tp;
    tr->field = NULL;
    if (!s->has_type || tp->dtype == ONNX_DT_UNDEFINED)
        return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT " has no data_type",
                            ONNX_TPB_NAME_ARG(tp));
    if (!onnx_dtype_field(tp->dtype))
        return onnx_pb_fail(tr, tp->at, ONNX_E_UNSUPPORTED,
                            "tensor " ONNX_TPB_NAME_FMT ": data type %d is not supported", ONNX_TPB_NAME_ARG(tp),
                            tp->dtype);
    if (s->n_dims > ONNX_MAX_RANK)
        return onnx_pb_fail(tr, tp->at, ONNX_E_UNSUPPORTED, "tensor " ONNX_TPB_NAME_FMT ": rank %zu exceeds %d",
                            ONNX_TPB_NAME_ARG(tp), s->n_dims, ONNX_MAX_RANK);
    tp->rank = (int32_t)s->n_dims;
    size_t es = onnx_dtype_size(tp->dtype);
    uint64_t numel = 1, limit = (uint64_t)INT64_MAX / (es ? es : 1);
    for (int i = 0; i < tp->rank; i++) {
        uint64_t d = (uint64_t)tp->dims[i];
        if (d && numel > limit / d)
            return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT ": element count overflows",
                                ONNX_TPB_NAME_ARG(tp));
        numel *= d;
    }
    if (numel * es > SIZE_MAX / 2)
        return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT ": %llu bytes is too large",
                            ONNX_TPB_NAME_ARG(tp), (unsigned long long)(numel * es));
    tp->nbytes = (size_t)(numel * es);
    return ONNX_OK;
}

static int check_data(scan *s, onnx_pb_trace *tr)
{
    onnx_tensor_pb *tp = s->tp;
    int rc = check_shape(s, tr);
    if (rc)
        return rc;
    if (s->location > 1)
        return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT ": data_location %llu is unknown",
                            ONNX_TPB_NAME_ARG(tp), (unsigned long long)s->location);
    tp->external = s->location == 1;
    uint32_t want = onnx_dtype_field(tp->dtype);
    if (tp->dtype == ONNX_DT_STRING)
        return ONNX_OK; /* kept as shape only: no fixed-size values to decode */
    for (uint32_t f = ONNX_TP_FLOAT_DATA; f <= ONNX_TP_UINT64_DATA; f++)
        if (s->counts[f] && f != want)
            return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT ": %s given for a %s tensor",
                                ONNX_TPB_NAME_ARG(tp), field_name(f), onnx_dtype_name(tp->dtype));
    tp->typed_field = s->counts[want] ? want : 0;
    tp->n_typed = s->counts[want];
    if (tp->external) {
        if (tp->raw_len || tp->n_typed)
            return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE,
                                "tensor " ONNX_TPB_NAME_FMT ": external data and embedded data", ONNX_TPB_NAME_ARG(tp));
        return ONNX_OK;
    }
    if (tp->raw_len && tp->n_typed)
        return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT ": both raw_data and %s",
                            ONNX_TPB_NAME_ARG(tp), field_name(want));
    size_t es = onnx_dtype_size(tp->dtype);
    uint64_t have = tp->n_typed ? (uint64_t)tp->n_typed * es : tp->raw_len;
    if (have != tp->nbytes) {
        char shape[128];
        return onnx_pb_fail(tr, tp->at, ONNX_E_PARSE,
                            "tensor " ONNX_TPB_NAME_FMT ": %llu bytes of data, shape %s %s needs %zu",
                            ONNX_TPB_NAME_ARG(tp), (unsigned long long)have,
                            onnx_shape_str(tp->dims, tp->rank, shape, sizeof shape), onnx_dtype_name(tp->dtype),
                            tp->nbytes);
    }
    return ONNX_OK;
}

int onnx_tensor_pb_scan(onnx_pb *msg, onnx_tensor_pb *tp)
{
    memset(tp, 0, sizeof *tp);
    tp->msg = *msg;
    tp->at = msg->pos;
    tp->name = (const uint8_t *)"";
    scan s = {.tp = tp};
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc)
            rc = scan_field(&s, msg, f, wire, at);
        if (rc)
            return rc;
    }
    return check_data(&s, msg->tr);
}

/* ================================================================================================
 * Decode
 * ============================================================================================== */

static void store(uint8_t *dst, size_t i, size_t es, int dtype, uint64_t v)
{
    if (dtype == ONNX_DT_BOOL)
        v = v != 0;
    switch (es) {
    case 1: dst[i] = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(dst + 2 * i, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(dst + 4 * i, &x, 4); break; }
    default: memcpy(dst + 8 * i, &v, 8); break;
    }
}

int onnx_tensor_pb_decode(const onnx_tensor_pb *tp, void *dst)
{
    if (tp->external || tp->dtype == ONNX_DT_STRING)
        return onnx_pb_fail(tp->msg.tr, tp->at, ONNX_E_PARSE, "tensor " ONNX_TPB_NAME_FMT ": no embedded values",
                            ONNX_TPB_NAME_ARG(tp));
    if (!tp->typed_field) {
        if (tp->raw_len)
            memcpy(dst, tp->raw, tp->raw_len);
        return ONNX_OK;
    }
    onnx_pb r = tp->msg;
    size_t es = onnx_dtype_size(tp->dtype), i = 0;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        int rc = onnx_pb_tag(&r, &f, &wire);
        if (rc)
            return rc;
        if (f != tp->typed_field) {
            if ((rc = onnx_pb_skip(&r, wire)) != 0)
                return rc;
            continue;
        }
        r.tr->field = field_name(f);
        onnx_pb_rep it;
        uint64_t v;
        rc = onnx_pb_rep_begin(&r, at, wire, kind_of(f), &it);
        while (!rc && (rc = onnx_pb_rep_next(&it, &v)) == 0) {
            if (i >= tp->n_typed) /* the scan counted them; more now means the bytes changed under us */
                return onnx_pb_fail(r.tr, at, ONNX_E_PARSE, "more values than counted");
            store(dst, i++, es, tp->dtype, v);
        }
        if (rc < 0)
            return rc;
    }
    r.tr->field = NULL;
    return ONNX_OK;
}
