/* pb.h: protobuf wire format, both ways: a bounds-checked reader cursor that knows absolute byte offsets
 * and a field path for its errors, and a growable writer. It must never read past its end or trust a length. */
#ifndef REF_ONNX_PB_H
#define REF_ONNX_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../status.h"

enum {
    REF_PB_VARINT = 0,
    REF_PB_I64 = 1,
    REF_PB_LEN = 2,
    REF_PB_SGROUP = 3,
    REF_PB_EGROUP = 4,
    REF_PB_I32 = 5
};

/* Deepest nesting a parser may enter; ONNX's schema needs about 8. */
#define REF_PB_MAX_DEPTH 32

/* ------------------------------------------------------------------------------------------------
 * Error context. One trace is shared by every cursor of a parse: it carries the field path
 * ("graph.node[3].attribute[1].t") and the name of the scalar field being read ("dims"), so any
 * failure reads "graph.node[3].attribute[1].t.dims @ byte 1204: truncated varint".
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_pb_trace {
    ref_error *err;
    const char *root;  /* printed when the path is empty: "model", "tensor" */
    const char *field; /* scalar field being read, or NULL */
    int depth;
    size_t len;
    char path[256];
} ref_pb_trace;

void ref_pb_trace_init(ref_pb_trace *tr, ref_error *err, const char *root);

/* Append ".name" (or "name" at the root) and, when index >= 0, "[index]"; clears field.
 * Fails with REF_E_PARSE past REF_PB_MAX_DEPTH. *saved receives what ref_pb_leave restores. */
typedef struct ref_pb_mark {
    size_t len;
    const char *field;
} ref_pb_mark;
int ref_pb_enter(ref_pb_trace *tr, const char *name, long index, size_t at, ref_pb_mark *saved);
void ref_pb_leave(ref_pb_trace *tr, const ref_pb_mark *saved);

/* Fill tr->err with code and "path[.field] @ byte at: <fmt>"; returns code. */
int ref_pb_fail(ref_pb_trace *tr, size_t at, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------------------------------------------
 * Reader. A cursor is a window [pos, end) of one buffer; offsets are absolute in that buffer, so a
 * nested message's cursor still reports positions from the start of the file.
 * Every call returns 0 or a negative status (REF_E_PARSE) with the trace filled; on failure the
 * cursor's position is unspecified and the parse must stop.
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_pb {
    const uint8_t *buf;
    size_t pos, end;
    ref_pb_trace *tr;
} ref_pb;

void ref_pb_init(ref_pb *r, const uint8_t *buf, size_t len, ref_pb_trace *tr);
static inline bool ref_pb_more(const ref_pb *r) { return r->pos < r->end; }
static inline size_t ref_pb_left(const ref_pb *r) { return r->end - r->pos; }

/* Read a key. Rejects field 0, wire types 6 and 7, and groups (3, 4): ONNX never uses them. */
int ref_pb_tag(ref_pb *r, uint32_t *field, int *wire);
/* At most 10 bytes; a 10th byte above 1 overflows 64 bits and is rejected. */
int ref_pb_varint(ref_pb *r, uint64_t *v);
int ref_pb_fixed32(ref_pb *r, uint32_t *v);
int ref_pb_fixed64(ref_pb *r, uint64_t *v);
/* Length-delimited payload: *p points into the buffer, *n is checked against the bytes left. */
int ref_pb_bytes(ref_pb *r, const uint8_t **p, size_t *n);
/* Length-delimited payload as a cursor of its own (a nested message). */
int ref_pb_sub(ref_pb *r, ref_pb *sub);
/* Step over one value of the given wire type. */
int ref_pb_skip(ref_pb *r, int wire);

/* Fail unless wire == want, naming both ("wire type 0, expected 2"). */
int ref_pb_expect(ref_pb *r, size_t at, int wire, int want);

/* Typed scalar readers that check the wire type first; at is the tag's offset. */
int ref_pb_read_u64(ref_pb *r, size_t at, int wire, uint64_t *v);    /* varint */
int ref_pb_read_i64(ref_pb *r, size_t at, int wire, int64_t *v);     /* varint, two's complement */
int ref_pb_read_f32(ref_pb *r, size_t at, int wire, float *v);       /* fixed32 */
int ref_pb_read_str(ref_pb *r, size_t at, int wire, const uint8_t **p, size_t *n); /* bytes */

/* Repeated numbers, packed (one LEN field) or unpacked (one value per field). */
typedef enum { REF_PB_KIND_VARINT, REF_PB_KIND_FIXED32, REF_PB_KIND_FIXED64 } ref_pb_kind;

/* Count the values one occurrence of a repeated field holds and step past it. The count is bounded by
 * the bytes present, so it is safe to allocate from. */
int ref_pb_rep_count(ref_pb *r, size_t at, int wire, ref_pb_kind kind, size_t *n);

typedef struct ref_pb_rep {
    ref_pb body;   /* the packed payload, or the parent cursor's window for one unpacked value */
    ref_pb *parent;
    ref_pb_kind kind;
    bool packed, done;
} ref_pb_rep;
/* Start iterating one occurrence; values come from ref_pb_rep_next until it returns 1 (end). */
int ref_pb_rep_begin(ref_pb *r, size_t at, int wire, ref_pb_kind kind, ref_pb_rep *it);
/* 0 with *v set, 1 at the end, or a negative status. FIXED32 values come in the low 32 bits. */
int ref_pb_rep_next(ref_pb_rep *it, uint64_t *v);

/* ------------------------------------------------------------------------------------------------
 * Writer. Bytes grow through ref_realloc. The first failure sticks (w->status) and later calls do
 * nothing, so a serializer may check once at the end.
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_pbw {
    uint8_t *buf;
    size_t len, cap;
    int status;
} ref_pbw;

void ref_pbw_init(ref_pbw *w);
void ref_pbw_free(ref_pbw *w); /* releases the bytes; the struct may be reused after ref_pbw_init */

int ref_pbw_raw(ref_pbw *w, const void *p, size_t n);
int ref_pbw_varint(ref_pbw *w, uint64_t v);
int ref_pbw_tag(ref_pbw *w, uint32_t field, int wire);
int ref_pbw_u64(ref_pbw *w, uint32_t field, uint64_t v);           /* tag + varint */
int ref_pbw_i64(ref_pbw *w, uint32_t field, int64_t v);            /* negatives take 10 bytes */
int ref_pbw_f32(ref_pbw *w, uint32_t field, float v);              /* tag + fixed32 */
int ref_pbw_f64(ref_pbw *w, uint32_t field, double v);             /* tag + fixed64 */
int ref_pbw_fixed32(ref_pbw *w, uint32_t v);
int ref_pbw_fixed64(ref_pbw *w, uint64_t v);
int ref_pbw_bytes(ref_pbw *w, uint32_t field, const void *p, size_t n);
int ref_pbw_str(ref_pbw *w, uint32_t field, const char *s);       /* NULL writes nothing */
int ref_pbw_packed_i64(ref_pbw *w, uint32_t field, const int64_t *v, size_t n);
int ref_pbw_packed_f32(ref_pbw *w, uint32_t field, const float *v, size_t n);

/* Nested message: ref_pbw_begin writes the tag and reserves the length; ref_pbw_end fills it in
 * (moving the body when the length needs more than one byte). Returns the mark to pass to end. */
size_t ref_pbw_begin(ref_pbw *w, uint32_t field);
int ref_pbw_end(ref_pbw *w, size_t mark);

/* Bytes a varint of v takes. */
size_t ref_pb_varint_size(uint64_t v);

#endif
