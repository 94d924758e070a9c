/* model_file.c: the public model entry points: read from a file (mapped or slurped) or from memory, free, info.
 * It must never parse bytes itself (read.c does), and never leave the model pointing into a buffer it frees. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../alloc.h"
#include "../inject.h"
#include "../model.h"
#include "bridge.h"
#include "onnx/file.h"

/* A new model carrying the options, or NULL (err filled). */
static ref_model *model_with(const ref_options *o, ref_error *err)
{
    ref_model *m = ref_model_new();
    if (!m) {
        ref_fail(err, REF_E_NOMEM, "out of memory for a model");
        return NULL;
    }
    m->opts = *o;
    return m;
}

static int cmp_range(const void *a, const void *b)
{
    const uintptr_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Parsing touched every page of the mapping, but only the weights that point into it need to stay: drop the
 * others from this process's RSS (MADV_DONTNEED on a private read-only file mapping; a later access simply
 * faults the page in again from the file, so nothing can break). Embedded weights other than float16 are rarely
 * aligned (ref_onnx_can_borrow), so for such models most of the file is copied, and without this their pages
 * would count twice. */
static void release_unused_pages(const ref_model *m, uint8_t *addr, size_t len)
{
    const ref_graph *g = &m->graph;
    uintptr_t base = (uintptr_t)addr, end = base + len, page = 4096;
    uintptr_t *used = ref_malloc(sizeof(uintptr_t) * 2 * (g->n_inits + 1));
    if (!used)
        return; /* only an optimization */
    size_t n = 0;
    for (size_t i = 0; i < g->n_inits; i++) {
        uintptr_t p = (uintptr_t)g->inits[i].t.data;
        if (g->inits[i].storage == REF_STORAGE_MAPPED && p >= base && p < end) {
            used[2 * n] = p & ~(page - 1);
            used[2 * n + 1] = (p + g->inits[i].nbytes + page - 1) & ~(page - 1);
            n++;
        }
    }
    qsort(used, n, 2 * sizeof(uintptr_t), cmp_range);
    uintptr_t from = (base + page - 1) & ~(page - 1);
    for (size_t i = 0; i <= n; i++) {
        uintptr_t to = i < n ? used[2 * i] : end & ~(page - 1);
        if (to > from)
            madvise((void *)from, to - from, MADV_DONTNEED);
        if (i < n && used[2 * i + 1] > from)
            from = used[2 * i + 1];
    }
    ref_free(used);
}

/* The folder of path as a ref_malloc string ("." when path has no slash), or NULL when out of memory. */
static char *path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ref_strndup(".", 1);
    if (slash == path)
        return ref_strndup("/", 1);
    return ref_strndup(path, (size_t)(slash - path));
}

/* With mmap on, map the file and keep the mapping for the model's life: aligned weights point into it.
 * With mmap off, read it into a heap buffer that is gone after parsing (every weight was copied). */
static int load_file(ref_model *m, const char *path, const char *dir, ref_error *err)
{
    int rc;
    onnx_error oe = {0};
    if (m->opts.mmap) {
        void *addr;
        size_t len;
        if ((rc = onnx_file_map(path, &addr, &len, &oe)) != 0)
            return ref_fail_onnx(err, rc, &oe); /* the message names the file */
        if (addr && ref_model_add_mapping(m, addr, len) != 0) {
            munmap(addr, len);
            return ref_fail(err, REF_E_NOMEM, "%s: out of memory", path);
        }
        rc = ref_onnx_parse(m, addr, len, dir, err);
        if (!rc && addr)
            release_unused_pages(m, addr, len);
    } else {
        uint8_t *buf;
        size_t len;
        if ((rc = onnx_file_read(path, ref_onnx_alloc(), &buf, &len, &oe)) != 0)
            return ref_fail_onnx(err, rc, &oe);
        rc = ref_onnx_parse(m, buf, len, dir, err);
        ref_free(buf);
    }
    if (rc)
        ref_fail_prefix(err, "%s: ", path); /* keeps rc: with err NULL it would answer REF_E_INVALID */
    return rc;
}

int ref_model_read(const char *path, const ref_options *o, ref_model **out, ref_error *err)
{
    ref_options dflt;
    if (!o) {
        ref_options_init(&dflt);
        o = &dflt;
    }
    if (!path || !out)
        return ref_fail(err, REF_E_INVALID, "ref_model_read: path and out are required");
    int rc = ref_inject_step(o, REF_STEP_READ_MODEL, err);
    if (rc)
        return rc;
    ref_model *m = model_with(o, err);
    if (!m)
        return REF_E_NOMEM;
    char *dir = path_dir(path);
    if (!dir || !(m->path = ref_model_strdup(m, path, strlen(path)))) {
        rc = ref_fail(err, REF_E_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    if ((rc = load_file(m, path, dir, err)) != 0)
        goto fail;
    ref_free(dir);
    *out = m;
    return REF_OK;
fail:
    ref_free(dir);
    ref_model_unref(m);
    return rc;
}

int ref_model_read_buffer(const void *buf, size_t len, const ref_options *o, ref_model **out, ref_error *err)
{
    ref_options dflt;
    if (!o) {
        ref_options_init(&dflt);
        o = &dflt;
    }
    if ((!buf && len) || !out)
        return ref_fail(err, REF_E_INVALID, "ref_model_read_buffer: buf and out are required");
    int rc = ref_inject_step(o, REF_STEP_READ_MODEL, err);
    if (rc)
        return rc;
    ref_model *m = model_with(o, err);
    if (!m)
        return REF_E_NOMEM;
    /* mmap on: the copy lives as long as the model, so aligned weights can point into it.
     * mmap off: a scratch copy, freed once every weight has its own buffer. */
    uint8_t *copy = o->mmap ? ref_model_heap_alloc(m, len) : ref_malloc(len);
    if (!copy) {
        ref_model_unref(m);
        return ref_fail(err, REF_E_NOMEM, "out of memory for a %zu-byte model copy", len);
    }
    if (len)
        memcpy(copy, buf, len);
    rc = ref_onnx_parse(m, copy, len, NULL, err);
    if (!o->mmap)
        ref_free(copy);
    if (rc) {
        ref_model_unref(m);
        return rc;
    }
    *out = m;
    return REF_OK;
}

void ref_model_free(ref_model *m)
{
    if (!m)
        return;
    ref_inject_step(&m->opts, REF_STEP_RELEASE_MODEL, NULL);
    ref_model_unref(m);
}

void ref_model_get_info(const ref_model *m, ref_model_info *out)
{
    memset(out, 0, sizeof *out);
    if (!m)
        return;
    const ref_graph *g = &m->graph;
    out->n_nodes = g->n_nodes;
    out->n_initializers = g->n_inits;
    for (size_t i = 0; i < g->n_inits; i++) {
        out->weight_bytes += g->inits[i].nbytes;
        if (g->inits[i].storage == REF_STORAGE_MAPPED)
            out->mapped_bytes += g->inits[i].nbytes;
    }
    out->ir_version = m->ir_version;
    out->opset = ref_model_opset(m);
}
