/* test_onnx_read.c: the ONNX reader on real test-data models and tensors, and on hand-encoded protobufs: bad
 * tensors with ref's statuses, attribute kinds, model errors. It must never use fixtures but our own writer's. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "inject.h"
#include "model.h"
#include "onnx/pb.h"

#define DATA "/usr/share/libonnx-testdata/data"

static ref_error err;

static const ref_attr *attr(const ref_node *n, const char *name) { return ref_node_attr(n, name); }

static ref_options opts_mmap(int on)
{
    ref_options o;
    ref_options_init(&o);
    o.mmap = on;
    return o;
}

/* ================================================================================================
 * Real models and tensors
 * ============================================================================================== */

static void test_conv_strides_padding(void)
{
    ref_model *m = NULL;
    CHECK_OK(ref_model_read(DATA "/node/test_conv_with_strides_padding/model.onnx", NULL, &m, &err), &err);
    if (!m)
        return;
    CHECK(m->ir_version == 6 && ref_model_opset(m) == 11);
    CHECK(!strcmp(m->producer_name, "backend-test"));
    CHECK(!strcmp(m->graph.name, "test_conv_with_strides_padding"));
    CHECK(m->graph.n_nodes == 1 && m->graph.n_inits == 0);
    const ref_node *n = &m->graph.nodes[0];
    CHECK(!strcmp(n->op_type, "Conv") && !strcmp(n->domain, "") && !strcmp(n->name, ""));
    CHECK(n->n_inputs == 2 && !strcmp(n->inputs[0], "x") && !strcmp(n->inputs[1], "W"));
    CHECK(n->n_outputs == 1 && !strcmp(n->outputs[0], "y"));
    CHECK(n->n_attrs == 3);
    const int64_t *v;
    CHECK(ref_attr_ints(n, "kernel_shape", &v) == 2 && v[0] == 3 && v[1] == 3);
    CHECK(ref_attr_ints(n, "pads", &v) == 4 && v[0] == 1 && v[3] == 1);
    CHECK(ref_attr_ints(n, "strides", &v) == 2 && v[0] == 2 && v[1] == 2);
    CHECK(attr(n, "strides")->type == REF_ATTR_INTS);
    CHECK(m->graph.n_inputs == 2 && m->graph.n_outputs == 1);
    const ref_value_info *x = &m->graph.inputs[0], *y = &m->graph.outputs[0];
    CHECK(!strcmp(x->name, "x") && x->elem_type == REF_DT_FLOAT && x->rank == 4);
    CHECK(x->dims[0].value == 1 && x->dims[2].value == 7 && x->dims[3].value == 5 && !x->dims[3].param);
    CHECK(!strcmp(y->name, "y") && y->rank == 4 && y->dims[2].value == 4 && y->dims[3].value == 3);
    ref_model_info info;
    ref_model_get_info(m, &info);
    CHECK(info.n_nodes == 1 && info.n_initializers == 0 && info.opset == 11 && info.ir_version == 6);
    ref_model_free(m);
}

static void test_pytorch_conv2d(int mmap_on)
{
    ref_options o = opts_mmap(mmap_on);
    ref_model *m = NULL;
    CHECK_OK(ref_model_read(DATA "/pytorch-converted/test_Conv2d/model.onnx", &o, &m, &err), &err);
    if (!m)
        return;
    CHECK(m->ir_version == 3 && ref_model_opset(m) == 6 && !strcmp(m->producer_name, "pytorch"));
    CHECK(m->path && strstr(m->path, "test_Conv2d/model.onnx"));
    CHECK(m->opts.mmap == mmap_on);
    CHECK(m->graph.n_nodes == 1 && m->graph.n_inits == 2);
    const ref_node *n = &m->graph.nodes[0];
    CHECK(!strcmp(n->op_type, "Conv") && n->n_inputs == 3 && n->n_attrs == 5);
    CHECK(attr(n, "group")->type == REF_ATTR_INT && ref_attr_int_or(n, "group", 0) == 1);
    const int64_t *v;
    CHECK(ref_attr_ints(n, "kernel_shape", &v) == 2 && v[0] == 3 && v[1] == 2);
    const ref_initializer *w = ref_model_find_init(m, "1"), *b = ref_model_find_init(m, "2");
    CHECK(w && b);
    if (!w || !b)
        goto out;
    CHECK(w->t.dtype == REF_DT_FLOAT && w->t.rank == 4 && w->t.dims[0] == 4 && w->t.dims[1] == 3 &&
          w->t.dims[2] == 3 && w->t.dims[3] == 2 && w->nbytes == 288);
    CHECK(b->t.rank == 1 && b->t.dims[0] == 4 && b->nbytes == 16);
    /* Values from onnx.numpy_helper.to_array of the same file. */
    const float *wf = w->t.data, *bf = b->t.data;
    CHECK_NEAR(wf[0], -0.14294092, 1e-7);
    CHECK_NEAR(wf[71], -0.10345209, 1e-7);
    CHECK_NEAR(bf[0], -0.17454392, 1e-7);
    CHECK_NEAR(bf[3], 0.18244947, 1e-7);
    /* The raw bytes sit at file offsets that are multiples of 4 here or not: either way the storage must
     * say which, and mmap off must always copy. */
    if (!mmap_on) {
        CHECK(w->storage == REF_STORAGE_HEAP && b->storage == REF_STORAGE_HEAP);
        CHECK(((uintptr_t)w->t.data % 64) == 0);
    } else {
        for (int k = 0; k < 2; k++) {
            const ref_initializer *in = k ? b : w;
            const uint8_t *p = in->t.data, *map = m->maps[0].addr;
            bool inside = m->n_maps == 1 && p >= map && p + in->nbytes <= map + m->maps[0].len;
            CHECK(in->storage == REF_STORAGE_MAPPED ? inside && (uintptr_t)p % 4 == 0
                                                    : !inside && (uintptr_t)p % 64 == 0);
        }
    }
    ref_model_info info;
    ref_model_get_info(m, &info);
    CHECK(info.weight_bytes == 304);
    CHECK(mmap_on ? info.mapped_bytes <= 304 : info.mapped_bytes == 0);
out:
    ref_model_free(m);
}

static void test_constant_tensor_attr(void)
{
    ref_model *m = NULL;
    CHECK_OK(ref_model_read(DATA "/node/test_constant/model.onnx", NULL, &m, &err), &err);
    if (!m)
        return;
    const ref_node *n = &m->graph.nodes[0];
    CHECK(!strcmp(n->op_type, "Constant") && n->n_inputs == 0 && n->n_outputs == 1);
    const ref_attr *a = attr(n, "value");
    CHECK(a && a->type == REF_ATTR_TENSOR && a->t);
    if (a && a->t) {
        CHECK(a->t->dtype == REF_DT_FLOAT && a->t->rank == 2 && a->t->dims[0] == 5 && a->t->dims[1] == 5);
        const float *f = a->t->data;
        CHECK_NEAR(f[0], 1.764052391052246, 1e-7);
        CHECK_NEAR(f[24], 2.269754648208618, 1e-7);
    }
    ref_model_free(m);
}

static void test_load_pb(void)
{
    ref_tensor t;
    char *name = NULL;
#define CONV_SET DATA "/node/test_conv_with_strides_padding/test_data_set_0"
    CHECK_OK(ref_tensor_load_pb(CONV_SET "/input_0.pb", &t, &name, &err), &err);
    CHECK(name && !strcmp(name, "x"));
    CHECK(t.dtype == REF_DT_FLOAT && t.rank == 4 && t.dims[2] == 7 && t.dims[3] == 5);
    CHECK(t.data && ((const float *)t.data)[4] == 4.0f && ((const float *)t.data)[34] == 34.0f);
    ref_tensor_data_free(&t);
    CHECK(t.data == NULL);
    ref_string_free(name);
    CHECK_OK(ref_tensor_load_pb(CONV_SET "/output_0.pb", &t, NULL, &err), &err);
    CHECK(t.rank == 4 && t.dims[2] == 4 && t.dims[3] == 3);
    CHECK(((const float *)t.data)[0] == 12.0f && ((const float *)t.data)[3] == 63.0f);
    ref_tensor_data_free(&t);
    CHECK_OK(ref_tensor_load_pb(DATA "/pytorch-converted/test_Conv2d/test_data_set_0/output_0.pb", &t, NULL, &err),
             &err);
    CHECK(t.rank == 4 && t.dims[0] == 2 && t.dims[1] == 4 && t.dims[2] == 5 && t.dims[3] == 4);
    CHECK_NEAR(((const float *)t.data)[0], -0.3713104, 1e-6);
    ref_tensor_data_free(&t);
    ref_tensor_data_free(NULL);
    ref_string_free(NULL);
    ref_tensor keep = {.dtype = 99};
    CHECK(ref_tensor_load_pb("/nonexistent/x.pb", &keep, NULL, &err) == REF_E_IO);
    CHECK(strstr(err.msg, "/nonexistent/x.pb") && keep.dtype == 99);
}

/* Every model and tensor of the test data reads, with mmap on and off; only UNSUPPORTED may refuse. */
static void test_all_testdata(void)
{
    static const char *suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    int models = 0, tensors = 0, unsupported = 0, non_tensor_files = 0;
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        char dirpath[512];
        snprintf(dirpath, sizeof dirpath, "%s/%s", DATA, suites[s]);
        DIR *d = opendir(dirpath);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s/model.onnx", dirpath, e->d_name);
            int non_tensor = 0; /* some graph input or output is a sequence, map or optional */
            for (int mm = 0; mm < 2; mm++) {
                ref_options o = opts_mmap(mm);
                ref_model *m = NULL;
                int rc = ref_model_read(path, &o, &m, &err);
                for (size_t i = 0; m && i < m->graph.n_inputs; i++)
                    non_tensor |= m->graph.inputs[i].elem_type == 0 || m->graph.inputs[i].elem_type >= REF_DT_SEQUENCE;
                for (size_t i = 0; m && i < m->graph.n_outputs; i++)
                    non_tensor |= m->graph.outputs[i].elem_type == 0 || m->graph.outputs[i].elem_type >= REF_DT_SEQUENCE;
                if (rc == REF_E_UNSUPPORTED) {
                    unsupported += mm;
                    if (mm)
                        printf("note: %s\n", err.msg);
                } else {
                    CHECK(rc == 0);
                    if (rc)
                        fprintf(stderr, "%s\n", err.msg);
                }
                models += mm;
                ref_model_free(m);
            }
            for (int k = 0; k < 4; k++) {
                const char *kinds[] = {"input", "output"};
                for (int io = 0; io < 2; io++) {
                    snprintf(path, sizeof path, "%s/%s/test_data_set_0/%s_%d.pb", dirpath, e->d_name, kinds[io], k);
                    if (access(path, R_OK))
                        continue;
                    ref_tensor t;
                    int rc = ref_tensor_load_pb(path, &t, NULL, &err);
                    /* Files of non-tensor values hold other protos: they may fail, cleanly. */
                    CHECK(rc == 0 || rc == REF_E_UNSUPPORTED || (non_tensor && rc == REF_E_PARSE));
                    if (rc && rc != REF_E_UNSUPPORTED && !non_tensor)
                        fprintf(stderr, "%s\n", err.msg);
                    non_tensor_files += non_tensor && rc;
                    if (!rc)
                        ref_tensor_data_free(&t);
                    tensors++;
                }
            }
        }
        closedir(d);
    }
    printf("test data: %d models (%d unsupported), %d tensor files (%d non-tensor files refused)\n", models,
           unsupported, tensors, non_tensor_files);
    CHECK(models > 1000 && tensors > 2000);
}

/* ================================================================================================
 * Hand-encoded TensorProtos: flaws, through the engine's wrapper (every typed field, packed and unpacked, is
 * common/onnx's test_onnx_tensor.c)
 * ============================================================================================== */

static int parse_tensor(const onnx_pbw *w, ref_tensor *t, void **data)
{
    return ref_onnx_parse_tensor(w->buf, w->len, t, data, NULL, &err);
}

static void dims_field(onnx_pbw *w, const int64_t *d, int n, int packed)
{
    if (packed)
        onnx_pbw_packed_i64(w, 1, d, (size_t)n);
    else
        for (int i = 0; i < n; i++)
            onnx_pbw_i64(w, 1, d[i]);
}

/* Build a small TensorProto; kind selects the flaw. */
static int bad_tensor(int kind)
{
    onnx_pbw w;
    ref_tensor t;
    void *data = NULL;
    const int64_t d23[] = {2, 3}, dneg[] = {2, -1}, dbig[] = {INT64_C(1) << 40, INT64_C(1) << 40},
                  d9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float f6[6] = {0};
    onnx_pbw_init(&w, NULL);
    onnx_pbw_str(&w, 8, "w");
    switch (kind) {
    case 0: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_bytes(&w, 9, f6, 12); break;  /* 12 != 24 */
    case 1: dims_field(&w, dneg, 2, 1); onnx_pbw_i64(&w, 2, 1); break;                                /* dim < 0 */
    case 2: dims_field(&w, dbig, 2, 0); onnx_pbw_i64(&w, 2, 1); break;                                /* overflow */
    case 3: dims_field(&w, d9, 9, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_bytes(&w, 9, f6, 4); break;     /* rank 9 */
    case 4: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 7); onnx_pbw_packed_f32(&w, 4, f6, 6); break;
    case 5: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_packed_f32(&w, 4, f6, 6);
            onnx_pbw_bytes(&w, 9, f6, 24); break;                                                     /* both */
    case 6: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_tag(&w, 3, ONNX_PB_LEN);
            onnx_pbw_varint(&w, 0); break;                                                            /* segment */
    case 7: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 14); break;                                /* complex64 */
    case 8: dims_field(&w, d23, 2, 1); break;                                                        /* no type */
    case 9: dims_field(&w, d23, 2, 1); onnx_pbw_i64(&w, 2, 1); onnx_pbw_u64(&w, 14, 1); break;         /* ext */
    case 10: dims_field(&w, d23, 2, 1); onnx_pbw_f32(&w, 2, 1.0f); break;                             /* wire */
    default: break;
    }
    int rc = parse_tensor(&w, &t, &data);
    onnx_pbw_free(&w);
    if (!rc)
        ref_free(data);
    return rc;
}

static void test_bad_tensors(void)
{
    CHECK(bad_tensor(0) == REF_E_PARSE);
    CHECK(strstr(err.msg, "'w'") && strstr(err.msg, "12 bytes") && strstr(err.msg, "needs 24") &&
          strstr(err.msg, "@ byte"));
    CHECK(bad_tensor(1) == REF_E_PARSE && strstr(err.msg, "dims @ byte") && strstr(err.msg, "negative"));
    CHECK(bad_tensor(2) == REF_E_PARSE && strstr(err.msg, "overflows"));
    CHECK(bad_tensor(3) == REF_E_UNSUPPORTED && strstr(err.msg, "rank 9"));
    CHECK(bad_tensor(4) == REF_E_PARSE && strstr(err.msg, "float_data given for a int64 tensor"));
    CHECK(bad_tensor(5) == REF_E_PARSE && strstr(err.msg, "both raw_data and float_data"));
    CHECK(bad_tensor(6) == REF_E_UNSUPPORTED && strstr(err.msg, "segment @ byte"));
    CHECK(bad_tensor(7) == REF_E_UNSUPPORTED && strstr(err.msg, "data type 14"));
    CHECK(bad_tensor(8) == REF_E_PARSE && strstr(err.msg, "no data_type"));
    CHECK(bad_tensor(9) == REF_E_UNSUPPORTED && strstr(err.msg, "external"));
    CHECK(bad_tensor(10) == REF_E_PARSE &&
          strstr(err.msg, "data_type @ byte 7: wire type 5 (fixed32), expected 0 (varint)"));

    /* Strings: each in a REF_STRING_BYTES slot, zero-padded. */
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    const int64_t d2[] = {2};
    dims_field(&w, d2, 1, 1);
    onnx_pbw_i64(&w, 2, REF_DT_STRING);
    onnx_pbw_str(&w, 6, "ab");
    onnx_pbw_str(&w, 6, "c");
    ref_tensor t;
    void *data = (void *)1;
    CHECK_OK(parse_tensor(&w, &t, &data), &err);
    CHECK(t.dtype == REF_DT_STRING && t.rank == 1 && t.dims[0] == 2 && data != NULL);
    if (data && data != (void *)1) {
        CHECK(!strcmp(data, "ab") && !strcmp((char *)data + REF_STRING_BYTES, "c"));
        CHECK(((char *)data)[REF_STRING_BYTES - 1] == 0);
        ref_free(data);
    }
    onnx_pbw_free(&w);
}

/* ================================================================================================
 * Hand-encoded models: attribute kinds and type inference, required fields, error paths
 * ============================================================================================== */

/* A model whose one node carries attributes without `type` (inferred) and unknown fields everywhere. */
static void encode_attr_model(onnx_pbw *w, int omit_op_type)
{
    onnx_pbw_init(w, NULL);
    onnx_pbw_i64(w, 1, 8);
    onnx_pbw_str(w, 2, "handmade");
    onnx_pbw_u64(w, 99, 5); /* unknown */
    size_t g = onnx_pbw_begin(w, 7);
    size_t n = onnx_pbw_begin(w, 1);
    onnx_pbw_str(w, 1, "a");
    onnx_pbw_str(w, 1, "");
    onnx_pbw_str(w, 2, "y");
    if (!omit_op_type)
        onnx_pbw_str(w, 4, "Foo");
    onnx_pbw_str(w, 7, "com.example");
    onnx_pbw_f32(w, 1000, 1.0f); /* unknown, fixed32 */
    size_t a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "alpha");
    onnx_pbw_f32(w, 2, 0.5f);
    onnx_pbw_end(w, a);
    a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "axes");
    onnx_pbw_i64(w, 8, -1); /* unpacked */
    const int64_t more[] = {2, -3};
    onnx_pbw_packed_i64(w, 8, more, 2);
    onnx_pbw_end(w, a);
    a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "mode");
    onnx_pbw_bytes(w, 4, "li\0ear", 6);
    onnx_pbw_end(w, a);
    a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "names");
    onnx_pbw_str(w, 9, "p");
    onnx_pbw_str(w, 9, "qr");
    onnx_pbw_end(w, a);
    a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "body");
    size_t sub = onnx_pbw_begin(w, 6);
    onnx_pbw_str(w, 2, "subgraph");
    onnx_pbw_end(w, sub);
    onnx_pbw_end(w, a);
    a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "value");
    size_t t = onnx_pbw_begin(w, 5);
    onnx_pbw_i64(w, 2, REF_DT_INT8);
    onnx_pbw_i64(w, 5, -5);
    onnx_pbw_end(w, t);
    onnx_pbw_end(w, a);
    a = onnx_pbw_begin(w, 5);
    onnx_pbw_str(w, 1, "scales");
    onnx_pbw_f32(w, 7, 2.0f); /* unpacked floats */
    onnx_pbw_f32(w, 7, 4.0f);
    onnx_pbw_i64(w, 20, REF_ATTR_FLOATS);
    onnx_pbw_end(w, a);
    onnx_pbw_end(w, n);
    onnx_pbw_str(w, 2, "g");
    size_t vi = onnx_pbw_begin(w, 11);
    onnx_pbw_str(w, 1, "a");
    size_t ty = onnx_pbw_begin(w, 2), tt = onnx_pbw_begin(w, 1);
    onnx_pbw_i64(w, 1, REF_DT_FLOAT);
    size_t sh = onnx_pbw_begin(w, 2), dm = onnx_pbw_begin(w, 1);
    onnx_pbw_str(w, 2, "batch");
    onnx_pbw_end(w, dm);
    dm = onnx_pbw_begin(w, 1); /* neither value nor param: unknown */
    onnx_pbw_end(w, dm);
    dm = onnx_pbw_begin(w, 1);
    onnx_pbw_i64(w, 1, 8);
    onnx_pbw_end(w, dm);
    onnx_pbw_end(w, sh);
    onnx_pbw_end(w, tt);
    onnx_pbw_end(w, ty);
    onnx_pbw_end(w, vi);
    vi = onnx_pbw_begin(w, 12); /* output without a type */
    onnx_pbw_str(w, 1, "y");
    onnx_pbw_end(w, vi);
    onnx_pbw_end(w, g);
    size_t op = onnx_pbw_begin(w, 8);
    onnx_pbw_str(w, 1, "");
    onnx_pbw_i64(w, 2, 17);
    onnx_pbw_end(w, op);
}

static void test_attr_kinds(void)
{
    onnx_pbw w;
    encode_attr_model(&w, 0);
    ref_model *m = NULL;
    CHECK_OK(ref_model_read_buffer(w.buf, w.len, NULL, &m, &err), &err);
    onnx_pbw_free(&w);
    if (!m)
        return;
    CHECK(m->ir_version == 8 && ref_model_opset(m) == 17 && !strcmp(m->producer_name, "handmade"));
    CHECK(m->path == NULL && !strcmp(m->graph.name, "g"));
    const ref_node *n = &m->graph.nodes[0];
    CHECK(!strcmp(n->op_type, "Foo") && !strcmp(n->domain, "com.example"));
    CHECK(n->n_inputs == 2 && !strcmp(n->inputs[1], "") && n->n_attrs == 7);
    const ref_attr *a = attr(n, "alpha");
    CHECK(a && a->type == REF_ATTR_FLOAT && a->f == 0.5f);
    const int64_t *iv;
    CHECK(ref_attr_ints(n, "axes", &iv) == 3 && iv[0] == -1 && iv[1] == 2 && iv[2] == -3);
    a = attr(n, "mode");
    CHECK(a && a->type == REF_ATTR_STRING && a->s_len == 6 && !memcmp(a->s, "li\0ear", 7));
    a = attr(n, "names");
    CHECK(a && a->type == REF_ATTR_STRINGS && a->n == 2 && !strcmp(a->strings[0], "p") && !strcmp(a->strings[1], "qr"));
    a = attr(n, "body");
    CHECK(a && a->type == REF_ATTR_GRAPH && a->g && !strcmp(a->g->name, "subgraph") && a->g->n_nodes == 0);
    a = attr(n, "value");
    CHECK(a && a->type == REF_ATTR_TENSOR && a->t && a->t->dtype == REF_DT_INT8 && a->t->rank == 0);
    CHECK(a && a->t && a->t->data && *(const int8_t *)a->t->data == -5);
    const float *fv;
    CHECK(ref_attr_floats(n, "scales", &fv) == 2 && fv[0] == 2.0f && fv[1] == 4.0f);
    const ref_value_info *in = &m->graph.inputs[0];
    CHECK(in->elem_type == REF_DT_FLOAT && in->rank == 3);
    CHECK(in->dims[0].value == -1 && !strcmp(in->dims[0].param, "batch"));
    CHECK(in->dims[1].value == -1 && in->dims[1].param == NULL);
    CHECK(in->dims[2].value == 8);
    CHECK(m->graph.outputs[0].elem_type == 0 && m->graph.outputs[0].rank == -1);
    ref_model_free(m);

    encode_attr_model(&w, 1);
    m = NULL;
    CHECK(ref_model_read_buffer(w.buf, w.len, NULL, &m, &err) == REF_E_PARSE && m == NULL);
    CHECK(strstr(err.msg, "graph.node[0] @ byte ") && strstr(err.msg, "op_type"));
    onnx_pbw_free(&w);
}

static void test_model_errors(void)
{
    ref_model *m = NULL;
    CHECK(ref_model_read_buffer("", 0, NULL, &m, &err) == REF_E_PARSE && m == NULL);
    CHECK(!strcmp(err.msg, "model @ byte 0: model has no graph"));
    const uint8_t noopset[] = {0x08, 0x08, 0x3a, 0x00};
    CHECK(ref_model_read_buffer(noopset, sizeof noopset, NULL, &m, &err) == REF_E_PARSE);
    CHECK(strstr(err.msg, "no opset_import"));
    const uint8_t twographs[] = {0x3a, 0x00, 0x3a, 0x00};
    CHECK(ref_model_read_buffer(twographs, sizeof twographs, NULL, &m, &err) == REF_E_PARSE);
    CHECK(strstr(err.msg, "second graph"));
    const uint8_t wire[] = {0x3d, 0, 0, 0, 0}; /* graph as fixed32 */
    CHECK(ref_model_read_buffer(wire, sizeof wire, NULL, &m, &err) == REF_E_PARSE);
    CHECK(!strcmp(err.msg, "graph @ byte 0: wire type 5 (fixed32), expected 2 (length-delimited)"));
    const uint8_t group[] = {0x3a, 0x02, 0x0b, 0x0c};
    CHECK(ref_model_read_buffer(group, sizeof group, NULL, &m, &err) == REF_E_PARSE);
    CHECK(strstr(err.msg, "graph @ byte 2") && strstr(err.msg, "groups"));
    CHECK(ref_model_read("/nonexistent/model.onnx", NULL, &m, &err) == REF_E_IO && m == NULL);
    CHECK(strstr(err.msg, "/nonexistent/model.onnx"));
    ref_model_free(NULL);
    /* err may be NULL: the status must survive. */
    CHECK(ref_model_read("/nonexistent/model.onnx", NULL, &m, NULL) == REF_E_IO);
    CHECK(ref_model_read_buffer(group, sizeof group, NULL, &m, NULL) == REF_E_PARSE && m == NULL);
    ref_tensor t;
    CHECK(ref_tensor_load_pb(DATA "/node/test_constant/model.onnx", &t, NULL, NULL) == REF_E_PARSE);
    /* A TENSOR attribute must carry its tensor. */
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    size_t g = onnx_pbw_begin(&w, 7), n = onnx_pbw_begin(&w, 1);
    onnx_pbw_str(&w, 4, "Constant");
    size_t a = onnx_pbw_begin(&w, 5);
    onnx_pbw_str(&w, 1, "value");
    onnx_pbw_i64(&w, 20, REF_ATTR_TENSOR);
    onnx_pbw_end(&w, a);
    onnx_pbw_end(&w, n);
    onnx_pbw_end(&w, g);
    size_t op = onnx_pbw_begin(&w, 8);
    onnx_pbw_i64(&w, 2, 13);
    onnx_pbw_end(&w, op);
    CHECK(ref_model_read_buffer(w.buf, w.len, NULL, &m, &err) == REF_E_PARSE);
    CHECK(strstr(err.msg, "graph.node[0].attribute[0] @ byte 16: TENSOR attribute 'value' without a tensor") != NULL);
    onnx_pbw_free(&w);
}

/* The read and release steps fire the fault injector: planted retention grows by exactly its size at each. */
static int64_t test_inject_steps(void)
{
    ref_options o;
    ref_options_init(&o);
    o.inject_retention_bytes = 1000;
    o.inject_retention_cap_bytes = 1 << 20;
    o.inject_retention_step = REF_STEP_READ_MODEL;
    int64_t r0 = ref_inject_retained_bytes();
    ref_model *m = NULL;
    CHECK_OK(ref_model_read(DATA "/node/test_constant/model.onnx", &o, &m, &err), &err);
    ref_model_free(m);
    CHECK(ref_inject_retained_bytes() - r0 == 1000);
    o.inject_retention_bytes = 500;
    o.inject_retention_step = REF_STEP_RELEASE_MODEL;
    m = NULL;
    r0 = ref_inject_retained_bytes();
    CHECK(ref_model_read_buffer("", 0, &o, &m, &err) == REF_E_PARSE && !m); /* nothing to release */
    CHECK_OK(ref_model_read(DATA "/node/test_constant/model.onnx", &o, &m, &err), &err);
    ref_model_free(m);
    CHECK(ref_inject_retained_bytes() - r0 == 500);
    return 0; /* planted blocks come from malloc itself: the engine's accounting stays balanced */
}

int main(void)
{
    if (access(DATA "/node/test_constant/model.onnx", R_OK))
        CHECK_SKIP("libonnx-testdata is not installed");
    ref_alloc_stats s0, s1;
    ref_alloc_get_stats(&s0);
    test_conv_strides_padding();
    test_pytorch_conv2d(1);
    test_pytorch_conv2d(0);
    test_constant_tensor_attr();
    test_load_pb();
    test_bad_tensors();
    test_attr_kinds();
    test_model_errors();
    test_all_testdata();
    int64_t planted = test_inject_steps();
    ref_alloc_get_stats(&s1);
    CHECK(s1.live_bytes - s0.live_bytes == planted);
    return check_summary();
}
