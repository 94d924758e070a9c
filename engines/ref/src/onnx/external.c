/* external.c: external tensor data: location checks (relative, no "..", no symlink out), one mapping or one
 * descriptor per file, range and length checks. It must never touch a file outside the model's folder. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../alloc.h"
#include "bridge.h"
#include "external.h"
#include "onnx/file.h"

struct ref_ext_file {
    char *real;           /* realpath, the cache key */
    int fd;               /* open when mmap is off, else -1 */
    const uint8_t *addr;  /* whole-file mapping when mmap is on (NULL for an empty file) */
    size_t size;
};

void ref_ext_init(ref_ext *x, ref_model *m, const char *dir)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->dir = dir;
}

void ref_ext_deinit(ref_ext *x)
{
    for (size_t i = 0; i < x->n_files; i++) {
        if (x->files[i].fd >= 0)
            close(x->files[i].fd);
        ref_free(x->files[i].real);
    }
    ref_free(x->files);
    ref_free(x->dir_real);
    memset(x, 0, sizeof *x);
}

/* Turn a message from a file helper (in tr->err) into one that also names the field and offset. */
static int reframe(onnx_pb_trace *tr, size_t at, int code)
{
    char msg[sizeof tr->err->msg];
    snprintf(msg, sizeof msg, "%s", tr->err ? tr->err->msg : "");
    return onnx_pb_fail(tr, at, code, "%s", msg);
}

/* Relative, non-empty, no NUL, no ".." component. */
static int check_location(onnx_pb_trace *tr, size_t at, const onnx_ext_ref *e, char *loc, size_t cap)
{
    if (!e->has_loc || !e->loc_len)
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external data without a location");
    if (memchr(e->loc, '\0', e->loc_len))
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external data location contains a NUL byte");
    if (e->loc_len >= cap)
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external data location is %zu bytes long", e->loc_len);
    memcpy(loc, e->loc, e->loc_len);
    loc[e->loc_len] = '\0';
    if (loc[0] == '/')
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external data location '%s' is absolute", loc);
    for (const char *c = loc; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external data location '%s' escapes the model folder", loc);
        c += n;
        c += *c == '/';
    }
    return ONNX_OK;
}

/* realpath of dir/loc, which must lie inside realpath(dir) even after following symlinks. */
static int resolve(ref_ext *x, onnx_pb_trace *tr, size_t at, const char *loc, char *real)
{
    char tmp[PATH_MAX];
    if (!x->dir_real) {
        if (!realpath(x->dir, tmp))
            return onnx_pb_fail(tr, at, ONNX_E_IO, "cannot resolve the model folder '%s': %s", x->dir, strerror(errno));
        if (!(x->dir_real = ref_strndup(tmp, strlen(tmp))))
            return onnx_pb_fail(tr, at, ONNX_E_NOMEM, "out of memory");
    }
    int n = snprintf(tmp, sizeof tmp, "%s/%s", x->dir, loc);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external data path '%s/%s' is too long", x->dir, loc);
    if (!realpath(tmp, real))
        return onnx_pb_fail(tr, at, ONNX_E_IO, "external data file '%s': %s", tmp, strerror(errno));
    size_t dl = strlen(x->dir_real);
    bool root = dl == 1 && x->dir_real[0] == '/';
    if (!root && (strncmp(real, x->dir_real, dl) != 0 || real[dl] != '/'))
        return onnx_pb_fail(tr, at, ONNX_E_PARSE,
                           "external data location '%s' resolves to '%s', outside the model folder",
                           loc, real);
    return ONNX_OK;
}

/* The cached entry for real, opening (mmap off) or mapping (mmap on) it the first time. */
static int get_file(ref_ext *x, onnx_pb_trace *tr, size_t at, const char *real, ref_ext_file **out)
{
    for (size_t i = 0; i < x->n_files; i++)
        if (!strcmp(x->files[i].real, real)) {
            *out = &x->files[i];
            return ONNX_OK;
        }
    if (x->n_files == x->cap_files) {
        size_t cap = x->cap_files ? x->cap_files * 2 : 4;
        ref_ext_file *p = ref_realloc(x->files, cap * sizeof *p);
        if (!p)
            return onnx_pb_fail(tr, at, ONNX_E_NOMEM, "out of memory");
        x->files = p;
        x->cap_files = cap;
    }
    ref_ext_file f = {.fd = -1};
    if (!(f.real = ref_strndup(real, strlen(real))))
        return onnx_pb_fail(tr, at, ONNX_E_NOMEM, "out of memory");
    int rc;
    if (x->m->opts.mmap) {
        void *addr = NULL;
        rc = onnx_file_map(real, &addr, &f.size, tr->err);
        if (!rc && addr && ref_model_add_mapping(x->m, addr, f.size) != 0) {
            munmap(addr, f.size);
            rc = onnx_fail(tr->err, ONNX_E_NOMEM, "out of memory");
        }
        f.addr = addr;
    } else {
        rc = onnx_file_open(real, &f.fd, &f.size, tr->err);
    }
    if (rc) {
        ref_free(f.real);
        return reframe(tr, at, rc);
    }
    x->files[x->n_files] = f;
    *out = &x->files[x->n_files++];
    return ONNX_OK;
}

int ref_ext_load(ref_ext *x, onnx_pb_trace *tr, size_t at, const onnx_tensor_pb *tp, void **data,
                 ref_storage *storage)
{
    if (!x->dir)
        return onnx_pb_fail(tr, at, ONNX_E_UNSUPPORTED,
                           "tensor " ONNX_TPB_NAME_FMT " has external data, which needs a model folder",
                           ONNX_TPB_NAME_ARG(tp));
    char loc[PATH_MAX], real[PATH_MAX];
    ref_ext_file *f = NULL;
    int rc = check_location(tr, at, &tp->ext, loc, sizeof loc);
    if (!rc)
        rc = resolve(x, tr, at, loc, real);
    if (!rc)
        rc = get_file(x, tr, at, real, &f);
    if (rc)
        return rc;
    uint64_t off = tp->ext.has_offset ? tp->ext.offset : 0;
    uint64_t len = tp->ext.has_length ? tp->ext.length : off <= f->size ? f->size - off : 0;
    if (off > f->size || len > f->size - off)
        return onnx_pb_fail(tr, at, ONNX_E_PARSE, "external bytes [%llu, +%llu) lie outside '%s' (%zu bytes)",
                           (unsigned long long)off, (unsigned long long)len, loc, f->size);
    if (len != tp->nbytes) {
        char shape[128];
        return onnx_pb_fail(tr, at, ONNX_E_PARSE,
                            "tensor " ONNX_TPB_NAME_FMT ": external length %llu, shape %s %s needs %zu",
                            ONNX_TPB_NAME_ARG(tp), (unsigned long long)len,
                            onnx_shape_str(tp->dims, tp->rank, shape, sizeof shape), onnx_dtype_name(tp->dtype),
                            tp->nbytes);
    }
    if (f->addr && len && ref_onnx_can_borrow(tp->dtype, f->addr + off)) {
        *data = (void *)(uintptr_t)(f->addr + off); /* read-only mapping: writes fault, by design */
        *storage = REF_STORAGE_MAPPED;
        return ONNX_OK;
    }
    void *p = ref_model_heap_alloc(x->m, (size_t)len);
    if (!p)
        return onnx_pb_fail(tr, at, ONNX_E_NOMEM, "out of memory for %llu bytes of external data",
                           (unsigned long long)len);
    if (f->addr) {
        memcpy(p, f->addr + off, (size_t)len);
    } else if (len && (rc = onnx_file_pread(f->fd, p, (size_t)len, off)) != 0) {
        return onnx_pb_fail(tr, at, ONNX_E_IO, "reading %llu bytes at %llu of '%s': %s", (unsigned long long)len,
                           (unsigned long long)off, loc, strerror(-rc));
    }
    *data = p;
    *storage = REF_STORAGE_HEAP;
    return ONNX_OK;
}
