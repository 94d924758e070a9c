/* test_opencv_options.c: the OpenCV plugin's option parser and ONNX graph reader, without OpenCV: options and their
 * errors, symbolic dims bound by dim.NAME, inputs that are initializers left out, external data found, malformed
 * bytes refused with a field path. It must never leave files behind: everything lives in one mkdtemp folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx/file.h"
#include "onnx/pb.h"
#include "opencv_internal.h"
#include "refengine.h"
#define MLK_CHECK_ERROR engine_error
#include "mlk_check.h"

static int parse1(const char *k, const char *v, ocv_opts *o, engine_error *err)
{
    engine_kv kv = {k, v};
    memset(err, 0, sizeof *err);
    return ocv_opts_parse(&kv, 1, o, err);
}

static void test_options(void)
{
    ocv_opts o;
    engine_error err = {0};
    CHECK(ocv_opts_parse(NULL, 0, &o, &err) == 0);
    CHECK(o.threads == 1 && o.fusion == 1 && o.mmap == 1 && o.blob_reuse == -1 && o.n_dims == 0);
    engine_kv kv[] = {{"threads", "0"}, {"fusion", "off"}, {"mmap", "false"}, {"blob_reuse", "off"},
                      {"dim.batch", "4"}, {"dim.seq", "7"}, {"dim.batch", "5"}};
    CHECK(ocv_opts_parse(kv, sizeof kv / sizeof kv[0], &o, &err) == 0);
    CHECK(o.threads == 0 && o.fusion == 0 && o.mmap == 0 && o.blob_reuse == 0);
    CHECK(o.n_dims == 2 && ocv_opts_dim(&o, "batch") == 5 && ocv_opts_dim(&o, "seq") == 7 && !ocv_opts_dim(&o, "x"));
    CHECK(parse1("blob_reuse", "on", &o, &err) == 0 && o.blob_reuse == 1);
    CHECK(parse1("threads", "256", &o, &err) == 0 && o.threads == 256);

    CHECK(parse1("arena", "off", &o, &err) == OCV_E_NOTFOUND);
    CHECK_STR(err.msg, "unknown option 'arena'; accepted: threads, fusion, mmap, blob_reuse, dim.NAME");
    CHECK(parse1("fusion", "maybe", &o, &err) == OCV_E_INVALID);
    CHECK_STR(err.msg, "option fusion: 'maybe' is not on|off");
    CHECK(parse1("threads", "257", &o, &err) == OCV_E_INVALID);
    CHECK_STR(err.msg, "option threads: '257' is not an integer in [0, 256]");
    CHECK(parse1("threads", "2x", &o, &err) == OCV_E_INVALID && parse1("threads", "", &o, &err) == OCV_E_INVALID);
    CHECK(parse1("dim.seq", "0", &o, &err) == OCV_E_INVALID && strstr(err.msg, "option dim.seq: '0'"));
    CHECK(parse1("dim.", "3", &o, &err) == OCV_E_INVALID && strstr(err.msg, "the name must be 1 to 63"));
    engine_kv none = {"threads", NULL};
    CHECK(ocv_opts_parse(&none, 1, &o, &err) == OCV_E_INVALID && strstr(err.msg, "key and value are required"));
    CHECK(ocv_fail(NULL, OCV_E_NOMEM, "x") == OCV_E_NOMEM);
    CHECK(ocv_fail(&err, OCV_E_NOMEM, "out of %s", "memory") == OCV_E_NOMEM && err.oom == 1);
    CHECK(ocv_dtype_size(1) == 4 && ocv_dtype_size(7) == 8 && ocv_dtype_size(8) == 0);
}

/* Read path whole and walk its graph. */
static int read_graph_file(const char *path, ocv_graph *g, engine_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    onnx_error oe = {0};
    if (onnx_file_read(path, NULL, &buf, &len, &oe))
        return ocv_fail(err, OCV_E_IO, "%s", oe.msg);
    int rc = ocv_graph_read(buf, len, g, err);
    free(buf);
    return rc;
}

static int gen(const char *arch, const char *path, int dynamic, int external)
{
    ref_gen_options o;
    ref_gen_options_init(&o);
    o.arch = arch;
    o.dynamic = dynamic;
    o.external_data = external;
    o.mlp_hidden = 16;
    o.image_size = 32;
    o.layers = 1, o.hidden = 16, o.heads = 2, o.seq = 8;
    ref_error re = {0};
    return ref_gen_model(&o, path, &re);
}

static void test_generated(const char *dir)
{
    char path[512];
    ocv_graph g;
    engine_error err = {0};
    ocv_opts o;
    ocv_opts_parse(NULL, 0, &o, &err);

    snprintf(path, sizeof path, "%s/mlp.onnx", dir);
    CHECK(gen("mlp", path, 0, 0) == 0);
    CHECK_OK(read_graph_file(path, &g, &err), &err);
    CHECK(g.n_in == 1 && g.n_out == 1 && g.n_ext == 0 && g.ext0 == NULL);
    CHECK(g.n_in == 1 && !strcmp(g.in[0].name, "input") && g.in[0].dtype == 1 && g.in[0].rank == 2);
    CHECK(g.n_in == 1 && g.in[0].dims[0] == 1 && g.in[0].dims[1] == 784);
    CHECK(g.n_out == 1 && !strcmp(g.out[0].name, "output") && g.out[0].dtype == 1);
    ocv_graph_free(&g);
    ocv_graph_free(&g); /* empty: nothing twice */

    /* Symbolic dims: named, bound to dim.NAME or 1. */
    snprintf(path, sizeof path, "%s/tr.onnx", dir);
    CHECK(gen("transformer", path, 1, 0) == 0);
    CHECK_OK(read_graph_file(path, &g, &err), &err);
    CHECK(g.n_in >= 1 && g.in[0].rank == 3 && g.in[0].dims[0] == -1 && g.in[0].sym[0] && !strcmp(g.in[0].sym[0], "batch"));
    CHECK(g.n_in >= 1 && g.in[0].dims[1] == -1 && g.in[0].sym[1] && !strcmp(g.in[0].sym[1], "seq"));
    engine_tensor_info t;
    CHECK(g.n_in >= 1 && ocv_value_shape(&g.in[0], &o, &t, &err) == 0 && t.dims[0] == 1 && t.dims[1] == 1);
    engine_kv kv[] = {{"dim.batch", "3"}, {"dim.seq", "8"}};
    CHECK(ocv_opts_parse(kv, 2, &o, &err) == 0);
    CHECK(g.n_in >= 1 && ocv_value_shape(&g.in[0], &o, &t, &err) == 0 && t.dims[0] == 3 && t.dims[1] == 8);
    CHECK(g.n_in >= 1 && t.name == g.in[0].name && t.dtype == 1 && t.dims[2] == 16);
    ocv_graph_free(&g);

    /* External data: found and named. */
    snprintf(path, sizeof path, "%s/r18.onnx", dir);
    CHECK(gen("resnet18", path, 0, 1) == 0);
    CHECK_OK(read_graph_file(path, &g, &err), &err);
    CHECK(g.n_ext == 1 && g.ext0 && !strcmp(g.ext0, "r18.onnx.data") && g.n_in == 1);
    ocv_graph_free(&g);
    snprintf(path, sizeof path, "%s/r18.onnx.data", dir);
    unlink(path);
}

/* A graph that lists its weight W among the inputs (older IR), an input without a shape, and one that is no tensor. */
static size_t craft(onnx_pbw *w)
{
    size_t graph = onnx_pbw_begin(w, 7);
    size_t init = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 8, "W");
    onnx_pbw_end(w, init);
    const char *names[] = {"x", "W", "noshape", "seq"};
    for (int i = 0; i < 4; i++) {
        size_t vi = onnx_pbw_begin(w, 11);
        onnx_pbw_str(w, 1, names[i]);
        if (i < 3) {
            size_t ty = onnx_pbw_begin(w, 2), tt = onnx_pbw_begin(w, 1);
            onnx_pbw_u64(w, 1, 1);
            if (i < 2) {
                size_t sh = onnx_pbw_begin(w, 2), d = onnx_pbw_begin(w, 1);
                onnx_pbw_u64(w, 1, 2);
                onnx_pbw_end(w, d);
                d = onnx_pbw_begin(w, 1);
                onnx_pbw_str(w, 2, "n");
                onnx_pbw_end(w, d);
                onnx_pbw_end(w, sh);
            }
            onnx_pbw_end(w, tt);
            onnx_pbw_end(w, ty);
        }
        onnx_pbw_end(w, vi);
    }
    onnx_pbw_end(w, graph);
    return w->len;
}

static void test_crafted(void)
{
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    size_t len = craft(&w);
    CHECK(w.status == 0);
    ocv_graph g;
    engine_error err = {0};
    ocv_opts o;
    ocv_opts_parse(NULL, 0, &o, &err);
    CHECK_OK(ocv_graph_read(w.buf, len, &g, &err), &err);
    CHECK(g.n_in == 3 && g.n_out == 0);
    CHECK(g.n_in == 3 && !strcmp(g.in[0].name, "x") && !strcmp(g.in[1].name, "noshape") && !strcmp(g.in[2].name, "seq"));
    CHECK(g.n_in == 3 && g.in[0].rank == 2 && g.in[0].dims[0] == 2 && g.in[0].dims[1] == -1);
    engine_tensor_info t;
    CHECK(g.n_in == 3 && ocv_value_shape(&g.in[0], &o, &t, &err) == 0 && t.dims[1] == 1);
    CHECK(g.n_in == 3 && ocv_value_shape(&g.in[1], &o, &t, &err) == OCV_E_UNSUPPORTED);
    CHECK_STR(err.msg, "'noshape' has no shape in the model; OpenCV needs one");
    CHECK(g.n_in == 3 && ocv_value_shape(&g.in[2], &o, &t, &err) == OCV_E_UNSUPPORTED);
    CHECK_STR(err.msg, "'seq' is not a tensor with an element type in the model");
    ocv_graph_free(&g);

    /* Cut short: a parse error naming the field, and *g untouched. */
    memset(&g, 0x5a, sizeof g);
    CHECK(ocv_graph_read(w.buf, len - 3, &g, &err) == OCV_E_PARSE);
    CHECK(strstr(err.msg, "graph") != NULL && strstr(err.msg, "@ byte") != NULL);
    CHECK(g.n_in == 0x5a5a5a5a5a5a5a5aULL);
    onnx_pbw_free(&w);
}

int main(void)
{
    char dir[] = "/tmp/mlk-ocv.XXXXXX";
    if (!mkdtemp(dir))
        CHECK_SKIP("mkdtemp failed");
    test_options();
    test_generated(dir);
    test_crafted();
    char path[512];
    const char *files[] = {"mlp.onnx", "tr.onnx", "r18.onnx"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    return check_summary();
}
