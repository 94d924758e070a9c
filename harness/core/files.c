/* files.c: opening regular files that cannot hang (O_NONBLOCK on open, fstat before any read or write), for reading,
 * for a library to open, for writing, and mkdir -p through mkdir(2). It must never read past the size fstat reported. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : S_ISREG(m) ? "a file" : "not a plain file";
}

/* A file the user named and cannot be opened is their input's error; running out of descriptors is ours. */
static bool theirs(int e)
{
    return e == EACCES || e == EPERM || e == ELOOP || e == ENAMETOOLONG || e == ENXIO || e == ENODEV || e == EROFS ||
           e == EISDIR || e == ETXTBSY;
}

/* The failure of open(path) with errno e, named for people: a link to nothing says so, a FIFO without a reader
 * (ENXIO on a write-only open) says what is there. */
static int open_failed(const char *path, const char *what, int e, mlk_error *err)
{
    struct stat st;
    if (e == ENOENT && !lstat(path, &st) && S_ISLNK(st.st_mode)) {
        char to[256];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = '\0';
        return mlk_fail(err, MLK_E_PARSE, "%s %s is a link to %s, which does not exist", what, path, to);
    }
    if (e == ENOENT || e == ENOTDIR)
        return mlk_fail(err, MLK_E_NOTFOUND, "%s %s not found", what, path);
    if (!stat(path, &st) && !S_ISREG(st.st_mode))
        return mlk_fail(err, MLK_E_PARSE, "%s %s is %s, not a regular file", what, path, kind_of(st.st_mode));
    return mlk_fail(err, theirs(e) ? MLK_E_PARSE : MLK_E_IO, "%s %s: %s", what, path, strerror(e));
}

int mlk_open_regular(const char *path, const char *what, int *fd, int64_t *size, mlk_error *err)
{
    *fd = -1;
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. */
    int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f < 0)
        return open_failed(path, what, errno, err);
    struct stat st;
    if (fstat(f, &st)) {
        int e = errno;
        close(f);
        return mlk_fail(err, MLK_E_IO, "%s %s: %s", what, path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return mlk_fail(err, MLK_E_PARSE, "%s %s is %s, not a regular file", what, path, kind_of(st.st_mode));
    }
    int flags = fcntl(f, F_GETFL);
    if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK)) {
        int e = errno;
        close(f);
        return mlk_fail(err, MLK_E_IO, "%s %s: %s", what, path, strerror(e));
    }
    *fd = f;
    *size = (int64_t)st.st_size;
    return MLK_OK;
}

int mlk_check_regular(const char *path, const char *what, bool missing_ok, mlk_error *err)
{
    struct stat st;
    if (missing_ok && lstat(path, &st) && errno == ENOENT)
        return MLK_OK;
    int fd;
    int64_t size;
    int rc = mlk_open_regular(path, what, &fd, &size, err);
    if (!rc)
        close(fd);
    return rc;
}

int mlk_read_regular(const char *path, const char *what, size_t max_bytes, char **text, size_t *len, mlk_error *err)
{
    int fd;
    int64_t size;
    int rc = mlk_open_regular(path, what, &fd, &size, err);
    if (rc)
        return rc;
    if ((uint64_t)size > max_bytes) {
        close(fd);
        return mlk_fail(err, MLK_E_PARSE, "%s %s is larger than %zu MiB", what, path, max_bytes >> 20);
    }
    char *buf = malloc((size_t)size + 1);
    size_t got = 0;
    while (buf && got < (size_t)size) {
        ssize_t n = read(fd, buf + got, (size_t)size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = mlk_fail(err, MLK_E_IO, "cannot read %s %s: %s", what, path, strerror(errno));
            break;
        }
        if (n == 0)
            break; /* shrank while read: what was there is the file */
        got += (size_t)n;
    }
    close(fd);
    if (!buf)
        return mlk_fail(err, MLK_E_NOMEM, "%s %s: out of memory", what, path);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return MLK_OK;
}

int mlk_create_file(const char *path, const char *what, FILE **out, mlk_error *err)
{
    /* A link to nothing would have its target made, wherever it points. */
    struct stat st;
    if (!lstat(path, &st) && S_ISLNK(st.st_mode) && stat(path, &st) && errno == ENOENT)
        return open_failed(path, what, ENOENT, err);
    /* Not O_TRUNC: only a file found to be regular is emptied. O_NONBLOCK: a FIFO without a reader fails (ENXIO)
     * instead of waiting for one. */
    int f = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (f < 0)
        return open_failed(path, what, errno, err);
    int rc = MLK_OK;
    if (fstat(f, &st))
        rc = mlk_fail(err, MLK_E_IO, "%s %s: %s", what, path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = mlk_fail(err, MLK_E_PARSE, "%s %s is %s, not a regular file", what, path, kind_of(st.st_mode));
    else {
        int flags = fcntl(f, F_GETFL);
        if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) || ftruncate(f, 0))
            rc = mlk_fail(err, MLK_E_IO, "%s %s: %s", what, path, strerror(errno));
    }
    FILE *fp = rc ? NULL : fdopen(f, "w");
    if (!rc && !fp)
        rc = mlk_fail(err, MLK_E_IO, "%s %s: %s", what, path, strerror(errno));
    if (rc) {
        close(f);
        return rc;
    }
    *out = fp;
    return MLK_OK;
}

int mlk_mkdirs(const char *path, mlk_error *err)
{
    size_t n = strlen(path);
    char *p = malloc(n + 1);
    if (!p)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    memcpy(p, path, n + 1);
    int rc = MLK_OK;
    /* Each prefix ending before a '/', then the whole path. */
    for (size_t i = 1; i <= n && !rc; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        struct stat st;
        int e = mkdir(p, 0755) ? errno : 0;
        if (e == EEXIST && stat(p, &st) && errno == ENOENT) /* mkdir does not follow a link to nothing */
            rc = open_failed(p, "folder", ENOENT, err);
        else if (e && e != EEXIST)
            rc = mlk_fail(err, theirs(e) ? MLK_E_PARSE : MLK_E_IO, "cannot make the folder %s: %s", p, strerror(e));
        else if (stat(p, &st))
            rc = mlk_fail(err, MLK_E_IO, "cannot make the folder %s: %s", p, strerror(errno));
        else if (!S_ISDIR(st.st_mode))
            rc = mlk_fail(err, MLK_E_PARSE, "cannot make the folder %s: %s is there", p, kind_of(st.st_mode));
        p[i] = c;
    }
    free(p);
    return rc;
}
