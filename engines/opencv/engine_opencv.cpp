/* engine_opencv.cpp: OpenCV's DNN module (4.6, Debian's libopencv-dnn-dev) behind the plugin ABI (engine_opencv.so):
 * load, read, compile, requests, outputs, and OpenCV's own estimate of its memory. C++ inside, engines/engine.h
 * outside. It must never export anything but engine_get_api, nor let a C++ exception cross into its C caller: every
 * entry point runs inside guard(), which turns each one into an engine_error with OpenCV's message.
 *
 * OpenCV's Net is at once the model and the compiled network, and it cannot be copied. read_model imports one (it is
 * how a model OpenCV cannot read fails, at the step that reads it); the first compile takes that net, and every later
 * compile of the same model (or a second compiled model alive at once) imports the model again: from the path
 * (mmap=on) or from the bytes read_model kept (mmap=off). So release_compiled frees everything compile made. */
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/dnn.hpp>

#include <sys/mman.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

extern "C" {
#include "onnx/file.h"
}
#include "opencv_internal.h"

/* ---- Process-wide state (OpenCV's own settings are process-wide) ---- */

/* The thread count this plugin last gave cv::setNumThreads; INT_MIN before the first call. */
static int g_threads_applied = INT_MIN;
/* Blob reuse as OpenCV fixed it when the first net was made in this process (-1: none made yet). OpenCV 4.6 reads
 * OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS once, in a function-local static, at its first network setup. */
static int g_blob_reuse_fixed = -1;

struct engine_ctx {
    ocv_opts o;
    engine_compiled *live; /* the newest compiled model still alive, whose estimates metrics reports */
};

struct engine_model {
    engine_ctx *ctx;
    std::string path;
    uint8_t *bytes = nullptr; /* mmap=off: the file, kept for later imports; malloc'd by common/onnx */
    size_t len = 0;
    ocv_graph g{};
    cv::dnn::Net net;         /* imported by read_model, until the first compile takes it */
    bool net_taken = false;
    ~engine_model()
    {
        free(bytes);
        ocv_graph_free(&g);
    }
};

struct engine_compiled {
    engine_ctx *ctx;
    cv::dnn::Net net;
    std::vector<std::string> in_names;
    std::vector<engine_tensor_info> in; /* default shapes, symbolic dims bound; names point into in_names */
    std::vector<int> in_type;           /* the cv::Mat type each input is fed as */
    std::vector<std::string> in_params; /* n_in * ENGINE_MAX_RANK dim_param names, empty where the dim has none */
    std::vector<cv::String> out_names;
    std::vector<engine_tensor_info> out_decl; /* declared shapes, bound; rank -1 where the model declares none */
    std::vector<int32_t> out_decl_dtype;
    int64_t weights_bytes = -1, blobs_bytes = -1; /* Net::getMemoryConsumption for the default shapes */
};

struct engine_request {
    engine_compiled *c;
    std::vector<cv::Mat> in;                /* request-owned inputs, fed at every infer */
    std::vector<engine_tensor_info> in_shape;
    std::vector<cv::Mat> fwd;               /* forward's headers on the net's blobs, dropped after each copy */
    std::vector<cv::Mat> outs;              /* copies of the last infer's outputs, storage reused */
    std::vector<std::vector<unsigned char>> conv; /* outputs converted to the declared dtype, on demand */
    bool ran = false;
};

/* ---- Errors: every C++ exception becomes an engine_error ---- */

/* "in function 'void cv::dnn::X::parseClip(cv::...)'" → "in function 'parseClip'". */
static void shorten_functions(std::string &s)
{
    static const char key[] = "in function '";
    for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + 1)) {
        size_t b = at + sizeof key - 1, e = s.find('\'', b);
        if (e == std::string::npos)
            break;
        std::string f = s.substr(b, e - b);
        size_t paren = f.find('(');
        if (paren != std::string::npos)
            f.erase(paren);
        size_t sp = f.rfind(' ');
        if (sp != std::string::npos)
            f.erase(0, sp + 1);
        size_t colons = f.rfind("::");
        if (colons != std::string::npos)
            f.erase(0, colons + 2);
        s.replace(b, e - b, f);
    }
}

/* OpenCV's multi-line, "> "-quoted messages on one line. */
static std::string one_line(const std::string &in)
{
    std::string s;
    bool space = false, line_start = true;
    for (char ch : in) {
        if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
            space = !s.empty();
            line_start = line_start || ch == '\n';
            continue;
        }
        if (line_start && ch == '>')
            continue;
        line_start = false;
        if (space)
            s += ' ';
        space = false;
        s += ch;
    }
    shorten_functions(s);
    return s;
}

static int fail_cv(engine_error *err, const char *step, const cv::Exception &e)
{
    int code = e.code == cv::Error::StsNoMem ? OCV_E_NOMEM : OCV_E_OPENCV;
    try {
        std::string m = one_line(e.err.empty() ? std::string(e.what()) : e.err);
        std::string f = one_line(std::string("in function '") + e.func + "'");
        return ocv_fail(err, code, "%s: OpenCV %s: %s (%s)", step, CV_VERSION, m.c_str(), f.c_str());
    } catch (...) {
        return ocv_fail(err, code, "%s: OpenCV %s: %s", step, CV_VERSION, e.what());
    }
}

/* Run f (returning 0 or a plugin code) and turn whatever it throws into err. */
template <class F> static int guard(engine_error *err, const char *step, F &&f) noexcept
{
    try {
        return f();
    } catch (const cv::Exception &e) {
        return fail_cv(err, step, e);
    } catch (const std::bad_alloc &) {
        return ocv_fail(err, OCV_E_NOMEM, "%s: out of memory (std::bad_alloc)", step);
    } catch (const std::exception &e) {
        return ocv_fail(err, OCV_E_RUNTIME, "%s: C++ exception: %s", step, e.what());
    } catch (...) {
        return ocv_fail(err, OCV_E_RUNTIME, "%s: an unknown C++ exception", step);
    }
}

/* For the calls that cannot report: a destructor that throws is swallowed, never passed to C. */
template <class T> static void destroy(T *p) noexcept
{
    try {
        delete p;
    } catch (...) {
    }
}

/* ---- Process-wide settings ---- */

static void apply_threads(int threads)
{
    if (threads == g_threads_applied)
        return;
    cv::setNumThreads(threads == 0 ? -1 : threads); /* -1: OpenCV's default, one per core */
    g_threads_applied = threads;
}

/* OpenCV's reading of OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS: 1 when reuse is on. */
static int blob_reuse_from_env(void)
{
    const char *v = getenv("OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS");
    if (!v)
        return 1;
    return !(!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE") ||
             !strcmp(v, "on") || !strcmp(v, "ON"));
}

static int blob_reuse_conflict(int want, engine_error *err)
{
    return ocv_fail(err, OCV_E_STATE, "option blob_reuse=%s: OpenCV %s reads OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS "
                    "once per process, and this process already built a network with blob reuse %s; give each "
                    "setting a process of its own (memleak-run runs one worker per cell)",
                    want ? "on" : "off", CV_VERSION, g_blob_reuse_fixed ? "on" : "off");
}

/* At load: set the variable before OpenCV reads it, or fail if it already read another value. */
static int apply_blob_reuse(int want, engine_error *err)
{
    if (want < 0)
        return 0;
    if (g_blob_reuse_fixed >= 0)
        return want == g_blob_reuse_fixed ? 0 : blob_reuse_conflict(want, err);
    if (setenv("OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS", want ? "0" : "1", 1))
        return ocv_fail(err, OCV_E_NOMEM, "load_engine: setenv OPENCV_DNN_DISABLE_MEMORY_OPTIMIZATIONS failed");
    return 0;
}

/* ---- load_engine / unload_engine ---- */

static const char *option_keys(void) { return ocv_opts_keys(); }

static int check_options(const engine_kv *kv, size_t n, engine_error *err)
{
    ocv_opts o;
    return ocv_opts_parse(kv, n, &o, err);
}

static int load(const engine_kv *kv, size_t n, engine_ctx **out, engine_error *err)
{
    return guard(err, "load_engine", [&]() -> int {
        ocv_opts o;
        int rc = ocv_opts_parse(kv, n, &o, err);
        if (rc || (rc = apply_blob_reuse(o.blob_reuse, err)))
            return rc;
        engine_ctx *c = new engine_ctx();
        c->o = o;
        apply_threads(o.threads);
        *out = c;
        return 0;
    });
}

static void unload(engine_ctx *c) { destroy(c); }

/* ---- read_model / release_model ---- */

static int file_status(int rc)
{
    if (rc == -ENOENT)
        return OCV_E_NOTFOUND;
    return rc == ONNX_E_NOMEM ? OCV_E_NOMEM : OCV_E_IO;
}

/* A new net from the model's file or bytes; fixes OpenCV's blob-reuse setting on the first one. */
static int import_net(engine_model *m, cv::dnn::Net *out, engine_error *err, const char *step)
{
    if (g_blob_reuse_fixed < 0)
        g_blob_reuse_fixed = blob_reuse_from_env();
    int want = m->ctx->o.blob_reuse;
    if (want >= 0 && want != g_blob_reuse_fixed)
        return blob_reuse_conflict(want, err);
    cv::dnn::Net net = m->bytes ? cv::dnn::readNetFromONNX(reinterpret_cast<const char *>(m->bytes), m->len)
                                : cv::dnn::readNetFromONNX(m->path);
    if (net.empty())
        return ocv_fail(err, OCV_E_OPENCV, "%s: OpenCV read %s as an empty network", step, m->path.c_str());
    *out = net;
    return 0;
}

/* The graph's inputs and outputs from the file (mapped for the walk, mmap=on) or the bytes (mmap=off). */
static int read_graph(engine_model *m, engine_error *err)
{
    onnx_error oe = {};
    void *map = nullptr;
    size_t len = m->len;
    int rc = m->ctx->o.mmap ? onnx_file_map(m->path.c_str(), &map, &len, &oe)
                            : onnx_file_read(m->path.c_str(), nullptr, &m->bytes, &m->len, &oe);
    if (rc)
        return ocv_fail(err, file_status(rc), "read_model: %s", oe.msg);
    engine_error ge = {};
    rc = ocv_graph_read(m->ctx->o.mmap ? map : m->bytes, m->ctx->o.mmap ? len : m->len, &m->g, &ge);
    if (map)
        munmap(map, len);
    if (rc)
        return ocv_fail(err, rc, "read_model: %s is not a model this plugin can read: %s", m->path.c_str(), ge.msg);
    if (m->g.n_ext)
        return ocv_fail(err, OCV_E_UNSUPPORTED, "read_model: %s keeps its weights in external data ('%s'); OpenCV %s "
                        "cannot read ONNX external data (its importer dies of SIGFPE on it), so the plugin refuses it",
                        m->path.c_str(), m->g.ext0, CV_VERSION);
    return 0;
}

static int read_model(engine_ctx *c, const char *path, engine_model **out, engine_error *err)
{
    return guard(err, "read_model", [&]() -> int {
        std::unique_ptr<engine_model> m(new engine_model());
        m->ctx = c;
        m->path = path;
        int rc = read_graph(m.get(), err);
        if (rc || (rc = import_net(m.get(), &m->net, err, "read_model")))
            return rc;
        *out = m.release();
        return 0;
    });
}

static void release_model(engine_model *m) { destroy(m); }

/* ---- compile_model / release_compiled ---- */

static int mat_type(int32_t dtype)
{
    switch (dtype) {
    case 1: return CV_32F;
    case 2: case 9: return CV_8U;            /* uint8, bool: as bytes */
    case 3: case 4: case 5: case 6: case 7: case 11: case 12: case 13:
        return CV_32F;                       /* other numbers: converted to float, OpenCV's input type */
    default: return -1;
    }
}

static std::vector<int> mat_dims(const engine_tensor_info &t)
{
    std::vector<int> d;
    for (int k = 0; k < t.rank; k++)
        d.push_back((int)t.dims[k]);
    if (d.empty())
        d.push_back(1);
    return d;
}

/* Names, default shapes and feeding types of the inputs; names and declared shapes of the outputs. */
static int describe(engine_compiled *cc, const engine_model *m, engine_error *err)
{
    const ocv_graph *g = &m->g;
    cc->in_names.resize(g->n_in);
    cc->in.resize(g->n_in);
    cc->in_type.resize(g->n_in);
    cc->in_params.resize(g->n_in * ENGINE_MAX_RANK);
    for (size_t i = 0; i < g->n_in; i++) {
        cc->in_names[i] = g->in[i].name;
        for (int k = 0; k < ENGINE_MAX_RANK; k++)
            if (g->in[i].sym[k])
                cc->in_params[i * ENGINE_MAX_RANK + (size_t)k] = g->in[i].sym[k];
        engine_error e = {};
        int rc = ocv_value_shape(&g->in[i], &m->ctx->o, &cc->in[i], &e);
        if (rc)
            return ocv_fail(err, rc, "compile_model: input %s", e.msg);
        if ((cc->in_type[i] = mat_type(g->in[i].dtype)) < 0)
            return ocv_fail(err, OCV_E_UNSUPPORTED, "compile_model: input '%s' has element type %d, which OpenCV "
                            "cannot be fed", g->in[i].name, (int)g->in[i].dtype);
    }
    for (size_t i = 0; i < g->n_in; i++) /* the vector no longer moves */
        cc->in[i].name = cc->in_names[i].c_str();
    cc->out_names.resize(g->n_out);
    cc->out_decl.resize(g->n_out);
    cc->out_decl_dtype.resize(g->n_out);
    for (size_t i = 0; i < g->n_out; i++) {
        cc->out_names[i] = g->out[i].name;
        cc->out_decl_dtype[i] = g->out[i].dtype;
        if (ocv_value_shape(&g->out[i], &m->ctx->o, &cc->out_decl[i], nullptr))
            cc->out_decl[i].rank = -1;
        cc->out_decl[i].name = nullptr;
    }
    return 0;
}

/* setPreferableBackend/Target, fusion, then one forward on zeros of the default shapes: OpenCV sets up its layers and
 * allocates its blobs at the first forward, so compile is where that memory shows. */
static void prepare(engine_compiled *cc)
{
    cv::dnn::Net &net = cc->net;
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    net.enableFusion(cc->ctx->o.fusion != 0);
    apply_threads(cc->ctx->o.threads);
    std::vector<cv::dnn::MatShape> shapes;
    for (size_t i = 0; i < cc->in.size(); i++) {
        std::vector<int> d = mat_dims(cc->in[i]);
        cv::Mat zeros(d, cc->in_type[i], cv::Scalar(0));
        net.setInput(zeros, cc->in_names[i]);
        shapes.push_back(d);
    }
    std::vector<cv::Mat> outs;
    net.forward(outs, cc->out_names);
    size_t weights = 0, blobs = 0;
    net.getMemoryConsumption(shapes, weights, blobs);
    cc->weights_bytes = (int64_t)weights;
    cc->blobs_bytes = (int64_t)blobs;
}

static void release_compiled(engine_compiled *cc)
{
    if (!cc)
        return;
    if (cc->ctx->live == cc)
        cc->ctx->live = nullptr;
    destroy(cc);
}

static int compile(engine_ctx *c, engine_model *m, engine_compiled **out, engine_error *err)
{
    return guard(err, "compile_model", [&]() -> int {
        std::unique_ptr<engine_compiled> cc(new engine_compiled());
        cc->ctx = c;
        int rc = describe(cc.get(), m, err);
        if (rc)
            return rc;
        if (!m->net_taken) {
            cc->net = m->net;
            m->net = cv::dnn::Net();
            m->net_taken = true;
        } else if ((rc = import_net(m, &cc->net, err, "compile_model"))) {
            return rc;
        }
        prepare(cc.get());
        c->live = cc.get();
        *out = cc.release();
        return 0;
    });
}

static size_t n_inputs(engine_compiled *c) { return c->in.size(); }
static size_t n_outputs(engine_compiled *c) { return c->out_names.size(); }

static int input_info(engine_compiled *c, size_t i, engine_tensor_info *out)
{
    if (i >= c->in.size())
        return OCV_E_INVALID;
    *out = c->in[i];
    return 0;
}

static const char *input_dim_param(engine_compiled *c, size_t i, int axis)
{
    if (i >= c->in.size() || axis < 0 || axis >= c->in[i].rank)
        return nullptr;
    const std::string &p = c->in_params[i * ENGINE_MAX_RANK + (size_t)axis];
    return p.empty() ? nullptr : p.c_str();
}

/* ---- Requests ---- */

static int64_t numel(const engine_tensor_info &t)
{
    int64_t n = 1;
    for (int k = 0; k < t.rank; k++)
        n *= t.dims[k];
    return n;
}

static void release_request(engine_request *r) { destroy(r); }

static int create_request(engine_compiled *c, engine_request **out, engine_error *err)
{
    return guard(err, "create_request", [&]() -> int {
        std::unique_ptr<engine_request> r(new engine_request());
        r->c = c;
        r->in.resize(c->in.size());
        r->in_shape = c->in;
        for (size_t i = 0; i < c->in.size(); i++)
            r->in[i] = cv::Mat(mat_dims(c->in[i]), c->in_type[i], cv::Scalar(0));
        r->outs.resize(c->out_names.size());
        r->conv.resize(c->out_names.size());
        *out = r.release();
        return 0;
    });
}

/* n elements of ONNX dtype at src into the float buffer dst. */
static void to_float(int32_t dtype, const void *src, float *dst, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        switch (dtype) {
        case 3: dst[k] = (float)((const int8_t *)src)[k]; break;
        case 4: dst[k] = (float)((const uint16_t *)src)[k]; break;
        case 5: dst[k] = (float)((const int16_t *)src)[k]; break;
        case 6: dst[k] = (float)((const int32_t *)src)[k]; break;
        case 7: dst[k] = (float)((const int64_t *)src)[k]; break;
        case 11: dst[k] = (float)((const double *)src)[k]; break;
        case 12: dst[k] = (float)((const uint32_t *)src)[k]; break;
        case 13: dst[k] = (float)((const uint64_t *)src)[k]; break;
        default: dst[k] = 0; break;
        }
    }
}

static int set_input(engine_request *r, size_t i, const engine_tensor_info *info, const void *data, size_t nbytes,
                     engine_error *err)
{
    return guard(err, "set_input", [&]() -> int {
        engine_compiled *c = r->c;
        if (i >= c->in.size())
            return ocv_fail(err, OCV_E_INVALID, "set_input %zu: the model has %zu inputs", i, c->in.size());
        const engine_tensor_info &want = c->in[i];
        if (info->dtype != want.dtype || info->rank != want.rank || info->rank < 0 || info->rank > ENGINE_MAX_RANK)
            return ocv_fail(err, OCV_E_INVALID, "set_input '%s': element type %d rank %d given, the model has %d "
                            "rank %d", want.name, info->dtype, info->rank, want.dtype, want.rank);
        for (int k = 0; k < info->rank; k++)
            if (info->dims[k] < 1 || info->dims[k] > INT_MAX)
                return ocv_fail(err, OCV_E_INVALID, "set_input '%s': dim %d is %lld", want.name, k,
                                (long long)info->dims[k]);
        size_t need = (size_t)numel(*info) * ocv_dtype_size(info->dtype);
        if (need != nbytes)
            return ocv_fail(err, OCV_E_INVALID, "set_input '%s': %zu bytes given, the shape needs %zu", want.name,
                            nbytes, need);
        if (memcmp(info->dims, r->in_shape[i].dims, (size_t)info->rank * sizeof info->dims[0])) {
            std::vector<int> d = mat_dims(*info);
            r->in[i].create((int)d.size(), d.data(), c->in_type[i]);
            memcpy(r->in_shape[i].dims, info->dims, sizeof info->dims);
        }
        if (info->dtype == 1 || c->in_type[i] == CV_8U)
            memcpy(r->in[i].data, data, nbytes);
        else
            to_float(info->dtype, data, reinterpret_cast<float *>(r->in[i].data), numel(*info));
        return 0;
    });
}

static int infer(engine_request *r, engine_error *err)
{
    return guard(err, "infer", [&]() -> int {
        engine_compiled *c = r->c;
        r->ran = false;
        apply_threads(c->ctx->o.threads);
        for (size_t i = 0; i < r->in.size(); i++)
            c->net.setInput(r->in[i], c->in_names[i]);
        c->net.forward(r->fwd, c->out_names);
        if (r->fwd.size() != r->outs.size())
            return ocv_fail(err, OCV_E_OPENCV, "infer: OpenCV returned %zu outputs, the model declares %zu",
                            r->fwd.size(), r->outs.size());
        for (size_t i = 0; i < r->fwd.size(); i++) {
            r->fwd[i].copyTo(r->outs[i]); /* reuses the request's storage when the shape is unchanged */
            r->fwd[i].release();          /* only the header: the net keeps its blob */
        }
        r->ran = true;
        return 0;
    });
}

/* ---- Outputs (for cross-checking; may allocate) ---- */

static int32_t onnx_dtype_of(int depth)
{
    switch (depth) {
    case CV_32F: return 1;
    case CV_8U: return 2;
    case CV_8S: return 3;
    case CV_16U: return 4;
    case CV_16S: return 5;
    case CV_32S: return 6;
    case CV_64F: return 11;
    case CV_16F: return 10;
    default: return 0;
    }
}

/* OpenCV computes in float; an output the model declares as another number type is converted to it. */
static bool convert_output(const cv::Mat &m, int32_t to, std::vector<unsigned char> &buf)
{
    if (m.depth() != CV_32F || (to != 6 && to != 7 && to != 11))
        return false;
    size_t n = m.total();
    const float *p = m.ptr<float>();
    buf.resize(n * ocv_dtype_size(to));
    for (size_t k = 0; k < n; k++) {
        if (to == 6)
            reinterpret_cast<int32_t *>(buf.data())[k] = (int32_t)p[k];
        else if (to == 7)
            reinterpret_cast<int64_t *>(buf.data())[k] = (int64_t)p[k];
        else
            reinterpret_cast<double *>(buf.data())[k] = (double)p[k];
    }
    return true;
}

static int output(engine_request *r, size_t i, engine_tensor_info *info, const void **data, size_t *nbytes,
                  engine_error *err)
{
    return guard(err, "output", [&]() -> int {
        engine_compiled *c = r->c;
        if (!r->ran)
            return ocv_fail(err, OCV_E_STATE, "output %zu: no infer has completed", i);
        if (i >= r->outs.size())
            return ocv_fail(err, OCV_E_INVALID, "output %zu: the model has %zu outputs", i, r->outs.size());
        const cv::Mat &m = r->outs[i];
        engine_tensor_info t = {};
        t.name = c->out_names[i].c_str();
        t.dtype = onnx_dtype_of(m.depth());
        const engine_tensor_info &decl = c->out_decl[i];
        if (decl.rank >= 0 && numel(decl) == (int64_t)m.total()) { /* OpenCV's Mat has at least 2 dims */
            t.rank = decl.rank;
            memcpy(t.dims, decl.dims, sizeof t.dims);
        } else {
            if (m.dims > ENGINE_MAX_RANK)
                return ocv_fail(err, OCV_E_UNSUPPORTED, "output %zu: rank %d is more than %d", i, m.dims,
                                ENGINE_MAX_RANK);
            t.rank = m.dims;
            for (int k = 0; k < m.dims; k++)
                t.dims[k] = m.size[k];
        }
        const void *p = m.data;
        size_t n = m.total() * m.elemSize();
        int32_t want = c->out_decl_dtype[i];
        if (want && want != t.dtype && convert_output(m, want, r->conv[i])) {
            t.dtype = want;
            p = r->conv[i].data();
            n = r->conv[i].size();
        }
        *info = t;
        *data = p;
        *nbytes = n;
        return 0;
    });
}

/* ---- Metrics: OpenCV's own estimate (Net::getMemoryConsumption) for the newest live compiled model, computed at
 * compile for the default input shapes, so reading it allocates nothing. ---- */

static int metrics(engine_ctx *c, engine_metric *out, size_t max, size_t *n)
{
    *n = 0;
    const engine_compiled *cc = c->live;
    if (!cc || cc->weights_bytes < 0)
        return 0;
    const struct {
        const char *name;
        int64_t value;
    } figures[] = {{"opencv_weights_bytes", cc->weights_bytes}, {"opencv_blobs_bytes", cc->blobs_bytes}};
    for (size_t k = 0; k < sizeof figures / sizeof figures[0] && *n < max; k++) {
        snprintf(out[*n].name, sizeof out[*n].name, "%s", figures[k].name);
        out[*n].value = figures[k].value;
        (*n)++;
    }
    return 0;
}

static const engine_api api_table = {
    ENGINE_ABI_VERSION,
    sizeof(engine_api),
    "opencv",
    CV_VERSION,
    option_keys,
    check_options,
    load,
    unload,
    read_model,
    release_model,
    compile,
    release_compiled,
    n_inputs,
    input_info,
    create_request,
    set_input,
    infer,
    release_request,
    metrics,
    n_outputs,
    output,
    input_dim_param,
};

extern "C" __attribute__((visibility("default"))) const engine_api *engine_get_api(void) { return &api_table; }
