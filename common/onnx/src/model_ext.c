/* model_ext.c: a light walk of ModelProto.graph.initializer[].external_data that lists the locations named there.
 * It must never follow a length it has not checked, nor decide whether a location is safe to open. */
#include <stdlib.h>
#include <string.h>

#include "onnx/model_ext.h"
#include "onnx/pb.h"

enum { M_GRAPH = 7, G_INITIALIZER = 5, T_EXTERNAL_DATA = 13, E_KEY = 1, E_VALUE = 2 };

typedef struct walk {
    onnx_pb_trace tr;
    onnx_ext_locations list;
    size_t cap;
} walk;

static int add_location(walk *w, size_t at, const uint8_t *s, size_t n)
{
    onnx_ext_locations *l = &w->list;
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->loc[i]) == n && !memcmp(l->loc[i], s, n))
            return ONNX_OK;
    if (memchr(s, '\0', n))
        return onnx_pb_fail(&w->tr, at, ONNX_E_PARSE, "external data location contains a NUL byte");
    if (l->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4;
        char **p = realloc(l->loc, cap * sizeof *p);
        if (!p)
            return onnx_pb_fail(&w->tr, at, ONNX_E_NOMEM, "out of memory");
        l->loc = p;
        w->cap = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return onnx_pb_fail(&w->tr, at, ONNX_E_NOMEM, "out of memory");
    memcpy(copy, s, n);
    copy[n] = '\0';
    l->loc[l->n++] = copy;
    return ONNX_OK;
}

/* One StringStringEntryProto; a "location" key adds its value. */
static int entry(walk *w, onnx_pb *e)
{
    const uint8_t *key = NULL, *val = NULL;
    size_t key_len = 0, val_len = 0, val_at = e->pos;
    while (onnx_pb_more(e)) {
        uint32_t f;
        int wire;
        size_t at = e->pos;
        int rc = onnx_pb_tag(e, &f, &wire);
        if (!rc && f == E_KEY) {
            w->tr.field = "key";
            rc = onnx_pb_read_str(e, at, wire, &key, &key_len);
        } else if (!rc && f == E_VALUE) {
            w->tr.field = "value";
            val_at = at;
            rc = onnx_pb_read_str(e, at, wire, &val, &val_len);
        } else if (!rc) {
            rc = onnx_pb_skip(e, wire);
        }
        if (rc)
            return rc;
    }
    w->tr.field = "value";
    if (key && val && key_len == 8 && !memcmp(key, "location", 8))
        return add_location(w, val_at, val, val_len);
    return ONNX_OK;
}

/* Call fn on each occurrence of field `want` (length-delimited) in r, entered as name[index]. */
static int each(walk *w, onnx_pb *r, uint32_t want, const char *name, bool indexed, int (*fn)(walk *, onnx_pb *))
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

static int tensor(walk *w, onnx_pb *t) { return each(w, t, T_EXTERNAL_DATA, "external_data", true, entry); }
static int graph(walk *w, onnx_pb *g) { return each(w, g, G_INITIALIZER, "initializer", true, tensor); }

int onnx_model_ext_locations(const void *buf, size_t len, onnx_ext_locations *out, onnx_error *err)
{
    if ((!buf && len) || !out)
        return onnx_fail(err, ONNX_E_INVALID, "onnx_model_ext_locations: buf and out are required");
    walk w;
    memset(&w, 0, sizeof w);
    onnx_pb_trace_init(&w.tr, err, "model");
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &w.tr);
    int rc = each(&w, &r, M_GRAPH, "graph", false, graph);
    if (rc) {
        onnx_ext_locations_deinit(&w.list);
        return rc;
    }
    *out = w.list;
    return ONNX_OK;
}

void onnx_ext_locations_deinit(onnx_ext_locations *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->loc[i]);
    free(l->loc);
    l->loc = NULL;
    l->n = 0;
}
