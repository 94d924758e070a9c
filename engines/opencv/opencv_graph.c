/* opencv_graph.c: what OpenCV's Net does not say about a model, read from its ModelProto with common/onnx: the graph
 * inputs that are not initializers, with element types and declared shapes (symbolic dims named), the graph outputs,
 * and whether any initializer keeps its data in an external file (OpenCV 4.6 cannot read those). It must never follow
 * a length it has not checked, and reads nothing but graph.input, graph.output and graph.initializer[].name. */
#include <stdlib.h>
#include <string.h>

#include "onnx/model_ext.h"
#include "onnx/pb.h"
#include "opencv_internal.h"

enum {
    M_GRAPH = 7,
    G_INITIALIZER = 5, G_INPUT = 11, G_OUTPUT = 12,
    T_NAME = 8,                     /* TensorProto.name */
    V_NAME = 1, V_TYPE = 2,         /* ValueInfoProto */
    TY_TENSOR = 1,                  /* TypeProto.tensor_type */
    TT_ELEM = 1, TT_SHAPE = 2,      /* TypeProto.Tensor */
    S_DIM = 1,                      /* TensorShapeProto.dim */
    D_VALUE = 1, D_PARAM = 2        /* Dimension */
};

typedef struct walk {
    onnx_pb_trace tr;
    ocv_value *vals[2];             /* inputs, outputs */
    size_t n[2], cap[2];
    char **inits;                   /* initializer names */
    size_t n_inits, cap_inits;
    ocv_value *cur;                 /* the value being read */
} walk;

static char *dup_str(const uint8_t *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static int nomem(walk *w, size_t at) { return onnx_pb_fail(&w->tr, at, ONNX_E_NOMEM, "out of memory"); }

/* Call fn on each length-delimited occurrence of field want in r, entered as name[index] (or name). */
static int each(walk *w, onnx_pb *r, uint32_t want, const char *name, int indexed, int (*fn)(walk *, onnx_pb *))
{
    long index = 0;
    while (onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        int rc = onnx_pb_tag(r, &f, &wire);
        if (rc)
            return rc;
        if (f != want) {
            if ((rc = onnx_pb_skip(r, wire)) != 0)
                return rc;
            continue;
        }
        w->tr.field = name;
        onnx_pb sub;
        onnx_pb_mark mark;
        if ((rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN)) != 0 || (rc = onnx_pb_sub(r, &sub)) != 0 ||
            (rc = onnx_pb_enter(&w->tr, name, indexed ? index : -1, sub.pos, &mark)) != 0)
            return rc;
        index++;
        if ((rc = fn(w, &sub)) != 0)
            return rc; /* the path stays, naming the inner field */
        onnx_pb_leave(&w->tr, &mark);
    }
    return ONNX_OK;
}

/* ---- TypeProto.Tensor.shape.dim ---- */

static int dim(walk *w, onnx_pb *d)
{
    ocv_value *v = w->cur;
    if (v->rank >= ENGINE_MAX_RANK)
        return onnx_pb_fail(&w->tr, d->pos, ONNX_E_UNSUPPORTED, "'%s' has more than %d dims", v->name ? v->name : "?",
                            ENGINE_MAX_RANK);
    int k = v->rank++;
    v->dims[k] = -1;
    while (onnx_pb_more(d)) {
        uint32_t f;
        int wire;
        size_t at = d->pos;
        int rc = onnx_pb_tag(d, &f, &wire);
        if (!rc && f == D_VALUE) {
            w->tr.field = "dim_value";
            int64_t x;
            if (!(rc = onnx_pb_read_i64(d, at, wire, &x)))
                v->dims[k] = x >= 0 ? x : -1;
        } else if (!rc && f == D_PARAM) {
            const uint8_t *s;
            size_t n;
            w->tr.field = "dim_param";
            if (!(rc = onnx_pb_read_str(d, at, wire, &s, &n)) && n) {
                free(v->sym[k]);
                if (!(v->sym[k] = dup_str(s, n)))
                    return nomem(w, at);
            }
        } else if (!rc) {
            rc = onnx_pb_skip(d, wire);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int shape(walk *w, onnx_pb *s)
{
    w->cur->rank = 0;
    return each(w, s, S_DIM, "dim", 1, dim);
}

static int tensor_type(walk *w, onnx_pb *t)
{
    while (onnx_pb_more(t)) {
        uint32_t f;
        int wire;
        size_t at = t->pos;
        int rc = onnx_pb_tag(t, &f, &wire);
        if (!rc && f == TT_ELEM) {
            uint64_t x;
            w->tr.field = "elem_type";
            if (!(rc = onnx_pb_read_u64(t, at, wire, &x)))
                w->cur->dtype = x <= 1000 ? (int32_t)x : 0;
        } else if (!rc && f == TT_SHAPE) {
            onnx_pb sub;
            onnx_pb_mark mark;
            w->tr.field = "shape";
            if (!(rc = onnx_pb_expect(t, at, wire, ONNX_PB_LEN)) && !(rc = onnx_pb_sub(t, &sub)) &&
                !(rc = onnx_pb_enter(&w->tr, "shape", -1, sub.pos, &mark)) && !(rc = shape(w, &sub)))
                onnx_pb_leave(&w->tr, &mark);
        } else if (!rc) {
            rc = onnx_pb_skip(t, wire);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int type_proto(walk *w, onnx_pb *t) { return each(w, t, TY_TENSOR, "tensor_type", 0, tensor_type); }

/* ---- ValueInfoProto ---- */

static int value_info(walk *w, onnx_pb *v)
{
    while (onnx_pb_more(v)) {
        uint32_t f;
        int wire;
        size_t at = v->pos;
        int rc = onnx_pb_tag(v, &f, &wire);
        if (!rc && f == V_NAME) {
            const uint8_t *s;
            size_t n;
            w->tr.field = "name";
            if (!(rc = onnx_pb_read_str(v, at, wire, &s, &n))) {
                free(w->cur->name);
                if (!(w->cur->name = dup_str(s, n)))
                    return nomem(w, at);
            }
        } else if (!rc && f == V_TYPE) {
            onnx_pb sub;
            onnx_pb_mark mark;
            w->tr.field = "type";
            if (!(rc = onnx_pb_expect(v, at, wire, ONNX_PB_LEN)) && !(rc = onnx_pb_sub(v, &sub)) &&
                !(rc = onnx_pb_enter(&w->tr, "type", -1, sub.pos, &mark)) && !(rc = type_proto(w, &sub)))
                onnx_pb_leave(&w->tr, &mark);
        } else if (!rc) {
            rc = onnx_pb_skip(v, wire);
        }
        if (rc)
            return rc;
    }
    if (!w->cur->name)
        return onnx_pb_fail(&w->tr, v->pos, ONNX_E_PARSE, "a graph input or output has no name");
    return ONNX_OK;
}

static int add_value(walk *w, int which, onnx_pb *v)
{
    if (w->n[which] == w->cap[which]) {
        size_t cap = w->cap[which] ? 2 * w->cap[which] : 4;
        ocv_value *p = realloc(w->vals[which], cap * sizeof *p);
        if (!p)
            return nomem(w, v->pos);
        w->vals[which] = p;
        w->cap[which] = cap;
    }
    w->cur = &w->vals[which][w->n[which]++];
    memset(w->cur, 0, sizeof *w->cur);
    w->cur->rank = -1;
    return value_info(w, v);
}

static int input(walk *w, onnx_pb *v) { return add_value(w, 0, v); }
static int output(walk *w, onnx_pb *v) { return add_value(w, 1, v); }

/* ---- initializer names ---- */

static int initializer(walk *w, onnx_pb *t)
{
    while (onnx_pb_more(t)) {
        uint32_t f;
        int wire;
        size_t at = t->pos;
        int rc = onnx_pb_tag(t, &f, &wire);
        if (!rc && f == T_NAME) {
            const uint8_t *s;
            size_t n;
            w->tr.field = "name";
            if ((rc = onnx_pb_read_str(t, at, wire, &s, &n)) != 0)
                return rc;
            if (w->n_inits == w->cap_inits) {
                size_t cap = w->cap_inits ? 2 * w->cap_inits : 16;
                char **p = realloc(w->inits, cap * sizeof *p);
                if (!p)
                    return nomem(w, at);
                w->inits = p;
                w->cap_inits = cap;
            }
            if (!(w->inits[w->n_inits] = dup_str(s, n)))
                return nomem(w, at);
            w->n_inits++;
        } else if (!rc) {
            rc = onnx_pb_skip(t, wire);
        }
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

/* ---- GraphProto: inputs, outputs and initializers, each indexed in its own order ---- */

static int graph(walk *w, onnx_pb *g)
{
    static const struct {
        uint32_t field;
        const char *name;
        int (*fn)(walk *, onnx_pb *);
    } fields[] = {{G_INPUT, "input", input}, {G_OUTPUT, "output", output}, {G_INITIALIZER, "initializer", initializer}};
    long index[3] = {0, 0, 0};
    while (onnx_pb_more(g)) {
        uint32_t f;
        int wire, rc;
        size_t at = g->pos, k = 0;
        if ((rc = onnx_pb_tag(g, &f, &wire)) != 0)
            return rc;
        while (k < 3 && fields[k].field != f)
            k++;
        if (k == 3) {
            if ((rc = onnx_pb_skip(g, wire)) != 0)
                return rc;
            continue;
        }
        onnx_pb sub;
        onnx_pb_mark mark;
        w->tr.field = fields[k].name;
        if ((rc = onnx_pb_expect(g, at, wire, ONNX_PB_LEN)) != 0 || (rc = onnx_pb_sub(g, &sub)) != 0 ||
            (rc = onnx_pb_enter(&w->tr, fields[k].name, index[k]++, sub.pos, &mark)) != 0 ||
            (rc = fields[k].fn(w, &sub)) != 0)
            return rc;
        onnx_pb_leave(&w->tr, &mark);
    }
    return ONNX_OK;
}

static void free_values(ocv_value *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].name);
        for (int k = 0; k < ENGINE_MAX_RANK; k++)
            free(v[i].sym[k]);
    }
    free(v);
}

static int is_initializer(const walk *w, const char *name)
{
    for (size_t i = 0; i < w->n_inits; i++)
        if (!strcmp(w->inits[i], name))
            return 1;
    return 0;
}

/* Drop the inputs that are initializers (older IR versions list every weight among the inputs). */
static void keep_fed_inputs(walk *w)
{
    size_t kept = 0;
    for (size_t i = 0; i < w->n[0]; i++) {
        if (is_initializer(w, w->vals[0][i].name)) {
            free(w->vals[0][i].name);
            for (int k = 0; k < ENGINE_MAX_RANK; k++)
                free(w->vals[0][i].sym[k]);
            continue;
        }
        w->vals[0][kept++] = w->vals[0][i];
    }
    w->n[0] = kept;
}

static int status_code(int rc)
{
    if (rc == ONNX_E_NOMEM)
        return OCV_E_NOMEM;
    return rc == ONNX_E_UNSUPPORTED ? OCV_E_UNSUPPORTED : OCV_E_PARSE;
}

static void walk_free(walk *w)
{
    for (size_t i = 0; i < w->n_inits; i++)
        free(w->inits[i]);
    free(w->inits);
    w->inits = NULL;
    w->n_inits = 0;
}

int ocv_graph_read(const void *buf, size_t len, ocv_graph *g, engine_error *err)
{
    walk w;
    onnx_error oe = {0};
    memset(&w, 0, sizeof w);
    onnx_pb_trace_init(&w.tr, &oe, "model");
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &w.tr);
    onnx_ext_locations ext = {0};
    int rc = each(&w, &r, M_GRAPH, "graph", 0, graph);
    if (!rc)
        rc = onnx_model_ext_locations(buf, len, &ext, &oe);
    if (rc) {
        walk_free(&w);
        free_values(w.vals[0], w.n[0]);
        free_values(w.vals[1], w.n[1]);
        return ocv_fail(err, status_code(rc), "%s", oe.msg);
    }
    keep_fed_inputs(&w);
    walk_free(&w);
    memset(g, 0, sizeof *g);
    g->in = w.vals[0];
    g->n_in = w.n[0];
    g->out = w.vals[1];
    g->n_out = w.n[1];
    g->n_ext = ext.n;
    if (ext.n) {
        g->ext0 = ext.loc[0];
        ext.loc[0] = NULL;
    }
    onnx_ext_locations_deinit(&ext);
    return 0;
}

void ocv_graph_free(ocv_graph *g)
{
    if (!g)
        return;
    free_values(g->in, g->n_in);
    free_values(g->out, g->n_out);
    free(g->ext0);
    memset(g, 0, sizeof *g);
}
