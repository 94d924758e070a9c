/* read.c: ModelProto and everything under it (graph, nodes, attributes, value infos, types) into the IR, on
 * common/onnx's wire cursor: statuses inside are onnx_ ones, converted once in ref_onnx_parse.
 * It must never do file I/O (external.c does), nor keep pointers into the input unless mmap is on. */
#include <limits.h>
#include <string.h>

#include "../alloc.h"
#include "../model.h"
#include "bridge.h"
#include "external.h"
#include "onnx/tensor_pb.h"

typedef struct rd {
    ref_model *m;
    onnx_pb_trace tr;
    ref_ext ext;
    ref_graph *g;          /* the graph being read: the model's, or a subgraph's */
    int depth;             /* subgraph nesting, bounded so a crafted file cannot exhaust the stack */
    bool borrow;           /* raw_data may point into the input buffer (ref_onnx_can_borrow) */
    ref_storage borrow_as; /* MAPPED when that buffer is a registered file mapping, else HEAP */
} rd;

typedef int (*msg_fn)(rd *c, onnx_pb *msg, void *arg);

static int nomem(rd *c, size_t at) { return onnx_pb_fail(&c->tr, at, ONNX_E_NOMEM, "out of memory"); }

/* Parse the length-delimited field at the cursor as a nested message named name[index]. */
static int nested(rd *c, onnx_pb *r, size_t at, int wire, const char *name, long index, msg_fn fn, void *arg)
{
    c->tr.field = name;
    onnx_pb sub;
    onnx_pb_mark mark;
    int rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN);
    if (!rc)
        rc = onnx_pb_sub(r, &sub);
    if (!rc)
        rc = onnx_pb_enter(&c->tr, name, index, sub.pos, &mark);
    if (rc)
        return rc;
    rc = fn(c, &sub, arg);
    if (!rc)
        onnx_pb_leave(&c->tr, &mark);
    return rc; /* on failure the path stays, so the caller's message keeps naming the inner field */
}

/* A string field copied into the pool, NUL-terminated; *len (if non-NULL) excludes the NUL. */
static int str_field(rd *c, onnx_pb *r, size_t at, int wire, const char *name, const char **out, size_t *len)
{
    const uint8_t *p;
    size_t n;
    c->tr.field = name;
    int rc = onnx_pb_read_str(r, at, wire, &p, &n);
    if (rc)
        return rc;
    char *s = ref_model_strdup(c->m, (const char *)p, n);
    if (!s)
        return nomem(c, at);
    *out = s;
    if (len)
        *len = n;
    return ONNX_OK;
}

/* Step over a repeated length-delimited field, counting it (pass one of a two-pass message). */
static int count_len(rd *c, onnx_pb *r, size_t at, int wire, const char *name, size_t *n)
{
    c->tr.field = name;
    int rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN);
    if (!rc)
        rc = onnx_pb_skip(r, wire);
    (*n)++;
    return rc;
}

/* Pool array of n elements of size bytes; n bounded by the bytes present, checked against int limits. */
static int pool_array(rd *c, size_t at, size_t n, size_t size, void **out)
{
    if (n > INT_MAX)
        return onnx_pb_fail(&c->tr, at, ONNX_E_PARSE, "%zu entries is too many", n);
    *out = NULL;
    if (!n)
        return ONNX_OK;
    if (!(*out = ref_model_pool_alloc(c->m, n * size)))
        return nomem(c, at);
    return ONNX_OK;
}

/* ================================================================================================
 * Tensors (initializers and TENSOR attributes)
 * ============================================================================================== */

/* Where a scanned tensor's bytes live: borrowed from the input, external, or a model heap copy. */
static int tensor_data(rd *c, const onnx_tensor_pb *tp, void **data, ref_storage *storage)
{
    *data = NULL;
    *storage = REF_STORAGE_NONE;
    if (tp->dtype == ONNX_DT_STRING)
        return ONNX_OK; /* shape only: compile refuses string tensors */
    if (tp->external)
        return ref_ext_load(&c->ext, &c->tr, tp->at, tp, data, storage);
    if (c->borrow && tp->raw_len && !tp->typed_field && ref_onnx_can_borrow(tp->dtype, tp->raw)) {
        *data = (void *)(uintptr_t)tp->raw;
        *storage = c->borrow_as;
        return ONNX_OK;
    }
    void *p = ref_model_heap_alloc(c->m, tp->nbytes);
    if (!p)
        return onnx_pb_fail(&c->tr, tp->at, ONNX_E_NOMEM, "out of memory for %zu bytes of tensor data", tp->nbytes);
    int rc = onnx_tensor_pb_decode(tp, p);
    if (rc)
        return rc;
    *data = p;
    *storage = REF_STORAGE_HEAP;
    return ONNX_OK;
}

static int parse_init(rd *c, onnx_pb *msg, void *arg)
{
    ref_initializer *in = arg;
    onnx_tensor_pb tp;
    int rc = onnx_tensor_pb_scan(msg, &tp);
    if (rc)
        return rc;
    if (!tp.name_len)
        return onnx_pb_fail(&c->tr, tp.at, ONNX_E_PARSE, "initializer without a name");
    if (!(in->name = ref_model_strdup(c->m, (const char *)tp.name, tp.name_len)))
        return nomem(c, tp.at);
    in->t = ref_tensor_of_pb(&tp);
    in->nbytes = tp.dtype == ONNX_DT_STRING ? 0 : tp.nbytes;
    return tensor_data(c, &tp, &in->t.data, &in->storage);
}

static int parse_attr_tensor(rd *c, onnx_pb *msg, void *arg)
{
    ref_attr *a = arg;
    onnx_tensor_pb tp;
    int rc = onnx_tensor_pb_scan(msg, &tp);
    if (rc)
        return rc;
    ref_tensor *t = ref_model_pool_alloc(c->m, sizeof *t);
    if (!t)
        return nomem(c, tp.at);
    *t = ref_tensor_of_pb(&tp);
    ref_storage st;
    if ((rc = tensor_data(c, &tp, &t->data, &st)) != 0)
        return rc;
    a->t = t;
    return ONNX_OK;
}

/* ================================================================================================
 * Attributes
 * ============================================================================================== */

enum {
    A_NAME = 1, A_F = 2, A_I = 3, A_S = 4, A_T = 5, A_G = 6, A_FLOATS = 7, A_INTS = 8, A_STRINGS = 9,
    A_TENSORS = 10, A_GRAPHS = 11, A_TYPE = 20
};

#define REF_MAX_SUBGRAPH_DEPTH 32

static int parse_graph(rd *c, onnx_pb *msg, void *arg);

/* A GRAPH attribute (or one entry of GRAPHS): a new subgraph of the model, read with the same rules. */
static int parse_subgraph(rd *c, onnx_pb *msg, void *arg)
{
    const ref_graph **out = arg;
    if (c->depth >= REF_MAX_SUBGRAPH_DEPTH)
        return onnx_pb_fail(&c->tr, msg->pos, ONNX_E_UNSUPPORTED, "subgraphs nested deeper than %d",
                            REF_MAX_SUBGRAPH_DEPTH);
    ref_graph *sub = ref_model_new_subgraph(c->m);
    if (!sub)
        return nomem(c, msg->pos);
    ref_graph *outer = c->g;
    c->g = sub;
    c->depth++;
    int rc = parse_graph(c, msg, NULL);
    c->depth--;
    c->g = outer;
    if (!rc)
        *out = sub;
    return rc;
}

typedef struct attr_scan {
    size_t n_floats, n_ints, n_strings, n_tensors, n_graphs;
    unsigned seen; /* bit per field number seen, for type inference */
    bool has_type;
} attr_scan;

/* Pass one: scalars, the tensor, and counts of the repeated fields. */
static int attr_field(rd *c, onnx_pb *r, size_t at, uint32_t f, int wire, ref_attr *a, attr_scan *s)
{
    size_t n;
    int rc;
    if (f < 32)
        s->seen |= 1u << f;
    switch (f) {
    case A_NAME:
        return str_field(c, r, at, wire, "name", &a->name, NULL);
    case A_F:
        c->tr.field = "f";
        return onnx_pb_read_f32(r, at, wire, &a->f);
    case A_I:
        c->tr.field = "i";
        return onnx_pb_read_i64(r, at, wire, &a->i);
    case A_S:
        return str_field(c, r, at, wire, "s", &a->s, &a->s_len);
    case A_T:
        return nested(c, r, at, wire, "t", -1, parse_attr_tensor, a);
    case A_G:
        return nested(c, r, at, wire, "g", -1, parse_subgraph, (void *)&a->g);
    case A_FLOATS:
        c->tr.field = "floats";
        rc = onnx_pb_rep_count(r, at, wire, ONNX_PB_KIND_FIXED32, &n);
        s->n_floats += n;
        return rc;
    case A_INTS:
        c->tr.field = "ints";
        rc = onnx_pb_rep_count(r, at, wire, ONNX_PB_KIND_VARINT, &n);
        s->n_ints += n;
        return rc;
    case A_STRINGS:
        return count_len(c, r, at, wire, "strings", &s->n_strings);
    case A_TENSORS:
        return count_len(c, r, at, wire, "tensors", &s->n_tensors);
    case A_GRAPHS:
        return count_len(c, r, at, wire, "graphs", &s->n_graphs);
    case A_TYPE: {
        int64_t v;
        c->tr.field = "type";
        s->has_type = true;
        rc = onnx_pb_read_i64(r, at, wire, &v);
        a->type = v >= 0 && v <= INT32_MAX ? (int32_t)v : REF_ATTR_UNDEFINED;
        return rc;
    }
    default:
        return onnx_pb_skip(r, wire);
    }
}

/* The type an attribute without `type` has, from the first field present. */
static int32_t infer_attr_type(const attr_scan *s)
{
    static const struct { uint32_t field; int32_t type; } order[] = {
        {A_FLOATS, REF_ATTR_FLOATS}, {A_INTS, REF_ATTR_INTS}, {A_STRINGS, REF_ATTR_STRINGS},
        {A_TENSORS, REF_ATTR_TENSORS}, {A_GRAPHS, REF_ATTR_GRAPHS}, {A_F, REF_ATTR_FLOAT},
        {A_I, REF_ATTR_INT}, {A_S, REF_ATTR_STRING}, {A_T, REF_ATTR_TENSOR}, {A_G, REF_ATTR_GRAPH},
    };
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (s->seen & (1u << order[k].field))
            return order[k].type;
    return REF_ATTR_UNDEFINED;
}

/* Pass two: fill floats, ints and strings. */
static int attr_lists(rd *c, onnx_pb *r, ref_attr *a, const attr_scan *s)
{
    float *fl = NULL;
    int64_t *in = NULL;
    const char **st = NULL;
    const ref_graph **gs = NULL;
    int rc = pool_array(c, r->pos, s->n_floats, sizeof *fl, (void **)&fl);
    if (!rc)
        rc = pool_array(c, r->pos, s->n_graphs, sizeof *gs, (void **)&gs);
    if (!rc)
        rc = pool_array(c, r->pos, s->n_ints, sizeof *in, (void **)&in);
    if (!rc)
        rc = pool_array(c, r->pos, s->n_strings, sizeof *st, (void **)&st);
    size_t nf = 0, ni = 0, ns = 0, ng = 0;
    while (!rc && onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        if ((rc = onnx_pb_tag(r, &f, &wire)) != 0)
            break;
        if (f == A_FLOATS || f == A_INTS) {
            onnx_pb_rep it;
            uint64_t v;
            c->tr.field = f == A_FLOATS ? "floats" : "ints";
            rc = onnx_pb_rep_begin(r, at, wire, f == A_FLOATS ? ONNX_PB_KIND_FIXED32 : ONNX_PB_KIND_VARINT, &it);
            while (!rc && (rc = onnx_pb_rep_next(&it, &v)) == 0) {
                if (f == A_INTS && ni < s->n_ints) {
                    in[ni++] = (int64_t)v;
                } else if (f == A_FLOATS && nf < s->n_floats) {
                    uint32_t u = (uint32_t)v;
                    memcpy(&fl[nf++], &u, sizeof u);
                }
            }
            rc = rc < 0 ? rc : ONNX_OK;
        } else if (f == A_STRINGS && ns < s->n_strings) {
            rc = str_field(c, r, at, wire, "strings", &st[ns++], NULL);
        } else if (f == A_GRAPHS && ng < s->n_graphs) {
            rc = nested(c, r, at, wire, "graphs", (long)ng, parse_subgraph, (void *)&gs[ng]);
            ng++;
        } else {
            rc = onnx_pb_skip(r, wire);
        }
    }
    if (rc)
        return rc;
    a->floats = fl;
    a->ints = in;
    a->strings = st;
    a->graphs = gs;
    a->n_graphs = ng;
    a->n = a->type == REF_ATTR_FLOATS ? nf : a->type == REF_ATTR_INTS ? ni : a->type == REF_ATTR_STRINGS ? ns : 0;
    return ONNX_OK;
}

static int parse_attr(rd *c, onnx_pb *msg, void *arg)
{
    ref_attr *a = arg;
    onnx_pb again = *msg;
    attr_scan s = {0};
    size_t start = msg->pos;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc)
            rc = attr_field(c, msg, at, f, wire, a, &s);
        if (rc)
            return rc;
    }
    c->tr.field = NULL;
    if (!a->name || !a->name[0])
        return onnx_pb_fail(&c->tr, start, ONNX_E_PARSE, "attribute without a name");
    if (!s.has_type)
        a->type = infer_attr_type(&s);
    if (a->type == REF_ATTR_TENSOR && !a->t)
        return onnx_pb_fail(&c->tr, start, ONNX_E_PARSE, "TENSOR attribute '%s' without a tensor", a->name);
    if (!a->s)
        a->s = ""; /* proto default: ops may read s of any STRING attribute */
    return attr_lists(c, &again, a, &s);
}

/* ================================================================================================
 * Nodes
 * ============================================================================================== */

enum { N_INPUT = 1, N_OUTPUT = 2, N_NAME = 3, N_OP_TYPE = 4, N_ATTRIBUTE = 5, N_DOMAIN = 7 };

static int node_scalars(rd *c, onnx_pb *r, ref_node *n, size_t counts[3])
{
    while (onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        int rc = onnx_pb_tag(r, &f, &wire);
        if (rc)
            return rc;
        switch (f) {
        case N_INPUT: rc = count_len(c, r, at, wire, "input", &counts[0]); break;
        case N_OUTPUT: rc = count_len(c, r, at, wire, "output", &counts[1]); break;
        case N_ATTRIBUTE: rc = count_len(c, r, at, wire, "attribute", &counts[2]); break;
        case N_NAME: rc = str_field(c, r, at, wire, "name", &n->name, NULL); break;
        case N_OP_TYPE: rc = str_field(c, r, at, wire, "op_type", &n->op_type, NULL); break;
        case N_DOMAIN: rc = str_field(c, r, at, wire, "domain", &n->domain, NULL); break;
        default: rc = onnx_pb_skip(r, wire); break;
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int parse_node(rd *c, onnx_pb *msg, void *arg)
{
    ref_node *n = arg;
    onnx_pb r = *msg;
    size_t counts[3] = {0, 0, 0}, start = msg->pos;
    int rc = node_scalars(c, &r, n, counts);
    if (rc)
        return rc;
    c->tr.field = NULL;
    if (!n->op_type || !n->op_type[0])
        return onnx_pb_fail(&c->tr, start, ONNX_E_PARSE, "node without an op_type");
    if (!n->name)
        n->name = "";
    if (!n->domain)
        n->domain = "";
    if ((rc = pool_array(c, start, counts[0], sizeof *n->inputs, (void **)&n->inputs)) != 0 ||
        (rc = pool_array(c, start, counts[1], sizeof *n->outputs, (void **)&n->outputs)) != 0 ||
        (rc = pool_array(c, start, counts[2], sizeof *n->attrs, (void **)&n->attrs)) != 0)
        return rc;
    r = *msg;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        if ((rc = onnx_pb_tag(&r, &f, &wire)) != 0)
            return rc;
        if (f == N_INPUT && (size_t)n->n_inputs < counts[0])
            rc = str_field(c, &r, at, wire, "input", &n->inputs[n->n_inputs++], NULL);
        else if (f == N_OUTPUT && (size_t)n->n_outputs < counts[1])
            rc = str_field(c, &r, at, wire, "output", &n->outputs[n->n_outputs++], NULL);
        else if (f == N_ATTRIBUTE && (size_t)n->n_attrs < counts[2]) {
            int k = n->n_attrs++;
            rc = nested(c, &r, at, wire, "attribute", k, parse_attr, &n->attrs[k]);
        } else
            rc = onnx_pb_skip(&r, wire);
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

/* ================================================================================================
 * Value infos and types
 * ============================================================================================== */

static int parse_dim(rd *c, onnx_pb *msg, void *arg)
{
    ref_dim *d = arg;
    d->value = -1;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc && f == 1) {
            c->tr.field = "dim_value";
            int64_t v;
            rc = onnx_pb_read_i64(msg, at, wire, &v);
            d->value = v >= 0 ? v : -1; /* a negative size means "unknown" in the IR */
            d->param = NULL;
        } else if (!rc && f == 2) {
            rc = str_field(c, msg, at, wire, "dim_param", &d->param, NULL);
            d->value = -1;
        } else if (!rc) {
            rc = onnx_pb_skip(msg, wire);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int parse_shape(rd *c, onnx_pb *msg, void *arg)
{
    ref_value_info *v = arg;
    onnx_pb r = *msg;
    size_t n = 0;
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        int rc = onnx_pb_tag(&r, &f, &wire);
        if (!rc)
            rc = f == 1 ? count_len(c, &r, at, wire, "dim", &n) : onnx_pb_skip(&r, wire);
        if (rc)
            return rc;
    }
    int rc = pool_array(c, msg->pos, n, sizeof *v->dims, (void **)&v->dims);
    size_t i = 0;
    while (!rc && onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        if ((rc = onnx_pb_tag(msg, &f, &wire)) != 0)
            break;
        if (f == 1 && i < n) {
            v->dims[i].value = -1;
            rc = nested(c, msg, at, wire, "dim", (long)i, parse_dim, &v->dims[i]);
            i++;
        } else {
            rc = onnx_pb_skip(msg, wire);
        }
    }
    if (!rc)
        v->rank = (int32_t)i;
    return rc;
}

static int parse_tensor_type(rd *c, onnx_pb *msg, void *arg)
{
    ref_value_info *v = arg;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc && f == 1) {
            int64_t t;
            c->tr.field = "elem_type";
            rc = onnx_pb_read_i64(msg, at, wire, &t);
            v->elem_type = t >= 0 && t <= INT32_MAX ? (int32_t)t : REF_DT_UNDEFINED;
        } else if (!rc && f == 2) {
            rc = nested(c, msg, at, wire, "shape", -1, parse_shape, v);
        } else if (!rc) {
            rc = onnx_pb_skip(msg, wire);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

/* Tensor types keep their element type and shape; a sequence (field 4) or an optional (field 9) becomes the
 * engine's blob type (REF_DT_SEQUENCE / REF_DT_OPTIONAL) with no shape; maps leave elem_type 0 and rank -1. */
static int parse_type(rd *c, onnx_pb *msg, void *arg)
{
    ref_value_info *v = arg;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc && f == 1) {
            rc = nested(c, msg, at, wire, "tensor_type", -1, parse_tensor_type, arg);
        } else if (!rc && (f == 4 || f == 9)) {
            c->tr.field = f == 4 ? "sequence_type" : "optional_type";
            rc = onnx_pb_expect(msg, at, wire, ONNX_PB_LEN);
            if (!rc)
                rc = onnx_pb_skip(msg, wire);
            v->elem_type = f == 4 ? REF_DT_SEQUENCE : REF_DT_OPTIONAL;
            v->rank = -1;
        } else if (!rc) {
            rc = onnx_pb_skip(msg, wire);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int parse_value_info(rd *c, onnx_pb *msg, void *arg)
{
    ref_value_info *v = arg;
    size_t start = msg->pos;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc && f == 1)
            rc = str_field(c, msg, at, wire, "name", &v->name, NULL);
        else if (!rc && f == 2)
            rc = nested(c, msg, at, wire, "type", -1, parse_type, v);
        else if (!rc)
            rc = onnx_pb_skip(msg, wire);
        if (rc)
            return rc;
    }
    c->tr.field = NULL;
    if (!v->name)
        return onnx_pb_fail(&c->tr, start, ONNX_E_PARSE, "value without a name");
    return ONNX_OK;
}

/* ================================================================================================
 * Graph and model
 * ============================================================================================== */

enum { G_NODE = 1, G_NAME = 2, G_INIT = 5, G_INPUT = 11, G_OUTPUT = 12, G_VALUE_INFO = 13, G_SPARSE_INIT = 15 };

static int graph_field(rd *c, onnx_pb *r, size_t at, uint32_t f, int wire)
{
    ref_graph *g = c->g;
    void *slot;
    switch (f) {
    case G_NODE:
        if (!(slot = ref_graph_push_node(g)))
            return nomem(c, at);
        return nested(c, r, at, wire, "node", (long)g->n_nodes - 1, parse_node, slot);
    case G_NAME:
        return str_field(c, r, at, wire, "name", &g->name, NULL);
    case G_INIT:
        if (!(slot = ref_graph_push_init(g)))
            return nomem(c, at);
        return nested(c, r, at, wire, "initializer", (long)g->n_inits - 1, parse_init, slot);
    case G_INPUT:
        if (!(slot = ref_graph_push_value(&g->inputs, &g->n_inputs, &g->cap_inputs)))
            return nomem(c, at);
        return nested(c, r, at, wire, "input", (long)g->n_inputs - 1, parse_value_info, slot);
    case G_OUTPUT:
        if (!(slot = ref_graph_push_value(&g->outputs, &g->n_outputs, &g->cap_outputs)))
            return nomem(c, at);
        return nested(c, r, at, wire, "output", (long)g->n_outputs - 1, parse_value_info, slot);
    case G_VALUE_INFO:
        if (!(slot = ref_graph_push_value(&g->value_infos, &g->n_value_infos, &g->cap_value_infos)))
            return nomem(c, at);
        return nested(c, r, at, wire, "value_info", (long)g->n_value_infos - 1, parse_value_info, slot);
    case G_SPARSE_INIT:
        c->tr.field = "sparse_initializer";
        return onnx_pb_fail(&c->tr, at, ONNX_E_UNSUPPORTED, "sparse initializers are not supported");
    default:
        return onnx_pb_skip(r, wire);
    }
}

static int parse_graph(rd *c, onnx_pb *msg, void *arg)
{
    (void)arg;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc)
            rc = graph_field(c, msg, at, f, wire);
        if (rc)
            return rc;
    }
    if (!c->g->name)
        c->g->name = "";
    return ONNX_OK;
}

/* OperatorSetId: domain = 1, version = 2. */
static int parse_opset(rd *c, onnx_pb *msg, void *arg)
{
    (void)arg;
    const char *domain = "";
    int64_t version = 0;
    size_t start = msg->pos;
    while (onnx_pb_more(msg)) {
        uint32_t f;
        int wire;
        size_t at = msg->pos;
        int rc = onnx_pb_tag(msg, &f, &wire);
        if (!rc && f == 1) {
            rc = str_field(c, msg, at, wire, "domain", &domain, NULL);
        } else if (!rc && f == 2) {
            c->tr.field = "version";
            rc = onnx_pb_read_i64(msg, at, wire, &version);
        } else if (!rc) {
            rc = onnx_pb_skip(msg, wire);
        }
        if (rc)
            return rc;
    }
    c->tr.field = NULL;
    if (ref_model_add_opset(c->m, domain, version))
        return nomem(c, start);
    return ONNX_OK;
}

static int parse_model(rd *c, onnx_pb *r)
{
    ref_model *m = c->m;
    bool has_graph = false;
    while (onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        int rc = onnx_pb_tag(r, &f, &wire);
        if (rc)
            return rc;
        switch (f) {
        case 1:
            c->tr.field = "ir_version";
            rc = onnx_pb_read_i64(r, at, wire, &m->ir_version);
            break;
        case 2: rc = str_field(c, r, at, wire, "producer_name", &m->producer_name, NULL); break;
        case 3: rc = str_field(c, r, at, wire, "producer_version", &m->producer_version, NULL); break;
        case 7:
            if (has_graph)
                return onnx_pb_fail(&c->tr, at, ONNX_E_PARSE, "a second graph");
            has_graph = true;
            rc = nested(c, r, at, wire, "graph", -1, parse_graph, NULL);
            break;
        case 8: rc = nested(c, r, at, wire, "opset_import", (long)m->n_opsets, parse_opset, NULL); break;
        default: rc = onnx_pb_skip(r, wire); break;
        }
        if (rc)
            return rc;
    }
    c->tr.field = NULL;
    if (!has_graph)
        return onnx_pb_fail(&c->tr, r->end, ONNX_E_PARSE, "model has no graph");
    /* IR versions 1 and 2 predate opset_import; from 3 on it is required. */
    if (!m->n_opsets && !(m->ir_version >= 1 && m->ir_version < 3))
        return onnx_pb_fail(&c->tr, r->end, ONNX_E_PARSE, "model has no opset_import");
    return ONNX_OK;
}

/* True when buf lies inside one of the model's registered file mappings. */
static bool in_mapping(const ref_model *m, const uint8_t *buf, size_t len)
{
    uintptr_t b = (uintptr_t)buf;
    for (size_t i = 0; i < m->n_maps; i++) {
        uintptr_t a = (uintptr_t)m->maps[i].addr;
        if (b >= a && len <= m->maps[i].len && b - a <= m->maps[i].len - len)
            return true;
    }
    return false;
}

int ref_onnx_parse(ref_model *m, const uint8_t *buf, size_t len, const char *dir, ref_error *err)
{
    onnx_error oe = {0};
    rd c = {.m = m, .g = &m->graph, .borrow = m->opts.mmap != 0};
    onnx_pb_trace_init(&c.tr, &oe, "model");
    ref_ext_init(&c.ext, m, dir);
    c.borrow_as = buf && in_mapping(m, buf, len) ? REF_STORAGE_MAPPED : REF_STORAGE_HEAP;
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &c.tr);
    int rc = parse_model(&c, &r);
    ref_ext_deinit(&c.ext);
    /* Below here every status was common/onnx's; the engine's callers see ref's. */
    return rc ? ref_fail_onnx(err, rc, &oe) : REF_OK;
}
