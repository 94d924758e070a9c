/* species_acts.c: the acts of engine_species.so kept where no optimiser can prove them useless (blocks written
 * through volatile pointers, pages of a mapping read). It must never free or unmap what a leak species loses. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "species.h"

void species_lose(void *p, size_t n)
{
    volatile unsigned char *v = p;
    for (size_t i = 0; v && i < n; i++)
        v[i] = (unsigned char)i;
}

void *volatile species_escape;

void species_keep_untouched(void *p) { species_escape = p; }

void species_map_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        volatile unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if ((void *)m != MAP_FAILED) {
            unsigned sum = 0;
            for (off_t i = 0; i < st.st_size; i += 4096)
                sum += m[i];
            (void)sum;
        }
    }
    close(fd); /* the mapping outlives the descriptor: only the mapping leaks */
}

void species_churn(int64_t k)
{
    enum { N = 48 };
    void *b[N];
    for (int i = 0; i < N; i++) {
        size_t n = 16 + (size_t)((k * 7919 + i * 104729) % 6000);
        b[i] = malloc(n);
        species_lose(b[i], n < 64 ? n : 64);
    }
    for (int i = 0; i < N; i++)
        free(b[(i * 17 + (int)(k % N)) % N]);
}

void species_churn_pool(int64_t k)
{
    enum { N = 512, PER_CALL = 64 };
    static void *pool[N];
    static uint64_t x = 0x9e3779b97f4a7c15ULL;
    (void)k;
    for (int r = 0; r < PER_CALL; r++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int i = (int)(x % N);
        size_t n = 1 + (size_t)((x >> 20) % 65536);
        free(pool[i]);
        pool[i] = malloc(n);
        if (pool[i])
            memset(pool[i], 5, n);
    }
}

/* Two functions, so each level's return address says which one it called; the work after each call keeps it from
 * being a tail call (a jump leaves no frame) and the two calls from being merged. */
static int species_path_b(uint64_t bits, int depth, size_t bytes);

static int species_path_leaf(size_t bytes)
{
    void *p = malloc(bytes);
    species_keep_untouched(p);
    free(p);
    return 1;
}

static __attribute__((noinline)) int species_path_a(uint64_t bits, int depth, size_t bytes)
{
    if (depth == 0)
        return species_path_leaf(bytes);
    int r = (bits & 1) ? species_path_a(bits >> 1, depth - 1, bytes) : species_path_b(bits >> 1, depth - 1, bytes);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

static __attribute__((noinline)) int species_path_b(uint64_t bits, int depth, size_t bytes)
{
    if (depth == 0)
        return species_path_leaf(bytes);
    int r = (bits & 1) ? species_path_a(bits >> 1, depth - 1, bytes) : species_path_b(bits >> 1, depth - 1, bytes);
    __asm__ volatile("" ::: "memory");
    return r + 2;
}

void species_paths(uint64_t first, int n, size_t bytes)
{
    for (int i = 0; i < n; i++)
        species_escape = (void *)(uintptr_t)species_path_a(first + (uint64_t)i, SPECIES_PATH_DEPTH, bytes);
}

void species_lose_page(void)
{
    long page = sysconf(_SC_PAGESIZE);
    long r = syscall(SYS_mmap, NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r != -1)
        species_lose((void *)r, (size_t)page);
}

void species_pin(void)
{
    Dl_info info;
    if (dladdr((void *)species_pin, &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

bool species_self_dir(char *out, size_t len)
{
    Dl_info info;
    if (!dladdr((void *)species_self_dir, &info) || !info.dli_fname)
        return false;
    snprintf(out, len, "%s", info.dli_fname);
    char *slash = strrchr(out, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return true;
}
