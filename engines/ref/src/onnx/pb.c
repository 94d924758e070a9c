/* pb.c: protobuf wire format: a checked reader over one buffer and a growable writer.
 * It must never read outside [pos, end) nor size anything from a length it has not checked against the bytes left. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "pb.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX reader copies little-endian raw_data as is; port it before using a big-endian host"
#endif

/* ================================================================================================
 * Error context
 * ============================================================================================== */

void ref_pb_trace_init(ref_pb_trace *tr, ref_error *err, const char *root)
{
    memset(tr, 0, sizeof *tr);
    tr->err = err;
    tr->root = root;
}

int ref_pb_enter(ref_pb_trace *tr, const char *name, long index, size_t at, ref_pb_mark *saved)
{
    saved->len = tr->len;
    saved->field = tr->field;
    if (tr->depth >= REF_PB_MAX_DEPTH)
        return ref_pb_fail(tr, at, REF_E_PARSE, "messages nested deeper than %d", REF_PB_MAX_DEPTH);
    tr->depth++;
    tr->field = NULL;
    size_t room = sizeof tr->path - tr->len;
    int w = index >= 0 ? snprintf(tr->path + tr->len, room, "%s%s[%ld]", tr->len ? "." : "", name, index)
                       : snprintf(tr->path + tr->len, room, "%s%s", tr->len ? "." : "", name);
    /* A cut path still names the outer fields; the offset pins the rest down. */
    if (w > 0)
        tr->len += (size_t)w < room ? (size_t)w : room - 1;
    return REF_OK;
}

void ref_pb_leave(ref_pb_trace *tr, const ref_pb_mark *saved)
{
    tr->len = saved->len;
    tr->path[tr->len] = '\0';
    tr->field = saved->field;
    if (tr->depth > 0)
        tr->depth--;
}

int ref_pb_fail(ref_pb_trace *tr, size_t at, int code, const char *fmt, ...)
{
    if (!tr->err)
        return code;
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* At the root a field names itself ("graph @ byte 0"); the root's name only stands in for an empty path. */
    const char *path = tr->len ? tr->path : tr->field ? "" : tr->root ? tr->root : "message";
    return ref_fail(tr->err, code, "%s%s%s @ byte %zu: %s", path, tr->field && tr->len ? "." : "",
                    tr->field ? tr->field : "", at, what);
}

/* ================================================================================================
 * Reader
 * ============================================================================================== */

void ref_pb_init(ref_pb *r, const uint8_t *buf, size_t len, ref_pb_trace *tr)
{
    r->buf = buf;
    r->pos = 0;
    r->end = len;
    r->tr = tr;
}

int ref_pb_varint(ref_pb *r, uint64_t *v)
{
    size_t start = r->pos;
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->end)
            return ref_pb_fail(r->tr, start, REF_E_PARSE, "truncated varint");
        uint8_t b = r->buf[r->pos++];
        /* The 10th byte carries only bit 63: anything more overflows, a continuation makes 11 bytes. */
        if (i == 9 && b > 1)
            return ref_pb_fail(r->tr, start, REF_E_PARSE, "%s",
                               b & 0x80 ? "varint longer than 10 bytes" : "varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return REF_OK;
        }
    }
    return ref_pb_fail(r->tr, start, REF_E_PARSE, "varint longer than 10 bytes");
}

int ref_pb_tag(ref_pb *r, uint32_t *field, int *wire)
{
    size_t at = r->pos;
    uint64_t key;
    r->tr->field = NULL;
    int rc = ref_pb_varint(r, &key);
    if (rc)
        return rc;
    uint64_t num = key >> 3;
    int w = (int)(key & 7);
    if (num == 0 || num > 0x1fffffff)
        return ref_pb_fail(r->tr, at, REF_E_PARSE, "invalid field number %llu", (unsigned long long)num);
    if (w == REF_PB_SGROUP || w == REF_PB_EGROUP)
        return ref_pb_fail(r->tr, at, REF_E_PARSE, "field %u uses groups (wire type %d), not supported",
                           (unsigned)num, w);
    if (w > REF_PB_I32)
        return ref_pb_fail(r->tr, at, REF_E_PARSE, "field %u has invalid wire type %d", (unsigned)num, w);
    *field = (uint32_t)num;
    *wire = w;
    return REF_OK;
}

int ref_pb_fixed32(ref_pb *r, uint32_t *v)
{
    if (ref_pb_left(r) < 4)
        return ref_pb_fail(r->tr, r->pos, REF_E_PARSE, "truncated fixed32 (%zu bytes left)", ref_pb_left(r));
    const uint8_t *p = r->buf + r->pos;
    *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    r->pos += 4;
    return REF_OK;
}

int ref_pb_fixed64(ref_pb *r, uint64_t *v)
{
    if (ref_pb_left(r) < 8)
        return ref_pb_fail(r->tr, r->pos, REF_E_PARSE, "truncated fixed64 (%zu bytes left)", ref_pb_left(r));
    const uint8_t *p = r->buf + r->pos;
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = x << 8 | p[i];
    *v = x;
    r->pos += 8;
    return REF_OK;
}

int ref_pb_bytes(ref_pb *r, const uint8_t **p, size_t *n)
{
    size_t at = r->pos;
    uint64_t len;
    int rc = ref_pb_varint(r, &len);
    if (rc)
        return rc;
    if (len > ref_pb_left(r))
        return ref_pb_fail(r->tr, at, REF_E_PARSE, "length %llu exceeds the %zu bytes left",
                           (unsigned long long)len, ref_pb_left(r));
    *p = r->buf + r->pos;
    *n = (size_t)len;
    r->pos += (size_t)len;
    return REF_OK;
}

int ref_pb_sub(ref_pb *r, ref_pb *sub)
{
    const uint8_t *p;
    size_t n;
    int rc = ref_pb_bytes(r, &p, &n);
    if (rc)
        return rc;
    sub->buf = r->buf;
    sub->pos = (size_t)(p - r->buf);
    sub->end = sub->pos + n;
    sub->tr = r->tr;
    return REF_OK;
}

int ref_pb_skip(ref_pb *r, int wire)
{
    uint64_t v;
    const uint8_t *p;
    size_t n;
    switch (wire) {
    case REF_PB_VARINT:
        return ref_pb_varint(r, &v);
    case REF_PB_I64:
        return ref_pb_fixed64(r, &v);
    case REF_PB_LEN:
        return ref_pb_bytes(r, &p, &n);
    case REF_PB_I32: {
        uint32_t u;
        return ref_pb_fixed32(r, &u);
    }
    default:
        return ref_pb_fail(r->tr, r->pos, REF_E_PARSE, "cannot skip wire type %d", wire);
    }
}

static const char *wire_name(int wire)
{
    switch (wire) {
    case REF_PB_VARINT: return "varint";
    case REF_PB_I64: return "fixed64";
    case REF_PB_LEN: return "length-delimited";
    case REF_PB_I32: return "fixed32";
    default: return "group";
    }
}

int ref_pb_expect(ref_pb *r, size_t at, int wire, int want)
{
    if (wire == want)
        return REF_OK;
    return ref_pb_fail(r->tr, at, REF_E_PARSE, "wire type %d (%s), expected %d (%s)", wire, wire_name(wire),
                       want, wire_name(want));
}

int ref_pb_read_u64(ref_pb *r, size_t at, int wire, uint64_t *v)
{
    int rc = ref_pb_expect(r, at, wire, REF_PB_VARINT);
    return rc ? rc : ref_pb_varint(r, v);
}

int ref_pb_read_i64(ref_pb *r, size_t at, int wire, int64_t *v)
{
    uint64_t u;
    int rc = ref_pb_read_u64(r, at, wire, &u);
    if (!rc)
        *v = (int64_t)u;
    return rc;
}

int ref_pb_read_f32(ref_pb *r, size_t at, int wire, float *v)
{
    uint32_t u;
    int rc = ref_pb_expect(r, at, wire, REF_PB_I32);
    if (!rc)
        rc = ref_pb_fixed32(r, &u);
    if (!rc)
        memcpy(v, &u, sizeof *v);
    return rc;
}

int ref_pb_read_str(ref_pb *r, size_t at, int wire, const uint8_t **p, size_t *n)
{
    int rc = ref_pb_expect(r, at, wire, REF_PB_LEN);
    return rc ? rc : ref_pb_bytes(r, p, n);
}

/* ------------------------------------------------------------------------------------------------
 * Repeated numbers
 * ---------------------------------------------------------------------------------------------- */

static int kind_wire(ref_pb_kind kind)
{
    return kind == REF_PB_KIND_VARINT ? REF_PB_VARINT : kind == REF_PB_KIND_FIXED32 ? REF_PB_I32 : REF_PB_I64;
}

static int check_rep_wire(ref_pb *r, size_t at, int wire, ref_pb_kind kind)
{
    int want = kind_wire(kind);
    if (wire == want || wire == REF_PB_LEN)
        return REF_OK;
    return ref_pb_fail(r->tr, at, REF_E_PARSE, "wire type %d (%s), expected %d (%s) or 2 (packed)", wire,
                       wire_name(wire), want, wire_name(want));
}

int ref_pb_rep_count(ref_pb *r, size_t at, int wire, ref_pb_kind kind, size_t *n)
{
    int rc = check_rep_wire(r, at, wire, kind);
    if (rc)
        return rc;
    if (wire != REF_PB_LEN) {
        *n = 1;
        return ref_pb_skip(r, wire);
    }
    const uint8_t *p;
    size_t len;
    rc = ref_pb_bytes(r, &p, &len);
    if (rc)
        return rc;
    size_t start = (size_t)(p - r->buf);
    if (kind == REF_PB_KIND_VARINT) {
        /* Every varint ends in exactly one byte below 0x80. */
        size_t count = 0;
        for (size_t i = 0; i < len; i++)
            count += p[i] < 0x80;
        if (len && p[len - 1] >= 0x80)
            return ref_pb_fail(r->tr, start + len - 1, REF_E_PARSE, "packed varints end mid-value");
        *n = count;
        return REF_OK;
    }
    size_t size = kind == REF_PB_KIND_FIXED32 ? 4 : 8;
    if (len % size)
        return ref_pb_fail(r->tr, start, REF_E_PARSE, "packed length %zu is not a multiple of %zu", len, size);
    *n = len / size;
    return REF_OK;
}

int ref_pb_rep_begin(ref_pb *r, size_t at, int wire, ref_pb_kind kind, ref_pb_rep *it)
{
    int rc = check_rep_wire(r, at, wire, kind);
    if (rc)
        return rc;
    it->kind = kind;
    it->parent = r;
    it->done = false;
    it->packed = wire == REF_PB_LEN;
    if (it->packed)
        return ref_pb_sub(r, &it->body);
    it->body = *r;
    return REF_OK;
}

int ref_pb_rep_next(ref_pb_rep *it, uint64_t *v)
{
    ref_pb *src = it->packed ? &it->body : it->parent;
    if (it->packed ? !ref_pb_more(src) : it->done)
        return 1;
    it->done = true;
    int rc;
    uint32_t u;
    switch (it->kind) {
    case REF_PB_KIND_VARINT:
        return ref_pb_varint(src, v);
    case REF_PB_KIND_FIXED32:
        rc = ref_pb_fixed32(src, &u);
        *v = u;
        return rc;
    default:
        return ref_pb_fixed64(src, v);
    }
}

/* ================================================================================================
 * Writer
 * ============================================================================================== */

void ref_pbw_init(ref_pbw *w) { memset(w, 0, sizeof *w); }

void ref_pbw_free(ref_pbw *w)
{
    ref_free(w->buf);
    memset(w, 0, sizeof *w);
}

static int reserve(ref_pbw *w, size_t extra)
{
    if (w->status)
        return w->status;
    if (extra > SIZE_MAX / 2 - w->len)
        return w->status = REF_E_NOMEM;
    size_t need = w->len + extra;
    if (need <= w->cap)
        return REF_OK;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need)
        cap *= 2;
    uint8_t *p = ref_realloc(w->buf, cap);
    if (!p)
        return w->status = REF_E_NOMEM;
    w->buf = p;
    w->cap = cap;
    return REF_OK;
}

int ref_pbw_raw(ref_pbw *w, const void *p, size_t n)
{
    int rc = reserve(w, n);
    if (rc)
        return rc;
    if (n)
        memcpy(w->buf + w->len, p, n);
    w->len += n;
    return REF_OK;
}

size_t ref_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t encode_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

int ref_pbw_varint(ref_pbw *w, uint64_t v)
{
    uint8_t tmp[10];
    return ref_pbw_raw(w, tmp, encode_varint(tmp, v));
}

int ref_pbw_tag(ref_pbw *w, uint32_t field, int wire)
{
    return ref_pbw_varint(w, (uint64_t)field << 3 | (uint64_t)wire);
}

int ref_pbw_u64(ref_pbw *w, uint32_t field, uint64_t v)
{
    ref_pbw_tag(w, field, REF_PB_VARINT);
    return ref_pbw_varint(w, v);
}

int ref_pbw_i64(ref_pbw *w, uint32_t field, int64_t v) { return ref_pbw_u64(w, field, (uint64_t)v); }

int ref_pbw_fixed32(ref_pbw *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return ref_pbw_raw(w, b, 4);
}

int ref_pbw_fixed64(ref_pbw *w, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return ref_pbw_raw(w, b, 8);
}

int ref_pbw_f32(ref_pbw *w, uint32_t field, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    ref_pbw_tag(w, field, REF_PB_I32);
    return ref_pbw_fixed32(w, u);
}

int ref_pbw_f64(ref_pbw *w, uint32_t field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    ref_pbw_tag(w, field, REF_PB_I64);
    return ref_pbw_fixed64(w, u);
}

int ref_pbw_bytes(ref_pbw *w, uint32_t field, const void *p, size_t n)
{
    ref_pbw_tag(w, field, REF_PB_LEN);
    ref_pbw_varint(w, n);
    return ref_pbw_raw(w, p, n);
}

int ref_pbw_str(ref_pbw *w, uint32_t field, const char *s)
{
    return s ? ref_pbw_bytes(w, field, s, strlen(s)) : w->status;
}

int ref_pbw_packed_i64(ref_pbw *w, uint32_t field, const int64_t *v, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += ref_pb_varint_size((uint64_t)v[i]);
    ref_pbw_tag(w, field, REF_PB_LEN);
    ref_pbw_varint(w, bytes);
    int rc = reserve(w, bytes);
    for (size_t i = 0; i < n && !rc; i++)
        w->len += encode_varint(w->buf + w->len, (uint64_t)v[i]);
    return rc;
}

int ref_pbw_packed_f32(ref_pbw *w, uint32_t field, const float *v, size_t n)
{
    ref_pbw_tag(w, field, REF_PB_LEN);
    ref_pbw_varint(w, n * 4);
    int rc = reserve(w, n * 4);
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        rc = ref_pbw_fixed32(w, u);
    }
    return rc;
}

size_t ref_pbw_begin(ref_pbw *w, uint32_t field)
{
    ref_pbw_tag(w, field, REF_PB_LEN);
    size_t mark = w->len;
    ref_pbw_raw(w, "", 1); /* one byte reserved for the length; ref_pbw_end widens it if needed */
    return mark;
}

int ref_pbw_end(ref_pbw *w, size_t mark)
{
    if (w->status)
        return w->status;
    size_t body = w->len - mark - 1;
    size_t vs = ref_pb_varint_size(body);
    if (vs > 1) {
        int rc = reserve(w, vs - 1);
        if (rc)
            return rc;
        memmove(w->buf + mark + vs, w->buf + mark + 1, body);
        w->len += vs - 1;
    }
    encode_varint(w->buf + mark, body);
    return REF_OK;
}
