/* inject.c: planted faults with known sizes, so every verdict of the harness can be checked against a truth.
 * It must never act without an explicit inject_* option, and never let the compiler elide a planted leak. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"
#include "status.h"

static _Atomic int64_t step_calls[REF_STEP_COUNT];

/* The retention cache: reachable from this global, so it is "still reachable", never "lost". */
typedef struct retained {
    struct retained *next;
} retained;
static retained *cache_head;
static int64_t cache_bytes;
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

/* Write one byte per page through a volatile pointer, so the pages are resident and the stores stay. */
static void touch(void *p, size_t n)
{
    volatile unsigned char *v = p;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < n; i += (size_t)page)
        v[i] = (unsigned char)(i | 1);
    if (n)
        v[n - 1] = 1;
}

/* Planted blocks come from malloc itself, not the engine's counting hook: a planted leak of N bytes is then one
 * malloc(N), exactly what the allocator and the heap shim see. */
static int leak(int64_t bytes, ref_error *err)
{
    void *p = malloc((size_t)bytes);
    if (!p)
        return ref_fail(err, REF_E_NOMEM, "inject_leak_bytes: cannot allocate %lld bytes", (long long)bytes);
    touch(p, (size_t)bytes);
    /* The pointer is dropped on purpose: valgrind must call this "definitely lost". */
    return REF_OK;
}

static int retain(int64_t bytes, int64_t cap, ref_error *err)
{
    int rc = REF_OK;
    pthread_mutex_lock(&cache_mu);
    if (cache_bytes + bytes <= cap) {
        size_t n = (size_t)bytes < sizeof(retained) ? sizeof(retained) : (size_t)bytes;
        retained *r = malloc(n);
        if (!r) {
            rc = ref_fail(err, REF_E_NOMEM, "inject_retention_bytes: cannot allocate %lld bytes",
                          (long long)bytes);
        } else {
            touch(r, n);
            r->next = cache_head;
            cache_head = r;
            cache_bytes += bytes;
        }
    }
    pthread_mutex_unlock(&cache_mu);
    return rc;
}

static void *idle_forever(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int thread_leak(ref_error *err)
{
    pthread_t t;
    int rc = pthread_create(&t, NULL, idle_forever, NULL);
    if (rc)
        return ref_fail(err, REF_E_NOMEM, "inject_thread_leak: pthread_create failed (errno %d)", rc);
    /* Neither joined nor detached: the thread and its stack stay for the life of the process. */
    return REF_OK;
}

int ref_inject_step(const ref_options *o, ref_step s, ref_error *err)
{
    if (!o || s <= REF_STEP_NONE || s >= REF_STEP_COUNT)
        return REF_OK;
    int64_t call = atomic_fetch_add(&step_calls[s], 1) + 1;
    if (o->inject_crash_at > 0 && (int)s == o->inject_crash_step && call == o->inject_crash_at)
        abort(); /* the planted crash: the harness must record it as such */
    int rc = REF_OK;
    if (o->inject_leak_bytes > 0 && (int)s == o->inject_leak_step)
        rc = leak(o->inject_leak_bytes, err);
    if (!rc && o->inject_retention_bytes > 0 && (int)s == o->inject_retention_step)
        rc = retain(o->inject_retention_bytes, o->inject_retention_cap_bytes, err);
    if (!rc && o->inject_thread_leak && (int)s == o->inject_thread_step)
        rc = thread_leak(err);
    return rc;
}

int64_t ref_inject_retained_bytes(void)
{
    pthread_mutex_lock(&cache_mu);
    int64_t n = cache_bytes;
    pthread_mutex_unlock(&cache_mu);
    return n;
}
