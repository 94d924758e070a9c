/* test_opencv_plugin.c: engine_opencv.so through engines/engine.h, on its error paths: a call out of order, a wrong
 * input, a model OpenCV cannot read (an error, never an exception or a crash), blob_reuse fixed once per process
 * across unload_engine and load_engine, several compiled models of one model alive at once, and load/unload cycles.
 * It must never leave files behind: everything lives in one mkdtemp folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "opencv_internal.h"
#include "plugin.h"
#include "refengine.h"
#define MLK_CHECK_ERROR engine_error
#include "mlk_check.h"

static const engine_api *a;

static int gen(const char *arch, const char *path, int external)
{
    ref_gen_options o;
    ref_gen_options_init(&o);
    o.arch = arch;
    o.mlp_hidden = 16;
    o.image_size = 32;
    o.external_data = external;
    o.width_mult = 0.35f;
    ref_error re = {0};
    return ref_gen_model(&o, path, &re);
}

static engine_ctx *load1(const char *k, const char *v, engine_error *err)
{
    engine_kv kv = {k, v};
    engine_ctx *c = NULL;
    memset(err, 0, sizeof *err);
    return a->load(&kv, k ? 1 : 0, &c, err) ? NULL : c;
}

/* Requests and outputs: out of order, wrong inputs, then a good run and its output. */
static void test_requests(const char *mlp)
{
    engine_error err = {0};
    engine_ctx *c = load1(NULL, NULL, &err);
    engine_model *m = NULL;
    engine_compiled *cc = NULL, *cc2 = NULL;
    engine_request *r = NULL;
    CHECK(c != NULL);
    if (!c)
        return;
    CHECK_OK(a->read_model(c, mlp, &m, &err), &err);
    CHECK_OK(a->compile(c, m, &cc, &err), &err);
    CHECK_OK(a->compile(c, m, &cc2, &err), &err); /* a second one at once: imported again */
    CHECK_OK(a->create_request(cc, &r, &err), &err);
    engine_tensor_info in;
    CHECK(a->n_inputs(cc) == 1 && a->input_info(cc, 0, &in) == 0 && !strcmp(in.name, "input"));
    CHECK(in.dtype == 1 && in.rank == 2 && in.dims[0] == 1 && in.dims[1] == 784);
    CHECK(a->input_info(cc, 1, &in) == OCV_E_INVALID);
    const void *data = NULL;
    size_t nbytes = 0;
    engine_tensor_info out;
    CHECK(a->output(r, 0, &out, &data, &nbytes, &err) == OCV_E_STATE && strstr(err.msg, "no infer has completed"));
    float x[784];
    for (int i = 0; i < 784; i++)
        x[i] = (float)(i % 7) / 7.0f;
    CHECK(a->set_input(r, 0, &in, x, sizeof x - 4, &err) == OCV_E_INVALID && strstr(err.msg, "3132 bytes given"));
    CHECK(a->set_input(r, 1, &in, x, sizeof x, &err) == OCV_E_INVALID && strstr(err.msg, "the model has 1 inputs"));
    engine_tensor_info wrong = in;
    wrong.dtype = 7;
    CHECK(a->set_input(r, 0, &wrong, x, sizeof x, &err) == OCV_E_INVALID && strstr(err.msg, "element type 7"));
    CHECK_OK(a->set_input(r, 0, &in, x, sizeof x, &err), &err);
    CHECK_OK(a->infer(r, &err), &err);
    CHECK_OK(a->output(r, 0, &out, &data, &nbytes, &err), &err);
    CHECK(out.rank == 2 && out.dims[0] == 1 && out.dims[1] == 10 && out.dtype == 1 && nbytes == 40 && data);
    CHECK(!strcmp(out.name, "output") && a->n_outputs(cc) == 1);
    float sum = 0; /* the MLP ends in a softmax */
    for (int i = 0; data && i < 10; i++)
        sum += ((const float *)data)[i];
    CHECK(sum > 0.999f && sum < 1.001f);
    CHECK(a->output(r, 1, &out, &data, &nbytes, &err) == OCV_E_INVALID);
    engine_metric mt[4];
    size_t n = 0;
    CHECK(a->metrics(c, mt, 4, &n) == 0 && n == 2 && !strcmp(mt[0].name, "opencv_weights_bytes") && mt[0].value > 0);
    CHECK(a->metrics(c, mt, 1, &n) == 0 && n == 1);
    a->release_request(r);
    a->release_compiled(cc2); /* the newest: metrics has none until another compile */
    CHECK(a->metrics(c, mt, 4, &n) == 0 && n == 0);
    a->release_compiled(cc);
    a->release_model(m);
    a->unload(c);
    a->release_request(NULL);
    a->release_compiled(NULL);
    a->release_model(NULL);
    a->unload(NULL);
}

/* Models OpenCV cannot read fail at read_model with OpenCV's reason; a missing file names itself. */
static void test_unreadable(const char *dir)
{
    char path[512];
    engine_error err = {0};
    engine_ctx *c = load1("mmap", "off", &err);
    engine_model *m = NULL;
    CHECK(c != NULL);
    if (!c)
        return;
    snprintf(path, sizeof path, "%s/mbv2.onnx", dir);
    CHECK(gen("mobilenetv2", path, 0) == 0);
    CHECK(a->read_model(c, path, &m, &err) == OCV_E_OPENCV && m == NULL);
    CHECK(strstr(err.msg, "read_model: OpenCV ") && strstr(err.msg, "Clip"));
    snprintf(path, sizeof path, "%s/r18x.onnx", dir);
    CHECK(gen("resnet18", path, 1) == 0);
    CHECK(a->read_model(c, path, &m, &err) == OCV_E_UNSUPPORTED && strstr(err.msg, "'r18x.onnx.data'"));
    CHECK(a->read_model(c, "/nonexistent/m.onnx", &m, &err) == OCV_E_NOTFOUND && strstr(err.msg, "/nonexistent"));
    snprintf(path, sizeof path, "%s/junk.onnx", dir);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs("\x0a\xff\xff\xff", f); /* a length past the end */
        fclose(f);
    }
    CHECK(a->read_model(c, path, &m, &err) == OCV_E_PARSE && strstr(err.msg, "junk.onnx is not a model"));
    a->unload(c);
    unlink(path);
    snprintf(path, sizeof path, "%s/mbv2.onnx", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/r18x.onnx", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/r18x.onnx.data", dir);
    unlink(path);
}

/* OpenCV reads OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS once: the first network fixes it for the process. */
static void test_blob_reuse(const char *mlp)
{
    engine_error err = {0};
    engine_ctx *c = load1("blob_reuse", "off", &err);
    engine_model *m = NULL;
    const char *env = getenv("OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS");
    CHECK(c != NULL && env && !strcmp(env, "1"));
    if (!c)
        return;
    CHECK_OK(a->read_model(c, mlp, &m, &err), &err);
    a->release_model(m);
    a->unload(c);
    CHECK(load1("blob_reuse", "on", &err) == NULL && err.code == OCV_E_STATE);
    CHECK(strstr(err.msg, "option blob_reuse=on: OpenCV") && strstr(err.msg, "blob reuse off"));
    c = load1("blob_reuse", "off", &err);
    CHECK(c != NULL);
    a->unload(c);
    c = load1(NULL, NULL, &err); /* unset: whatever OpenCV read */
    CHECK(c != NULL);
    a->unload(c);
}

/* The plugin stays loaded (-z nodelete), as OpenCV's libraries do, so its record survives dlclose and dlopen. */
static void test_blob_reuse_reloaded(mlk_plugin *p, const char *lib)
{
    mlk_error merr = {0};
    engine_error err = {0};
    mlk_plugin_deinit(p);
    CHECK_OK(mlk_plugin_init(p, lib, &merr), NULL);
    a = &p->api;
    CHECK(a->load && load1("blob_reuse", "on", &err) == NULL && err.code == OCV_E_STATE);
}

int main(void)
{
    const char *bin = getenv("MLK_BIN_DIR");
    char lib[4200], dir[] = "/tmp/mlk-ocvp.XXXXXX", mlp[600];
    snprintf(lib, sizeof lib, "%s/../lib/engine_opencv.so", bin ? bin : ".");
    if (access(lib, F_OK))
        CHECK_SKIP("engine_opencv.so is not built (Debian's libopencv-dnn-dev)");
    mlk_plugin p;
    mlk_error merr = {0};
    if (!mkdtemp(dir) || mlk_plugin_init(&p, lib, &merr)) {
        fprintf(stderr, "cannot start: %s\n", merr.msg);
        return 1;
    }
    a = &p.api;
    CHECK(!strcmp(a->name, "opencv") && a->output && a->n_outputs && a->metrics);
    snprintf(mlp, sizeof mlp, "%s/mlp.onnx", dir);
    CHECK(gen("mlp", mlp, 0) == 0);
    test_blob_reuse(mlp); /* first: no network may exist yet in this process */
    test_blob_reuse_reloaded(&p, lib);
    for (int i = 0; i < 3; i++) /* load/unload cycles, each a whole pipeline */
        test_requests(mlp);
    test_unreadable(dir);
    mlk_plugin_deinit(&p);
    unlink(mlp);
    rmdir(dir);
    return check_summary();
}
