/* model_check.c: a wire-level walk of a whole ModelProto, one descriptor table per message of ONNX's schema, so the
 * harness can refuse a malformed model before any worker reads it. It must never follow a length it has not checked
 * nor allocate: the walk is bounded by the buffer and ONNX_PB_MAX_DEPTH. */
#include <string.h>

#include "onnx/model_check.h"
#include "onnx/pb.h"

/* K_MSG: a repeated message field (named with its index in errors), K_ONE: a singular one. */
typedef enum { K_VARINT, K_I32, K_I64, K_STR, K_MSG, K_ONE, K_REP_VARINT, K_REP_I32, K_REP_I64 } kind;

enum { M_MODEL, M_GRAPH, M_NODE, M_ATTR, M_TENSOR, M_VALUE_INFO, M_TYPE, M_TENSOR_TYPE, M_SHAPE, M_DIM, M_OPSET,
       M_ENTRY, M_ELEM_TYPE, M_MAP_TYPE, M_SPARSE, M_SEGMENT, M_FUNCTION, M_COUNT };

typedef struct {
    unsigned num;
    kind k;
    const char *name;
    int msg; /* K_MSG, K_ONE: the message it holds */
} field;

#define MAX_FIELDS 16

typedef struct {
    const char *name;
    field f[MAX_FIELDS];
} message;

/* onnx.proto3 (ONNX 1.17): the fields that hold numbers, strings and messages. */
static const message messages[M_COUNT] = {
    [M_MODEL] = {"ModelProto", {{1, K_VARINT, "ir_version", 0}, {2, K_STR, "producer_name", 0},
                 {3, K_STR, "producer_version", 0}, {4, K_STR, "domain", 0}, {5, K_VARINT, "model_version", 0},
                 {6, K_STR, "doc_string", 0}, {7, K_ONE, "graph", M_GRAPH}, {8, K_MSG, "opset_import", M_OPSET},
                 {14, K_MSG, "metadata_props", M_ENTRY}, {25, K_MSG, "functions", M_FUNCTION}}},
    [M_GRAPH] = {"GraphProto", {{1, K_MSG, "node", M_NODE}, {2, K_STR, "name", 0},
                 {5, K_MSG, "initializer", M_TENSOR}, {15, K_MSG, "sparse_initializer", M_SPARSE},
                 {10, K_STR, "doc_string", 0}, {11, K_MSG, "input", M_VALUE_INFO},
                 {12, K_MSG, "output", M_VALUE_INFO}, {13, K_MSG, "value_info", M_VALUE_INFO},
                 {16, K_MSG, "metadata_props", M_ENTRY}}},
    [M_NODE] = {"NodeProto", {{1, K_STR, "input", 0}, {2, K_STR, "output", 0}, {3, K_STR, "name", 0},
                {4, K_STR, "op_type", 0}, {5, K_MSG, "attribute", M_ATTR}, {6, K_STR, "doc_string", 0},
                {7, K_STR, "domain", 0}, {8, K_STR, "overload", 0}, {9, K_MSG, "metadata_props", M_ENTRY}}},
    [M_ATTR] = {"AttributeProto", {{1, K_STR, "name", 0}, {21, K_STR, "ref_attr_name", 0},
                {13, K_STR, "doc_string", 0}, {20, K_VARINT, "type", 0}, {2, K_I32, "f", 0}, {3, K_VARINT, "i", 0},
                {4, K_STR, "s", 0}, {5, K_ONE, "t", M_TENSOR}, {6, K_ONE, "g", M_GRAPH},
                {22, K_ONE, "sparse_tensor", M_SPARSE}, {14, K_ONE, "tp", M_TYPE}, {7, K_REP_I32, "floats", 0},
                {8, K_REP_VARINT, "ints", 0}, {9, K_STR, "strings", 0}, {10, K_MSG, "tensors", M_TENSOR},
                {11, K_MSG, "graphs", M_GRAPH}}},
    [M_TENSOR] = {"TensorProto", {{1, K_REP_VARINT, "dims", 0}, {2, K_VARINT, "data_type", 0},
                  {3, K_ONE, "segment", M_SEGMENT}, {4, K_REP_I32, "float_data", 0},
                  {5, K_REP_VARINT, "int32_data", 0}, {6, K_STR, "string_data", 0},
                  {7, K_REP_VARINT, "int64_data", 0}, {8, K_STR, "name", 0}, {12, K_STR, "doc_string", 0},
                  {9, K_STR, "raw_data", 0}, {13, K_MSG, "external_data", M_ENTRY},
                  {14, K_VARINT, "data_location", 0}, {10, K_REP_I64, "double_data", 0},
                  {11, K_REP_VARINT, "uint64_data", 0}, {16, K_MSG, "metadata_props", M_ENTRY}}},
    [M_VALUE_INFO] = {"ValueInfoProto", {{1, K_STR, "name", 0}, {2, K_ONE, "type", M_TYPE},
                      {3, K_STR, "doc_string", 0}, {4, K_MSG, "metadata_props", M_ENTRY}}},
    [M_TYPE] = {"TypeProto", {{1, K_ONE, "tensor_type", M_TENSOR_TYPE}, {4, K_ONE, "sequence_type", M_ELEM_TYPE},
                {5, K_ONE, "map_type", M_MAP_TYPE}, {9, K_ONE, "optional_type", M_ELEM_TYPE},
                {8, K_ONE, "sparse_tensor_type", M_TENSOR_TYPE}, {6, K_STR, "denotation", 0}}},
    [M_TENSOR_TYPE] = {"TypeProto.Tensor", {{1, K_VARINT, "elem_type", 0}, {2, K_ONE, "shape", M_SHAPE}}},
    [M_SHAPE] = {"TensorShapeProto", {{1, K_MSG, "dim", M_DIM}}},
    [M_DIM] = {"TensorShapeProto.Dimension", {{1, K_VARINT, "dim_value", 0}, {2, K_STR, "dim_param", 0},
               {3, K_STR, "denotation", 0}}},
    [M_OPSET] = {"OperatorSetIdProto", {{1, K_STR, "domain", 0}, {2, K_VARINT, "version", 0}}},
    [M_ENTRY] = {"StringStringEntryProto", {{1, K_STR, "key", 0}, {2, K_STR, "value", 0}}},
    [M_ELEM_TYPE] = {"TypeProto.Sequence", {{1, K_ONE, "elem_type", M_TYPE}}},
    [M_MAP_TYPE] = {"TypeProto.Map", {{1, K_VARINT, "key_type", 0}, {2, K_ONE, "value_type", M_TYPE}}},
    [M_SPARSE] = {"SparseTensorProto", {{1, K_ONE, "values", M_TENSOR}, {2, K_ONE, "indices", M_TENSOR},
                  {3, K_REP_VARINT, "dims", 0}}},
    [M_SEGMENT] = {"TensorProto.Segment", {{1, K_VARINT, "begin", 0}, {2, K_VARINT, "end", 0}}},
    [M_FUNCTION] = {"FunctionProto", {{1, K_STR, "name", 0}, {4, K_STR, "input", 0}, {5, K_STR, "output", 0},
                    {6, K_STR, "attribute", 0}, {11, K_MSG, "attribute_proto", M_ATTR}, {7, K_MSG, "node", M_NODE},
                    {8, K_STR, "doc_string", 0}, {9, K_MSG, "opset_import", M_OPSET}, {10, K_STR, "domain", 0},
                    {13, K_STR, "overload", 0}, {12, K_MSG, "value_info", M_VALUE_INFO},
                    {14, K_MSG, "metadata_props", M_ENTRY}}},
};

static const field *find(const message *m, unsigned num, int *slot)
{
    for (int i = 0; i < MAX_FIELDS && m->f[i].name; i++)
        if (m->f[i].num == num) {
            *slot = i;
            return &m->f[i];
        }
    return NULL;
}

static int walk(onnx_pb *r, int msg, int *n_graphs);

static int one_field(onnx_pb *r, size_t at, int wire, const field *f, long index, int *n_graphs)
{
    static const onnx_pb_kind rep_kind[] = {[K_REP_VARINT] = ONNX_PB_KIND_VARINT, [K_REP_I32] = ONNX_PB_KIND_FIXED32,
                                            [K_REP_I64] = ONNX_PB_KIND_FIXED64};
    uint64_t u;
    const uint8_t *p;
    size_t n;
    r->tr->field = f->name;
    switch (f->k) {
    case K_VARINT: return onnx_pb_read_u64(r, at, wire, &u);
    case K_I32: return onnx_pb_expect(r, at, wire, ONNX_PB_I32) ? ONNX_E_PARSE : onnx_pb_skip(r, wire);
    case K_I64: return onnx_pb_expect(r, at, wire, ONNX_PB_I64) ? ONNX_E_PARSE : onnx_pb_skip(r, wire);
    case K_STR: return onnx_pb_read_str(r, at, wire, &p, &n);
    case K_REP_VARINT: case K_REP_I32: case K_REP_I64: return onnx_pb_rep_count(r, at, wire, rep_kind[f->k], &n);
    case K_MSG: case K_ONE: break;
    }
    onnx_pb sub;
    onnx_pb_mark mark;
    int rc;
    if ((rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN)) || (rc = onnx_pb_sub(r, &sub)) ||
        (rc = onnx_pb_enter(r->tr, f->name, index, sub.pos, &mark)))
        return rc;
    if ((rc = walk(&sub, f->msg, n_graphs)))
        return rc; /* the path stays, naming the inner field */
    onnx_pb_leave(r->tr, &mark);
    return ONNX_OK;
}

/* Every field of one message of kind msg, to its end. n_graphs counts ModelProto.graph (only the top level's). */
static int walk(onnx_pb *r, int msg, int *n_graphs)
{
    const message *m = &messages[msg];
    long seen[MAX_FIELDS] = {0};
    while (onnx_pb_more(r)) {
        uint32_t num;
        int wire, slot = 0;
        size_t at = r->pos;
        int rc = onnx_pb_tag(r, &num, &wire);
        const field *f = rc ? NULL : find(m, num, &slot);
        if (!rc && !f)
            rc = onnx_pb_skip(r, wire);
        else if (!rc) {
            if (msg == M_MODEL && f->msg == M_GRAPH && f->k == K_ONE)
                (*n_graphs)++;
            rc = one_field(r, at, wire, f, f->k == K_MSG ? seen[slot]++ : -1, n_graphs);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

int onnx_model_check(const void *buf, size_t len, onnx_error *err)
{
    if (!buf && len)
        return onnx_fail(err, ONNX_E_INVALID, "onnx_model_check: no buffer");
    onnx_pb_trace tr;
    onnx_pb_trace_init(&tr, err, "model");
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &tr);
    int n_graphs = 0, rc = walk(&r, M_MODEL, &n_graphs);
    if (!rc && n_graphs == 0)
        rc = onnx_fail(err, ONNX_E_PARSE, "model has no graph (ModelProto field 7): not an ONNX model");
    return rc;
}
