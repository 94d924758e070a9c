/* engine_species.c: a test engine plugin that wraps a real one (engine_ref.so, engine_ort.so or engine_openvino.so, option
 * `inner`) and adds one memory behaviour of a chosen species on every infer (or read_model): leaks inside and outside
 * malloc, and bounded behaviours that are not leaks. It must never be used to measure anything but the harness's own verdicts. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine.h"
#include "plugin.h"
#include "species.h"

/* Each species: X(ENUM, "name", leaks?, default bytes). */
#define SPECIES_LIST(X)                                                                                          \
    X(NONE, "none", 0, 0)                 /* the inner engine alone */                                         \
    X(MMAP_ANON, "mmap_anon", 1, 16384)   /* anonymous mapping, touched, never unmapped */                     \
    X(MAP_FILE, "map_file", 1, 0)         /* the model file mapped again on every read_model, never unmapped */ \
    X(TINY, "tiny", 1, 40)                /* a small malloc block lost */                                      \
    X(REACHABLE, "reachable", 1, 24)      /* bytes appended to a global buffer: still reachable */             \
    X(FD, "fd", 1, 0)                     /* a file descriptor opened and never closed */                      \
    X(PERIODIC, "periodic", 1, 4096)      /* a block lost every `every` infers */                              \
    X(LATE, "late", 1, 256)               /* a block lost per infer once `after` infers have run */            \
    X(THREAD, "thread", 1, 128)           /* a helper thread allocates and loses a block per infer */          \
    X(CXX_NEW, "cxx_new", 1, 64)          /* operator new, never deleted */                                    \
    X(THREAD_STUCK, "thread_stuck", 1, 0) /* a thread started per infer that never ends */                     \
    X(BOUNDED_CACHE, "bounded_cache", 0, 8192) /* an LRU of 32 blocks: grows, then stays */                    \
    X(CHURN, "churn", 0, 0)               /* blocks of varied sizes allocated and freed: fragmentation only */ \
    X(RETENTION, "retention", 0, 262144)  /* large blocks allocated, touched and freed: allocator retention */  \
    X(FD_POOL, "fd_pool", 0, 0)           /* up to 8 descriptors kept open, older ones closed */               \
    X(MMAP_POOL, "mmap_pool", 0, 65536)   /* up to 8 mappings kept, older ones unmapped */                     \
    X(SCRATCH, "scratch", 0, 512 << 20)   /* a scratch buffer malloc'd and freed untouched: requested, not resident */ \
    X(SCRATCH_MAP, "scratch_map", 0, 512 << 20) /* the same through mmap and munmap */                 \
    X(SHAPE_CACHE, "shape_cache", 0, 65536) /* a block kept per distinct input shape: bounded by the shapes */ \
    X(SHAPE_CHANGE, "shape_change", 1, 16384) /* a block lost on every infer whose input shape changed */ \
    X(CHURN_POOL, "churn_pool", 0, 0)     /* 512 blocks of 1 B-64 KiB, 64 replaced per infer: bounded, fragmenting */ \
    X(PATHS, "paths", 0, 262144)          /* 64 blocks allocated and freed per infer, each from a new call stack */ \
    X(PATHS_PAGE, "paths_page", 1, 262144) /* the same, and a page from the kernel touched and lost per infer */

enum {
#define X_(e, n, leaks, bytes) SP_##e,
    SPECIES_LIST(X_)
#undef X_
    SP_COUNT
};
static const char *const sp_names[] = {
#define X_(e, n, leaks, bytes) n,
    SPECIES_LIST(X_)
#undef X_
};
static const int64_t sp_bytes[] = {
#define X_(e, n, leaks, bytes) bytes,
    SPECIES_LIST(X_)
#undef X_
};

#define POOL 32

struct engine_ctx {
    mlk_plugin inner;
    engine_ctx *ctx;
    int species;
    int64_t bytes, every, after, n_infer;
    char model[PATH_MAX];
    void *pool[POOL];    /* bounded_cache, mmap_pool */
    int fds[8];
    int next;
    uint64_t in_hash[32]; /* per input: a hash of the shape set_input last gave */
    uint64_t last_shape;  /* shape_change: the shapes of the last infer */
    uint64_t *seen;       /* shape_cache: the distinct shapes met, each with its block in kept */
    void **kept;
    size_t n_seen, cap_seen;
    pthread_t helper;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pokes, helper_on, stop;
};

/* The still-reachable growth: a global, as an engine's own registry would be. */
static char *reach;
static size_t reach_len;

static int fail(engine_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(engine_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = -1;
    return -1;
}

static int find_species(const char *v)
{
    for (int i = 0; i < SP_COUNT; i++)
        if (!strcmp(v, sp_names[i]))
            return i;
    return -1;
}

static bool ours(const char *k)
{
    return !strcmp(k, "inner") || !strcmp(k, "species") || !strcmp(k, "species_bytes") ||
           !strcmp(k, "species_every") || !strcmp(k, "species_after");
}

static const char *option_keys(void)
{
    return "inner, species, species_bytes, species_every, species_after, and the inner engine's options";
}

static int check_options(const engine_kv *opts, size_t n, engine_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(opts[i].key, "species") && find_species(opts[i].value) < 0)
            return fail(err, "species: unknown species '%s'", opts[i].value);
        if (!strcmp(opts[i].key, "inner") && strcmp(opts[i].value, "ref") && strcmp(opts[i].value, "ort") &&
            strcmp(opts[i].value, "openvino"))
            return fail(err, "inner: expected ref, ort or openvino, got '%s'", opts[i].value);
    }
    return 0;
}

/* engine_<inner>.so beside this plugin. */
static int inner_path(const char *inner, char *out, size_t len)
{
    char self[PATH_MAX];
    if (!species_self_dir(self, sizeof self))
        return -1;
    snprintf(out, len, "%s/engine_%s.so", self, inner);
    return 0;
}

static void *helper_main(void *arg)
{
    engine_ctx *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->pokes && !c->stop)
            pthread_cond_wait(&c->cv, &c->mu);
        if (c->stop)
            break;
        c->pokes--;
        species_lose(malloc((size_t)c->bytes), (size_t)c->bytes);
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static void *stuck_main(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int load(const engine_kv *opts, size_t n, engine_ctx **out, engine_error *err)
{
    engine_ctx *c = calloc(1, sizeof *c);
    engine_kv *rest = calloc(n ? n : 1, sizeof *rest);
    if (!c || !rest) {
        free(c);
        free(rest);
        err->oom = 1;
        return fail(err, "load_engine: %s", "out of memory");
    }
    const char *inner = "ref";
    size_t k = 0;
    c->every = 10;
    c->after = 40;
    c->bytes = -1;
    for (size_t i = 0; i < n; i++) {
        if (!ours(opts[i].key))
            rest[k++] = opts[i];
        else if (!strcmp(opts[i].key, "inner"))
            inner = opts[i].value;
        else if (!strcmp(opts[i].key, "species"))
            c->species = find_species(opts[i].value);
        else if (!strcmp(opts[i].key, "species_bytes"))
            c->bytes = strtoll(opts[i].value, NULL, 10);
        else if (!strcmp(opts[i].key, "species_every"))
            c->every = strtoll(opts[i].value, NULL, 10);
        else
            c->after = strtoll(opts[i].value, NULL, 10);
    }
    /* Without the option, $MLK_SPECIES: two runs of one config (its key holds no species) can then differ in one
     * behaviour only, for compare and history tests. */
    bool given = false;
    for (size_t i = 0; i < n; i++)
        given |= !strcmp(opts[i].key, "species");
    if (!given && getenv("MLK_SPECIES"))
        c->species = find_species(getenv("MLK_SPECIES"));
    if (c->bytes < 0)
        c->bytes = sp_bytes[c->species < 0 ? 0 : c->species];
    for (int i = 0; i < 8; i++)
        c->fds[i] = -1;
    char path[PATH_MAX + 32];
    mlk_error me = {0};
    int rc = inner_path(inner, path, sizeof path);
    if (rc || mlk_plugin_init(&c->inner, path, &me)) {
        free(rest);
        free(c);
        return fail(err, "load_engine: inner engine: %.400s", rc ? "cannot find this plugin's folder" : me.msg);
    }
    rc = c->inner.api.load(rest, k, &c->ctx, err);
    free(rest);
    if (rc) {
        mlk_plugin_deinit(&c->inner);
        free(c);
        return rc;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (c->species == SP_THREAD)
        c->helper_on = pthread_create(&c->helper, NULL, helper_main, c) == 0;
    if (c->species == SP_THREAD_STUCK)
        species_pin(); /* its threads outlive unload_engine: their code must stay mapped */
    *out = c;
    return 0;
}

static void unload(engine_ctx *c)
{
    if (!c)
        return;
    if (c->helper_on) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->helper, NULL);
    }
    for (int i = 0; i < POOL; i++) {
        if (c->species == SP_MMAP_POOL && c->pool[i])
            munmap(c->pool[i], (size_t)c->bytes);
        else
            free(c->pool[i]);
    }
    for (int i = 0; i < 8; i++)
        if (c->fds[i] >= 0)
            close(c->fds[i]);
    for (size_t i = 0; i < c->n_seen; i++)
        free(c->kept[i]);
    free(c->kept);
    free(c->seen);
    c->inner.api.unload(c->ctx);
    mlk_plugin_deinit(&c->inner);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* The wrapped objects carry their engine, so every call reaches the inner plugin's table. */
struct engine_model {
    engine_ctx *c;
    engine_model *m;
};
struct engine_compiled {
    engine_ctx *c;
    engine_compiled *x;
};
struct engine_request {
    engine_ctx *c;
    engine_request *r;
};

static int read_model(engine_ctx *c, const char *path, engine_model **out, engine_error *err)
{
    engine_model *w = calloc(1, sizeof *w);
    if (!w)
        return fail(err, "read_model: %s", "out of memory");
    w->c = c;
    int rc = c->inner.api.read_model(c->ctx, path, &w->m, err);
    if (rc) {
        free(w);
        return rc;
    }
    if (c->species == SP_MAP_FILE)
        species_map_file(path);
    *out = w;
    return 0;
}

static void release_model(engine_model *w)
{
    if (w)
        w->c->inner.api.release_model(w->m);
    free(w);
}

static int compile(engine_ctx *c, engine_model *m, engine_compiled **out, engine_error *err)
{
    engine_compiled *w = calloc(1, sizeof *w);
    if (!w)
        return fail(err, "compile: %s", "out of memory");
    w->c = c;
    int rc = c->inner.api.compile(c->ctx, m->m, &w->x, err);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

static void release_compiled(engine_compiled *w)
{
    if (w)
        w->c->inner.api.release_compiled(w->x);
    free(w);
}

static size_t n_inputs(engine_compiled *w) { return w->c->inner.api.n_inputs(w->x); }
static int input_info(engine_compiled *w, size_t i, engine_tensor_info *o) { return w->c->inner.api.input_info(w->x, i, o); }

static int create_request(engine_compiled *x, engine_request **out, engine_error *err)
{
    engine_request *w = calloc(1, sizeof *w);
    if (!w)
        return fail(err, "create_request: %s", "out of memory");
    w->c = x->c;
    int rc = x->c->inner.api.create_request(x->x, &w->r, err);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

static int set_input(engine_request *w, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err)
{
    if (i < sizeof w->c->in_hash / sizeof w->c->in_hash[0]) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (int k = 0; k < info->rank && k < ENGINE_MAX_RANK; k++)
            h = (h ^ (uint64_t)info->dims[k]) * 0x100000001b3ULL;
        w->c->in_hash[i] = h;
    }
    return w->c->inner.api.set_input(w->r, i, info, data, nbytes, err);
}

static const char *input_dim_param(engine_compiled *w, size_t i, int axis)
{
    return w->c->inner.api.input_dim_param ? w->c->inner.api.input_dim_param(w->x, i, axis) : NULL;
}

/* The shapes of every input now, as one number. */
static uint64_t shapes_now(const engine_ctx *c)
{
    uint64_t h = 0;
    for (size_t i = 0; i < sizeof c->in_hash / sizeof c->in_hash[0]; i++)
        h = h * 31 + c->in_hash[i];
    return h;
}

/* shape_cache: one touched block per distinct shape, found again on a shape met before. */
static void shape_cache(engine_ctx *c, size_t b)
{
    uint64_t h = shapes_now(c);
    for (size_t i = 0; i < c->n_seen; i++)
        if (c->seen[i] == h)
            return;
    if (c->n_seen == c->cap_seen) {
        size_t cap = c->cap_seen ? 2 * c->cap_seen : 16;
        uint64_t *s = realloc(c->seen, sizeof *s * cap);
        if (s)
            c->seen = s;
        void **k = s ? realloc(c->kept, sizeof *k * cap) : NULL;
        if (!k)
            return;
        c->kept = k;
        c->cap_seen = cap;
    }
    void *p = malloc(b);
    if (!p)
        return;
    memset(p, 6, b);
    c->seen[c->n_seen] = h;
    c->kept[c->n_seen++] = p;
}

static void release_request(engine_request *w)
{
    if (w)
        w->c->inner.api.release_request(w->r);
    free(w);
}

/* The species' act after a successful infer. */
static void act(engine_ctx *c)
{
    int64_t k = c->n_infer++;
    size_t b = (size_t)c->bytes;
    switch (c->species) {
    case SP_MMAP_ANON: {
        char *p = mmap(NULL, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED)
            memset(p, 1, b);
        break;
    }
    case SP_TINY: species_lose(malloc(b), b); break;
    case SP_REACHABLE: {
        char *q = realloc(reach, reach_len + b);
        if (q) {
            memset(q + reach_len, 2, b);
            reach = q;
            reach_len += b;
        }
        break;
    }
    case SP_FD: (void)open("/dev/null", O_RDONLY); break;
    case SP_PERIODIC:
        if (c->every > 0 && k % c->every == c->every - 1)
            species_lose(malloc(b), b);
        break;
    case SP_LATE:
        if (k >= c->after)
            species_lose(malloc(b), b);
        break;
    case SP_THREAD:
        pthread_mutex_lock(&c->mu);
        c->pokes++;
        pthread_cond_broadcast(&c->cv);
        while (c->pokes)
            pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        break;
    case SP_CXX_NEW: species_cxx_lose(b); break;
    case SP_THREAD_STUCK: {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 65536);
        if (pthread_create(&t, &a, stuck_main, NULL) == 0)
            pthread_detach(t);
        pthread_attr_destroy(&a);
        break;
    }
    case SP_BOUNDED_CACHE: {
        int slot = c->next++ % POOL;
        free(c->pool[slot]);
        c->pool[slot] = malloc(b);
        if (c->pool[slot])
            memset(c->pool[slot], 3, b);
        break;
    }
    case SP_CHURN: species_churn(k); break;
    case SP_CHURN_POOL: species_churn_pool(k); break;
    case SP_PATHS:
    case SP_PATHS_PAGE:
        /* 64 new stacks per infer: the heap shim records a sampled one's stack (p = 0.39 for 256 KiB at the default
         * 512 KiB interval) in a site record of its own, its table grows, and nothing of the engine's does */
        species_paths((uint64_t)k * 64, 64, b);
        if (c->species == SP_PATHS_PAGE)
            species_lose_page();
        break;
    case SP_SHAPE_CACHE: shape_cache(c, b); break;
    case SP_SHAPE_CHANGE: {
        uint64_t h = shapes_now(c);
        if (k > 0 && h != c->last_shape)
            species_lose(malloc(b), b);
        c->last_shape = h;
        break;
    }
    case SP_SCRATCH: {
        /* sized, never touched: neither VmRSS nor VmHWM move; only the memory requested within the step does */
        void *p = malloc(b);
        species_keep_untouched(p);
        free(p);
        break;
    }
    case SP_SCRATCH_MAP: {
        void *p = mmap(NULL, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED)
            munmap(p, b);
        break;
    }
    case SP_RETENTION: {
        void *blocks[8];
        for (int i = 0; i < 8; i++) {
            blocks[i] = malloc(b + (size_t)i * 4096);
            if (blocks[i])
                memset(blocks[i], 4, b);
        }
        for (int i = 0; i < 8; i++)
            free(blocks[i]);
        break;
    }
    case SP_FD_POOL: {
        int slot = c->next++ % 8;
        if (c->fds[slot] >= 0)
            close(c->fds[slot]);
        c->fds[slot] = open("/dev/null", O_RDONLY);
        break;
    }
    case SP_MMAP_POOL: {
        int slot = c->next++ % 8;
        if (c->pool[slot])
            munmap(c->pool[slot], b);
        void *p = mmap(NULL, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        c->pool[slot] = p == MAP_FAILED ? NULL : p;
        if (c->pool[slot])
            memset(c->pool[slot], 5, b);
        break;
    }
    default: break;
    }
}

static int infer(engine_request *w, engine_error *err)
{
    int rc = w->c->inner.api.infer(w->r, err);
    if (!rc)
        act(w->c);
    return rc;
}

static int metrics(engine_ctx *c, engine_metric *out, size_t max, size_t *n)
{
    if (!c->inner.api.metrics) {
        *n = 0;
        return 0;
    }
    return c->inner.api.metrics(c->ctx, out, max, n);
}

static size_t n_outputs(engine_compiled *w) { return w->c->inner.api.n_outputs ? w->c->inner.api.n_outputs(w->x) : 0; }

static int output(engine_request *w, size_t i, engine_tensor_info *info, const void **data, size_t *nbytes,
                  engine_error *err)
{
    if (!w->c->inner.api.output)
        return fail(err, "output: %s", "the inner engine cannot give outputs");
    return w->c->inner.api.output(w->r, i, info, data, nbytes, err);
}

static const engine_api api = {
    .abi_version = ENGINE_ABI_VERSION,
    .struct_size = sizeof(engine_api),
    .name = "species",
    .version = "1",
    .option_keys = option_keys,
    .check_options = check_options,
    .load = load,
    .unload = unload,
    .read_model = read_model,
    .release_model = release_model,
    .compile = compile,
    .release_compiled = release_compiled,
    .n_inputs = n_inputs,
    .input_info = input_info,
    .create_request = create_request,
    .set_input = set_input,
    .infer = infer,
    .release_request = release_request,
    .metrics = metrics,
    .n_outputs = n_outputs,
    .output = output,
    .input_dim_param = input_dim_param,
};

const engine_api *engine_get_api(void) { return &api; }
