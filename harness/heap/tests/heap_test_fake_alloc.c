/* heap_test_fake_alloc.c: a toy allocator with only malloc, calloc, realloc, free and posix_memalign, for the
 * shim's fallback test. It never frees (a bump arena) and must never be used outside that test. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FAKE_ARENA_BYTES ((size_t)256 << 20)
#define FAKE_HEADER 16

static _Atomic(unsigned char *) fake_arena;
static _Atomic size_t fake_used;

static unsigned char *fake_base(void)
{
    unsigned char *a = atomic_load(&fake_arena);
    if (a)
        return a;
    unsigned char *m = mmap(NULL, FAKE_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                            -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (!atomic_compare_exchange_strong(&fake_arena, &a, m)) {
        munmap(m, FAKE_ARENA_BYTES);
        return a;
    }
    return m;
}

static void *fake_bump(size_t align, size_t n)
{
    unsigned char *base = fake_base();
    if (!base || n > FAKE_ARENA_BYTES || align > FAKE_ARENA_BYTES)
        return NULL;
    if (align < FAKE_HEADER)
        align = FAKE_HEADER;
    size_t start = atomic_load(&fake_used), user, end;
    do {
        user = (start + FAKE_HEADER + align - 1) & ~(align - 1);
        end = user + n;
        if (end > FAKE_ARENA_BYTES)
            return NULL;
    } while (!atomic_compare_exchange_weak(&fake_used, &start, end));
    memcpy(base + user - sizeof(size_t), &n, sizeof n);
    return base + user;
}

int fake_owns(const void *p);
__attribute__((visibility("default"))) int fake_owns(const void *p)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)atomic_load(&fake_arena);
    return b && a >= b && a < b + FAKE_ARENA_BYTES;
}

/* Internal entry, as real allocators have: calls between the functions below must not go through the PLT. */
static void *fake_malloc(size_t n)
{
    void *p = fake_bump(0, n);
    if (!p)
        errno = ENOMEM;
    return p;
}

__attribute__((visibility("default"))) void *malloc(size_t n)
{
    return fake_malloc(n);
}

__attribute__((visibility("default"))) void free(void *p)
{
    (void)p;
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return fake_malloc(total); /* the arena is fresh anonymous memory, never reused: already zero */
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t n)
{
    if (!p)
        return fake_malloc(n);
    if (n == 0)
        return NULL;
    void *q = fake_malloc(n);
    if (q) {
        size_t old;
        memcpy(&old, (unsigned char *)p - sizeof(size_t), sizeof old);
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}

__attribute__((visibility("default"))) int posix_memalign(void **out, size_t align, size_t n)
{
    if (!align || (align & (align - 1)) || align % sizeof(void *))
        return EINVAL;
    void *p = fake_bump(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
