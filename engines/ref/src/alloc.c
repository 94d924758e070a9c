/* alloc.c: counting allocator over libc malloc, with a header recording size and alignment offset.
 * It must never abort or print: callers turn NULL into REF_E_NOMEM with their own context. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "refengine.h"

/* The header sits just before the pointer handed out; 16 bytes keeps malloc's alignment. */
typedef struct {
    size_t size;   /* bytes requested */
    size_t offset; /* distance from the raw malloc pointer to the user pointer */
} ref_hdr;

static _Atomic int64_t g_live, g_peak, g_allocs, g_frees, g_failed;
static _Atomic int64_t g_countdown;
static _Atomic int g_armed, g_for_good;

void ref_alloc_fail_after(int64_t n, int for_good)
{
    if (n < 0) {
        atomic_store(&g_armed, 0);
        return;
    }
    atomic_store(&g_countdown, n);
    atomic_store(&g_for_good, for_good);
    atomic_store(&g_armed, 1);
}

static int injected_failure(void)
{
    if (!atomic_load_explicit(&g_armed, memory_order_relaxed))
        return 0;
    int64_t prev = atomic_fetch_sub(&g_countdown, 1);
    if (prev > 0)
        return 0;
    if (prev == 0 && !atomic_load(&g_for_good))
        atomic_store(&g_armed, 0);
    return 1;
}

static void account(int64_t delta)
{
    int64_t now = atomic_fetch_add(&g_live, delta) + delta;
    int64_t peak = atomic_load_explicit(&g_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&g_peak, &peak, now)) {
    }
}

static void *alloc_with(size_t n, size_t align)
{
    if (injected_failure()) {
        atomic_fetch_add(&g_failed, 1);
        return NULL;
    }
    size_t extra = sizeof(ref_hdr) + (align > sizeof(ref_hdr) ? align : 0);
    if (n > SIZE_MAX - extra) {
        atomic_fetch_add(&g_failed, 1);
        return NULL;
    }
    char *raw = malloc(n + extra);
    if (!raw) {
        atomic_fetch_add(&g_failed, 1);
        return NULL;
    }
    uintptr_t user = (uintptr_t)raw + sizeof(ref_hdr);
    if (align > sizeof(ref_hdr))
        user = (user + align - 1) & ~(uintptr_t)(align - 1);
    ref_hdr *h = (ref_hdr *)(user - sizeof(ref_hdr));
    h->size = n;
    h->offset = user - (uintptr_t)raw;
    atomic_fetch_add(&g_allocs, 1);
    account((int64_t)n);
    return (void *)user;
}

void *ref_malloc(size_t n) { return alloc_with(n, 0); }

void *ref_aligned_alloc(size_t n) { return alloc_with(n, REF_ALIGN); }

void *ref_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        atomic_fetch_add(&g_failed, 1);
        return NULL;
    }
    void *p = alloc_with(count * size, 0);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void ref_free(void *p)
{
    if (!p)
        return;
    ref_hdr *h = (ref_hdr *)((char *)p - sizeof(ref_hdr));
    account(-(int64_t)h->size);
    atomic_fetch_add(&g_frees, 1);
    free((char *)p - h->offset);
}

void *ref_realloc(void *p, size_t n)
{
    if (!p)
        return ref_malloc(n);
    ref_hdr *h = (ref_hdr *)((char *)p - sizeof(ref_hdr));
    void *q = ref_malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, h->size < n ? h->size : n);
    ref_free(p);
    return q;
}

char *ref_strndup(const char *s, size_t n)
{
    char *d = ref_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void ref_alloc_get_stats(ref_alloc_stats *out)
{
    out->live_bytes = atomic_load(&g_live);
    out->peak_bytes = atomic_load(&g_peak);
    out->n_allocs = atomic_load(&g_allocs);
    out->n_frees = atomic_load(&g_frees);
    out->n_failed = atomic_load(&g_failed);
}

void ref_alloc_reset_peak(void) { atomic_store(&g_peak, atomic_load(&g_live)); }
