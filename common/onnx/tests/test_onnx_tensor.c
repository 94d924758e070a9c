/* test_onnx_tensor.c: the dtype table and TensorProto scan/decode on hand-encoded protos: every typed *_data field
 * packed and unpacked, every flaw the scan must refuse, with field and byte in the message. Fixtures: our writer. */
#include <string.h>

#include "onnx/tensor_pb.h"
#include "onnx/tensor_file.h"
#include "onnx_check.h"

static onnx_error err;

/* ================================================================================================
 * The dtype table
 * ============================================================================================== */

static void test_dtypes(void)
{
    CHECK(onnx_dtype_size(ONNX_DT_FLOAT) == 4 && onnx_dtype_size(ONNX_DT_INT64) == 8);
    CHECK(onnx_dtype_size(ONNX_DT_BOOL) == 1 && onnx_dtype_size(ONNX_DT_BFLOAT16) == 2);
    CHECK(onnx_dtype_size(ONNX_DT_COMPLEX64) == 8 && onnx_dtype_size(ONNX_DT_COMPLEX128) == 16);
    CHECK(onnx_dtype_size(ONNX_DT_STRING) == 0 && onnx_dtype_size(ONNX_DT_INT4) == 0);
    CHECK(onnx_dtype_size(ONNX_DT_UNDEFINED) == 0 && onnx_dtype_size(99) == 0 && onnx_dtype_size(-1) == 0);
    CHECK(!strcmp(onnx_dtype_name(ONNX_DT_FLOAT16), "float16") && !strcmp(onnx_dtype_name(ONNX_DT_UINT64), "uint64"));
    CHECK(!strcmp(onnx_dtype_name(ONNX_DT_FLOAT8E5M2), "float8e5m2"));
    CHECK(!strcmp(onnx_dtype_name(0), "?") && !strcmp(onnx_dtype_name(1000), "?"));
    CHECK(onnx_dtype_field(ONNX_DT_FLOAT) == ONNX_TP_FLOAT_DATA);
    CHECK(onnx_dtype_field(ONNX_DT_UINT32) == ONNX_TP_UINT64_DATA);
    CHECK(onnx_dtype_field(ONNX_DT_FLOAT16) == ONNX_TP_INT32_DATA);
    CHECK(onnx_dtype_field(ONNX_DT_STRING) == ONNX_TP_STRING_DATA);
    CHECK(onnx_dtype_field(ONNX_DT_COMPLEX64) == 0 && onnx_dtype_field(ONNX_DT_FLOAT8E4M3FN) == 0);
    /* The numbers are ONNX's own (onnx.proto, TensorProto.DataType). */
    CHECK(ONNX_DT_DOUBLE == 11 && ONNX_DT_BFLOAT16 == 16 && ONNX_DT_FLOAT4E2M1 == 23);
    /* Every listed type has a name, and no two share one. */
    int named = 0;
    for (int d = 1; d < 64; d++) {
        if (!strcmp(onnx_dtype_name(d), "?"))
            continue;
        named++;
        for (int e = d + 1; e < 64; e++)
            CHECK(strcmp(onnx_dtype_name(d), onnx_dtype_name(e)) != 0);
    }
    CHECK(named == 23);
    char buf[32];
    const int64_t dims[] = {2, 3, 40};
    CHECK(!strcmp(onnx_shape_str(dims, 3, buf, sizeof buf), "[2,3,40]"));
    CHECK(!strcmp(onnx_shape_str(dims, 0, buf, 8), "[]"));
    CHECK(!strcmp(onnx_shape_str(dims, 3, buf, 5), "[2,3"));
}

/* ================================================================================================
 * Typed fields, packed and unpacked (moved here from engines/ref's test_onnx_read.c)
 * ============================================================================================== */

static int parse_tensor(const onnx_pbw *w, onnx_tensor **t)
{
    return onnx_tensor_parse(w->buf, w->len, t, &err);
}

static void dims_field(onnx_pbw *w, const int64_t *d, int n, int packed)
{
    if (packed)
        onnx_pbw_packed_i64(w, 1, d, (size_t)n);
    else
        for (int i = 0; i < n; i++)
            onnx_pbw_i64(w, 1, d[i]);
}

static void test_wide_fields(int packed)
{
    const int64_t d23[] = {2, 3}, d2[] = {2};
    onnx_pbw w;
    onnx_tensor *t = NULL;
    /* int64_data with negatives (10-byte varints), split over two fields when packed. */
    const int64_t i64[] = {-1, 0, 1, INT64_MIN, INT64_MAX, -300};
    onnx_pbw_init(&w, NULL);
    dims_field(&w, d23, 2, packed);
    onnx_pbw_i64(&w, 2, ONNX_DT_INT64);
    if (packed) {
        onnx_pbw_packed_i64(&w, 7, i64, 2);
        onnx_pbw_packed_i64(&w, 7, i64 + 2, 4);
    } else {
        for (int i = 0; i < 6; i++)
            onnx_pbw_i64(&w, 7, i64[i]);
    }
    CHECK_OK(parse_tensor(&w, &t), &err);
    CHECK(t && t->rank == 2 && t->dims[0] == 2 && t->dims[1] == 3 && t->dtype == ONNX_DT_INT64);
    CHECK(t && t->numel == 6 && t->nbytes == sizeof i64 && !memcmp(t->data, i64, sizeof i64));
    CHECK(t && !strcmp(t->name, "") && (uintptr_t)t->data % 64 == 0);
    onnx_tensor_free(t);
    onnx_pbw_free(&w);

    /* float_data */
    const float fl[] = {1.5f, -0.0f, 3.25f, -1e30f, 7.0f, 0.125f};
    onnx_pbw_init(&w, NULL);
    onnx_pbw_i64(&w, 2, ONNX_DT_FLOAT); /* data_type before dims: order must not matter */
    dims_field(&w, d23, 2, packed);
    if (packed)
        onnx_pbw_packed_f32(&w, 4, fl, 6);
    else
        for (int i = 0; i < 6; i++)
            onnx_pbw_f32(&w, 4, fl[i]);
    onnx_pbw_str(&w, 8, "x");
    t = NULL;
    CHECK_OK(parse_tensor(&w, &t), &err);
    CHECK(t && !memcmp(t->data, fl, sizeof fl) && !strcmp(t->name, "x"));
    onnx_tensor_free(t);
    onnx_pbw_free(&w);

    /* double_data (fixed64) */
    const double db[] = {1.0 / 3, -2.5};
    onnx_pbw_init(&w, NULL);
    dims_field(&w, d2, 1, packed);
    onnx_pbw_i64(&w, 2, ONNX_DT_DOUBLE);
    if (packed) {
        onnx_pbw_tag(&w, 10, ONNX_PB_LEN);
        onnx_pbw_varint(&w, 16);
        for (int i = 0; i < 2; i++) {
            uint64_t u;
            memcpy(&u, &db[i], 8);
            onnx_pbw_fixed64(&w, u);
        }
    } else {
        onnx_pbw_f64(&w, 10, db[0]);
        onnx_pbw_f64(&w, 10, db[1]);
    }
    t = NULL;
    CHECK_OK(parse_tensor(&w, &t), &err);
    CHECK(t && !memcmp(t->data, db, sizeof db));
    onnx_tensor_free(t);
    onnx_pbw_free(&w);

    /* uint64_data for uint32 and uint64 */
    const int64_t u64v[] = {(int64_t)UINT64_C(0xffffffffffffffff), 5};
    for (int dt = 0; dt < 2; dt++) {
        onnx_pbw_init(&w, NULL);
        dims_field(&w, d2, 1, packed);
        onnx_pbw_i64(&w, 2, dt ? ONNX_DT_UINT64 : ONNX_DT_UINT32);
        if (packed)
            onnx_pbw_packed_i64(&w, 11, u64v, 2);
        else
            for (int i = 0; i < 2; i++)
                onnx_pbw_i64(&w, 11, u64v[i]);
        t = NULL;
        CHECK_OK(parse_tensor(&w, &t), &err);
        if (dt)
            CHECK(t && ((uint64_t *)t->data)[0] == UINT64_MAX && ((uint64_t *)t->data)[1] == 5);
        else
            CHECK(t && ((uint32_t *)t->data)[0] == 0xffffffffu && ((uint32_t *)t->data)[1] == 5);
        onnx_tensor_free(t);
        onnx_pbw_free(&w);
    }
}

static void test_narrow_fields(int packed)
{
    const int64_t d2[] = {2};
    /* int32_data for every narrow type: values and expected little-endian bytes. */
    static const struct { int dtype; int64_t v[2]; uint8_t bytes[8]; size_t nbytes; } narrow[] = {
        {ONNX_DT_INT32, {-2, 70000}, {0xfe, 0xff, 0xff, 0xff, 0x70, 0x11, 0x01, 0x00}, 8},
        {ONNX_DT_INT16, {-2, 300}, {0xfe, 0xff, 0x2c, 0x01}, 4},
        {ONNX_DT_UINT16, {65535, 1}, {0xff, 0xff, 0x01, 0x00}, 4},
        {ONNX_DT_INT8, {-128, 127}, {0x80, 0x7f}, 2},
        {ONNX_DT_UINT8, {255, 0}, {0xff, 0x00}, 2},
        {ONNX_DT_BOOL, {1, 0}, {0x01, 0x00}, 2},
        {ONNX_DT_FLOAT16, {0x3c00, 0xc000}, {0x00, 0x3c, 0x00, 0xc0}, 4},  /* 1.0, -2.0 */
        {ONNX_DT_BFLOAT16, {0x3f80, 0x4049}, {0x80, 0x3f, 0x49, 0x40}, 4}, /* 1.0, ~3.14 */
    };
    for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++) {
        onnx_pbw w;
        onnx_pbw_init(&w, NULL);
        dims_field(&w, d2, 1, packed);
        onnx_pbw_i64(&w, 2, narrow[k].dtype);
        if (packed)
            onnx_pbw_packed_i64(&w, 5, narrow[k].v, 2);
        else
            for (int i = 0; i < 2; i++)
                onnx_pbw_i64(&w, 5, narrow[k].v[i]);
        onnx_tensor *t = NULL;
        int rc = parse_tensor(&w, &t);
        CHECK_OK(rc, &err);
        CHECK(!rc && t->dtype == narrow[k].dtype && t->nbytes == narrow[k].nbytes &&
              !memcmp(t->data, narrow[k].bytes, narrow[k].nbytes));
        onnx_tensor_free(t);
        onnx_pbw_free(&w);
    }
}

/* ================================================================================================
 * Flaws: each refused with the right status, naming field and byte
 * ============================================================================================== */

/* Build a small TensorProto named "w"; kind selects the flaw. Returns the parse status. */
static int bad_tensor(int kind)
{
    onnx_pbw w;
    const int64_t d23[] = {2, 3}, dneg[] = {2, -1}, dbig[] = {INT64_C(1) << 40, INT64_C(1) << 40},
                  d9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float f6[6] = {0};
    onnx_pbw_init(&w, NULL);
    onnx_pbw_str(&w, 8, "w");
    switch (kind) {
    case 0: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_bytes(&w, 9, f6, 12); break;  /* 12 != 24 */
    case 1: dims_field(&w, dneg, 2, 1); onnx_pbw_i64(&w, 2, 1); break;                                 /* dim < 0 */
    case 2: dims_field(&w, dbig, 2, 0); onnx_pbw_i64(&w, 2, 1); break;                                 /* overflow */
    case 3: dims_field(&w, d9, 9, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_bytes(&w, 9, f6, 4); break;     /* rank 9 */
    case 4: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 7); onnx_pbw_packed_f32(&w, 4, f6, 6); break;
    case 5: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_packed_f32(&w, 4, f6, 6);
            onnx_pbw_bytes(&w, 9, f6, 24); break;                                                       /* both */
    case 6: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_tag(&w, 3, ONNX_PB_LEN);
            onnx_pbw_varint(&w, 0); break;                                                              /* segment */
    case 7: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, ONNX_DT_COMPLEX64); break;
    case 8: dims_field(&w, d23, 2, 1); break;                                                          /* no type */
    case 9: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_u64(&w, 14, 1); break;         /* ext */
    case 10: dims_field(&w, d23, 2, 1); onnx_pbw_f32(&w, 2, 1.0f); break;                              /* wire */
    case 11: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_u64(&w, 14, 2); break;        /* location */
    case 12: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, ONNX_DT_STRING); onnx_pbw_str(&w, 6, "a"); break;
    case 13: {                                                                                         /* offset */
        dims_field(&w, d23, 2, 1);
        onnx_pbw_i64(&w, 2, 1);
        size_t e = onnx_pbw_begin(&w, 13);
        onnx_pbw_str(&w, 1, "offset");
        onnx_pbw_str(&w, 2, "-4");
        onnx_pbw_end(&w, e);
        onnx_pbw_u64(&w, 14, 1);
        break;
    }
    default: break;
    }
    onnx_tensor *t = NULL;
    int rc = parse_tensor(&w, &t);
    onnx_pbw_free(&w);
    onnx_tensor_free(t);
    return rc;
}

static void test_bad_tensors(void)
{
    CHECK(bad_tensor(0) == ONNX_E_PARSE);
    CHECK(!strcmp(err.msg, "tensor @ byte 0: tensor 'w': 12 bytes of data, shape [2,3] float needs 24"));
    CHECK(bad_tensor(1) == ONNX_E_PARSE && !strcmp(err.msg, "dims @ byte 3: dim 1 is negative (-1)"));
    CHECK(bad_tensor(2) == ONNX_E_PARSE && strstr(err.msg, "element count overflows"));
    CHECK(bad_tensor(3) == ONNX_E_UNSUPPORTED && strstr(err.msg, "rank 9 exceeds 8"));
    CHECK(bad_tensor(4) == ONNX_E_PARSE && strstr(err.msg, "float_data given for a int64 tensor"));
    CHECK(bad_tensor(5) == ONNX_E_PARSE && strstr(err.msg, "both raw_data and float_data"));
    CHECK(bad_tensor(6) == ONNX_E_UNSUPPORTED && strstr(err.msg, "segment @ byte"));
    CHECK(bad_tensor(7) == ONNX_E_UNSUPPORTED && strstr(err.msg, "data type 14 is not supported"));
    CHECK(bad_tensor(8) == ONNX_E_PARSE && strstr(err.msg, "no data_type"));
    CHECK(bad_tensor(9) == ONNX_E_UNSUPPORTED && strstr(err.msg, "external data in a standalone tensor"));
    CHECK(bad_tensor(10) == ONNX_E_PARSE &&
          strstr(err.msg, "data_type @ byte 7: wire type 5 (fixed32), expected 0 (varint)"));
    CHECK(bad_tensor(11) == ONNX_E_PARSE && strstr(err.msg, "data_location 2 is unknown"));
    CHECK(bad_tensor(12) == ONNX_E_UNSUPPORTED && strstr(err.msg, "string values"));
    CHECK(bad_tensor(13) == ONNX_E_PARSE && strstr(err.msg, "external_data offset '-4' is not a byte count"));
    CHECK(onnx_tensor_parse(NULL, 1, NULL, &err) == ONNX_E_INVALID);
    onnx_tensor_free(NULL);
}

/* Scan keeps external_data and string shapes for the caller; decode refuses what has no embedded values. */
static void test_scan_in_place(void)
{
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    const int64_t d23[] = {2, 3};
    onnx_pbw_packed_i64(&w, 1, d23, 2);
    onnx_pbw_i64(&w, 2, ONNX_DT_FLOAT);
    onnx_pbw_str(&w, 8, "weights");
    const char *kv[3][2] = {{"location", "w.bin"}, {"offset", "4096"}, {"length", "24"}};
    for (int i = 0; i < 3; i++) {
        size_t e = onnx_pbw_begin(&w, 13);
        onnx_pbw_str(&w, 1, kv[i][0]);
        onnx_pbw_str(&w, 2, kv[i][1]);
        onnx_pbw_end(&w, e);
    }
    onnx_pbw_u64(&w, 14, 1);
    onnx_pb_trace tr;
    onnx_pb_trace_init(&tr, &err, "tensor");
    onnx_pb r;
    onnx_pb_init(&r, w.buf, w.len, &tr);
    onnx_tensor_pb tp;
    CHECK_OK(onnx_tensor_pb_scan(&r, &tp), &err);
    CHECK(tp.external && tp.ext.has_loc && tp.ext.loc_len == 5 && !memcmp(tp.ext.loc, "w.bin", 5));
    CHECK(tp.ext.has_offset && tp.ext.offset == 4096 && tp.ext.has_length && tp.ext.length == 24);
    CHECK(tp.nbytes == 24 && tp.rank == 2 && tp.name_len == 7 && !memcmp(tp.name, "weights", 7));
    CHECK(tp.name >= w.buf && tp.name < w.buf + w.len); /* in place: nothing copied */
    float dst[6];
    CHECK(onnx_tensor_pb_decode(&tp, dst) == ONNX_E_PARSE && strstr(err.msg, "no embedded values"));
    onnx_pbw_free(&w);

    onnx_pbw_init(&w, NULL);
    onnx_pbw_i64(&w, 1, 2);
    onnx_pbw_i64(&w, 2, ONNX_DT_STRING);
    onnx_pbw_str(&w, 6, "ab");
    onnx_pbw_str(&w, 6, "c");
    onnx_pb_init(&r, w.buf, w.len, &tr);
    CHECK_OK(onnx_tensor_pb_scan(&r, &tp), &err);
    CHECK(tp.dtype == ONNX_DT_STRING && tp.rank == 1 && tp.dims[0] == 2 && tp.nbytes == 0);
    onnx_pbw_free(&w);

    /* A trace without an error record: the status alone comes back. */
    onnx_pb_trace quiet;
    onnx_pb_trace_init(&quiet, NULL, "tensor");
    const uint8_t cut[] = {0x08, 0x80};
    onnx_pb_init(&r, cut, sizeof cut, &quiet);
    CHECK(onnx_tensor_pb_scan(&r, &tp) == ONNX_E_PARSE);
}

int main(void)
{
    test_dtypes();
    test_wide_fields(0);
    test_wide_fields(1);
    test_narrow_fields(0);
    test_narrow_fields(1);
    test_bad_tensors();
    test_scan_in_place();
    return check_summary();
}
