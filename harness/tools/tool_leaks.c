/* tool_leaks.c: tool names, the leak records the parsers fill, their per-kind sums and whether a record is the
 * engine's. It must never call a leak the engine's or not by guessing from a function name: only the objects of
 * its frames decide, and an unknown object counts as the engine's. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tool_internal.h"

const char *mlk_leak_kind_name(int kind)
{
    static const char *const names[MLK_LEAK_KIND_COUNT] = {"definitely", "indirectly", "possibly", "reachable"};
    return kind >= 0 && kind < MLK_LEAK_KIND_COUNT ? names[kind] : NULL;
}

void mlk_tool_frames_free(mlk_frame *f, int n)
{
    for (int i = 0; f && i < n; i++) {
        free(f[i].fn);
        free(f[i].file);
        free(f[i].obj);
    }
    free(f);
}

void mlk_leak_report_free(mlk_leak_report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        mlk_tool_frames_free(r->leaks[i].frames, r->leaks[i].n_frames);
    free(r->leaks);
    r->leaks = NULL;
    r->n = r->cap = 0;
}

mlk_leak *mlk_tool_leak_add(mlk_leak_report *r)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 16;
        mlk_leak *v = realloc(r->leaks, sizeof *v * (size_t)cap);
        if (!v)
            return NULL;
        r->leaks = v;
        r->cap = cap;
    }
    mlk_leak *l = &r->leaks[r->n++];
    memset(l, 0, sizeof *l);
    return l;
}

/* Capacities go 8, 16, 32, ...: implied by n, so the structs need no cap field. */
mlk_frame *mlk_tool_frame_add(mlk_frame **frames, int *n)
{
    if (*n == 0 || (*n >= 8 && (*n & (*n - 1)) == 0)) {
        mlk_frame *v = realloc(*frames, sizeof *v * (size_t)(*n ? *n * 2 : 8));
        if (!v)
            return NULL;
        *frames = v;
    }
    mlk_frame *f = &(*frames)[(*n)++];
    memset(f, 0, sizeof *f);
    return f;
}

char *mlk_tool_strndup(const char *s, size_t n, int *nomem)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (!n)
        return NULL;
    char *c = malloc(n + 1);
    if (!c) {
        *nomem = 1;
        return NULL;
    }
    memcpy(c, s, n);
    c[n] = '\0';
    return c;
}

/* "FILE:LINE" or "FILE:LINE:COL" into f: up to two trailing ":DIGITS" groups, the line being the first of them;
 * false when loc has none. */
bool mlk_tool_file_line(const char *loc, size_t n, mlk_frame *f, int *nomem)
{
    size_t line_at = 0, end = n;
    for (int groups = 0; groups < 2; groups++) {
        size_t i = end;
        while (i > 0 && loc[i - 1] >= '0' && loc[i - 1] <= '9')
            i--;
        if (i == end || i < 2 || loc[i - 1] != ':')
            break;
        line_at = i;
        end = i - 1;
    }
    if (!line_at)
        return false;
    long line = strtol(loc + line_at, NULL, 10);
    f->line = line > 0 && line < 1 << 30 ? (int)line : 0;
    f->file = mlk_tool_strndup(loc, line_at - 1, nomem);
    return true;
}

int mlk_tool_read_file(const char *path, char **out, size_t *len, mlk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return mlk_fail(err, MLK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || (size_t)st.st_size > MLK_TOOL_MAX_FILE) {
        fclose(f);
        return mlk_fail(err, MLK_E_IO, "%s: cannot read, or larger than %zu MiB", path, MLK_TOOL_MAX_FILE >> 20);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, n, f);
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return mlk_fail(err, MLK_E_IO, "%s: read error", path);
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return MLK_OK;
}

void mlk_leaks_sum(const mlk_leak_report *r, int64_t bytes[MLK_LEAK_KIND_COUNT], int64_t blocks[MLK_LEAK_KIND_COUNT],
                   int64_t *engine_definite)
{
    for (int k = 0; k < MLK_LEAK_KIND_COUNT; k++) {
        if (bytes)
            bytes[k] = 0;
        if (blocks)
            blocks[k] = 0;
    }
    if (engine_definite)
        *engine_definite = 0;
    for (int i = 0; r && i < r->n; i++) {
        const mlk_leak *l = &r->leaks[i];
        if (bytes)
            bytes[l->kind] += l->bytes;
        if (blocks)
            blocks[l->kind] += l->blocks;
        if (engine_definite && l->kind == MLK_LEAK_DEFINITELY && l->in_engine)
            *engine_definite += l->bytes;
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The loader, libc and its siblings, the C++ runtime, valgrind's preloads, the sanitizer runtimes, the heap shim:
 * code every worker runs whatever the engine. Matched as prefixes of the object's file name. */
static bool system_object(const char *obj)
{
    static const char *const prefixes[] = {
        "ld-linux",   "ld64.so",      "libc.so",     "libm.so",     "libpthread.so", "libdl.so",  "librt.so",
        "libstdc++.so", "libgcc_s.so", "vgpreload_", "libasan.so",  "liblsan.so",    "libubsan.so",
        "libmemleak_heap.so", "memcheck-", "massif-", NULL};
    const char *b = base_name(obj);
    for (int i = 0; prefixes[i]; i++)
        if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
            return true;
    return strstr(obj, "/valgrind/") != NULL;
}

static bool harness_object(const char *obj, const char *const *harness)
{
    for (int i = 0; harness && harness[i]; i++)
        if (!strcmp(obj, harness[i]) || !strcmp(base_name(obj), base_name(harness[i])))
            return true;
    return false;
}

void mlk_leaks_attribute(mlk_leak_report *r, const char *const *harness)
{
    for (int i = 0; r && i < r->n; i++) {
        mlk_leak *l = &r->leaks[i];
        l->in_engine = l->n_frames == 0; /* no stack at all: nothing clears it */
        for (int k = 0; k < l->n_frames && !l->in_engine; k++) {
            const char *obj = l->frames[k].obj;
            l->in_engine = !obj || (!system_object(obj) && !harness_object(obj, harness));
        }
    }
}

bool mlk_frame_is_allocator(const mlk_frame *f)
{
    static const char *const fns[] = {"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
                                      "aligned_alloc", "valloc", "pvalloc", "strdup", "strndup", NULL};
    if (!f->fn)
        return false;
    const char *fn = f->fn;
    if (!strncmp(fn, "__interceptor_", 14))
        fn += 14;
    else if (!strncmp(fn, "___interceptor_", 15))
        fn += 15;
    for (int i = 0; fns[i]; i++)
        if (!strcmp(fn, fns[i]))
            return true;
    return !strncmp(fn, "operator new", 12) || (f->obj && !strncmp(base_name(f->obj), "vgpreload_", 10));
}
