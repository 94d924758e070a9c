// heap_sites_plugin.cc: planted growth in known functions, for test_heap_sites to find by their stacks: malloc and
// operator new[] in a plain function and in a helper thread, a buffer that grows by realloc (still reachable), a
// mapped file never unmapped, and churn that grows nothing. Loaded locally, as memleak-run loads an engine.
// It must never let the compiler inline, merge or tail-call the planting functions: their names are the test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLANT extern "C" __attribute__((visibility("default"), noinline))

namespace {
// Everything planted is kept here, so the test can give it all back (a test leaves nothing behind); the shim sees
// no difference between a lost block and one an array still points to.
struct held_rec {
    void *p;
    bool cxx; // from new[]: goes back through delete[]
} held[1 << 14];
int n_held;
struct map_rec {
    void *p;
    size_t n;
} maps[1024];
int n_maps;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void keep(void *p, bool cxx = false)
{
    pthread_mutex_lock(&lock);
    if (n_held < (int)(sizeof held / sizeof held[0]))
        held[n_held++] = {p, cxx};
    pthread_mutex_unlock(&lock);
}

void touch(void *p, size_t n)
{
    volatile char *c = static_cast<volatile char *>(p);
    for (size_t i = 0; i < n; i += 512)
        c[i] = 1;
}

char *grown;      // the still-reachable buffer
size_t grown_len;
} // namespace

PLANT void plant_malloc(size_t n)
{
    void *p = malloc(n);
    touch(p, n);
    keep(p);
}

PLANT void plant_new(size_t n)
{
    char *p = new char[n];
    touch(p, n);
    keep(p, true);
}

PLANT void *plant_thread_body(void *arg)
{
    size_t n = *static_cast<size_t *>(arg);
    void *p = calloc(1, n);
    touch(p, n);
    keep(p);
    return nullptr;
}

// A helper thread allocates and ends; what it allocated stays.
PLANT void plant_in_thread(size_t n)
{
    pthread_t t;
    if (pthread_create(&t, nullptr, plant_thread_body, &n) == 0)
        pthread_join(t, nullptr);
}

// Appends n bytes to a global buffer: a cache that only grows, still reachable.
PLANT void plant_append(size_t n)
{
    char *q = static_cast<char *>(realloc(grown, grown_len + n));
    if (!q)
        return;
    memset(q + grown_len, 7, n);
    grown = q;
    grown_len += n;
}

// Maps the file at path again, reads every page, never unmaps it (until plant_release_all).
PLANT int plant_map_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    volatile const char *c = static_cast<const char *>(p);
    int sum = 0;
    for (off_t i = 0; i < st.st_size; i += 4096)
        sum += c[i];
    pthread_mutex_lock(&lock);
    maps[n_maps++ % 1024] = {p, static_cast<size_t>(st.st_size)};
    pthread_mutex_unlock(&lock);
    return sum;
}

// Blocks of many sizes allocated and freed in a scrambled order: nothing stays.
PLANT void plant_churn(uint32_t seed, int n)
{
    held_rec slot[64] = {};
    uint32_t x = seed | 1;
    for (int i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        held_rec &s = slot[x % 64];
        if (s.cxx)
            delete[] static_cast<char *>(s.p);
        else
            free(s.p);
        s.cxx = (x & 0x100) != 0;
        s.p = s.cxx ? static_cast<void *>(new char[32 + x % 300]) : malloc(16 + x % 9000);
    }
    for (held_rec &s : slot) {
        if (s.cxx)
            delete[] static_cast<char *>(s.p);
        else
            free(s.p);
    }
}

PLANT void plant_release_all(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_held; i++) {
        if (held[i].cxx)
            delete[] static_cast<char *>(held[i].p);
        else
            free(held[i].p);
    }
    n_held = 0;
    for (int i = 0; i < n_maps && i < 1024; i++)
        munmap(maps[i].p, maps[i].n);
    n_maps = 0;
    pthread_mutex_unlock(&lock);
    free(grown);
    grown = nullptr;
    grown_len = 0;
}
