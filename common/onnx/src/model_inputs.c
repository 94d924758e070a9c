/* model_inputs.c: ModelProto.graph.input[] minus the initializers, with element types and dims (model_inputs.h).
 * It must never follow a length it has not checked; names and dim params too long for their field are cut. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/model_inputs.h"
#include "onnx/pb.h"

enum { M_GRAPH = 7, G_INITIALIZER = 5, G_INPUT = 11, T_NAME = 8, V_NAME = 1, V_TYPE = 2, TY_TENSOR = 1,
       TT_ELEM = 1, TT_SHAPE = 2, SH_DIM = 1, D_VALUE = 1, D_PARAM = 2 };

typedef struct walk {
    onnx_pb_trace tr;
    onnx_input *v;
    size_t n, cap;
    char (*init)[128]; /* initializer names */
    size_t n_init, cap_init;
} walk;

static void copy_str(char *dst, size_t cap, const uint8_t *s, size_t n)
{
    n = n < cap - 1 ? n : cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Each submessage of field want in r, handed to fn. */
static int each(walk *w, onnx_pb *r, uint32_t want, const char *name, void *arg,
                int (*fn)(walk *, onnx_pb *, void *))
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
        onnx_pb sub;
        onnx_pb_mark mark;
        if ((rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN)) != 0 || (rc = onnx_pb_sub(r, &sub)) != 0 ||
            (rc = onnx_pb_enter(&w->tr, name, index++, sub.pos, &mark)) != 0 || (rc = fn(w, &sub, arg)) != 0)
            return rc;
        onnx_pb_leave(&w->tr, &mark);
    }
    return ONNX_OK;
}

/* The one string field want of message r into dst (unchanged when absent). */
static int str_field(onnx_pb *r, uint32_t want, char *dst, size_t cap)
{
    while (onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        const uint8_t *s;
        size_t n;
        int rc = onnx_pb_tag(r, &f, &wire);
        if (!rc && f == want && !(rc = onnx_pb_read_str(r, at, wire, &s, &n)))
            copy_str(dst, cap, s, n);
        else if (!rc && f != want)
            rc = onnx_pb_skip(r, wire);
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int initializer(walk *w, onnx_pb *t, void *arg)
{
    (void)arg;
    if (w->n_init == w->cap_init) {
        size_t cap = w->cap_init ? 2 * w->cap_init : 16;
        char(*p)[128] = realloc(w->init, sizeof *p * cap);
        if (!p)
            return onnx_pb_fail(&w->tr, t->pos, ONNX_E_NOMEM, "out of memory");
        w->init = p;
        w->cap_init = cap;
    }
    w->init[w->n_init][0] = '\0';
    int rc = str_field(t, T_NAME, w->init[w->n_init], sizeof w->init[0]);
    w->n_init += !rc;
    return rc;
}

static int dim(walk *w, onnx_pb *d, void *arg)
{
    onnx_input *in = arg;
    onnx_input_dim x = {-1, ""};
    while (onnx_pb_more(d)) {
        uint32_t f;
        int wire;
        size_t at = d->pos;
        int rc = onnx_pb_tag(d, &f, &wire);
        const uint8_t *s;
        size_t n;
        if (!rc && f == D_VALUE)
            rc = onnx_pb_read_i64(d, at, wire, &x.value);
        else if (!rc && f == D_PARAM && !(rc = onnx_pb_read_str(d, at, wire, &s, &n)))
            copy_str(x.param, sizeof x.param, s, n);
        else if (!rc && f != D_PARAM)
            rc = onnx_pb_skip(d, wire);
        if (rc)
            return rc;
    }
    (void)w;
    if (in->rank < 0)
        in->rank = 0;
    if (in->rank < ONNX_INPUT_MAX_RANK)
        in->dims[in->rank] = x;
    in->rank++;
    return ONNX_OK;
}

static int shape(walk *w, onnx_pb *s, void *arg)
{
    onnx_input *in = arg;
    in->rank = 0; /* a shape with no dims is a scalar */
    return each(w, s, SH_DIM, "dim", arg, dim);
}

static int tensor_type(walk *w, onnx_pb *t, void *arg)
{
    onnx_input *in = arg;
    while (onnx_pb_more(t)) {
        uint32_t f;
        int wire;
        size_t at = t->pos;
        int rc = onnx_pb_tag(t, &f, &wire);
        int64_t e;
        if (!rc && f == TT_ELEM && !(rc = onnx_pb_read_i64(t, at, wire, &e)))
            in->elem_type = (int)e;
        else if (!rc && f == TT_SHAPE) {
            onnx_pb sub;
            onnx_pb_mark mark;
            if (!(rc = onnx_pb_expect(t, at, wire, ONNX_PB_LEN)) && !(rc = onnx_pb_sub(t, &sub)) &&
                !(rc = onnx_pb_enter(&w->tr, "shape", -1, sub.pos, &mark)) && !(rc = shape(w, &sub, arg)))
                onnx_pb_leave(&w->tr, &mark);
        } else if (!rc && f != TT_ELEM)
            rc = onnx_pb_skip(t, wire);
        if (rc)
            return rc;
    }
    return ONNX_OK;
}

static int type(walk *w, onnx_pb *t, void *arg) { return each(w, t, TY_TENSOR, "tensor_type", arg, tensor_type); }

static int input(walk *w, onnx_pb *v, void *arg)
{
    (void)arg;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        onnx_input *p = realloc(w->v, sizeof *p * cap);
        if (!p)
            return onnx_pb_fail(&w->tr, v->pos, ONNX_E_NOMEM, "out of memory");
        w->v = p;
        w->cap = cap;
    }
    onnx_input *in = &w->v[w->n];
    memset(in, 0, sizeof *in);
    in->rank = -1;
    onnx_pb copy = *v;
    int rc = str_field(&copy, V_NAME, in->name, sizeof in->name);
    if (!rc)
        rc = each(w, v, V_TYPE, "type", in, type);
    w->n += !rc;
    return rc;
}

static int graph(walk *w, onnx_pb *g, void *arg)
{
    onnx_pb copy = *g;
    int rc = each(w, &copy, G_INITIALIZER, "initializer", arg, initializer);
    return rc ? rc : each(w, g, G_INPUT, "input", arg, input);
}

int onnx_model_inputs(const void *buf, size_t len, onnx_input **out, size_t *n, onnx_error *err)
{
    if ((!buf && len) || !out || !n)
        return onnx_fail(err, ONNX_E_INVALID, "onnx_model_inputs: buf, out and n are required");
    walk w;
    memset(&w, 0, sizeof w);
    onnx_pb_trace_init(&w.tr, err, "model");
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &w.tr);
    int rc = each(&w, &r, M_GRAPH, "graph", NULL, graph);
    if (!rc && !w.v && !(w.v = malloc(sizeof *w.v)))
        rc = onnx_fail(err, ONNX_E_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; !rc && i < w.n; i++) { /* drop the inputs an initializer feeds (older opsets list them) */
        bool init = false;
        for (size_t j = 0; j < w.n_init && !init; j++)
            init = !strcmp(w.init[j], w.v[i].name);
        if (!init)
            w.v[k++] = w.v[i];
    }
    free(w.init);
    if (rc) {
        free(w.v);
        return rc;
    }
    *out = w.v;
    *n = k;
    return ONNX_OK;
}
