/* tool_test.h: what the tool parser tests share: fixture paths, reading a fixture, suffix checks.
 * It must never be included outside unit tests. */
#ifndef MLK_TOOL_TEST_H
#define MLK_TOOL_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* harness/tools/tests/fixtures/name, from $MLK_SOURCE_DIR (set by ctest) or this file's folder. */
static inline void tool_fixture(const char *name, char *out, size_t len)
{
    const char *root = getenv("MLK_SOURCE_DIR");
    if (root && root[0]) {
        snprintf(out, len, "%s/harness/tools/tests/fixtures/%s", root, name);
        return;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/fixtures/%s", slash ? dir : ".", name);
}

/* The fixture's bytes (malloc'd, NUL-terminated) or NULL. */
static inline char *tool_fixture_text(const char *name, size_t *len)
{
    char path[1200];
    tool_fixture(name, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static inline bool ends_with(const char *s, const char *tail)
{
    size_t a = s ? strlen(s) : 0, b = strlen(tail);
    return s && a >= b && !strcmp(s + a - b, tail);
}

static inline bool str_eq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

#endif
