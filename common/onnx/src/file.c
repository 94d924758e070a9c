/* file.c: whole-file read and map, exact pread, with errors naming the file.
 * It must never parse bytes, and must release every descriptor and mapping it made before failing. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "onnx/file.h"

/* O_NONBLOCK keeps a FIFO without a writer from hanging the open; fstat then refuses it. */
int onnx_file_open(const char *path, int *fd_out, size_t *size, onnx_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        return onnx_fail(err, -e, "%s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return onnx_fail(err, -e, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return onnx_fail(err, ONNX_E_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        return onnx_fail(err, ONNX_E_IO, "%s: too large (%lld bytes)", path, (long long)st.st_size);
    }
    *fd_out = fd;
    *size = (size_t)st.st_size;
    return ONNX_OK;
}

int onnx_file_pread(int fd, void *dst, size_t n, uint64_t off)
{
    uint8_t *p = dst;
    while (n) {
        ssize_t got = pread(fd, p, n, (off_t)off);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (got == 0)
            return -EIO;
        p += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

int onnx_file_read(const char *path, const onnx_alloc *alloc, uint8_t **buf, size_t *len, onnx_error *err)
{
    const onnx_alloc *a = onnx_alloc_or_libc(alloc);
    int fd;
    size_t size;
    int rc = onnx_file_open(path, &fd, &size, err);
    if (rc)
        return rc;
    uint8_t *p = a->realloc_fn(NULL, size ? size : 1);
    if (!p) {
        close(fd);
        return onnx_fail(err, ONNX_E_NOMEM, "%s: cannot allocate %zu bytes to read it", path, size);
    }
    rc = onnx_file_pread(fd, p, size, 0);
    close(fd);
    if (rc) {
        a->free_fn(p);
        return onnx_fail(err, ONNX_E_IO, "%s: read failed: %s", path, strerror(-rc));
    }
    *buf = p;
    *len = size;
    return ONNX_OK;
}

int onnx_file_map(const char *path, void **addr, size_t *len, onnx_error *err)
{
    int fd;
    size_t size;
    int rc = onnx_file_open(path, &fd, &size, err);
    if (rc)
        return rc;
    void *p = NULL;
    if (size) {
        p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return onnx_fail(err, -e, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
        }
    }
    close(fd);
    *addr = p;
    *len = size;
    return ONNX_OK;
}
