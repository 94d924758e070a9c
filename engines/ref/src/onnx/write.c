/* write.c: serialize the IR as an ONNX ModelProto (packed numbers, raw_data weights, optional external data file).
 * It must never leave a half-written file under the final name: both files go to temp names and are renamed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../alloc.h"
#include "../model.h"
#include "bridge.h"
#include "onnx/pb.h"

#define EXT_MIN_BYTES 1024
#define EXT_ALIGN 4096
/* Two defaults keep onnx.checker happy: ir_version <= 0 is written as 8 (ONNX 1.12's IR),
 * and an empty graph name as "graph". */
#define DEFAULT_IR_VERSION 8

typedef struct wr {
    const ref_model *m;
    onnx_pbw w;
    ref_error *err;
    const char *data_base; /* base name of the external data file, or NULL */
    uint64_t *offsets;     /* per initializer: offset in the data file, or UINT64_MAX when embedded */
    uint64_t data_bytes;   /* size of the data file */
} wr;

/* ================================================================================================
 * Serialization
 * ============================================================================================== */

static int tensor_bytes(const ref_tensor *t, size_t *out)
{
    if (t->rank < 0 || t->rank > REF_MAX_RANK)
        return REF_E_INVALID;
    size_t es = ref_dtype_size(t->dtype), n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && n > SIZE_MAX / 2 / (size_t)t->dims[i]))
            return REF_E_INVALID;
        n *= (size_t)t->dims[i];
    }
    if (es && n > SIZE_MAX / 2 / es)
        return REF_E_INVALID;
    *out = n * es;
    return REF_OK;
}

static void w_ext_entry(onnx_pbw *w, const char *key, const char *value)
{
    size_t e = onnx_pbw_begin(w, 13);
    onnx_pbw_str(w, 1, key);
    onnx_pbw_str(w, 2, value);
    onnx_pbw_end(w, e);
}

/* One TensorProto. ext_offset UINT64_MAX embeds the bytes as raw_data. */
static void w_tensor(wr *c, uint32_t field, const char *name, const ref_tensor *t, size_t nbytes, uint64_t ext_offset)
{
    onnx_pbw *w = &c->w;
    size_t mk = onnx_pbw_begin(w, field);
    if (t->rank > 0)
        onnx_pbw_packed_i64(w, 1, t->dims, (size_t)t->rank);
    onnx_pbw_i64(w, 2, t->dtype);
    if (name)
        onnx_pbw_str(w, 8, name);
    if (ext_offset != UINT64_MAX) {
        char num[32];
        w_ext_entry(w, "location", c->data_base);
        snprintf(num, sizeof num, "%" PRIu64, ext_offset);
        w_ext_entry(w, "offset", num);
        snprintf(num, sizeof num, "%zu", nbytes);
        w_ext_entry(w, "length", num);
        onnx_pbw_u64(w, 14, 1);
    } else if (t->dtype != REF_DT_STRING && t->data) {
        onnx_pbw_bytes(w, 9, t->data, nbytes);
    }
    onnx_pbw_end(w, mk);
}

static int w_attr(wr *c, const ref_node *n, const ref_attr *a)
{
    onnx_pbw *w = &c->w;
    size_t mk = onnx_pbw_begin(w, 5), nbytes;
    onnx_pbw_str(w, 1, a->name);
    switch (a->type) {
    case REF_ATTR_FLOAT: onnx_pbw_f32(w, 2, a->f); break;
    case REF_ATTR_INT: onnx_pbw_i64(w, 3, a->i); break;
    case REF_ATTR_STRING: onnx_pbw_bytes(w, 4, a->s ? a->s : "", a->s ? a->s_len : 0); break;
    case REF_ATTR_TENSOR:
        if (!a->t || tensor_bytes(a->t, &nbytes) || (!a->t->data && nbytes && a->t->dtype != REF_DT_STRING))
            return ref_fail(c->err, REF_E_INVALID,
                            "node '%s' (%s) attribute '%s': tensor without a valid shape or data",
                            n->name, n->op_type, a->name);
        w_tensor(c, 5, NULL, a->t, nbytes, UINT64_MAX);
        break;
    case REF_ATTR_FLOATS:
        if (a->n)
            onnx_pbw_packed_f32(w, 7, a->floats, a->n);
        break;
    case REF_ATTR_INTS:
        if (a->n)
            onnx_pbw_packed_i64(w, 8, a->ints, a->n);
        break;
    case REF_ATTR_STRINGS:
        for (size_t i = 0; i < a->n; i++)
            onnx_pbw_str(w, 9, a->strings[i]);
        break;
    default:
        return ref_fail(c->err, REF_E_UNSUPPORTED, "node '%s' (%s) attribute '%s': type %d cannot be written",
                        n->name, n->op_type, a->name, a->type);
    }
    onnx_pbw_i64(w, 20, a->type);
    onnx_pbw_end(w, mk);
    return REF_OK;
}

static int w_node(wr *c, const ref_node *n)
{
    onnx_pbw *w = &c->w;
    size_t mk = onnx_pbw_begin(w, 1);
    for (int i = 0; i < n->n_inputs; i++)
        onnx_pbw_str(w, 1, n->inputs[i] ? n->inputs[i] : ""); /* "" keeps an omitted input's position */
    for (int i = 0; i < n->n_outputs; i++)
        onnx_pbw_str(w, 2, n->outputs[i] ? n->outputs[i] : "");
    if (n->name && n->name[0])
        onnx_pbw_str(w, 3, n->name);
    onnx_pbw_str(w, 4, n->op_type);
    for (int i = 0; i < n->n_attrs; i++) {
        int rc = w_attr(c, n, &n->attrs[i]);
        if (rc)
            return rc;
    }
    if (n->domain && n->domain[0])
        onnx_pbw_str(w, 7, n->domain);
    onnx_pbw_end(w, mk);
    return REF_OK;
}

static void w_value_info(onnx_pbw *w, uint32_t field, const ref_value_info *v)
{
    size_t mk = onnx_pbw_begin(w, field);
    onnx_pbw_str(w, 1, v->name);
    if (v->elem_type || v->rank >= 0) {
        size_t type = onnx_pbw_begin(w, 2), tensor = onnx_pbw_begin(w, 1);
        if (v->elem_type)
            onnx_pbw_i64(w, 1, v->elem_type);
        if (v->rank >= 0) {
            size_t shape = onnx_pbw_begin(w, 2);
            for (int i = 0; i < v->rank; i++) {
                size_t d = onnx_pbw_begin(w, 1);
                if (v->dims[i].value >= 0)
                    onnx_pbw_i64(w, 1, v->dims[i].value);
                else if (v->dims[i].param)
                    onnx_pbw_str(w, 2, v->dims[i].param);
                onnx_pbw_end(w, d);
            }
            onnx_pbw_end(w, shape);
        }
        onnx_pbw_end(w, tensor);
        onnx_pbw_end(w, type);
    }
    onnx_pbw_end(w, mk);
}

static int w_graph(wr *c)
{
    const ref_graph *g = &c->m->graph;
    onnx_pbw *w = &c->w;
    size_t mk = onnx_pbw_begin(w, 7);
    for (size_t i = 0; i < g->n_nodes; i++) {
        int rc = w_node(c, &g->nodes[i]);
        if (rc)
            return rc;
    }
    onnx_pbw_str(w, 2, g->name && g->name[0] ? g->name : "graph");
    for (size_t i = 0; i < g->n_inits; i++) {
        const ref_initializer *in = &g->inits[i];
        size_t nbytes;
        if (tensor_bytes(&in->t, &nbytes) || (!in->t.data && nbytes && in->t.dtype != REF_DT_STRING))
            return ref_fail(c->err, REF_E_INVALID, "initializer '%s': no valid shape or data", in->name);
        w_tensor(c, 5, in->name, &in->t, nbytes, c->offsets ? c->offsets[i] : UINT64_MAX);
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        w_value_info(w, 11, &g->inputs[i]);
    for (size_t i = 0; i < g->n_outputs; i++)
        w_value_info(w, 12, &g->outputs[i]);
    for (size_t i = 0; i < g->n_value_infos; i++)
        w_value_info(w, 13, &g->value_infos[i]);
    onnx_pbw_end(w, mk);
    return REF_OK;
}

static int w_model(wr *c)
{
    const ref_model *m = c->m;
    onnx_pbw *w = &c->w;
    onnx_pbw_i64(w, 1, m->ir_version > 0 ? m->ir_version : DEFAULT_IR_VERSION);
    onnx_pbw_str(w, 2, m->producer_name);
    onnx_pbw_str(w, 3, m->producer_version);
    int rc = w_graph(c);
    if (rc)
        return rc;
    for (size_t i = 0; i < m->n_opsets; i++) {
        size_t mk = onnx_pbw_begin(w, 8);
        onnx_pbw_str(w, 1, m->opsets[i].domain ? m->opsets[i].domain : "");
        onnx_pbw_i64(w, 2, m->opsets[i].version);
        onnx_pbw_end(w, mk);
    }
    if (w->status)
        return ref_fail(c->err, ref_status_from_onnx(w->status),
                        "out of memory serializing the model (%zu bytes so far)", w->len);
    return REF_OK;
}

/* ================================================================================================
 * Files
 * ============================================================================================== */

/* Offsets in the data file: initializers of EXT_MIN_BYTES or more, each at a multiple of EXT_ALIGN. */
static int plan_external(wr *c)
{
    const ref_graph *g = &c->m->graph;
    if (!g->n_inits)
        return REF_OK;
    if (!(c->offsets = ref_calloc(g->n_inits, sizeof *c->offsets)))
        return ref_fail(c->err, REF_E_NOMEM, "out of memory planning external data");
    uint64_t end = 0;
    for (size_t i = 0; i < g->n_inits; i++) {
        const ref_initializer *in = &g->inits[i];
        size_t nbytes;
        c->offsets[i] = UINT64_MAX;
        if (in->t.dtype == REF_DT_STRING || !in->t.data || tensor_bytes(&in->t, &nbytes) || nbytes < EXT_MIN_BYTES)
            continue;
        c->offsets[i] = (end + EXT_ALIGN - 1) / EXT_ALIGN * EXT_ALIGN;
        end = c->offsets[i] + nbytes;
    }
    c->data_bytes = end;
    return REF_OK;
}

static int write_at(int fd, const void *p, size_t n, uint64_t off)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = pwrite(fd, b, n, (off_t)off);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        b += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Create final + ".tmp.XXXXXX"; *tmp receives its name (ref_malloc). */
static int open_temp(const char *final, char **tmp, int *fd, ref_error *err)
{
    size_t n = strlen(final);
    char *name = ref_malloc(n + 12);
    if (!name)
        return ref_fail(err, REF_E_NOMEM, "%s: out of memory", final);
    memcpy(name, final, n);
    memcpy(name + n, ".tmp.XXXXXX", 12);
    int f = mkstemp(name);
    if (f < 0) {
        int e = errno;
        ref_free(name);
        return ref_fail(err, REF_E_IO, "%s: cannot create a temporary file next to it: %s", final, strerror(e));
    }
    fchmod(f, 0644);
    *tmp = name;
    *fd = f;
    return REF_OK;
}

/* Close fd and rename tmp over final, or remove tmp when rc already failed. */
static int finish_temp(int rc, int fd, char *tmp, const char *final, ref_error *err)
{
    if (close(fd) != 0 && !rc)
        rc = ref_fail(err, REF_E_IO, "%s: close failed: %s", final, strerror(errno));
    if (!rc && rename(tmp, final) != 0)
        rc = ref_fail(err, REF_E_IO, "%s: cannot rename the temporary file into place: %s", final, strerror(errno));
    if (rc)
        unlink(tmp);
    ref_free(tmp);
    return rc;
}

static int write_data_file(wr *c, const char *data_path)
{
    char *tmp;
    int fd, rc = open_temp(data_path, &tmp, &fd, c->err);
    if (rc)
        return rc;
    const ref_graph *g = &c->m->graph;
    for (size_t i = 0; i < g->n_inits && !rc; i++) {
        if (c->offsets[i] == UINT64_MAX)
            continue;
        size_t nbytes;
        tensor_bytes(&g->inits[i].t, &nbytes);
        int e = write_at(fd, g->inits[i].t.data, nbytes, c->offsets[i]);
        if (e)
            rc = ref_fail(c->err, REF_E_IO, "%s: writing initializer '%s': %s", data_path, g->inits[i].name,
                          strerror(-e));
    }
    return finish_temp(rc, fd, tmp, data_path, c->err);
}

int ref_onnx_write(const ref_model *m, const char *path, bool external_data, ref_error *err)
{
    if (!m || !path)
        return ref_fail(err, REF_E_INVALID, "ref_onnx_write: model and path are required");
    wr c = {.m = m, .err = err};
    onnx_pbw_init(&c.w, ref_onnx_alloc()); /* the engine's hook: OOM tests reach the writer too */
    char *data_path = NULL, *tmp = NULL;
    int fd = -1, rc = REF_OK;
    if (external_data) {
        size_t n = strlen(path);
        if (!(data_path = ref_malloc(n + 6))) {
            rc = ref_fail(err, REF_E_NOMEM, "%s: out of memory", path);
            goto done;
        }
        memcpy(data_path, path, n);
        memcpy(data_path + n, ".data", 6);
        const char *slash = strrchr(data_path, '/');
        c.data_base = slash ? slash + 1 : data_path;
        if ((rc = plan_external(&c)) != 0)
            goto done;
    }
    /* Everything that allocates happens before the data file is renamed into place, so running out of
     * memory never leaves a new data file next to an old model. */
    if ((rc = w_model(&c)) != 0 || (rc = open_temp(path, &tmp, &fd, err)) != 0)
        goto done;
    if (c.data_bytes)
        rc = write_data_file(&c, data_path);
    int e = rc ? 0 : write_at(fd, c.w.buf, c.w.len, 0);
    if (e)
        rc = ref_fail(err, REF_E_IO, "%s: write failed: %s", path, strerror(-e));
    rc = finish_temp(rc, fd, tmp, path, err);
done:
    onnx_pbw_free(&c.w);
    ref_free(c.offsets);
    ref_free(data_path);
    return rc;
}
