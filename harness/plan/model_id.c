/* model_id.c: a model's identity for the plan: the ONNX wire-level check (OpenVINO IR: an XML file and its .bin), its
 * external-data files found and checked as an engine would, and the hash of them all, whole up to a bound and sampled
 * beyond it. It must never read more than MLK_HASH_WHOLE_MAX_BYTES plus a bounded sample of each larger file, nor open
 * a file outside the model's folder. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "interrupt.h"
#include "model_id.h"
#include "onnx/model_check.h"
#include "onnx/model_ext.h"
#include "onnx/tensor_file.h"
#include "strbuf.h"

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static int interrupted(const char *path, mlk_error *err)
{
    return mlk_fail(err, MLK_E_INTERRUPTED, "interrupted while hashing the model %s", path);
}

/* len bytes of fd at off into h (the file may shrink meanwhile: what was there is hashed). */
static int hash_range(int fd, const char *path, int64_t off, int64_t len, uint64_t *h, mlk_error *err)
{
    static char buf[1 << 16];
    while (len > 0) {
        if (mlk_run_interrupted)
            return interrupted(path, err);
        ssize_t n = pread(fd, buf, len < (int64_t)sizeof buf ? (size_t)len : sizeof buf, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return mlk_fail(err, MLK_E_IO, "cannot read %s: %s", path, strerror(errno));
        if (n == 0)
            break;
        *h = fnv1a(*h, buf, (size_t)n);
        off += n;
        len -= n;
    }
    return MLK_OK;
}

/* One file into h: whole, or (sampled, and larger than the samples) its size and MLK_HASH_SAMPLES blocks. */
static int hash_file(int fd, const char *path, int64_t size, bool sampled, uint64_t *h, mlk_error *err)
{
    const int64_t block = MLK_HASH_SAMPLE_BYTES, span = (int64_t)MLK_HASH_SAMPLES * block;
    if (!sampled || size <= span)
        return hash_range(fd, path, 0, size, h, err);
    *h = fnv1a(*h, "sampled-v1", 10);
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)((uint64_t)size >> (8 * i));
    *h = fnv1a(*h, le, sizeof le);
    for (int64_t k = 0; k < MLK_HASH_SAMPLES; k++) {
        int64_t off = (int64_t)((__int128)(size - block) * k / (MLK_HASH_SAMPLES - 1));
        int rc = hash_range(fd, path, off, block, h, err);
        if (rc)
            return rc;
    }
    return MLK_OK;
}

/* "a/b/m.onnx" -> "a/b" ("." for a bare name). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    mlk_buf b = {0};
    if (slash == path)
        mlk_buf_printf(&b, "/");
    else if (slash)
        mlk_buf_printf(&b, "%.*s", (int)(slash - path), path);
    else
        mlk_buf_printf(&b, ".");
    return mlk_buf_take(&b);
}

/* The checks an engine makes before opening external data (engines/ref/src/onnx/external.c): relative, no ".."
 * component, and no link leading out of the model's folder. */
static int check_location(const char *model, const char *dir, const char *loc, char **out, mlk_error *err)
{
    const char *why = !loc[0] ? "is empty" : loc[0] == '/' ? "is absolute" : NULL;
    for (const char *p = loc; !why && *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            why = "has a '..' component";
        p += n + (p[n] == '/');
    }
    if (why)
        return mlk_fail(err, MLK_E_PARSE, "model %s: external data location '%.200s' %s: it must name a file in the "
                        "model's folder", model, loc, why);
    mlk_buf b = {0};
    mlk_buf_printf(&b, "%s/%s", dir, loc);
    char *file = mlk_buf_take(&b);
    char real_dir[PATH_MAX], real_file[PATH_MAX];
    if (!file)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    if (realpath(dir, real_dir) && realpath(file, real_file) &&
        (strncmp(real_file, real_dir, strlen(real_dir)) || real_file[strlen(real_dir)] != '/')) {
        mlk_fail(err, MLK_E_PARSE, "model %s: external data location '%.200s' leads out of the model's folder (to "
                 "%.400s)", model, loc, real_file);
        free(file);
        return MLK_E_PARSE;
    }
    *out = file;
    return MLK_OK;
}

/* OpenVINO IR is an .xml naming its weights by offset into the .bin of the same name beside it (what OpenVINO reads
 * when no weights path is given): the .bin is its one external-data file, when there is one. */
static bool is_ir(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && !strcasecmp(path + n - 4, ".xml");
}

static int ir_locations(const char *path, const void *map, int64_t size, onnx_ext_locations *l, mlk_error *err)
{
    const unsigned char *b = map;
    int64_t i = 0;
    if (size >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) /* a UTF-8 byte-order mark */
        i = 3;
    while (i < size && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
    if (i >= size || b[i] != '<')
        return mlk_fail(err, MLK_E_PARSE, "model %s is not OpenVINO IR: an .xml model must be XML (byte %lld is not "
                                          "'<')", path, (long long)i);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    char *bin = malloc(n + 1), *full = NULL;
    if (!bin)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    memcpy(bin, base, n - 4);
    memcpy(bin + n - 4, ".bin", 5);
    size_t pn = strlen(path);
    if (!(full = malloc(pn + 1))) {
        free(bin);
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    memcpy(full, path, pn - 4);
    memcpy(full + pn - 4, ".bin", 5);
    struct stat st;
    bool has_bin = stat(full, &st) == 0;
    free(full);
    if (!has_bin) { /* an IR without constants has no .bin; one that needs it fails at read_model, naming it */
        free(bin);
        return MLK_OK;
    }
    if (!(l->loc = malloc(sizeof *l->loc))) {
        free(bin);
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    l->loc[0] = bin;
    l->n = 1;
    return MLK_OK;
}

/* The model's bytes checked as ONNX (or IR), and its external-data locations (l, filled). */
static int check_model(int fd, const char *path, int64_t size, onnx_ext_locations *l, mlk_error *err)
{
    void *map = NULL;
    if (size > 0 && (map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
        return mlk_fail(err, MLK_E_IO, "cannot map model %s: %s", path, strerror(errno));
    if (is_ir(path)) {
        int rc = ir_locations(path, map, size, l, err);
        if (map)
            munmap(map, (size_t)size);
        return rc;
    }
    onnx_error oe = {0};
    int orc = onnx_model_check(map, (size_t)size, &oe);
    if (!orc)
        orc = onnx_model_ext_locations(map, (size_t)size, l, &oe);
    if (map)
        munmap(map, (size_t)size);
    if (orc == ONNX_E_NOMEM)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory reading model %s", path);
    if (orc)
        return mlk_fail(err, MLK_E_PARSE, "model %s is not a well-formed ONNX model: %s", path, oe.msg);
    return MLK_OK;
}

int mlk_model_identify(const char *path, mlk_model_id *out, mlk_error *err)
{
    int fd;
    int64_t size;
    int rc = mlk_open_regular(path, "model", &fd, &size, err);
    if (rc)
        return rc;
    onnx_ext_locations l = {0};
    char *dir = dir_of(path);
    char **files = NULL;
    int *fds = NULL;
    int64_t *sizes = NULL, total = size;
    size_t n_open = 0;
    if (!dir)
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    if (!rc)
        rc = check_model(fd, path, size, &l, err);
    if (!rc && l.n && (!(files = calloc(l.n, sizeof *files)) || !(fds = calloc(l.n, sizeof *fds)) ||
                       !(sizes = calloc(l.n, sizeof *sizes))))
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    for (size_t i = 0; !rc && i < l.n; i++) {
        if ((rc = check_location(path, dir, l.loc[i], &files[i], err)))
            break;
        if ((rc = mlk_open_regular(files[i], "external data file", &fds[i], &sizes[i], err))) {
            mlk_fail_prefix(err, "model %s: ", path);
            break;
        }
        n_open = i + 1;
        total += sizes[i];
    }
    bool sampled = total > MLK_HASH_WHOLE_MAX_BYTES;
    uint64_t h = 1469598103934665603ULL;
    if (!rc)
        rc = hash_file(fd, path, size, sampled, &h, err);
    for (size_t i = 0; !rc && i < l.n; i++) {
        h = fnv1a(h, l.loc[i], strlen(l.loc[i]) + 1); /* the name too: swapped files are another model */
        rc = hash_file(fds[i], files[i], sizes[i], sampled, &h, err);
    }
    if (!rc) {
        snprintf(out->hash, sizeof out->hash, "%016llx", (unsigned long long)h);
        out->sampled = sampled;
        out->bytes = total;
        out->n_external = (int)l.n;
    }
    for (size_t i = 0; i < n_open; i++)
        close(fds[i]);
    for (size_t i = 0; files && i < l.n; i++)
        free(files[i]);
    free(files);
    free(fds);
    free(sizes);
    free(dir);
    onnx_ext_locations_deinit(&l);
    close(fd);
    return rc;
}

int mlk_input_check(const char *path, mlk_error *err)
{
    onnx_tensor *t = NULL;
    onnx_error oe = {0};
    int orc = onnx_tensor_load(path, &t, &oe);
    onnx_tensor_free(t);
    if (orc == ONNX_E_NOMEM)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory reading input %s", path);
    if (orc)
        return mlk_fail(err, MLK_E_PARSE, "input file is not a tensor the worker can read: %s", oe.msg);
    return MLK_OK;
}
