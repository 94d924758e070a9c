/* test_onnx_model_check.c: the ModelProto wire-level check: every ONNX model Debian's libonnx-testdata ships passes;
 * every truncation of a model, a TensorProto given as a model, a model without a graph and fields of the wrong wire
 * type fail with a message naming field and byte. Fixtures: our writer and the testdata's own files. */
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "onnx/dtype.h"
#include "onnx/file.h"
#include "onnx/model_check.h"
#include "onnx/pb.h"
#include "onnx_check.h"

static onnx_error err;

/* A small model: a graph with one node (an attribute holding a tensor), an initializer, typed inputs and outputs. */
static void model(onnx_pbw *w, bool with_graph)
{
    onnx_pbw_init(w, NULL);
    onnx_pbw_i64(w, 1, 8);
    onnx_pbw_str(w, 2, "handmade");
    if (with_graph) {
        size_t g = onnx_pbw_begin(w, 7);
        size_t n = onnx_pbw_begin(w, 1);
        onnx_pbw_str(w, 1, "x");
        onnx_pbw_str(w, 2, "y");
        onnx_pbw_str(w, 4, "Add");
        size_t a = onnx_pbw_begin(w, 5);
        onnx_pbw_str(w, 1, "value");
        size_t t = onnx_pbw_begin(w, 5);
        onnx_pbw_packed_i64(w, 1, (const int64_t[]){2, 2}, 2);
        onnx_pbw_i64(w, 2, ONNX_DT_FLOAT);
        onnx_pbw_packed_f32(w, 4, (const float[]){1, 2, 3, 4}, 4);
        onnx_pbw_end(w, t);
        onnx_pbw_packed_i64(w, 8, (const int64_t[]){1, -1}, 2);
        onnx_pbw_end(w, a);
        onnx_pbw_end(w, n);
        size_t vi = onnx_pbw_begin(w, 11);
        onnx_pbw_str(w, 1, "x");
        size_t ty = onnx_pbw_begin(w, 2), tt = onnx_pbw_begin(w, 1);
        onnx_pbw_i64(w, 1, ONNX_DT_FLOAT);
        size_t sh = onnx_pbw_begin(w, 2), d = onnx_pbw_begin(w, 1);
        onnx_pbw_str(w, 2, "batch");
        onnx_pbw_end(w, d);
        onnx_pbw_end(w, sh);
        onnx_pbw_end(w, tt);
        onnx_pbw_end(w, ty);
        onnx_pbw_end(w, vi);
        onnx_pbw_f64(w, 1000, 2.0); /* a field ONNX does not define: stepped over */
        onnx_pbw_end(w, g);
    }
    size_t op = onnx_pbw_begin(w, 8);
    onnx_pbw_i64(w, 2, 17);
    onnx_pbw_end(w, op);
}

static void test_handmade(void)
{
    onnx_pbw w;
    model(&w, true);
    CHECK(w.status == 0);
    CHECK_OK(onnx_model_check(w.buf, w.len, &err), &err);
    /* Every cut short of the whole fails, naming a place; none reads past the cut (ASan would say). */
    size_t ok = 0;
    for (size_t n = 0; n < w.len; n++) {
        memset(&err, 0, sizeof err);
        int rc = onnx_model_check(w.buf, n, &err);
        ok += rc == 0;
        CHECK(rc == 0 || (rc == ONNX_E_PARSE && err.msg[0]));
    }
    CHECK(ok == 0 || ok < w.len / 4); /* a cut at a field boundary after the graph may still be a model */
    onnx_pbw_free(&w);

    model(&w, false);
    CHECK(onnx_model_check(w.buf, w.len, &err) == ONNX_E_PARSE && strstr(err.msg, "no graph"));
    onnx_pbw_free(&w);

    /* A TensorProto given as a model: data_type (2) is a varint where ModelProto has producer_name, a string. */
    onnx_pbw_init(&w, NULL);
    onnx_pbw_packed_i64(&w, 1, (const int64_t[]){3}, 1);
    onnx_pbw_i64(&w, 2, ONNX_DT_FLOAT);
    onnx_pbw_packed_f32(&w, 4, (const float[]){1, 2, 3}, 3);
    CHECK(onnx_model_check(w.buf, w.len, &err) == ONNX_E_PARSE && strstr(err.msg, "wire type"));
    onnx_pbw_free(&w);

    /* op_type as a varint, deep in the graph: named by its path. */
    onnx_pbw_init(&w, NULL);
    size_t g = onnx_pbw_begin(&w, 7);
    size_t n0 = onnx_pbw_begin(&w, 1);
    onnx_pbw_str(&w, 4, "Relu");
    onnx_pbw_end(&w, n0);
    size_t n1 = onnx_pbw_begin(&w, 1);
    onnx_pbw_u64(&w, 4, 7);
    onnx_pbw_end(&w, n1);
    onnx_pbw_end(&w, g);
    CHECK(onnx_model_check(w.buf, w.len, &err) == ONNX_E_PARSE && strstr(err.msg, "graph.node[1].op_type @ byte"));
    onnx_pbw_free(&w);
    CHECK(onnx_model_check(NULL, 3, &err) == ONNX_E_INVALID);
}

/* Every model.onnx one level under dir/CASE/; returns how many passed, counting failures in *bad. */
static int check_tree(const char *dir, int *bad)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
        void *buf;
        size_t len;
        if (onnx_file_map(path, &buf, &len, NULL))
            continue;
        memset(&err, 0, sizeof err);
        if (onnx_model_check(buf, len, &err) == 0)
            n++;
        else if ((*bad)++ < 5)
            fprintf(stderr, "  %s: %s\n", path, err.msg);
        if (buf)
            munmap(buf, len);
    }
    if (d)
        closedir(d);
    return n;
}

static void test_real_models(void)
{
    static const char *const trees[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    int n = 0, bad = 0;
    for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "/usr/share/libonnx-testdata/data/%s", trees[i]);
        n += check_tree(dir, &bad);
    }
    if (n + bad == 0) {
        printf("SKIP: the real-model part needs Debian's libonnx-testdata\n");
        return;
    }
    printf("%d real models pass, %d refused\n", n, bad);
    CHECK(bad == 0);
    CHECK(n > 1000);
}

int main(void)
{
    test_handmade();
    test_real_models();
    return check_summary();
}
