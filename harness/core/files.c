/* files.c: regular-file opening that cannot hang (O_NONBLOCK on open, fstat before any read) and mkdir -p through
 * mkdir(2). It must never read from what it opened: callers read at most the size it reports. */
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
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

int mlk_open_regular(const char *path, const char *what, int *fd, int64_t *size, mlk_error *err)
{
    *fd = -1;
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. */
    int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (f < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return mlk_fail(err, MLK_E_NOTFOUND, "%s %s not found", what, path);
        /* a file the user named and cannot be read is their input's error; running out of descriptors is ours */
        bool theirs = e == EACCES || e == EPERM || e == ELOOP || e == ENAMETOOLONG || e == ENXIO || e == ENODEV;
        return mlk_fail(err, theirs ? MLK_E_PARSE : MLK_E_IO, "%s %s: %s", what, path, strerror(e));
    }
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
        if (mkdir(p, 0755) && errno != EEXIST)
            rc = mlk_fail(err, MLK_E_IO, "cannot make the folder %s: %s", p, strerror(errno));
        else if (stat(p, &st) || !S_ISDIR(st.st_mode))
            rc = mlk_fail(err, MLK_E_IO, "cannot make the folder %s: something else is there", p);
        p[i] = c;
    }
    free(p);
    return rc;
}
