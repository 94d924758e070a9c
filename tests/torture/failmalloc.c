/* failmalloc.c: an LD_PRELOAD library for the torture suite that makes the Nth allocation of the process fail (as
 * SQLite's OOM loops do), or counts the allocations. It must never arm itself in a child: it takes its settings from
 * the environment once and removes them, so the worker and the model generator run with a plain malloc.
 *
 *   MLK_FAILMALLOC_AT=N      malloc/calloc/realloc/aligned calls number N (1-based) and later return NULL, once
 *                            (FAIL_ONCE=1) or from then on
 *   MLK_FAILMALLOC_COUNT=F   at exit, write the number of allocation calls seen to file F */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static uint64_t calls, fail_at;
static int fail_once, armed;
static char count_path[512];

__attribute__((constructor)) static void setup(void)
{
    const char *at = getenv("MLK_FAILMALLOC_AT"), *once = getenv("MLK_FAILMALLOC_ONCE");
    const char *count = getenv("MLK_FAILMALLOC_COUNT");
    if (at) {
        fail_at = strtoull(at, NULL, 10);
        fail_once = once && once[0] == '1';
    }
    if (count)
        snprintf(count_path, sizeof count_path, "%s", count);
    /* children get a plain malloc */
    unsetenv("MLK_FAILMALLOC_AT");
    unsetenv("MLK_FAILMALLOC_ONCE");
    unsetenv("MLK_FAILMALLOC_COUNT");
    armed = 1;
}

__attribute__((destructor)) static void report(void)
{
    if (!count_path[0])
        return;
    FILE *f = fopen(count_path, "w");
    if (f) {
        fprintf(f, "%llu\n", (unsigned long long)calls);
        fclose(f);
    }
}

static int should_fail(void)
{
    if (!armed)
        return 0;
    uint64_t n = ++calls;
    if (!fail_at || n < fail_at)
        return 0;
    return !fail_once || n == fail_at;
}

void *malloc(size_t n)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (n && should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (should_fail())
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, n);
}

void free(void *p) { __libc_free(p); }
