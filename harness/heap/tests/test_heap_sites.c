/* test_heap_sites.c: the shim's allocation sites and mappings under one allocator (run_under.sh) and one mode
 * (MLK_HEAP_SITES=off|sample|exact): growth planted in known functions of heap_sites_plugin.so (malloc, new[], in a
 * helper thread, a buffer grown by realloc, a mapped file) must show as growing sites whose stacks name those
 * functions; churn must grow nothing, from four threads at once; mmap/munmap/mremap must move mapped_bytes and
 * n_mappings exactly; with "overflow" (tiny tables from MLK_HEAP_SITES_MAX) nothing may crash or go negative and the
 * drops must be counted; the window (sample mode) counts what it saw exactly. It must never pass with the shim absent or a mode other than the one asked for. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap_sites.h"
#include "heap_test.h"

#define N_ITERS 20
#define MAX_SITES 200000

static struct {
    void (*plant_malloc)(size_t);
    void (*plant_new)(size_t);
    void (*plant_in_thread)(size_t);
    void (*plant_append)(size_t);
    int (*plant_map_file)(const char *);
    void (*plant_churn)(uint32_t, int);
    void (*plant_release_all)(void);
} pl;

static mlk_heap_sites_info_fn sites_info;
static mlk_heap_sites_snapshot_fn sites_snapshot;
static mlk_heap_site_stack_fn site_stack;
static mlk_heap_site_mappings_fn site_mappings;
static int mode;
static long page;

/* Snapshots taken after each iteration, in buffers allocated before. */
static int64_t (*snap)[MAX_SITES];
static int64_t n_snap_sites[N_ITERS];

static int expected_mode(void)
{
    const char *m = getenv(MLK_HEAP_SITES_ENV);
    return !m || !strcmp(m, "off") ? MLK_HEAP_SITES_OFF : !strcmp(m, "exact") ? MLK_HEAP_SITES_EXACT
                                                                               : MLK_HEAP_SITES_SAMPLE;
}

static mlk_heap_sites_info info(void)
{
    mlk_heap_sites_info i = {.struct_size = sizeof i};
    sites_info(&i);
    return i;
}

/* True when site's stack holds a frame of function fn (named by dladdr: the plugin's functions are exported). */
static bool site_has(int64_t site, const char *fn, int *kind)
{
    uintptr_t pcs[MLK_HEAP_SITES_DEPTH];
    int d = site_stack(site, kind, pcs, MLK_HEAP_SITES_DEPTH);
    for (int i = 0; i < d; i++) {
        Dl_info dl;
        if (dladdr((void *)(pcs[i] - 1), &dl) && dl.dli_sname && !strcmp(dl.dli_sname, fn))
            return true;
    }
    return false;
}

/* Sum over the sites naming fn of their live bytes at snapshot k, and of their growth across the snapshots. */
static int64_t bytes_of(const char *fn, int want_kind, int k)
{
    int64_t sum = 0;
    for (int64_t s = 1; s < n_snap_sites[k]; s++) {
        int kind = -1;
        if (site_has(s, fn, &kind) && kind == want_kind)
            sum += snap[k][s];
    }
    return sum;
}

static int64_t now_bytes_of(const char *fn, int want_kind)
{
    int64_t *b = calloc(MAX_SITES, sizeof *b);
    int64_t n = b ? sites_snapshot(b, NULL, MAX_SITES) : 0, sum = 0;
    for (int64_t s = 1; s < n; s++) {
        int kind = -1;
        if (site_has(s, fn, &kind) && kind == want_kind)
            sum += b[s];
    }
    free(b);
    return sum;
}

static bool path_mapped_at(uintptr_t start, const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        unsigned long lo = 0;
        if (sscanf(line, "%lx-", &lo) == 1 && lo == start)
            found = strstr(line, path) != NULL;
    }
    if (f)
        fclose(f);
    return found;
}

/* ------------------------------------------------------------------ mappings, in every mode */

static void test_mappings(const char *file)
{
    mlk_heap_stats a = heap_test_stats();
    HT_CHECK(a.mapped_bytes >= 0 && a.n_mappings >= 0, "mappings not followed: %lld bytes, %lld mappings",
             (long long)a.mapped_bytes, (long long)a.n_mappings);
    char *p = mmap(NULL, 8 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    HT_CHECK(p != MAP_FAILED, "mmap");
    mlk_heap_stats b = heap_test_stats();
    HT_CHECK(b.mapped_bytes - a.mapped_bytes == 8 * page && b.n_mappings - a.n_mappings == 1,
             "mmap 8 pages: %+lld bytes %+lld mappings", (long long)(b.mapped_bytes - a.mapped_bytes),
             (long long)(b.n_mappings - a.n_mappings));
    munmap(p + 2 * page, page); /* a hole: two mappings */
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes - a.mapped_bytes == 7 * page && b.n_mappings - a.n_mappings == 2,
             "hole: %+lld bytes %+lld mappings", (long long)(b.mapped_bytes - a.mapped_bytes),
             (long long)(b.n_mappings - a.n_mappings));
    char *q = mremap(p + 3 * page, 5 * page, 9 * page, MREMAP_MAYMOVE);
    HT_CHECK(q != MAP_FAILED, "mremap");
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes - a.mapped_bytes == 11 * page && b.n_mappings - a.n_mappings == 2,
             "mremap 5 -> 9 pages: %+lld bytes %+lld mappings", (long long)(b.mapped_bytes - a.mapped_bytes),
             (long long)(b.n_mappings - a.n_mappings));
    /* MAP_FIXED over part of the first piece replaces it: bytes stay, one mapping more. */
    char *r = mmap(p, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    HT_CHECK(r == p, "MAP_FIXED");
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes - a.mapped_bytes == 11 * page && b.n_mappings - a.n_mappings == 3,
             "MAP_FIXED: %+lld bytes %+lld mappings", (long long)(b.mapped_bytes - a.mapped_bytes),
             (long long)(b.n_mappings - a.n_mappings));
    munmap(p, 2 * page);
    munmap(q, 9 * page);
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes == a.mapped_bytes && b.n_mappings == a.n_mappings, "all unmapped: %+lld bytes %+lld",
             (long long)(b.mapped_bytes - a.mapped_bytes), (long long)(b.n_mappings - a.n_mappings));
    /* munmap of what the shim never saw changes nothing; a failed munmap neither. */
    (void)munmap(NULL, page);
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes == a.mapped_bytes && b.n_mappings == a.n_mappings, "munmap of nothing moved figures");
    /* A file mapped through the plugin. */
    for (int i = 0; i < 3; i++)
        HT_CHECK(pl.plant_map_file(file) >= 0, "plant_map_file");
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes - a.mapped_bytes == 3 * 3 * page && b.n_mappings - a.n_mappings == 3,
             "3 file maps: %+lld bytes %+lld mappings", (long long)(b.mapped_bytes - a.mapped_bytes),
             (long long)(b.n_mappings - a.n_mappings));
    pl.plant_release_all();
    b = heap_test_stats();
    HT_CHECK(b.mapped_bytes == a.mapped_bytes && b.n_mappings == a.n_mappings, "file maps released");
}

/* ------------------------------------------------------------------ growth planted in known functions */

static void checkpoint(int k)
{
    n_snap_sites[k] = sites_snapshot(snap[k], NULL, MAX_SITES);
}

static void test_growth(const char *file)
{
    bool exact = mode == MLK_HEAP_SITES_EXACT;
    /* Sample mode: blocks of 4 T are sampled with probability 98%, so the estimate is close to the truth. */
    size_t leak = exact ? 4096 : (size_t)(4 * info().sample_bytes), append = exact ? 24 : leak;
    /* Warm-up: first calls allocate for good (the shim's lookup of the plugin's operator new[] leaves dlerror's
     * message, a thread's first stack its unwinder state), which the release below would otherwise count. */
    pl.plant_malloc(16), pl.plant_new(16), pl.plant_in_thread(16), pl.plant_append(16), pl.plant_map_file(file);
    pl.plant_release_all();
    static const char *const fns[] = {"plant_malloc", "plant_new", "plant_thread_body", "plant_append"};
    int64_t kept[4];
    for (int i = 0; i < 4; i++)
        kept[i] = now_bytes_of(fns[i], MLK_HEAP_SITE_HEAP);
    mlk_heap_stats before = heap_test_stats();
    for (int k = 0; k < N_ITERS; k++) {
        pl.plant_malloc(leak);
        pl.plant_new(leak);
        pl.plant_in_thread(leak);
        pl.plant_append(append);
        pl.plant_map_file(file);
        pl.plant_churn((uint32_t)k + 1, 500);
        checkpoint(k);
    }
    struct {
        const char *fn;
        int kind;
        double want;
    } planted[] = {
        {"plant_malloc", MLK_HEAP_SITE_HEAP, (double)leak},    {"plant_new", MLK_HEAP_SITE_HEAP, (double)leak},
        {"plant_thread_body", MLK_HEAP_SITE_HEAP, (double)leak}, {"plant_append", MLK_HEAP_SITE_HEAP, (double)append},
        {"plant_map_file", MLK_HEAP_SITE_MMAP, 3.0 * page},
    };
    for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++) {
        int64_t first = bytes_of(planted[i].fn, planted[i].kind, 0);
        int64_t last = bytes_of(planted[i].fn, planted[i].kind, N_ITERS - 1);
        double per_iter = (double)(last - first) / (N_ITERS - 1);
        /* Exact: usable sizes round up (and a realloc'd buffer's usable size moves in steps), never down. */
        double lo = exact || planted[i].kind == MLK_HEAP_SITE_MMAP ? 0.9 : 0.5, hi = exact ? 1.5 : 2.0;
        if (planted[i].want < 64)
            lo = 0.3, hi = 3.0;
        HT_CHECK(per_iter >= lo * planted[i].want && per_iter <= hi * planted[i].want,
                 "%s: sites naming it grew %.0f B/iter, planted %.0f B/iter", planted[i].fn, per_iter,
                 planted[i].want);
    }
    /* Churn leaves every site it touched where it was, exactly: a sampled block weighs the same coming and going. */
    HT_CHECK(bytes_of("plant_churn", MLK_HEAP_SITE_HEAP, N_ITERS - 1) == 0, "churn sites hold %lld bytes",
             (long long)bytes_of("plant_churn", MLK_HEAP_SITE_HEAP, N_ITERS - 1));
    /* The mapped file's site lists its live mappings, each of them the file. */
    for (int64_t s = 1; s < n_snap_sites[N_ITERS - 1]; s++) {
        int kind = -1;
        if (!snap[N_ITERS - 1][s] || !site_has(s, "plant_map_file", &kind) || kind != MLK_HEAP_SITE_MMAP)
            continue; /* test_mappings's calls came from another stack: that site is empty now */
        uintptr_t starts[64];
        uint64_t lens[64];
        int64_t n = site_mappings(s, starts, lens, 64);
        HT_CHECK(n == N_ITERS, "plant_map_file's site lists %lld mappings, want %d", (long long)n, N_ITERS);
        for (int64_t j = 0; j < n && j < 64; j++)
            HT_CHECK(lens[j] == (uint64_t)(3 * page) && path_mapped_at(starts[j], file),
                     "mapping %llx (%llu B) is not %s", (unsigned long long)starts[j], (unsigned long long)lens[j],
                     file);
    }
    pl.plant_release_all();
    for (int i = 0; i < 4; i++)
        HT_CHECK(now_bytes_of(fns[i], MLK_HEAP_SITE_HEAP) == kept[i], "%s: %lld bytes left after release, %lld before",
                 fns[i], (long long)now_bytes_of(fns[i], MLK_HEAP_SITE_HEAP), (long long)kept[i]);
    HT_CHECK(now_bytes_of("plant_map_file", MLK_HEAP_SITE_MMAP) == 0, "mapped file still counted");
    mlk_heap_stats after = heap_test_stats();
    HT_CHECK(after.live_bytes == before.live_bytes, "heap after release: %+lld bytes",
             (long long)(after.live_bytes - before.live_bytes));
}

static void *churn_thread(void *arg)
{
    pl.plant_churn((uint32_t)(uintptr_t)arg, mode == MLK_HEAP_SITES_EXACT ? 20000 : 200000);
    return NULL;
}

/* Four threads churn at once: the striped block table must give every site back exactly what it took. */
static void test_threads(void)
{
    pthread_t t[4];
    int n = 0;
    for (int i = 0; i < 4; i++)
        n += pthread_create(&t[n], NULL, churn_thread, (void *)(uintptr_t)(1000 + i)) == 0;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    HT_CHECK(n == 4, "started %d threads", n);
    HT_CHECK(now_bytes_of("plant_churn", MLK_HEAP_SITE_HEAP) == 0, "after 4 churning threads: %lld bytes",
             (long long)now_bytes_of("plant_churn", MLK_HEAP_SITE_HEAP));
    mlk_heap_sites_info i = info();
    HT_CHECK(i.dropped_blocks == 0 && i.dropped_sites == 0, "drops without overflow: %lld sites, %lld blocks",
             (long long)i.dropped_sites, (long long)i.dropped_blocks);
}

/* Tiny tables: stacks that find no room go to site 0, blocks that find none are not attributed, nothing breaks. */
static void test_overflow(const char *file)
{
    mlk_heap_stats before = heap_test_stats();
    for (int k = 0; k < 200; k++) {
        pl.plant_malloc(64);
        pl.plant_new(64);
        pl.plant_map_file(file);
        pl.plant_churn((uint32_t)k + 7, 100);
    }
    for (int k = 0; k < 8000; k++)
        pl.plant_malloc(mode == MLK_HEAP_SITES_EXACT ? 32 : 4096);
    mlk_heap_sites_info i = info();
    HT_CHECK(i.n_sites <= i.max_sites && i.dropped_sites > 0, "sites %lld of %lld, %lld dropped",
             (long long)i.n_sites, (long long)i.max_sites, (long long)i.dropped_sites);
    HT_CHECK(mode != MLK_HEAP_SITES_EXACT || i.dropped_blocks > 0, "blocks: %lld dropped of max %lld",
             (long long)i.dropped_blocks, (long long)i.max_blocks);
    pl.plant_release_all();
    int64_t *b = calloc(MAX_SITES, sizeof *b), *c = calloc(MAX_SITES, sizeof *c);
    int64_t n = b && c ? sites_snapshot(b, c, MAX_SITES) : 0;
    for (int64_t s = 0; s < n; s++)
        HT_CHECK(b[s] >= 0 && c[s] >= 0, "site %lld holds %lld bytes, %lld blocks/1024", (long long)s,
                 (long long)b[s], (long long)c[s]);
    free(b);
    free(c);
    mlk_heap_stats after = heap_test_stats();
    HT_CHECK(after.live_bytes == before.live_bytes, "heap after release: %+lld bytes",
             (long long)(after.live_bytes - before.live_bytes));
}

static void resolve_plugin(void *h)
{
    *(void **)&pl.plant_malloc = dlsym(h, "plant_malloc");
    *(void **)&pl.plant_new = dlsym(h, "plant_new");
    *(void **)&pl.plant_in_thread = dlsym(h, "plant_in_thread");
    *(void **)&pl.plant_append = dlsym(h, "plant_append");
    *(void **)&pl.plant_map_file = dlsym(h, "plant_map_file");
    *(void **)&pl.plant_churn = dlsym(h, "plant_churn");
    *(void **)&pl.plant_release_all = dlsym(h, "plant_release_all");
}

/* The plugin unloaded and loaded again (most likely at the same address): stacks through it are still taken (the
 * unwinder's stale caches are not trusted after an unload) and name it. */
static void *test_reload(void *h, const char *path)
{
    dlclose(h);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    HT_CHECK(h != NULL, "dlopen again: %s", dlerror());
    if (!h)
        return NULL;
    resolve_plugin(h);
    size_t leak = mode == MLK_HEAP_SITES_EXACT ? 4096 : (size_t)(4 * info().sample_bytes);
    int64_t before = now_bytes_of("plant_malloc", MLK_HEAP_SITE_HEAP);
    for (int i = 0; i < 4; i++) {
        pl.plant_malloc(leak);
        pl.plant_churn((uint32_t)i + 99, 300);
    }
    int64_t grown = now_bytes_of("plant_malloc", MLK_HEAP_SITE_HEAP) - before;
    HT_CHECK(grown >= (int64_t)(2 * leak), "after reloading: plant_malloc's sites grew %lld B, planted %zu",
             (long long)grown, 4 * leak);
    pl.plant_release_all();
    return h;
}

/* ------------------------------------------------------------------ the window (issue 23), sample mode */

static int64_t window_bytes_of(mlk_heap_sites_window_snapshot_fn win, const char *fn, int64_t *blocks)
{
    int64_t *b = calloc(MAX_SITES, sizeof *b), *n = calloc(MAX_SITES, sizeof *n);
    int64_t got = b && n ? win(b, n, MAX_SITES) : 0, sum = 0;
    *blocks = 0;
    for (int64_t s = 1; s < got; s++) {
        int kind = -1;
        if (site_has(s, fn, &kind) && kind == MLK_HEAP_SITE_HEAP) {
            sum += b[s];
            *blocks += n[s];
        }
    }
    free(b);
    free(n);
    return sum;
}

/* Every allocation made while the window is open is counted exactly, at the size asked for, apart from the sampled
 * figures; its free subtracts it, also after the window closed; churn leaves nothing; the live heap stays exact. */
static void test_window(void)
{
    mlk_heap_sites_window_fn window = (mlk_heap_sites_window_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_SITES_WINDOW_SYMBOL);
    mlk_heap_sites_window_snapshot_fn win =
        (mlk_heap_sites_window_snapshot_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_SITES_WINDOW_SNAPSHOT_SYMBOL);
    HT_CHECK(window && win, "the shim exports no window");
    if (!window || !win)
        return;
    if (mode != MLK_HEAP_SITES_SAMPLE) {
        HT_CHECK(window(1) == 0, "a window opened in mode %d", mode);
        return;
    }
    mlk_heap_stats before = heap_test_stats();
    int64_t blocks = 0;
    HT_CHECK(window(1) == 1, "the window did not open");
    for (int k = 0; k < 10; k++) {
        pl.plant_malloc(100);
        pl.plant_new(72);
        pl.plant_churn((uint32_t)k + 7, 50);
    }
    window(0);
    pl.plant_malloc(100); /* after the window: sampled, never in the window's counts */
    int64_t m = window_bytes_of(win, "plant_malloc", &blocks);
    HT_CHECK(m == 1000 && blocks == 10, "plant_malloc in the window: %lld B in %lld blocks, want 1000 in 10",
             (long long)m, (long long)blocks);
    int64_t n = window_bytes_of(win, "plant_new", &blocks);
    HT_CHECK(n == 720 && blocks == 10, "plant_new in the window: %lld B in %lld blocks, want 720 in 10", (long long)n,
             (long long)blocks);
    HT_CHECK(window_bytes_of(win, "plant_churn", &blocks) == 0 && blocks == 0, "churn left window bytes");
    pl.plant_release_all();
    HT_CHECK(window_bytes_of(win, "plant_malloc", &blocks) == 0 && blocks == 0, "released blocks still in the window");
    HT_CHECK(heap_test_stats().live_bytes == before.live_bytes, "heap after the window and release: %+lld bytes",
             (long long)(heap_test_stats().live_bytes - before.live_bytes));
}

int main(int argc, char **argv)
{
    int rc = heap_test_setup();
    if (rc)
        return rc;
    if (argc < 2) {
        fprintf(stderr, "usage: test_heap_sites PLUGIN.so [overflow]\n");
        return 2;
    }
    page = sysconf(_SC_PAGESIZE);
    sites_info = (mlk_heap_sites_info_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_SITES_INFO_SYMBOL);
    sites_snapshot = (mlk_heap_sites_snapshot_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_SITES_SNAPSHOT_SYMBOL);
    site_stack = (mlk_heap_site_stack_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_SITE_STACK_SYMBOL);
    site_mappings = (mlk_heap_site_mappings_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_SITE_MAPPINGS_SYMBOL);
    if (!sites_info || !sites_snapshot || !site_stack || !site_mappings) {
        fprintf(stderr, "FAIL: the shim exports no allocation sites\n");
        return 1;
    }
    mode = info().mode;
    HT_CHECK(mode == expected_mode(), "mode %d running, %d asked for (%s)", mode, expected_mode(),
             getenv(MLK_HEAP_SITES_ENV) ? getenv(MLK_HEAP_SITES_ENV) : "unset");
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    HT_CHECK(h != NULL, "dlopen %s: %s", argv[1], dlerror());
    if (!h)
        return heap_test_finish("test_heap_sites");
    resolve_plugin(h);
    char file[] = "/tmp/mlk-sites-XXXXXX";
    int fd = mkstemp(file);
    char buf[4096] = {1};
    for (int i = 0; fd >= 0 && i < 3; i++)
        HT_CHECK(write(fd, buf, i < 2 ? sizeof buf : 100) > 0, "write");
    if (fd >= 0)
        close(fd);
    snap = calloc(N_ITERS, sizeof *snap);
    HT_CHECK(snap && fd >= 0, "set-up");
    if (snap && fd >= 0) {
        test_mappings(file);
        if (argc > 2 && !strcmp(argv[2], "overflow")) {
            if (mode)
                test_overflow(file);
        } else if (mode) {
            test_growth(file);
            test_window();
            test_threads();
            h = test_reload(h, argv[1]);
        }
    }
    free(snap);
    unlink(file);
    if (h)
        dlclose(h);
    return heap_test_finish("test_heap_sites");
}
