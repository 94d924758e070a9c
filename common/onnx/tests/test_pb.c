/* test_pb.c: the protobuf wire format: varints (10-byte negatives, overflow), fixed widths, tags, lengths,
 * packed vs unpacked repeats, skipping, error paths and offsets, the writer. It must never pass on a no-op. */
#include <string.h>

#include "onnx/pb.h"
#include "onnx_check.h"

static onnx_error err;
static onnx_pb_trace tr;

static onnx_pb cursor(const uint8_t *b, size_t n)
{
    onnx_pb r;
    onnx_pb_trace_init(&tr, &err, "msg");
    onnx_pb_init(&r, b, n, &tr);
    return r;
}

static void test_varint_encoding(void)
{
    static const struct { uint64_t v; size_t len; uint8_t bytes[10]; } cases[] = {
        {0, 1, {0x00}},
        {1, 1, {0x01}},
        {127, 1, {0x7f}},
        {128, 2, {0x80, 0x01}},
        {300, 2, {0xac, 0x02}},
        {UINT64_C(1) << 32, 5, {0x80, 0x80, 0x80, 0x80, 0x10}},
        {(uint64_t)-1, 10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
        {(uint64_t)INT64_MIN, 10, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        onnx_pbw w;
        onnx_pbw_init(&w, test_alloc());
        CHECK(onnx_pbw_varint(&w, cases[k].v) == 0);
        CHECK(w.len == cases[k].len);
        CHECK(w.len == cases[k].len && !memcmp(w.buf, cases[k].bytes, w.len));
        CHECK(onnx_pb_varint_size(cases[k].v) == cases[k].len);
        onnx_pb r = cursor(cases[k].bytes, cases[k].len);
        uint64_t v = 12345;
        CHECK(onnx_pb_varint(&r, &v) == 0);
        CHECK(v == cases[k].v);
        CHECK(r.pos == cases[k].len);
        onnx_pbw_free(&w);
    }
    /* A negative int64 through the typed reader. */
    const uint8_t neg3[] = {0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    onnx_pb r = cursor(neg3, sizeof neg3);
    int64_t s = 0;
    CHECK(onnx_pb_read_i64(&r, 0, ONNX_PB_VARINT, &s) == 0);
    CHECK(s == -3);
}

static void test_varint_rejects(void)
{
    const uint8_t eleven[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x01};
    const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    const uint8_t cut[] = {0x05, 0x80, 0x80};
    uint64_t v;
    onnx_pb r = cursor(eleven, sizeof eleven);
    CHECK(onnx_pb_varint(&r, &v) == ONNX_E_PARSE);
    CHECK(strstr(err.msg, "longer than 10 bytes") != NULL);
    r = cursor(overflow, sizeof overflow);
    CHECK(onnx_pb_varint(&r, &v) == ONNX_E_PARSE);
    CHECK(strstr(err.msg, "overflows") != NULL);
    r = cursor(cut, sizeof cut);
    CHECK(onnx_pb_varint(&r, &v) == 0 && v == 5);
    CHECK(onnx_pb_varint(&r, &v) == ONNX_E_PARSE);
    CHECK(strcmp(err.msg, "msg @ byte 1: truncated varint") == 0);
    r = cursor(cut, 0);
    CHECK(onnx_pb_varint(&r, &v) == ONNX_E_PARSE);
}

static void test_fixed_and_tags(void)
{
    const uint8_t b[] = {0x78, 0x56, 0x34, 0x12, 0x01, 0, 0, 0, 0, 0, 0, 0x80};
    uint32_t u;
    uint64_t q;
    onnx_pb r = cursor(b, sizeof b);
    CHECK(onnx_pb_fixed32(&r, &u) == 0 && u == 0x12345678u);
    CHECK(onnx_pb_fixed64(&r, &q) == 0 && q == (UINT64_C(0x80) << 56 | 1));
    CHECK(onnx_pb_fixed32(&r, &u) == ONNX_E_PARSE);
    CHECK(strstr(err.msg, "truncated fixed32") != NULL);
    r = cursor(b, 7);
    CHECK(onnx_pb_fixed64(&r, &q) == ONNX_E_PARSE);

    uint32_t f;
    int wire;
    const uint8_t tag_ok[] = {0xa2, 0x01}; /* field 20, wire 2 */
    r = cursor(tag_ok, 2);
    CHECK(onnx_pb_tag(&r, &f, &wire) == 0 && f == 20 && wire == ONNX_PB_LEN);
    const uint8_t bad[][1] = {{0x02}, {0x0b}, {0x0c}, {0x0e}, {0x0f}}; /* field 0; groups; wire 6, 7 */
    for (int k = 0; k < 5; k++) {
        r = cursor(bad[k], 1);
        CHECK(onnx_pb_tag(&r, &f, &wire) == ONNX_E_PARSE);
    }
    r = cursor(bad[1], 1);
    onnx_pb_tag(&r, &f, &wire);
    CHECK(strstr(err.msg, "groups") != NULL);
}

static void test_lengths_and_offsets(void)
{
    /* field 1 LEN 5 { field 2 LEN 3 {field 3 varint, cut} } at absolute offsets. */
    const uint8_t b[] = {0x0a, 0x05, 0x12, 0x03, 0x18, 0x80, 0x80};
    onnx_pb r = cursor(b, sizeof b), outer, inner;
    uint32_t f;
    int wire;
    uint64_t v;
    CHECK(onnx_pb_tag(&r, &f, &wire) == 0 && f == 1);
    CHECK(onnx_pb_sub(&r, &outer) == 0 && outer.pos == 2 && outer.end == 7);
    onnx_pb_mark m1, m2;
    CHECK(onnx_pb_enter(&tr, "graph", -1, outer.pos, &m1) == 0);
    CHECK(onnx_pb_tag(&outer, &f, &wire) == 0 && f == 2);
    CHECK(onnx_pb_sub(&outer, &inner) == 0 && inner.pos == 4);
    CHECK(onnx_pb_enter(&tr, "node", 3, inner.pos, &m2) == 0);
    CHECK(onnx_pb_tag(&inner, &f, &wire) == 0 && f == 3);
    tr.field = "op_type";
    CHECK(onnx_pb_varint(&inner, &v) == ONNX_E_PARSE);
    CHECK(strcmp(err.msg, "graph.node[3].op_type @ byte 5: truncated varint") == 0);
    onnx_pb_leave(&tr, &m2);
    onnx_pb_leave(&tr, &m1);
    CHECK(tr.len == 0 && tr.depth == 0);

    const uint8_t toolong[] = {0x0a, 0x09, 0x01};
    r = cursor(toolong, sizeof toolong);
    CHECK(onnx_pb_tag(&r, &f, &wire) == 0);
    const uint8_t *p;
    size_t n;
    CHECK(onnx_pb_bytes(&r, &p, &n) == ONNX_E_PARSE);
    CHECK(strcmp(err.msg, "msg @ byte 1: length 9 exceeds the 1 bytes left") == 0);

    /* A length near 2^64 must not wrap the bounds check. */
    const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00};
    r = cursor(huge, sizeof huge);
    CHECK(onnx_pb_bytes(&r, &p, &n) == ONNX_E_PARSE);

    /* Depth limit. */
    onnx_pb_trace_init(&tr, &err, "msg");
    onnx_pb_mark mk[ONNX_PB_MAX_DEPTH + 1];
    int rc = 0, k;
    for (k = 0; k <= ONNX_PB_MAX_DEPTH && !rc; k++)
        rc = onnx_pb_enter(&tr, "g", k, 0, &mk[k]);
    CHECK(rc == ONNX_E_PARSE && k == ONNX_PB_MAX_DEPTH + 1);
    CHECK(strstr(err.msg, "nested deeper") != NULL);
}

static void test_repeated(void)
{
    /* field 8 = ints: unpacked 1, packed {-2, 300}, unpacked 7. */
    onnx_pbw w;
    onnx_pbw_init(&w, test_alloc());
    onnx_pbw_i64(&w, 8, 1);
    const int64_t pk[] = {-2, 300};
    onnx_pbw_packed_i64(&w, 8, pk, 2);
    onnx_pbw_i64(&w, 8, 7);
    CHECK(w.status == 0);
    CHECK(w.len == 2 + 2 + 10 + 2 + 2);
    onnx_pb r = cursor(w.buf, w.len);
    size_t total = 0;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos, n = 0;
        CHECK(onnx_pb_tag(&r, &f, &wire) == 0 && f == 8);
        CHECK(onnx_pb_rep_count(&r, at, wire, ONNX_PB_KIND_VARINT, &n) == 0);
        total += n;
    }
    CHECK(total == 4);
    r = cursor(w.buf, w.len);
    int64_t got[4];
    size_t i = 0;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        onnx_pb_rep it;
        uint64_t v;
        int rc = onnx_pb_tag(&r, &f, &wire);
        CHECK(rc == 0);
        CHECK(onnx_pb_rep_begin(&r, at, wire, ONNX_PB_KIND_VARINT, &it) == 0);
        while ((rc = onnx_pb_rep_next(&it, &v)) == 0 && i < 4)
            got[i++] = (int64_t)v;
        CHECK(rc == 1);
    }
    CHECK(i == 4 && got[0] == 1 && got[1] == -2 && got[2] == 300 && got[3] == 7);
    onnx_pbw_free(&w);

    /* floats packed and unpacked. */
    onnx_pbw_init(&w, test_alloc());
    const float fl[] = {1.5f, -2.25f};
    onnx_pbw_packed_f32(&w, 7, fl, 2);
    onnx_pbw_f32(&w, 7, 3.0f);
    r = cursor(w.buf, w.len);
    float fg[3];
    i = 0;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        onnx_pb_rep it;
        uint64_t v;
        CHECK(onnx_pb_tag(&r, &f, &wire) == 0);
        CHECK(onnx_pb_rep_begin(&r, at, wire, ONNX_PB_KIND_FIXED32, &it) == 0);
        while (onnx_pb_rep_next(&it, &v) == 0 && i < 3) {
            uint32_t u = (uint32_t)v;
            memcpy(&fg[i++], &u, 4);
        }
    }
    CHECK(i == 3 && fg[0] == 1.5f && fg[1] == -2.25f && fg[2] == 3.0f);
    onnx_pbw_free(&w);

    /* Bad forms: packed fixed32 of 5 bytes, packed varints cut mid-value, wrong unpacked wire type. */
    const uint8_t odd[] = {0x3a, 0x05, 0, 0, 0, 0, 0};
    const uint8_t cut[] = {0x42, 0x02, 0x01, 0x80};
    const uint8_t wrongwire[] = {0x45, 0, 0, 0, 0}; /* field 8 as fixed32 */
    size_t n;
    uint32_t f;
    int wire;
    r = cursor(odd, sizeof odd);
    onnx_pb_tag(&r, &f, &wire);
    CHECK(onnx_pb_rep_count(&r, 0, wire, ONNX_PB_KIND_FIXED32, &n) == ONNX_E_PARSE);
    CHECK(strstr(err.msg, "not a multiple of 4") != NULL);
    r = cursor(cut, sizeof cut);
    onnx_pb_tag(&r, &f, &wire);
    CHECK(onnx_pb_rep_count(&r, 0, wire, ONNX_PB_KIND_VARINT, &n) == ONNX_E_PARSE);
    r = cursor(wrongwire, sizeof wrongwire);
    onnx_pb_tag(&r, &f, &wire);
    CHECK(onnx_pb_rep_count(&r, 0, wire, ONNX_PB_KIND_VARINT, &n) == ONNX_E_PARSE);
    CHECK(strstr(err.msg, "expected 0 (varint) or 2 (packed)") != NULL);
}

static void test_skip_unknown(void)
{
    /* Unknown fields of every wire type, then field 1 = 42. */
    onnx_pbw w;
    onnx_pbw_init(&w, test_alloc());
    onnx_pbw_u64(&w, 100, UINT64_MAX);
    onnx_pbw_f64(&w, 101, 2.5);
    onnx_pbw_bytes(&w, 102, "hello", 5);
    onnx_pbw_f32(&w, 103, 1.0f);
    onnx_pbw_u64(&w, 1, 42);
    onnx_pb r = cursor(w.buf, w.len);
    uint64_t found = 0;
    int skipped = 0;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        CHECK(onnx_pb_tag(&r, &f, &wire) == 0);
        if (f == 1) {
            CHECK(onnx_pb_read_u64(&r, at, wire, &found) == 0);
        } else {
            CHECK(onnx_pb_skip(&r, wire) == 0);
            skipped++;
        }
    }
    CHECK(found == 42 && skipped == 4);
    /* A known field with the wrong wire type is an error naming both. */
    r = cursor(w.buf, w.len);
    uint32_t f;
    int wire;
    onnx_pb_tag(&r, &f, &wire); /* field 100, varint */
    const uint8_t *p;
    size_t n;
    CHECK(onnx_pb_read_str(&r, 0, wire, &p, &n) == ONNX_E_PARSE);
    CHECK(strstr(err.msg, "wire type 0 (varint), expected 2 (length-delimited)") != NULL);
    onnx_pbw_free(&w);
}

static void test_writer_nesting(void)
{
    onnx_pbw w;
    onnx_pbw_init(&w, test_alloc());
    size_t outer = onnx_pbw_begin(&w, 7);
    size_t inner = onnx_pbw_begin(&w, 1);
    char big[300];
    memset(big, 'x', sizeof big);
    onnx_pbw_bytes(&w, 2, big, sizeof big); /* 303 bytes: the lengths need two bytes each */
    onnx_pbw_end(&w, inner);
    onnx_pbw_u64(&w, 3, 9);
    CHECK(onnx_pbw_end(&w, outer) == 0);
    CHECK(w.len == 1 + 2 + (1 + 2 + 303) + 2);
    onnx_pb r = cursor(w.buf, w.len), o, i;
    uint32_t f;
    int wire;
    CHECK(onnx_pb_tag(&r, &f, &wire) == 0 && f == 7);
    CHECK(onnx_pb_sub(&r, &o) == 0 && onnx_pb_left(&o) == 308);
    CHECK(onnx_pb_tag(&o, &f, &wire) == 0 && f == 1);
    CHECK(onnx_pb_sub(&o, &i) == 0 && onnx_pb_left(&i) == 303);
    const uint8_t *p;
    size_t n;
    CHECK(onnx_pb_tag(&i, &f, &wire) == 0 && f == 2);
    CHECK(onnx_pb_bytes(&i, &p, &n) == 0 && n == 300 && p[0] == 'x' && p[299] == 'x');
    uint64_t v;
    CHECK(onnx_pb_tag(&o, &f, &wire) == 0 && f == 3);
    CHECK(onnx_pb_varint(&o, &v) == 0 && v == 9 && !onnx_pb_more(&o) && !onnx_pb_more(&r));
    onnx_pbw_free(&w);

    /* Out of memory sticks and later calls do nothing (not even try to allocate again). */
    onnx_pbw_init(&w, test_alloc());
    test_alloc_fail_in(0);
    long calls = test_alloc_calls_;
    CHECK(onnx_pbw_u64(&w, 1, 1) == ONNX_E_NOMEM);
    CHECK(onnx_pbw_u64(&w, 1, 1) == ONNX_E_NOMEM);
    CHECK(w.len == 0 && w.status == ONNX_E_NOMEM && test_alloc_calls_ == calls + 1);
    test_alloc_fail_in(-1);
    onnx_pbw_free(&w);
    onnx_pbw_free(&w); /* twice is fine */

    /* A writer without a table uses libc; growing past the first 256 bytes keeps the bytes. */
    onnx_pbw_init(&w, NULL);
    for (int k = 0; k < 300; k++)
        onnx_pbw_u64(&w, 1, (uint64_t)k);
    CHECK(w.status == 0 && w.len > 256 && w.buf[0] == 0x08 && w.buf[1] == 0);
    onnx_pbw_free(&w);
}

int main(void)
{
    test_varint_encoding();
    test_varint_rejects();
    test_fixed_and_tags();
    test_lengths_and_offsets();
    test_repeated();
    test_skip_unknown();
    test_writer_nesting();
    CHECK(test_alloc_live_ == 0); /* every writer released its bytes through the same table */
    return check_summary();
}
