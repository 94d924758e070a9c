/* seq_read.c: SequenceProto and OptionalProto files (ONNX test data for sequence and optional inputs and outputs)
 * into the engine's blobs (seq.h). Fields: SequenceProto name=1, elem_type=2, tensor_values=3; OptionalProto
 * name=1, elem_type=2, tensor_value=3, sequence_value=5. It must never accept a sequence of sequences or maps:
 * only tensors and one level of optional are read. */
#include <string.h>

#include "../model.h"
#include "../seq.h"
#include "bridge.h"
#include "onnx/file.h"
#include "onnx/tensor_pb.h"

#define SEQ_MAX_ELEMS 4096

typedef struct {
    ref_tensor t[SEQ_MAX_ELEMS];
    int n;
    int elem_dtype;
} seq_parts;

static void parts_free(seq_parts *s)
{
    for (int i = 0; i < s->n; i++)
        ref_free(s->t[i].data);
    s->n = 0;
}

static int add_tensor(seq_parts *s, const uint8_t *p, size_t n, ref_error *err)
{
    if (s->n == SEQ_MAX_ELEMS)
        return ref_fail(err, REF_E_UNSUPPORTED, "more than %d sequence elements", SEQ_MAX_ELEMS);
    void *data = NULL;
    int rc = ref_onnx_parse_tensor(p, n, &s->t[s->n], &data, NULL, err);
    if (rc)
        return rc;
    s->t[s->n].data = data;
    if (s->t[s->n].dtype == REF_DT_STRING) {
        ref_free(data);
        return ref_fail(err, REF_E_UNSUPPORTED, "a sequence of strings");
    }
    s->elem_dtype = s->t[s->n++].dtype;
    return REF_OK;
}

/* Walk one message; tensors (field `tensor_field`) go into s, a nested SequenceProto (field `seq_field`, 0 for
 * none) too; the name (field 1) into *name when asked; *kind gets elem_type (field 2). */
static int walk(const uint8_t *buf, size_t len, int tensor_field, int seq_field, seq_parts *s, char **name,
                int64_t *kind, bool *nested, ref_error *err)
{
    onnx_error oe = {0};
    onnx_pb_trace tr;
    onnx_pb_trace_init(&tr, &oe, seq_field ? "optional" : "sequence");
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &tr);
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        const uint8_t *p;
        size_t n;
        int rc = onnx_pb_tag(&r, &f, &wire);
        if (!rc && f == 2)
            rc = onnx_pb_read_i64(&r, at, wire, kind);
        else if (!rc && (f == 1 || (int)f == tensor_field || (seq_field && (int)f == seq_field)))
            rc = onnx_pb_read_str(&r, at, wire, &p, &n);
        else if (!rc)
            rc = onnx_pb_skip(&r, wire);
        if (rc)
            return ref_fail_onnx(err, rc, &oe);
        if (f == 1 && name && !*name && !(*name = ref_strndup((const char *)p, n)))
            return ref_fail(err, REF_E_NOMEM, "out of memory for a name");
        if ((int)f == tensor_field && wire == ONNX_PB_LEN && (rc = add_tensor(s, p, n, err)))
            return rc;
        if (seq_field && (int)f == seq_field && wire == ONNX_PB_LEN) {
            int64_t inner_kind = 0;
            *nested = true;
            if ((rc = walk(p, n, 3, 0, s, NULL, &inner_kind, nested, err)))
                return rc;
        }
    }
    return REF_OK;
}

int ref_value_load_pb(const char *path, int kind, ref_tensor *out, char **name, ref_error *err)
{
    if (!path || !out || (kind != REF_DT_SEQUENCE && kind != REF_DT_OPTIONAL))
        return ref_fail(err, REF_E_INVALID, "ref_value_load_pb: a path, out and a sequence or optional kind");
    onnx_error oe = {0};
    uint8_t *buf;
    size_t len;
    int rc = onnx_file_read(path, ref_onnx_alloc(), &buf, &len, &oe);
    if (rc)
        return ref_fail_onnx(err, rc, &oe);
    seq_parts *s = ref_calloc(1, sizeof *s);
    char *nm = NULL;
    int64_t elem_kind = 0;
    bool nested = false;
    rc = s ? walk(buf, len, 3, kind == REF_DT_OPTIONAL ? 5 : 0, s, name ? &nm : NULL, &elem_kind, &nested, err)
           : ref_fail(err, REF_E_NOMEM, "out of memory reading %s", path);
    ref_free(buf);
    const ref_tensor *ptrs[SEQ_MAX_ELEMS];
    for (int i = 0; s && i < s->n; i++)
        ptrs[i] = &s->t[i];
    void *blob = NULL;
    size_t bytes = s ? ref_seq_bytes(s->n, ptrs) : 0;
    if (!rc && !(blob = ref_aligned_alloc(bytes)))
        rc = ref_fail(err, REF_E_NOMEM, "out of memory for a %zu-byte sequence", bytes);
    if (!rc) {
        bool has = kind == REF_DT_SEQUENCE || s->n > 0 || nested;
        (void)elem_kind;
        ref_seq_write(blob, kind, has, nested ? REF_DT_SEQUENCE : 0, s->elem_dtype, s->n, ptrs);
        *out = ref_seq_shape(kind, bytes);
        out->data = blob;
        if (name)
            *name = nm;
        nm = NULL;
    }
    if (s)
        parts_free(s);
    ref_free(s);
    ref_free(nm);
    return rc ? ref_fail_prefix(err, "%s: ", path) : REF_OK;
}
