/* bench_heap_shim.c: times malloc-heavy loops, for bench_shim.sh to run with and without the heap shim.
 * A benchmark, not a test: it prints ns per operation and checks nothing; it must not allocate in its timer.
 * Output: "LOOP N_OPS CPU_NS_PER_OP WALL_NS_PER_OP". CPU time (all threads, user and system) is the figure
 * to compare: on a shared machine the wall clock mostly measures the wait for a core. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;

static double now_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint32_t next_rand(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* The worst case for the shim: a 64-byte malloc/free pair, the allocator's own fast path. */
static long loop_tiny(long n_ops)
{
    for (long i = 0; i < n_ops; i++) {
        void *p = malloc(64);
        sink = p;
        free(p);
    }
    return n_ops;
}

/* Sizes of an inference engine's heap traffic: mostly small metadata, some tensors, a few big buffers,
 * a working set of 4096 live blocks, one in ten replacements a realloc. Blocks are touched once. */
static size_t realistic_size(uint32_t *x)
{
    uint32_t r = next_rand(x), pick = r % 100;
    if (pick < 60)
        return 16 + r % 240;
    if (pick < 85)
        return 256 + r % 3840;
    if (pick < 97)
        return 4096 + r % 61440;
    return 65536 + r % (1 << 20);
}

static long loop_mixed(long n_ops)
{
    enum { N_SLOTS = 4096 };
    void **slots = calloc(N_SLOTS, sizeof *slots);
    if (!slots)
        return 0;
    uint32_t x = 2463534242u;
    for (long i = 0; i < n_ops; i++) {
        void **s = &slots[next_rand(&x) % N_SLOTS];
        size_t n = realistic_size(&x);
        if (*s && next_rand(&x) % 10 == 0) {
            void *q = realloc(*s, n);
            if (q)
                *s = q;
        } else {
            free(*s);
            *s = malloc(n);
        }
        if (*s)
            *(volatile char *)*s = (char)i;
    }
    for (int i = 0; i < N_SLOTS; i++)
        free(slots[i]);
    free(slots);
    return n_ops;
}

static void *tiny_thread(void *arg)
{
    loop_tiny(*(long *)arg);
    return NULL;
}

/* Two threads on the tiny loop: the shim's shared counters bounce between the cores. */
static long loop_threads(long n_ops)
{
    enum { N_THREADS = 2 };
    pthread_t t[N_THREADS];
    long per_thread = n_ops / N_THREADS;
    int n_started = 0;
    for (int i = 0; i < N_THREADS; i++)
        n_started += pthread_create(&t[i], NULL, tiny_thread, &per_thread) == 0;
    for (int i = 0; i < n_started; i++)
        pthread_join(t[i], NULL);
    return per_thread * n_started;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_heap_shim tiny|mixed|threads [N_OPS]\n");
        return 2;
    }
    long n_ops = argc > 2 ? atol(argv[2]) : 5000000;
    long (*loop)(long) = strcmp(argv[1], "tiny") == 0      ? loop_tiny
                         : strcmp(argv[1], "mixed") == 0   ? loop_mixed
                         : strcmp(argv[1], "threads") == 0 ? loop_threads
                                                           : NULL;
    if (!loop || n_ops <= 0) {
        fprintf(stderr, "bench_heap_shim: unknown loop '%s' or bad N_OPS\n", argv[1]);
        return 2;
    }
    loop(n_ops / 10 + 1); /* warm the allocator's caches and the shim's lookups */
    double c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);
    long done = loop(n_ops);
    double t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (done <= 0) {
        fprintf(stderr, "bench_heap_shim: %s did nothing\n", argv[1]);
        return 1;
    }
    printf("%s %ld %.3f %.3f\n", argv[1], done, (c1 - c0) / (double)done, (t1 - t0) / (double)done);
    return 0;
}
