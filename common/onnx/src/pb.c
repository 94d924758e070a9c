/* pb.c: protobuf wire format: a checked reader over one buffer and a growable writer.
 * It must never read outside [pos, end) nor size anything from a length it has not checked against the bytes left. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "onnx/pb.h"

/* ================================================================================================
 * Error context
 * ============================================================================================== */

void onnx_pb_trace_init(onnx_pb_trace *tr, onnx_error *err, const char *root)
{
    memset(tr, 0, sizeof *tr);
    tr->err = err;
    tr->root = root;
}

int onnx_pb_enter(onnx_pb_trace *tr, const char *name, long index, size_t at, onnx_pb_mark *saved)
{
    saved->len = tr->len;
    saved->field = tr->field;
    if (tr->depth >= ONNX_PB_MAX_DEPTH)
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "messages nested deeper than %d", ONNX_PB_MAX_DEPTH);
    tr->depth++;
    tr->field = NULL;
    size_t room = sizeof tr->path - tr->len;
    int w = index >= 0 ? snprintf(tr->path + tr->len, room, "%s%s[%ld]", tr->len ? "." : "", name, index)
                       : snprintf(tr->path + tr->len, room, "%s%s", tr->len ? "." : "", name);
    /* A cut path still names the outer fields; the offset pins the rest down. */
    if (w > 0)
        tr->len += (size_t)w < room ? (size_t)w : room - 1;
    return ONNX_OK;
}

void onnx_pb_leave(onnx_pb_trace *tr, const onnx_pb_mark *saved)
{
    tr->len = saved->len;
    tr->path[tr->len] = '\0';
    tr->field = saved->field;
    if (tr->depth > 0)
        tr->depth--;
}

int onnx_pb_fail(onnx_pb_trace *tr, size_t at, int code, const char *fmt, ...)
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
    return onnx_fail(tr->err, code, "%s%s%s @ byte %zu: %s", path, tr->field && tr->len ? "." : "",
                    tr->field ? tr->field : "", at, what);
}

/* ================================================================================================
 * Reader
 * ============================================================================================== */

void onnx_pb_init(onnx_pb *r, const uint8_t *buf, size_t len, onnx_pb_trace *tr)
{
    r->buf = buf;
    r->pos = 0;
    r->end = len;
    r->tr = tr;
}

int onnx_pb_varint(onnx_pb *r, uint64_t *v)
{
    size_t start = r->pos;
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->end)
            return onnx_pb_fail(r->tr, start, ONNX_E_PARSE, "truncated varint");
        uint8_t b = r->buf[r->pos++];
        /* The 10th byte carries only bit 63: anything more overflows, a continuation makes 11 bytes. */
        if (i == 9 && b > 1)
            return onnx_pb_fail(r->tr, start, ONNX_E_PARSE, "%s",
                               b & 0x80 ? "varint longer than 10 bytes" : "varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return ONNX_OK;
        }
    }
    return onnx_pb_fail(r->tr, start, ONNX_E_PARSE, "varint longer than 10 bytes");
}

int onnx_pb_tag(onnx_pb *r, uint32_t *field, int *wire)
{
    size_t at = r->pos;
    uint64_t key;
    r->tr->field = NULL;
    int rc = onnx_pb_varint(r, &key);
    if (rc)
        return rc;
    uint64_t num = key >> 3;
    int w = (int)(key & 7);
    if (num == 0 || num > 0x1fffffff)
        return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "invalid field number %llu", (unsigned long long)num);
    if (w == ONNX_PB_SGROUP || w == ONNX_PB_EGROUP)
        return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "field %u uses groups (wire type %d), not supported",
                           (unsigned)num, w);
    if (w > ONNX_PB_I32)
        return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "field %u has invalid wire type %d", (unsigned)num, w);
    *field = (uint32_t)num;
    *wire = w;
    return ONNX_OK;
}

int onnx_pb_fixed32(onnx_pb *r, uint32_t *v)
{
    if (onnx_pb_left(r) < 4)
        return onnx_pb_fail(r->tr, r->pos, ONNX_E_PARSE, "truncated fixed32 (%zu bytes left)", onnx_pb_left(r));
    const uint8_t *p = r->buf + r->pos;
    *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    r->pos += 4;
    return ONNX_OK;
}

int onnx_pb_fixed64(onnx_pb *r, uint64_t *v)
{
    if (onnx_pb_left(r) < 8)
        return onnx_pb_fail(r->tr, r->pos, ONNX_E_PARSE, "truncated fixed64 (%zu bytes left)", onnx_pb_left(r));
    const uint8_t *p = r->buf + r->pos;
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = x << 8 | p[i];
    *v = x;
    r->pos += 8;
    return ONNX_OK;
}

int onnx_pb_bytes(onnx_pb *r, const uint8_t **p, size_t *n)
{
    size_t at = r->pos;
    uint64_t len;
    int rc = onnx_pb_varint(r, &len);
    if (rc)
        return rc;
    if (len > onnx_pb_left(r))
        return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "length %llu exceeds the %zu bytes left",
                           (unsigned long long)len, onnx_pb_left(r));
    *p = r->buf + r->pos;
    *n = (size_t)len;
    r->pos += (size_t)len;
    return ONNX_OK;
}

int onnx_pb_sub(onnx_pb *r, onnx_pb *sub)
{
    const uint8_t *p;
    size_t n;
    int rc = onnx_pb_bytes(r, &p, &n);
    if (rc)
        return rc;
    sub->buf = r->buf;
    sub->pos = (size_t)(p - r->buf);
    sub->end = sub->pos + n;
    sub->tr = r->tr;
    return ONNX_OK;
}

int onnx_pb_skip(onnx_pb *r, int wire)
{
    uint64_t v;
    const uint8_t *p;
    size_t n;
    switch (wire) {
    case ONNX_PB_VARINT:
        return onnx_pb_varint(r, &v);
    case ONNX_PB_I64:
        return onnx_pb_fixed64(r, &v);
    case ONNX_PB_LEN:
        return onnx_pb_bytes(r, &p, &n);
    case ONNX_PB_I32: {
        uint32_t u;
        return onnx_pb_fixed32(r, &u);
    }
    default:
        return onnx_pb_fail(r->tr, r->pos, ONNX_E_PARSE, "cannot skip wire type %d", wire);
    }
}

static const char *wire_name(int wire)
{
    switch (wire) {
    case ONNX_PB_VARINT: return "varint";
    case ONNX_PB_I64: return "fixed64";
    case ONNX_PB_LEN: return "length-delimited";
    case ONNX_PB_I32: return "fixed32";
    default: return "group";
    }
}

int onnx_pb_expect(onnx_pb *r, size_t at, int wire, int want)
{
    if (wire == want)
        return ONNX_OK;
    return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "wire type %d (%s), expected %d (%s)", wire, wire_name(wire),
                       want, wire_name(want));
}

int onnx_pb_read_u64(onnx_pb *r, size_t at, int wire, uint64_t *v)
{
    int rc = onnx_pb_expect(r, at, wire, ONNX_PB_VARINT);
    return rc ? rc : onnx_pb_varint(r, v);
}

int onnx_pb_read_i64(onnx_pb *r, size_t at, int wire, int64_t *v)
{
    uint64_t u;
    int rc = onnx_pb_read_u64(r, at, wire, &u);
    if (!rc)
        *v = (int64_t)u;
    return rc;
}

int onnx_pb_read_f32(onnx_pb *r, size_t at, int wire, float *v)
{
    uint32_t u;
    int rc = onnx_pb_expect(r, at, wire, ONNX_PB_I32);
    if (!rc)
        rc = onnx_pb_fixed32(r, &u);
    if (!rc)
        memcpy(v, &u, sizeof *v);
    return rc;
}

int onnx_pb_read_str(onnx_pb *r, size_t at, int wire, const uint8_t **p, size_t *n)
{
    int rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN);
    return rc ? rc : onnx_pb_bytes(r, p, n);
}

/* ------------------------------------------------------------------------------------------------
 * Repeated numbers
 * ---------------------------------------------------------------------------------------------- */

static int kind_wire(onnx_pb_kind kind)
{
    return kind == ONNX_PB_KIND_VARINT ? ONNX_PB_VARINT : kind == ONNX_PB_KIND_FIXED32 ? ONNX_PB_I32 : ONNX_PB_I64;
}

static int check_rep_wire(onnx_pb *r, size_t at, int wire, onnx_pb_kind kind)
{
    int want = kind_wire(kind);
    if (wire == want || wire == ONNX_PB_LEN)
        return ONNX_OK;
    return onnx_pb_fail(r->tr, at, ONNX_E_PARSE, "wire type %d (%s), expected %d (%s) or 2 (packed)", wire,
                       wire_name(wire), want, wire_name(want));
}

int onnx_pb_rep_count(onnx_pb *r, size_t at, int wire, onnx_pb_kind kind, size_t *n)
{
    int rc = check_rep_wire(r, at, wire, kind);
    if (rc)
        return rc;
    if (wire != ONNX_PB_LEN) {
        *n = 1;
        return onnx_pb_skip(r, wire);
    }
    const uint8_t *p;
    size_t len;
    rc = onnx_pb_bytes(r, &p, &len);
    if (rc)
        return rc;
    size_t start = (size_t)(p - r->buf);
    if (kind == ONNX_PB_KIND_VARINT) {
        /* Every varint ends in exactly one byte below 0x80. */
        size_t count = 0;
        for (size_t i = 0; i < len; i++)
            count += p[i] < 0x80;
        if (len && p[len - 1] >= 0x80)
            return onnx_pb_fail(r->tr, start + len - 1, ONNX_E_PARSE, "packed varints end mid-value");
        *n = count;
        return ONNX_OK;
    }
    size_t size = kind == ONNX_PB_KIND_FIXED32 ? 4 : 8;
    if (len % size)
        return onnx_pb_fail(r->tr, start, ONNX_E_PARSE, "packed length %zu is not a multiple of %zu", len, size);
    *n = len / size;
    return ONNX_OK;
}

int onnx_pb_rep_begin(onnx_pb *r, size_t at, int wire, onnx_pb_kind kind, onnx_pb_rep *it)
{
    int rc = check_rep_wire(r, at, wire, kind);
    if (rc)
        return rc;
    it->kind = kind;
    it->parent = r;
    it->done = false;
    it->packed = wire == ONNX_PB_LEN;
    if (it->packed)
        return onnx_pb_sub(r, &it->body);
    it->body = *r;
    return ONNX_OK;
}

int onnx_pb_rep_next(onnx_pb_rep *it, uint64_t *v)
{
    onnx_pb *src = it->packed ? &it->body : it->parent;
    if (it->packed ? !onnx_pb_more(src) : it->done)
        return 1;
    it->done = true;
    int rc;
    uint32_t u;
    switch (it->kind) {
    case ONNX_PB_KIND_VARINT:
        return onnx_pb_varint(src, v);
    case ONNX_PB_KIND_FIXED32:
        rc = onnx_pb_fixed32(src, &u);
        *v = u;
        return rc;
    default:
        return onnx_pb_fixed64(src, v);
    }
}

/* ================================================================================================
 * Writer
 * ============================================================================================== */

void onnx_pbw_init(onnx_pbw *w, const onnx_alloc *alloc)
{
    memset(w, 0, sizeof *w);
    w->alloc = onnx_alloc_or_libc(alloc);
}

void onnx_pbw_free(onnx_pbw *w)
{
    if (w->buf)
        w->alloc->free_fn(w->buf);
    const onnx_alloc *a = w->alloc;
    memset(w, 0, sizeof *w);
    w->alloc = a; /* a freed writer stays safe to free again */
}

static int reserve(onnx_pbw *w, size_t extra)
{
    if (w->status)
        return w->status;
    if (extra > SIZE_MAX / 2 - w->len)
        return w->status = ONNX_E_NOMEM;
    size_t need = w->len + extra;
    if (need <= w->cap)
        return ONNX_OK;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need)
        cap *= 2;
    uint8_t *p = w->alloc->realloc_fn(w->buf, cap);
    if (!p)
        return w->status = ONNX_E_NOMEM;
    w->buf = p;
    w->cap = cap;
    return ONNX_OK;
}

int onnx_pbw_raw(onnx_pbw *w, const void *p, size_t n)
{
    int rc = reserve(w, n);
    if (rc)
        return rc;
    if (n)
        memcpy(w->buf + w->len, p, n);
    w->len += n;
    return ONNX_OK;
}

size_t onnx_pb_varint_size(uint64_t v)
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

int onnx_pbw_varint(onnx_pbw *w, uint64_t v)
{
    uint8_t tmp[10];
    return onnx_pbw_raw(w, tmp, encode_varint(tmp, v));
}

int onnx_pbw_tag(onnx_pbw *w, uint32_t field, int wire)
{
    return onnx_pbw_varint(w, (uint64_t)field << 3 | (uint64_t)wire);
}

int onnx_pbw_u64(onnx_pbw *w, uint32_t field, uint64_t v)
{
    onnx_pbw_tag(w, field, ONNX_PB_VARINT);
    return onnx_pbw_varint(w, v);
}

int onnx_pbw_i64(onnx_pbw *w, uint32_t field, int64_t v) { return onnx_pbw_u64(w, field, (uint64_t)v); }

int onnx_pbw_fixed32(onnx_pbw *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return onnx_pbw_raw(w, b, 4);
}

int onnx_pbw_fixed64(onnx_pbw *w, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return onnx_pbw_raw(w, b, 8);
}

int onnx_pbw_f32(onnx_pbw *w, uint32_t field, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    onnx_pbw_tag(w, field, ONNX_PB_I32);
    return onnx_pbw_fixed32(w, u);
}

int onnx_pbw_f64(onnx_pbw *w, uint32_t field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    onnx_pbw_tag(w, field, ONNX_PB_I64);
    return onnx_pbw_fixed64(w, u);
}

int onnx_pbw_bytes(onnx_pbw *w, uint32_t field, const void *p, size_t n)
{
    onnx_pbw_tag(w, field, ONNX_PB_LEN);
    onnx_pbw_varint(w, n);
    return onnx_pbw_raw(w, p, n);
}

int onnx_pbw_str(onnx_pbw *w, uint32_t field, const char *s)
{
    return s ? onnx_pbw_bytes(w, field, s, strlen(s)) : w->status;
}

int onnx_pbw_packed_i64(onnx_pbw *w, uint32_t field, const int64_t *v, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += onnx_pb_varint_size((uint64_t)v[i]);
    onnx_pbw_tag(w, field, ONNX_PB_LEN);
    onnx_pbw_varint(w, bytes);
    int rc = reserve(w, bytes);
    for (size_t i = 0; i < n && !rc; i++)
        w->len += encode_varint(w->buf + w->len, (uint64_t)v[i]);
    return rc;
}

int onnx_pbw_packed_f32(onnx_pbw *w, uint32_t field, const float *v, size_t n)
{
    onnx_pbw_tag(w, field, ONNX_PB_LEN);
    onnx_pbw_varint(w, n * 4);
    int rc = reserve(w, n * 4);
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        rc = onnx_pbw_fixed32(w, u);
    }
    return rc;
}

size_t onnx_pbw_begin(onnx_pbw *w, uint32_t field)
{
    onnx_pbw_tag(w, field, ONNX_PB_LEN);
    size_t mark = w->len;
    onnx_pbw_raw(w, "", 1); /* one byte reserved for the length; onnx_pbw_end widens it if needed */
    return mark;
}

int onnx_pbw_end(onnx_pbw *w, size_t mark)
{
    if (w->status)
        return w->status;
    size_t body = w->len - mark - 1;
    size_t vs = onnx_pb_varint_size(body);
    if (vs > 1) {
        int rc = reserve(w, vs - 1);
        if (rc)
            return rc;
        memmove(w->buf + mark + vs, w->buf + mark + 1, body);
        w->len += vs - 1;
    }
    encode_varint(w->buf + mark, body);
    return ONNX_OK;
}
