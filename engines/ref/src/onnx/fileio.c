/* fileio.c: whole-file read and map, exact pread, and a path's folder, with errors naming the file.
 * It must never parse bytes, and must release every descriptor and mapping it made before failing. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../alloc.h"
#include "fileio.h"

/* Open path for reading and check it is a regular file; O_NONBLOCK keeps a FIFO from hanging us. */
int ref_file_open(const char *path, int *fd_out, size_t *size, ref_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return ref_fail(err, REF_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ref_fail(err, REF_E_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ref_fail(err, REF_E_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        return ref_fail(err, REF_E_IO, "%s: too large (%lld bytes)", path, (long long)st.st_size);
    }
    *fd_out = fd;
    *size = (size_t)st.st_size;
    return REF_OK;
}

int ref_fd_pread_all(int fd, void *dst, size_t n, uint64_t off)
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

int ref_file_slurp(const char *path, uint8_t **buf, size_t *len, ref_error *err)
{
    int fd;
    size_t size;
    int rc = ref_file_open(path, &fd, &size, err);
    if (rc)
        return rc;
    uint8_t *p = ref_malloc(size);
    if (!p) {
        close(fd);
        return ref_fail(err, REF_E_NOMEM, "%s: cannot allocate %zu bytes to read it", path, size);
    }
    rc = ref_fd_pread_all(fd, p, size, 0);
    close(fd);
    if (rc) {
        ref_free(p);
        return ref_fail(err, REF_E_IO, "%s: read failed: %s", path, strerror(-rc));
    }
    *buf = p;
    *len = size;
    return REF_OK;
}

int ref_file_map(const char *path, void **addr, size_t *len, ref_error *err)
{
    int fd;
    size_t size;
    int rc = ref_file_open(path, &fd, &size, err);
    if (rc)
        return rc;
    void *p = NULL;
    if (size) {
        p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return ref_fail(err, REF_E_IO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
        }
    }
    close(fd);
    *addr = p;
    *len = size;
    return REF_OK;
}

char *ref_path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ref_strndup(".", 1);
    if (slash == path)
        return ref_strndup("/", 1);
    return ref_strndup(path, (size_t)(slash - path));
}
