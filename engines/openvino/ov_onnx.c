/* ov_onnx.c: the symbolic dim names (dim_param) of an ONNX model's graph inputs, which OpenVINO's ports do not keep,
 * read with common/onnx from a read-only mapping of the file. It must never follow a length it has not checked, read
 * anything but graph.input, nor leave the mapping behind (the weights it skips are never touched). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "onnx/file.h"
#include "onnx/pb.h"
#include "ov_internal.h"

enum {
    M_GRAPH = 7,
    G_INPUT = 11,
    V_NAME = 1, V_TYPE = 2, /* ValueInfoProto */
    TY_TENSOR = 1,          /* TypeProto.tensor_type */
    TT_SHAPE = 2,           /* TypeProto.Tensor.shape */
    S_DIM = 1,              /* TensorShapeProto.dim */
    D_PARAM = 2             /* Dimension.dim_param */
};

typedef struct walk {
    onnx_pb_trace tr;
    ov_onnx_dims *d;
    size_t cap;
    int axis;
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

/* Call fn on each length-delimited occurrence of field want in r, entered as name. */
static int each(walk *w, onnx_pb *r, uint32_t want, const char *name, int (*fn)(walk *, onnx_pb *))
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
            (rc = onnx_pb_enter(&w->tr, name, index++, sub.pos, &mark)) != 0 || (rc = fn(w, &sub)) != 0)
            return rc;
        onnx_pb_leave(&w->tr, &mark);
    }
    return ONNX_OK;
}

static int dim(walk *w, onnx_pb *r)
{
    int axis = w->axis++;
    size_t i = w->d->n - 1;
    while (onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        int rc = onnx_pb_tag(r, &f, &wire);
        if (rc)
            return rc;
        if (f != D_PARAM || axis >= ENGINE_MAX_RANK) {
            if ((rc = onnx_pb_skip(r, wire)) != 0)
                return rc;
            continue;
        }
        const uint8_t *p;
        size_t n;
        if ((rc = onnx_pb_read_str(r, at, wire, &p, &n)) != 0)
            return rc;
        char **slot = &w->d->param[i * ENGINE_MAX_RANK + (size_t)axis];
        free(*slot);
        if (!(*slot = n ? dup_str(p, n) : NULL) && n)
            return onnx_pb_fail(&w->tr, at, ONNX_E_NOMEM, "out of memory");
    }
    return ONNX_OK;
}

static int shape(walk *w, onnx_pb *r) { return each(w, r, S_DIM, "dim", dim); }
static int tensor_type(walk *w, onnx_pb *r) { return each(w, r, TT_SHAPE, "shape", shape); }
static int type(walk *w, onnx_pb *r) { return each(w, r, TY_TENSOR, "tensor_type", tensor_type); }

/* One graph.input: a slot for it, then its name and dims. */
static int input(walk *w, onnx_pb *r)
{
    ov_onnx_dims *d = w->d;
    if (d->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        char **in = realloc(d->input, cap * sizeof *in);
        if (in)
            d->input = in;
        char **par = in ? realloc(d->param, cap * ENGINE_MAX_RANK * sizeof *par) : NULL;
        if (!par)
            return onnx_pb_fail(&w->tr, r->pos, ONNX_E_NOMEM, "out of memory");
        d->param = par;
        w->cap = cap;
    }
    d->input[d->n] = NULL;
    memset(&d->param[d->n * ENGINE_MAX_RANK], 0, ENGINE_MAX_RANK * sizeof *d->param);
    d->n++;
    w->axis = 0;
    while (onnx_pb_more(r)) {
        uint32_t f;
        int wire;
        size_t at = r->pos;
        int rc = onnx_pb_tag(r, &f, &wire);
        if (rc)
            return rc;
        if (f == V_NAME) {
            const uint8_t *p;
            size_t n;
            if ((rc = onnx_pb_read_str(r, at, wire, &p, &n)) != 0)
                return rc;
            free(d->input[d->n - 1]);
            if (!(d->input[d->n - 1] = dup_str(p, n)))
                return onnx_pb_fail(&w->tr, at, ONNX_E_NOMEM, "out of memory");
        } else if (f == V_TYPE) {
            onnx_pb sub;
            onnx_pb_mark mark;
            if ((rc = onnx_pb_expect(r, at, wire, ONNX_PB_LEN)) != 0 || (rc = onnx_pb_sub(r, &sub)) != 0 ||
                (rc = onnx_pb_enter(&w->tr, "type", -1, sub.pos, &mark)) != 0 || (rc = type(w, &sub)) != 0)
                return rc;
            onnx_pb_leave(&w->tr, &mark);
        } else if ((rc = onnx_pb_skip(r, wire)) != 0) {
            return rc;
        }
    }
    return ONNX_OK;
}

static int graph(walk *w, onnx_pb *r) { return each(w, r, G_INPUT, "input", input); }

int ov_onnx_dims_read(const char *path, ov_onnx_dims *out, engine_error *err)
{
    onnx_error oe = {0};
    void *addr = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = onnx_file_map(path, &addr, &len, &oe);
    if (rc)
        return ov_fail(err, OV_E_NOTFOUND, "read_model: %s: %s", path, oe.msg);
    walk w = {.d = out};
    onnx_pb_trace_init(&w.tr, &oe, "model");
    onnx_pb r;
    onnx_pb_init(&r, addr, len, &w.tr);
    rc = each(&w, &r, M_GRAPH, "graph", graph);
    if (addr)
        munmap(addr, len);
    if (rc) {
        ov_onnx_dims_free(out);
        return ov_fail(err, rc == ONNX_E_NOMEM ? OV_E_NOMEM : OV_E_PARSE,
                       "read_model: %s is not an ONNX model whose inputs the plugin can read: %s", path, oe.msg);
    }
    return 0;
}

const char *ov_onnx_dims_param(const ov_onnx_dims *d, const char *name, int axis)
{
    if (!name || axis < 0 || axis >= ENGINE_MAX_RANK)
        return NULL;
    for (size_t i = 0; i < d->n; i++)
        if (d->input[i] && !strcmp(d->input[i], name))
            return d->param[i * ENGINE_MAX_RANK + (size_t)axis];
    return NULL;
}

void ov_onnx_dims_free(ov_onnx_dims *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->input[i]);
        for (int k = 0; k < ENGINE_MAX_RANK; k++)
            free(d->param[i * ENGINE_MAX_RANK + (size_t)k]);
    }
    free(d->input);
    free(d->param);
    memset(d, 0, sizeof *d);
}
