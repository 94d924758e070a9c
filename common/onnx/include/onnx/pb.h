/* pb.h: protobuf wire format, both ways: a bounds-checked reader cursor that knows absolute byte offsets
 * and a field path for its errors, and a growable writer. It must never read past its end or trust a length. */
#ifndef ONNX_PB_H
#define ONNX_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx/base.h"

enum {
    ONNX_PB_VARINT = 0,
    ONNX_PB_I64 = 1,
    ONNX_PB_LEN = 2,
    ONNX_PB_SGROUP = 3,
    ONNX_PB_EGROUP = 4,
    ONNX_PB_I32 = 5
};

/* Deepest nesting a parser may enter; ONNX's schema needs about 8. */
#define ONNX_PB_MAX_DEPTH 32

/* ------------------------------------------------------------------------------------------------
 * Error context. One trace is shared by every cursor of a parse: it carries the field path
 * ("graph.node[3].attribute[1].t") and the name of the scalar field being read ("dims"), so any
 * failure reads "graph.node[3].attribute[1].t.dims @ byte 1204: truncated varint".
 * ---------------------------------------------------------------------------------------------- */
typedef struct onnx_pb_trace {
    onnx_error *err;   /* may be NULL: failures then only return their code */
    const char *root;  /* printed when the path is empty: "model", "tensor" */
    const char *field; /* scalar field being read, or NULL */
    int depth;
    size_t len;
    char path[256];
} onnx_pb_trace;

void onnx_pb_trace_init(onnx_pb_trace *tr, onnx_error *err, const char *root);

/* Append ".name" (or "name" at the root) and, when index >= 0, "[index]"; clears field.
 * Fails with ONNX_E_PARSE past ONNX_PB_MAX_DEPTH. *saved receives what onnx_pb_leave restores. */
typedef struct onnx_pb_mark {
    size_t len;
    const char *field;
} onnx_pb_mark;
int onnx_pb_enter(onnx_pb_trace *tr, const char *name, long index, size_t at, onnx_pb_mark *saved);
void onnx_pb_leave(onnx_pb_trace *tr, const onnx_pb_mark *saved);

/* Fill tr->err with code and "path[.field] @ byte at: <fmt>"; returns code. Any status may be passed, so a
 * caller's own failures (out of memory, a missing name) read like the reader's. */
int onnx_pb_fail(onnx_pb_trace *tr, size_t at, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------------------------------------------
 * Reader. A cursor is a window [pos, end) of one buffer; offsets are absolute in that buffer, so a
 * nested message's cursor still reports positions from the start of the file.
 * Every call returns 0 or ONNX_E_PARSE with the trace filled; on failure the cursor's position is
 * unspecified and the parse must stop. A cursor only borrows buf: it must outlive every cursor over it.
 * ---------------------------------------------------------------------------------------------- */
typedef struct onnx_pb {
    const uint8_t *buf;
    size_t pos, end;
    onnx_pb_trace *tr;
} onnx_pb;

void onnx_pb_init(onnx_pb *r, const uint8_t *buf, size_t len, onnx_pb_trace *tr);
static inline bool onnx_pb_more(const onnx_pb *r) { return r->pos < r->end; }
static inline size_t onnx_pb_left(const onnx_pb *r) { return r->end - r->pos; }

/* Read a key. Rejects field 0, wire types 6 and 7, and groups (3, 4): ONNX never uses them. */
int onnx_pb_tag(onnx_pb *r, uint32_t *field, int *wire);
/* At most 10 bytes; a 10th byte above 1 overflows 64 bits and is rejected. */
int onnx_pb_varint(onnx_pb *r, uint64_t *v);
int onnx_pb_fixed32(onnx_pb *r, uint32_t *v);
int onnx_pb_fixed64(onnx_pb *r, uint64_t *v);
/* Length-delimited payload: *p points into the buffer, *n is checked against the bytes left. */
int onnx_pb_bytes(onnx_pb *r, const uint8_t **p, size_t *n);
/* Length-delimited payload as a cursor of its own (a nested message). */
int onnx_pb_sub(onnx_pb *r, onnx_pb *sub);
/* Step over one value of the given wire type. */
int onnx_pb_skip(onnx_pb *r, int wire);

/* Fail unless wire == want, naming both ("wire type 0, expected 2"). */
int onnx_pb_expect(onnx_pb *r, size_t at, int wire, int want);

/* Typed scalar readers that check the wire type first; at is the tag's offset. */
int onnx_pb_read_u64(onnx_pb *r, size_t at, int wire, uint64_t *v);    /* varint */
int onnx_pb_read_i64(onnx_pb *r, size_t at, int wire, int64_t *v);     /* varint, two's complement */
int onnx_pb_read_f32(onnx_pb *r, size_t at, int wire, float *v);       /* fixed32 */
int onnx_pb_read_str(onnx_pb *r, size_t at, int wire, const uint8_t **p, size_t *n); /* bytes */

/* Repeated numbers, packed (one LEN field) or unpacked (one value per field). */
typedef enum { ONNX_PB_KIND_VARINT, ONNX_PB_KIND_FIXED32, ONNX_PB_KIND_FIXED64 } onnx_pb_kind;

/* Count the values one occurrence of a repeated field holds and step past it. The count is bounded by
 * the bytes present, so it is safe to allocate from. */
int onnx_pb_rep_count(onnx_pb *r, size_t at, int wire, onnx_pb_kind kind, size_t *n);

typedef struct onnx_pb_rep {
    onnx_pb body;   /* the packed payload, or the parent cursor's window for one unpacked value */
    onnx_pb *parent;
    onnx_pb_kind kind;
    bool packed, done;
} onnx_pb_rep;
/* Start iterating one occurrence; values come from onnx_pb_rep_next until it returns 1 (end). */
int onnx_pb_rep_begin(onnx_pb *r, size_t at, int wire, onnx_pb_kind kind, onnx_pb_rep *it);
/* 0 with *v set, 1 at the end, or a negative status. FIXED32 values come in the low 32 bits. */
int onnx_pb_rep_next(onnx_pb_rep *it, uint64_t *v);

/* ------------------------------------------------------------------------------------------------
 * Writer. Bytes grow through the allocation table given to onnx_pbw_init. The first failure sticks
 * (w->status, ONNX_E_NOMEM) and later calls do nothing, so a serializer may check once at the end.
 * ---------------------------------------------------------------------------------------------- */
typedef struct onnx_pbw {
    uint8_t *buf;  /* owned; from alloc */
    size_t len, cap;
    int status;
    const onnx_alloc *alloc;
} onnx_pbw;

/* Start empty. alloc NULL means libc; otherwise the table must outlive w. Allocates nothing yet. */
void onnx_pbw_init(onnx_pbw *w, const onnx_alloc *alloc);
/* Release the bytes through the same table; the struct may be reused after onnx_pbw_init. */
void onnx_pbw_free(onnx_pbw *w);

int onnx_pbw_raw(onnx_pbw *w, const void *p, size_t n);
int onnx_pbw_varint(onnx_pbw *w, uint64_t v);
int onnx_pbw_tag(onnx_pbw *w, uint32_t field, int wire);
int onnx_pbw_u64(onnx_pbw *w, uint32_t field, uint64_t v);           /* tag + varint */
int onnx_pbw_i64(onnx_pbw *w, uint32_t field, int64_t v);            /* negatives take 10 bytes */
int onnx_pbw_f32(onnx_pbw *w, uint32_t field, float v);              /* tag + fixed32 */
int onnx_pbw_f64(onnx_pbw *w, uint32_t field, double v);             /* tag + fixed64 */
int onnx_pbw_fixed32(onnx_pbw *w, uint32_t v);
int onnx_pbw_fixed64(onnx_pbw *w, uint64_t v);
int onnx_pbw_bytes(onnx_pbw *w, uint32_t field, const void *p, size_t n);
int onnx_pbw_str(onnx_pbw *w, uint32_t field, const char *s);       /* NULL writes nothing */
int onnx_pbw_packed_i64(onnx_pbw *w, uint32_t field, const int64_t *v, size_t n);
int onnx_pbw_packed_f32(onnx_pbw *w, uint32_t field, const float *v, size_t n);

/* Nested message: onnx_pbw_begin writes the tag and reserves the length; onnx_pbw_end fills it in
 * (moving the body when the length needs more than one byte). Returns the mark to pass to end. */
size_t onnx_pbw_begin(onnx_pbw *w, uint32_t field);
int onnx_pbw_end(onnx_pbw *w, size_t mark);

/* Bytes a varint of v takes. */
size_t onnx_pb_varint_size(uint64_t v);

#endif
