/* ort_model.c: reads a model and its external-data files into the heap for mmap=off (CreateSessionFromArray); the
 * protobuf walk and the file reads are common/onnx's. It must never read outside the model's folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/file.h"
#include "onnx/model_ext.h"
#include "ort_internal.h"

/* ---- Files: common/onnx reads them (regular files only, bounded by their size) into malloc'd buffers ---- */

/* A common/onnx status as the plugin's: a missing file is NOTFOUND, any other file failure IO. */
static int ort_status_of(int rc)
{
    if (rc == -ENOENT)
        return ORT_E_NOTFOUND;
    if (rc == ONNX_E_NOMEM)
        return ORT_E_NOMEM;
    return rc == ONNX_E_PARSE ? ORT_E_PARSE : ORT_E_IO;
}

static int read_file(const char *path, char **buf, size_t *len, engine_error *err)
{
    onnx_error oe = {0};
    uint8_t *b;
    int rc = onnx_file_read(path, NULL, &b, len, &oe);
    if (rc)
        return ort_fail(err, ort_status_of(rc), "read_model: %s", oe.msg); /* oe names the file */
    *buf = (char *)b;
    return 0;
}

/* A location must stay inside the model's folder, as ORT itself requires. */
static int location_ok(const char *loc)
{
    if (!loc[0] || loc[0] == '/')
        return 0;
    for (const char *p = loc; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        p += n + (slash != NULL);
    }
    return 1;
}

static int read_external(const char *path, ort_bytes *b, engine_error *err)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    b->ext_bufs = calloc(b->n_ext ? b->n_ext : 1, sizeof *b->ext_bufs);
    b->ext_lens = calloc(b->n_ext ? b->n_ext : 1, sizeof *b->ext_lens);
    if (!b->ext_bufs || !b->ext_lens)
        return ort_fail(err, ORT_E_NOMEM, "read_model: out of memory");
    for (size_t i = 0; i < b->n_ext; i++) {
        if (!location_ok(b->ext_names[i]))
            return ort_fail(err, ORT_E_IO, "read_model: %s: external data location '%s' leaves the model's folder",
                            path, b->ext_names[i]);
        size_t n = dir_len + strlen(b->ext_names[i]) + 1;
        char *full = malloc(n);
        if (!full)
            return ort_fail(err, ORT_E_NOMEM, "read_model: out of memory");
        snprintf(full, n, "%.*s%s", (int)dir_len, path, b->ext_names[i]);
        int rc = read_file(full, &b->ext_bufs[i], &b->ext_lens[i], err);
        free(full);
        if (rc)
            return rc;
    }
    return 0;
}

int ort_bytes_read(const char *path, ort_bytes *out, engine_error *err)
{
    ort_bytes b = {0};
    char *model = NULL;
    int rc = read_file(path, &model, &b.model_len, err);
    if (rc)
        return rc;
    b.model = model;
    onnx_error oe = {0};
    onnx_ext_locations locs;
    if ((rc = onnx_model_ext_locations(b.model, b.model_len, &locs, &oe)) != 0) {
        ort_bytes_free(&b);
        if (rc == ONNX_E_PARSE)
            return ort_fail(err, ORT_E_PARSE, "read_model: %s is not a well-formed ONNX ModelProto: %s", path, oe.msg);
        return ort_fail(err, ort_status_of(rc), "read_model: %s: %s", path, oe.msg);
    }
    b.ext_names = locs.loc; /* malloc'd strings, as ort_bytes_free expects */
    b.n_ext = locs.n;
    if ((rc = read_external(path, &b, err))) {
        ort_bytes_free(&b);
        return rc;
    }
    *out = b;
    return 0;
}

void ort_bytes_free(ort_bytes *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_ext; i++) {
        free(b->ext_names[i]);
        if (b->ext_bufs)
            free(b->ext_bufs[i]);
    }
    free(b->ext_names);
    free(b->ext_bufs);
    free(b->ext_lens);
    free(b->model);
    memset(b, 0, sizeof *b);
}
