/* model_cache.c: the generated-model cache's folder, checks and cleaning (model_cache.h). It must never follow a link
 * to the private folder, never delete outside a generation folder, and never hash past the size fstat gave. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "interrupt.h"
#include "model_cache.h"
#include "strbuf.h"

/* ---- where ---------------------------------------------------------------------------------------------- */

static const char *home_dir(void)
{
    const char *home = getenv("HOME");
    if (home && home[0] == '/')
        return home;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* The user's own folder: owned by them, writable by no one else (a group may hold other users). */
static bool private_enough(const struct stat *st)
{
    return st->st_uid == getuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int mlk_model_cache_dir(const char *option, char **dir, mlk_error *err)
{
    mlk_buf b = {0};
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = home_dir(), *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    if (option && option[0])
        mlk_buf_printf(&b, "%s", option);
    else if (xdg && xdg[0] == '/')
        mlk_buf_printf(&b, "%s/memleak/models", xdg);
    else if (home)
        mlk_buf_printf(&b, "%s/.cache/memleak/models", home);
    else
        mlk_buf_printf(&b, "%s", tmp); /* world-writable: the private folder below */
    if (b.failed)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    int rc = mlk_mkdirs(b.s, err);
    if (rc && rc != MLK_E_NOMEM && !(option && option[0])) {
        /* a home that cannot hold a cache (a service user's /nonexistent): the private folder in /tmp below */
        fprintf(stderr, "memleak-run: note: %s; the model cache goes to %s\n", err->msg, tmp);
        mlk_buf_free(&b);
        mlk_buf_printf(&b, "%s", tmp);
        rc = b.failed ? mlk_fail(err, MLK_E_NOMEM, "out of memory") : mlk_mkdirs(b.s, err);
    }
    struct stat st;
    if (!rc && stat(b.s, &st))
        rc = mlk_fail(err, MLK_E_IO, "%s: %s", b.s, strerror(errno));
    if (rc) {
        mlk_buf_free(&b);
        return mlk_fail_prefix(err, "the model cache: ");
    }
    if (private_enough(&st)) {
        *dir = mlk_buf_take(&b);
        return *dir ? MLK_OK : mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    /* Others may write here: a folder of the user's own inside, checked without following a link. */
    mlk_buf_printf(&b, "/memleak-%ld", (long)getuid());
    if (b.failed)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    if (mkdir(b.s, 0700) && errno != EEXIST)
        rc = mlk_fail(err, MLK_E_PARSE, "the model cache %s: %s", b.s, strerror(errno));
    else if (lstat(b.s, &st))
        rc = mlk_fail(err, MLK_E_IO, "the model cache %s: %s", b.s, strerror(errno));
    else if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        rc = mlk_fail(err, MLK_E_PARSE,
                      "the model cache %s is not private (%s): its parent may be written by other users, so a "
                      "folder owned by uid %ld with mode 0700 is needed there; remove it, or give --model-cache",
                      b.s, S_ISLNK(st.st_mode) ? "a link" : !S_ISDIR(st.st_mode) ? "not a folder"
                           : st.st_uid != getuid() ? "another user's" : "others may read or write it",
                      (long)getuid());
    if (rc) {
        mlk_buf_free(&b);
        return rc;
    }
    *dir = mlk_buf_take(&b);
    return *dir ? MLK_OK : mlk_fail(err, MLK_E_NOMEM, "out of memory");
}

/* ---- litter --------------------------------------------------------------------------------------------- */

void mlk_model_cache_remove(const char *gen_dir)
{
    DIR *d = opendir(gen_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        mlk_buf p = {0};
        mlk_buf_printf(&p, "%s/%s", gen_dir, e->d_name);
        if (p.s)
            unlink(p.s);
        mlk_buf_free(&p);
    }
    if (d)
        closedir(d);
    rmdir(gen_dir);
}

void mlk_model_cache_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        long pid = 0;
        int used = 0;
        if (sscanf(e->d_name, ".gen-%ld-%n", &pid, &used) != 1 || !used || pid <= 0 || pid == (long)getpid())
            continue;
        /* ESRCH: no such process. EPERM: another user's live process (a reused pid, perhaps): left alone. */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        mlk_buf p = {0};
        mlk_buf_printf(&p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (p.s && !lstat(p.s, &st) && S_ISDIR(st.st_mode) && st.st_uid == getuid())
            mlk_model_cache_remove(p.s);
        mlk_buf_free(&p);
    }
    if (d)
        closedir(d);
}

/* ---- trust ---------------------------------------------------------------------------------------------- */

/* FNV-1a over path's 8-byte little-endian words (the tail bytes one by one) into *h: a byte at a time took as long
 * as the plan's own hash of the model again. A missing path adds nothing when optional; read up to the size fstat
 * gave, looking at the interrupt flag between chunks. *bytes grows by what was read. */
static int hash_into(const char *path, bool optional, uint64_t *h, uint64_t *bytes, mlk_error *err)
{
    int fd;
    int64_t size;
    if (optional && access(path, F_OK))
        return MLK_OK;
    int rc = mlk_open_regular(path, "cached model", &fd, &size, err);
    if (rc)
        return rc;
    char buf[1 << 16];
    for (int64_t left = size; left > 0 && !rc;) {
        if (mlk_run_interrupted) {
            rc = mlk_fail(err, MLK_E_INTERRUPTED, "interrupted while checking the cached model %s", path);
            break;
        }
        ssize_t n = read(fd, buf, left < (int64_t)sizeof buf ? (size_t)left : sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0)
                rc = mlk_fail(err, MLK_E_IO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        ssize_t i = 0;
        for (; i + 8 <= n; i += 8) { /* chunks are 64 KiB: only a file's last read has a tail */
            uint64_t w;
            memcpy(&w, buf + i, 8);
            *h = (*h ^ w) * 1099511628211ULL;
        }
        for (; i < n; i++)
            *h = (*h ^ (unsigned char)buf[i]) * 1099511628211ULL;
        left -= n;
        *bytes += (uint64_t)n;
    }
    close(fd);
    return rc;
}

/* "fnv1a64w HEX BYTES": the model's bytes, then its .data file's. */
static int seal_text(const char *model, char *text, size_t len, mlk_error *err)
{
    uint64_t h = 1469598103934665603ULL, bytes = 0;
    mlk_buf data = {0};
    mlk_buf_printf(&data, "%s.data", model);
    int rc = data.failed ? mlk_fail(err, MLK_E_NOMEM, "out of memory") : hash_into(model, false, &h, &bytes, err);
    if (!rc)
        rc = hash_into(data.s, true, &h, &bytes, err);
    mlk_buf_free(&data);
    if (!rc)
        snprintf(text, len, "fnv1a64w %016" PRIx64 " %" PRIu64 "\n", h, bytes);
    return rc;
}

int mlk_model_cache_seal(const char *model, mlk_error *err)
{
    char text[96];
    int rc = seal_text(model, text, sizeof text, err);
    if (rc)
        return rc;
    mlk_buf p = {0};
    mlk_buf_printf(&p, "%s.hash", model);
    FILE *f = NULL;
    if (p.failed)
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    else if (!(rc = mlk_create_file(p.s, "model hash", &f, err))) {
        bool bad = fputs(text, f) < 0;
        bad |= fclose(f) != 0;
        if (bad)
            rc = mlk_fail(err, MLK_E_IO, "cannot write %s: %s", p.s, strerror(errno));
    }
    mlk_buf_free(&p);
    return rc;
}

int mlk_model_cache_verify(const char *model, bool *ok, const char **why, mlk_error *err)
{
    *ok = false;
    *why = "has no hash beside it (an older memleak-run cached it)";
    mlk_buf p = {0};
    mlk_buf_printf(&p, "%s.hash", model);
    if (p.failed)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    char *want = NULL;
    size_t len = 0;
    mlk_error ignore = {0};
    int rc = mlk_read_regular(p.s, "model hash", 256, &want, &len, &ignore);
    mlk_buf_free(&p);
    if (rc) /* none, or not a file: generated again */
        return MLK_OK;
    char got[96];
    if (strncmp(want, "fnv1a64w ", 9))
        *why = "has a hash of another kind beside it (an older memleak-run wrote it)";
    else if (!(rc = seal_text(model, got, sizeof got, err)) && !(*ok = !strcmp(got, want)))
        *why = "does not match the hash written when it was generated";
    free(want);
    return rc == MLK_E_NOTFOUND || rc == MLK_E_PARSE ? MLK_OK : rc;
}
