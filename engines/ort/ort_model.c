/* ort_model.c: reads a model and its external-data files into the heap for mmap=off (CreateSessionFromArray).
 * It must never read outside the model's folder or past a buffer: every protobuf length is checked first. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ort_internal.h"

/* ---- A minimal protobuf walk: only what finds ModelProto.graph.initializer[].external_data "location". ---- */

typedef struct {
    const uint8_t *p, *end;
} pb;

static int pb_varint(pb *b, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end)
            return -1;
        uint8_t c = *b->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Next field: its number, and for length-delimited ones the sub-buffer; other wire types are skipped over.
 * Returns 1 for a field, 0 at the end, -1 on malformed input. */
static int pb_next(pb *b, uint32_t *field, int *wire, pb *sub)
{
    uint64_t tag, v;
    if (b->p >= b->end)
        return 0;
    if (pb_varint(b, &tag))
        return -1;
    *field = (uint32_t)(tag >> 3);
    *wire = (int)(tag & 7);
    switch (*wire) {
    case 0: return pb_varint(b, &v) ? -1 : 1;
    case 1: if (b->end - b->p < 8) return -1; b->p += 8; return 1;
    case 5: if (b->end - b->p < 4) return -1; b->p += 4; return 1;
    case 2:
        if (pb_varint(b, &v) || v > (uint64_t)(b->end - b->p))
            return -1;
        sub->p = b->p;
        sub->end = b->p + v;
        b->p += v;
        return 1;
    default: return -1; /* groups are not used by ONNX */
    }
}

static int add_location(ort_bytes *out, const uint8_t *s, size_t len, engine_error *err)
{
    for (size_t i = 0; i < out->n_ext; i++)
        if (strlen(out->ext_names[i]) == len && !memcmp(out->ext_names[i], s, len))
            return 0;
    char **names = realloc(out->ext_names, (out->n_ext + 1) * sizeof *names);
    if (!names)
        return ort_fail(err, ORT_E_NOMEM, "read_model: out of memory");
    out->ext_names = names;
    char *copy = malloc(len + 1);
    if (!copy)
        return ort_fail(err, ORT_E_NOMEM, "read_model: out of memory");
    memcpy(copy, s, len);
    copy[len] = 0;
    out->ext_names[out->n_ext++] = copy;
    return 0;
}

/* One TensorProto: its external_data entries (field 13: key=1, value=2) naming "location". */
static int scan_tensor(pb t, ort_bytes *out, engine_error *err)
{
    uint32_t f;
    int w, r;
    pb e;
    while ((r = pb_next(&t, &f, &w, &e)) == 1) {
        if (f != 13 || w != 2)
            continue;
        const uint8_t *key = NULL, *val = NULL;
        size_t key_len = 0, val_len = 0;
        uint32_t ef;
        int ew, er;
        pb s;
        while ((er = pb_next(&e, &ef, &ew, &s)) == 1)
            if (ew == 2 && (ef == 1 || ef == 2)) {
                *(ef == 1 ? &key : &val) = s.p;
                *(ef == 1 ? &key_len : &val_len) = (size_t)(s.end - s.p);
            }
        if (er < 0)
            return -1;
        if (key && key_len == 8 && !memcmp(key, "location", 8) && val) {
            int rc = add_location(out, val, val_len, err);
            if (rc)
                return rc;
        }
    }
    return r;
}

static int scan_model(const void *buf, size_t len, ort_bytes *out, engine_error *err)
{
    pb m = {buf, (const uint8_t *)buf + len}, g, t;
    uint32_t f;
    int w, r, rg;
    while ((r = pb_next(&m, &f, &w, &g)) == 1) {
        if (f != 7 || w != 2)
            continue;
        while ((rg = pb_next(&g, &f, &w, &t)) == 1)
            if (f == 5 && w == 2 && (rg = scan_tensor(t, out, err)) != 0)
                return rg;
        if (rg < 0)
            return -1;
    }
    return r;
}

/* ---- Files ---- */

static int read_file(const char *path, char **buf, size_t *len, engine_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ort_fail(err, errno == ENOENT ? ORT_E_NOTFOUND : ORT_E_IO, "read_model: cannot open %s: %s", path,
                        strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return ort_fail(err, ORT_E_IO, "read_model: %s is not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    char *b = malloc(n ? n : 1);
    if (!b) {
        fclose(f);
        return ort_fail(err, ORT_E_NOMEM, "read_model: out of memory reading %s (%zu bytes)", path, n);
    }
    size_t got = fread(b, 1, n, f);
    int bad = ferror(f) || got != n;
    fclose(f);
    if (bad) {
        free(b);
        return ort_fail(err, ORT_E_IO, "read_model: short read of %s (%zu of %zu bytes)", path, got, n);
    }
    *buf = b;
    *len = n;
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
    rc = scan_model(b.model, b.model_len, &b, err);
    if (rc < 0 && rc != -1) {
        ort_bytes_free(&b);
        return rc;
    }
    if (rc == -1) {
        ort_bytes_free(&b);
        return ort_fail(err, ORT_E_PARSE, "read_model: %s is not a well-formed ONNX ModelProto", path);
    }
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
