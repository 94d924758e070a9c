/* test_shape_overflow.c: shapes that overflow 64 bits or exceed any memory are refused with a status, never sized
 * into a small buffer. The checked arithmetic itself; then every model of the bad-input corpus's shape-*.onnx
 * (tests/torture/shape_models.py) compiled in process, and run through `refengine run`, which must exit 2 naming
 * the node (or input) the file is named after. It must never leave engine bytes allocated. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "tensor.h"

static void test_checked_arithmetic(void)
{
    int64_t d = 7;
    CHECK(ref_dim_mul((int64_t)1 << 62, 2, &d) == false && d == 7); /* 2^63 does not fit; out untouched */
    CHECK(ref_dim_mul((int64_t)1 << 31, (int64_t)1 << 31, &d) && d == (int64_t)1 << 62);
    CHECK(!ref_dim_mul(-1, 4, &d));
    CHECK(!ref_dim_add(INT64_MAX, 1, &d) && ref_dim_add(INT64_MAX - 1, 1, &d) && d == INT64_MAX);
    size_t s = 0;
    CHECK(!ref_size_mul(SIZE_MAX / 2 + 1, 2, &s) && ref_size_add(1, 2, &s) && s == 3);
    bool ovf = false;
    CHECK(ref_i64_sub(INT64_MIN, 1, &ovf) == 0 && ovf);
    ovf = false;
    CHECK(ref_i64_mul(-3, 5, &ovf) == -15 && !ovf);
    CHECK(!ref_dim_from_double(1e30, &d) && !ref_dim_from_double(-1.0, &d) && !ref_dim_from_double(0.0 / 0.0, &d));
    CHECK(ref_dim_from_double(12.0, &d) && d == 12);

    /* (2^62 + 4) * 4 wraps to 16: the product saturates instead, and a byte count from it can never be allocated */
    int64_t wrap[2] = {((int64_t)1 << 62) + 4, 4};
    CHECK(ref_dims_prod(wrap, 0, 2) == INT64_MAX);
    ref_tensor t = {.dtype = REF_DT_FLOAT, .rank = 2, .dims = {wrap[0], wrap[1]}};
    CHECK(ref_tensor_nbytes(&t) == SIZE_MAX);
    int64_t zero_then_big[3] = {0, (int64_t)1 << 62, (int64_t)1 << 62};
    CHECK(ref_dims_prod(zero_then_big, 0, 3) == 0);
}

static void test_shape_check(void)
{
    ref_error err = {0};
    ref_tensor ok = {.dtype = REF_DT_FLOAT, .rank = 2, .dims = {1024, 1024}};
    CHECK_OK(ref_shape_check(&ok, 4u << 20, "t", &err), &err);
    CHECK(ref_shape_check(&ok, (4u << 20) - 1, "t", &err) == REF_E_RANGE && strstr(err.msg, "max_tensor_bytes"));
    ref_tensor wrap = {.dtype = REF_DT_FLOAT, .rank = 2, .dims = {((int64_t)1 << 62) + 4, 4}};
    CHECK(ref_shape_check(&wrap, SIZE_MAX, "output 0", &err) == REF_E_RANGE && strstr(err.msg, "overflows"));
    /* empty, but kernels would still walk 2^62 of its other positions */
    ref_tensor empty = {.dtype = REF_DT_UINT8, .rank = 2, .dims = {0, (int64_t)1 << 62}};
    CHECK(ref_shape_check(&empty, (size_t)1 << 40, "x", &err) == REF_E_RANGE && strstr(err.msg, "is empty"));
    ref_tensor neg = {.dtype = REF_DT_FLOAT, .rank = 1, .dims = {-4}};
    CHECK(ref_shape_check(&neg, SIZE_MAX, "x", &err) == REF_E_RANGE && strstr(err.msg, "negative"));
    ref_tensor rank = {.dtype = REF_DT_FLOAT, .rank = REF_MAX_RANK + 1};
    CHECK(ref_shape_check(&rank, SIZE_MAX, "x", &err) == REF_E_RANGE);
    CHECK(ref_default_max_tensor_bytes() > ((size_t)1 << 20));
}

/* The option bounds one tensor: a model that is fine under the default is refused under a small limit, naming the
 * node, and accepted again under a limit just large enough. */
static void test_option(const char *dir)
{
    char path[8192];
    snprintf(path, sizeof path, "%.4000s/shape-constantofshape-huge.onnx", dir);
    ref_options o;
    ref_options_init(&o);
    ref_error err = {0};
    CHECK(ref_options_set(&o, "max_tensor_bytes", "0", &err) == REF_E_INVALID);
    CHECK_OK(ref_options_set(&o, "max_tensor_bytes", "4G", &err), &err);
    CHECK(o.max_tensor_bytes == 4LL << 30);
    ref_model *m = NULL;
    CHECK_OK(ref_model_read(path, &o, &m, &err), &err);
    ref_compiled *c = NULL;
    CHECK(m && ref_compile(m, &o, &c, &err) == REF_E_RANGE && !c);
    CHECK(strstr(err.msg, "node 'shape-constantofshape-huge' (ConstantOfShape)") &&
          strstr(err.msg, "4294967296-byte limit"));
    ref_model_free(m);
}

/* Run refengine on path; *status gets its wait status, stderr (cut) goes to msg. */
static int run_cli(const char *bin, const char *path, int *status, char *msg, size_t len)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fds[1], 2);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        close(fds[0]);
        execl(bin, bin, "run", path, "--iterations", "1", "--warmup", "0", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t n;
    char sink[256];
    while ((n = read(fds[0], used + 1 < len ? msg + used : sink, used + 1 < len ? len - 1 - used : sizeof sink)) > 0)
        if (used + 1 < len)
            used += (size_t)n;
    msg[used] = 0;
    close(fds[0]);
    return waitpid(pid, status, 0) == pid ? 0 : -1;
}

/* One corpus model: the compile (or the first infer) fails with a status whose message names stem. */
static void check_model(const char *dir, const char *file, const char *bin)
{
    char path[8192], stem[256], quoted[300];
    snprintf(path, sizeof path, "%.4000s/%.1000s", dir, file);
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(file) - 5), file);
    snprintf(quoted, sizeof quoted, "'%s'", stem);
    ref_error err = {0};
    ref_model *m = NULL;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    int rc = ref_model_read(path, NULL, &m, &err);
    if (!rc)
        rc = ref_compile(m, NULL, &c, &err);
    if (!rc)
        rc = ref_request_new(c, &r, &err);
    if (!rc)
        rc = ref_infer(r, &err); /* inputs left unset: the plan's shapes are what is checked */
    if (rc == 0 || rc == REF_E_NOMEM || !strstr(err.msg, quoted))
        fprintf(stderr, "%s: status %d: %s\n", file, rc, err.msg);
    CHECK(rc != 0 && rc != REF_E_NOMEM && strstr(err.msg, quoted));
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
    if (!bin)
        return;
    int status = 0;
    char msg[2048];
    CHECK(run_cli(bin, path, &status, msg, sizeof msg) == 0);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 2 && strstr(msg, quoted);
    if (!ok)
        fprintf(stderr, "%s: refengine run: %s %d: %s\n", file, WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg);
    CHECK(ok);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_corpus(const char *dir, const char *bin)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    char *names[256];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (!strncmp(e->d_name, "shape-", 6) && len > 5 && !strcmp(e->d_name + len - 5, ".onnx"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    CHECK(n >= 20); /* the corpus holds a model per operator family; an empty folder must not pass */
    for (int i = 0; i < n; i++) {
        if (names[i])
            check_model(dir, names[i], bin);
        free(names[i]);
    }
    printf("%d shape models refused%s\n", n, bin ? " in process and by refengine run" : " in process");
}

int main(void)
{
    const char *src = getenv("MLK_SOURCE_DIR"), *bindir = getenv("MLK_BIN_DIR");
    if (!src)
        CHECK_SKIP("MLK_SOURCE_DIR is not set (ctest sets it)");
    char dir[4096], bin[4096];
    snprintf(dir, sizeof dir, "%s/tests/torture/corpus/onnx", src);
    snprintf(bin, sizeof bin, "%s/refengine", bindir ? bindir : "");
    bool have_bin = bindir && access(bin, X_OK) == 0;
    CHECK(have_bin); /* ctest builds refengine beside the tests */
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_checked_arithmetic();
    test_shape_check();
    test_option(dir);
    test_corpus(dir, have_bin ? bin : NULL);
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
