/* test_onnx_write.c: writer -> reader round trip of a hand-built IR (every attribute kind, symbolic dims), with and
 * without external data, onnx.checker acceptance, storage modes, error paths and an OOM loop.
 * It must never compare a model with itself: every check reads back what the writer put on disk. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "onnx/pb.h"
#include "tensor.h"

static ref_error err;
static char tmpdir[64];

static const char *S(ref_model *m, const char *s) { return ref_model_strdup(m, s, strlen(s)); }

static void add_init(ref_model *m, const char *name, int dtype, int rank, const int64_t *dims)
{
    ref_initializer *in = ref_graph_add_init(m);
    in->name = S(m, name);
    in->t.dtype = dtype;
    ref_tensor_set_shape(&in->t, rank, dims);
    in->nbytes = ref_tensor_nbytes(&in->t);
    in->t.data = ref_model_heap_alloc(m, in->nbytes);
    uint8_t *p = in->t.data;
    for (size_t i = 0; i < in->nbytes; i++)
        p[i] = (uint8_t)(i * 7 + (size_t)name[0]);
    in->storage = REF_STORAGE_HEAP;
}

static void set_vi(ref_model *m, ref_value_info *v, const char *name, int elem, int rank, const int64_t *dims,
                   const char *param0)
{
    v->name = S(m, name);
    v->elem_type = elem;
    v->rank = rank;
    if (rank > 0) {
        v->dims = ref_model_pool_alloc(m, sizeof *v->dims * (size_t)rank);
        for (int i = 0; i < rank; i++)
            v->dims[i].value = dims[i];
        if (param0) {
            v->dims[0].value = -1;
            v->dims[0].param = S(m, param0);
        }
    }
}

static const char **strs(ref_model *m, int n, const char *const *v)
{
    const char **a = ref_model_pool_alloc(m, sizeof *a * (size_t)n);
    for (int i = 0; i < n; i++)
        a[i] = S(m, v[i]);
    return a;
}

static ref_node *add_node(ref_model *m, const char *name, const char *op, const char *domain, int n_in,
                          const char *const *in, const char *out, int n_attrs)
{
    ref_node *n = ref_graph_add_node(m);
    n->name = S(m, name);
    n->op_type = S(m, op);
    n->domain = S(m, domain);
    n->inputs = strs(m, n_in, in);
    n->n_inputs = n_in;
    n->outputs = strs(m, 1, &out);
    n->n_outputs = 1;
    n->attrs = ref_model_pool_alloc(m, sizeof *n->attrs * (size_t)(n_attrs ? n_attrs : 1));
    n->n_attrs = n_attrs;
    return n;
}

/* X[batch,3,8,8] -> Conv(W,B) -> Relu -> Foo (com.example, every attribute kind) -> Y. */
static ref_model *build_model(void)
{
    ref_model *m = ref_model_new();
    m->ir_version = 8;
    m->producer_name = S(m, "memleak-test");
    m->producer_version = S(m, "0.1");
    ref_model_add_opset(m, "", 17);
    ref_model_add_opset(m, "com.example", 1);
    m->graph.name = S(m, "rt");
    const int64_t dw[] = {16, 3, 3, 3}, db[] = {16}, di[] = {300}, de[] = {0}, dh[] = {5};
    add_init(m, "W", REF_DT_FLOAT, 4, dw);  /* 1728 bytes: external */
    add_init(m, "B", REF_DT_FLOAT, 1, db);  /* 64 bytes: embedded */
    add_init(m, "I", REF_DT_INT64, 1, di);  /* 2400 bytes: external */
    add_init(m, "E", REF_DT_FLOAT, 1, de);  /* empty */
    add_init(m, "H", REF_DT_UINT8, 1, dh);
    add_init(m, "S", REF_DT_FLOAT, 0, NULL); /* scalar */

    static const char *conv_in[] = {"X", "W", "B"}, *relu_in[] = {"C"}, *foo_in[] = {"R", ""};
    ref_node *n = add_node(m, "conv1", "Conv", "", 3, conv_in, "C", 3);
    static const int64_t ks[] = {3, 3}, pads[] = {1, 1, 1, 1};
    n->attrs[0] = (ref_attr){.name = S(m, "kernel_shape"), .type = REF_ATTR_INTS, .ints = ks, .n = 2};
    n->attrs[1] = (ref_attr){.name = S(m, "pads"), .type = REF_ATTR_INTS, .ints = pads, .n = 4};
    n->attrs[2] = (ref_attr){.name = S(m, "group"), .type = REF_ATTR_INT, .i = 1};
    add_node(m, "", "Relu", "", 1, relu_in, "R", 0);
    n = add_node(m, "foo", "Foo", "com.example", 2, foo_in, "Y", 7);
    static const float scales[] = {1.5f, -2.0f};
    static const int64_t axes[] = {-1, 3, INT64_C(1) << 40};
    static const char *names[] = {"a", "bc"};
    static int8_t tv[] = {1, -2};
    ref_tensor *t = ref_model_pool_alloc(m, sizeof *t);
    t->dtype = REF_DT_INT8;
    t->rank = 1;
    t->dims[0] = 2;
    t->data = tv;
    n->attrs[0] = (ref_attr){.name = S(m, "alpha"), .type = REF_ATTR_FLOAT, .f = 0.5f};
    n->attrs[1] = (ref_attr){.name = S(m, "count"), .type = REF_ATTR_INT, .i = -7};
    n->attrs[2] = (ref_attr){.name = S(m, "mode"), .type = REF_ATTR_STRING, .s = ref_model_strdup(m, "li\0ear", 6),
                             .s_len = 6};
    n->attrs[3] = (ref_attr){.name = S(m, "value"), .type = REF_ATTR_TENSOR, .t = t};
    n->attrs[4] = (ref_attr){.name = S(m, "scales"), .type = REF_ATTR_FLOATS, .floats = scales, .n = 2};
    n->attrs[5] = (ref_attr){.name = S(m, "axes"), .type = REF_ATTR_INTS, .ints = axes, .n = 3};
    n->attrs[6] = (ref_attr){.name = S(m, "names"), .type = REF_ATTR_STRINGS, .strings = strs(m, 2, names), .n = 2};

    const int64_t dx[] = {1, 3, 8, 8}, dc[] = {1, 16, 8, 8}, dy[] = {-1, 16, 8, 8};
    set_vi(m, ref_graph_add_input(m), "X", REF_DT_FLOAT, 4, dx, "batch");
    set_vi(m, ref_graph_add_output(m), "Y", REF_DT_FLOAT, 4, dy, NULL);
    set_vi(m, ref_graph_add_value_info(m), "C", REF_DT_FLOAT, 4, dc, NULL);
    set_vi(m, ref_graph_add_value_info(m), "R", REF_DT_FLOAT, 0, NULL, NULL);
    return m;
}

/* ================================================================================================
 * Field-by-field comparison
 * ============================================================================================== */

static int str_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static int tensor_eq(const ref_tensor *a, const ref_tensor *b)
{
    if (a->dtype != b->dtype || !ref_shape_equal(a, b))
        return 0;
    size_t n = ref_tensor_nbytes(a);
    return !n || (a->data && b->data && !memcmp(a->data, b->data, n));
}

static void compare_attr(const ref_attr *a, const ref_attr *b)
{
    CHECK(str_eq(a->name, b->name) && a->type == b->type);
    switch (a->type) {
    case REF_ATTR_FLOAT: CHECK(a->f == b->f); break;
    case REF_ATTR_INT: CHECK(a->i == b->i); break;
    case REF_ATTR_STRING: CHECK(a->s_len == b->s_len && !memcmp(a->s, b->s, a->s_len + 1)); break;
    case REF_ATTR_TENSOR: CHECK(a->t && b->t && tensor_eq(a->t, b->t)); break;
    case REF_ATTR_FLOATS: CHECK(a->n == b->n && !memcmp(a->floats, b->floats, a->n * sizeof(float))); break;
    case REF_ATTR_INTS: CHECK(a->n == b->n && !memcmp(a->ints, b->ints, a->n * sizeof(int64_t))); break;
    case REF_ATTR_STRINGS:
        CHECK(a->n == b->n);
        for (size_t i = 0; i < a->n && i < b->n; i++)
            CHECK(str_eq(a->strings[i], b->strings[i]));
        break;
    default: CHECK(!"unexpected attribute type");
    }
}

static void compare_vi(const ref_value_info *a, const ref_value_info *b, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        CHECK(str_eq(a[k].name, b[k].name) && a[k].elem_type == b[k].elem_type && a[k].rank == b[k].rank);
        for (int i = 0; i < a[k].rank && a[k].rank == b[k].rank; i++)
            CHECK(a[k].dims[i].value == b[k].dims[i].value && str_eq(a[k].dims[i].param, b[k].dims[i].param));
    }
}

static void compare_models(const ref_model *a, const ref_model *b)
{
    CHECK(a->ir_version == b->ir_version);
    CHECK(str_eq(a->producer_name, b->producer_name) && str_eq(a->producer_version, b->producer_version));
    CHECK(a->n_opsets == b->n_opsets);
    for (size_t i = 0; i < a->n_opsets && i < b->n_opsets; i++)
        CHECK(str_eq(a->opsets[i].domain, b->opsets[i].domain) && a->opsets[i].version == b->opsets[i].version);
    const ref_graph *ga = &a->graph, *gb = &b->graph;
    CHECK(str_eq(ga->name, gb->name));
    CHECK(ga->n_nodes == gb->n_nodes);
    for (size_t k = 0; k < ga->n_nodes && k < gb->n_nodes; k++) {
        const ref_node *x = &ga->nodes[k], *y = &gb->nodes[k];
        CHECK(str_eq(x->name, y->name) && str_eq(x->op_type, y->op_type) && str_eq(x->domain, y->domain));
        CHECK(x->n_inputs == y->n_inputs && x->n_outputs == y->n_outputs && x->n_attrs == y->n_attrs);
        for (int i = 0; i < x->n_inputs && i < y->n_inputs; i++)
            CHECK(str_eq(x->inputs[i], y->inputs[i]));
        for (int i = 0; i < x->n_outputs && i < y->n_outputs; i++)
            CHECK(str_eq(x->outputs[i], y->outputs[i]));
        for (int i = 0; i < x->n_attrs && i < y->n_attrs; i++)
            compare_attr(&x->attrs[i], &y->attrs[i]);
    }
    CHECK(ga->n_inits == gb->n_inits);
    for (size_t k = 0; k < ga->n_inits && k < gb->n_inits; k++) {
        CHECK(str_eq(ga->inits[k].name, gb->inits[k].name) && ga->inits[k].nbytes == gb->inits[k].nbytes);
        CHECK(tensor_eq(&ga->inits[k].t, &gb->inits[k].t));
    }
    CHECK(ga->n_inputs == gb->n_inputs && ga->n_outputs == gb->n_outputs && ga->n_value_infos == gb->n_value_infos);
    compare_vi(ga->inputs, gb->inputs, ga->n_inputs < gb->n_inputs ? ga->n_inputs : gb->n_inputs);
    compare_vi(ga->outputs, gb->outputs, ga->n_outputs < gb->n_outputs ? ga->n_outputs : gb->n_outputs);
    compare_vi(ga->value_infos, gb->value_infos,
               ga->n_value_infos < gb->n_value_infos ? ga->n_value_infos : gb->n_value_infos);
}

/* ================================================================================================
 * The written file's external_data entries, read with our own wire cursor
 * ============================================================================================== */

typedef struct ext_entry {
    char name[16], location[64];
    long long offset, length;
    int data_location;
} ext_entry;

static void entry_kv(onnx_pb *e, ext_entry *x)
{
    char key[16] = "", val[64] = "";
    while (onnx_pb_more(e)) {
        uint32_t f;
        int wire;
        const uint8_t *p;
        size_t n;
        if (onnx_pb_tag(e, &f, &wire) || onnx_pb_bytes(e, &p, &n))
            return;
        snprintf(f == 1 ? key : val, f == 1 ? sizeof key : sizeof val, "%.*s", (int)n, p);
    }
    if (!strcmp(key, "location"))
        snprintf(x->location, sizeof x->location, "%s", val);
    else if (!strcmp(key, "offset"))
        x->offset = atoll(val);
    else if (!strcmp(key, "length"))
        x->length = atoll(val);
}

/* Walk ModelProto.graph.initializer[*] and note name, external entries and data_location. */
static int read_ext_entries(const uint8_t *buf, size_t len, ext_entry *out, int cap)
{
    onnx_error oe;
    onnx_pb_trace tr;
    onnx_pb_trace_init(&tr, &oe, "model");
    onnx_pb r, g, t, e;
    onnx_pb_init(&r, buf, len, &tr);
    int n = 0;
    uint32_t f;
    int wire;
    while (onnx_pb_more(&r) && !onnx_pb_tag(&r, &f, &wire)) {
        if (f != 7) {
            onnx_pb_skip(&r, wire);
            continue;
        }
        onnx_pb_sub(&r, &g);
        while (onnx_pb_more(&g) && !onnx_pb_tag(&g, &f, &wire)) {
            if (f != 5 || n == cap) {
                onnx_pb_skip(&g, wire);
                continue;
            }
            onnx_pb_sub(&g, &t);
            ext_entry *x = &out[n++];
            memset(x, 0, sizeof *x);
            x->offset = x->length = -1;
            while (onnx_pb_more(&t) && !onnx_pb_tag(&t, &f, &wire)) {
                const uint8_t *p;
                size_t k;
                uint64_t v;
                if (f == 8 && !onnx_pb_bytes(&t, &p, &k))
                    snprintf(x->name, sizeof x->name, "%.*s", (int)k, p);
                else if (f == 13 && !onnx_pb_sub(&t, &e))
                    entry_kv(&e, x);
                else if (f == 14 && !onnx_pb_varint(&t, &v))
                    x->data_location = (int)v;
                else if (f != 8 && f != 13 && f != 14)
                    onnx_pb_skip(&t, wire);
            }
        }
    }
    return n;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    *len = fread(p, 1, (size_t)n, f);
    fclose(f);
    return p;
}

/* ================================================================================================
 * Tests
 * ============================================================================================== */

static int have_onnx_python(void)
{
    static int state = -1;
    if (state < 0) {
        state = system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") == 0;
        if (!state)
            printf("note: /usr/bin/python3 has no onnx module; onnx.checker sub-checks skipped\n");
    }
    return state;
}

static void check_with_onnx(const char *path)
{
    if (!have_onnx_python())
        return;
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]))\" '%s'", path);
    int rc = system(cmd);
    CHECK(rc == 0);
    if (rc)
        fprintf(stderr, "onnx.checker refused %s\n", path);
}

/* Pointer p lies in one of m's mappings at a file offset that is a multiple of align. */
static int mapped_at_multiple(const ref_model *m, const void *p, size_t align)
{
    for (size_t i = 0; i < m->n_maps; i++) {
        const uint8_t *a = m->maps[i].addr;
        if ((const uint8_t *)p >= a && (const uint8_t *)p < a + m->maps[i].len)
            return ((size_t)((const uint8_t *)p - a)) % align == 0;
    }
    return 0;
}

static void test_round_trip(int external)
{
    ref_model *src = build_model();
    char path[128];
    snprintf(path, sizeof path, "%s/rt%d.onnx", tmpdir, external);
    CHECK_OK(ref_onnx_write(src, path, external, &err), &err);
    check_with_onnx(path);

    size_t len = 0;
    uint8_t *bytes = slurp(path, &len);
    CHECK(bytes != NULL);
    ext_entry ents[8];
    int n = bytes ? read_ext_entries(bytes, len, ents, 8) : 0;
    free(bytes);
    CHECK(n == 6);
    char data_path[160], base[32];
    snprintf(data_path, sizeof data_path, "%s.data", path);
    snprintf(base, sizeof base, "rt%d.onnx.data", external);
    struct stat st;
    int has_data = stat(data_path, &st) == 0;
    CHECK(has_data == external);
    for (int k = 0; k < n; k++) {
        int big = !strcmp(ents[k].name, "W") || !strcmp(ents[k].name, "I");
        if (external && big) {
            CHECK(ents[k].data_location == 1 && !strcmp(ents[k].location, base));
            CHECK(ents[k].offset >= 0 && ents[k].offset % 4096 == 0);
            CHECK(ents[k].length == (!strcmp(ents[k].name, "W") ? 1728 : 2400));
            CHECK(has_data && ents[k].offset + ents[k].length <= (long long)st.st_size);
        } else {
            CHECK(ents[k].data_location == 0 && ents[k].location[0] == 0 && ents[k].offset == -1);
        }
    }
    if (external)
        CHECK(ents[0].offset == 0 && ents[2].offset == 4096 && st.st_size == 4096 + 2400);

    for (int mm = 0; mm < 2; mm++) {
        ref_options o;
        ref_options_init(&o);
        o.mmap = mm;
        ref_model *back = NULL;
        CHECK_OK(ref_model_read(path, &o, &back, &err), &err);
        if (!back)
            continue;
        compare_models(src, back);
        for (size_t k = 0; k < back->graph.n_inits; k++) {
            const ref_initializer *in = &back->graph.inits[k];
            int big = !strcmp(in->name, "W") || !strcmp(in->name, "I");
            if (!mm)
                CHECK(in->storage == REF_STORAGE_HEAP);
            else if (external && big)
                CHECK(in->storage == REF_STORAGE_MAPPED && mapped_at_multiple(back, in->t.data, 4096));
        }
        ref_model_info info;
        ref_model_get_info(back, &info);
        CHECK(info.n_nodes == 3 && info.n_initializers == 6 && info.weight_bytes == 1728 + 64 + 2400 + 5 + 4);
        if (!mm)
            CHECK(info.mapped_bytes == 0);
        else if (external)
            CHECK(info.mapped_bytes >= 1728 + 2400);
        ref_model_free(back);
    }
    ref_model_unref(src);
}

static void test_defaults_and_overwrite(void)
{
    /* ir_version 0 and an empty graph name get the checker-friendly defaults; a second write replaces the file. */
    ref_model *m = ref_model_new();
    ref_model_add_opset(m, "", 13);
    static const char *in[] = {"x"};
    add_node(m, "", "Identity", "", 1, in, "y", 0);
    const int64_t d[] = {2};
    set_vi(m, ref_graph_add_input(m), "x", REF_DT_FLOAT, 1, d, NULL);
    set_vi(m, ref_graph_add_output(m), "y", REF_DT_FLOAT, 1, d, NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/min.onnx", tmpdir);
    CHECK_OK(ref_onnx_write(m, path, false, &err), &err);
    CHECK_OK(ref_onnx_write(m, path, true, &err), &err); /* nothing big enough: no .data file */
    check_with_onnx(path);
    char dp[160];
    snprintf(dp, sizeof dp, "%s.data", path);
    CHECK(access(dp, F_OK) != 0);
    ref_model *back = NULL;
    CHECK_OK(ref_model_read(path, NULL, &back, &err), &err);
    if (back) {
        CHECK(back->ir_version == 8 && !strcmp(back->graph.name, "graph"));
        ref_model_free(back);
    }
    ref_model_unref(m);
}

static int count_tmp_files(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void test_errors(void)
{
    ref_model *m = build_model();
    CHECK(ref_onnx_write(m, "/nonexistent/dir/x.onnx", false, &err) == REF_E_IO);
    CHECK(strstr(err.msg, "/nonexistent/dir/x.onnx") != NULL);
    CHECK(ref_onnx_write(m, "/nonexistent/dir/x.onnx", true, &err) == REF_E_IO);
    CHECK(strstr(err.msg, "/nonexistent/dir/x.onnx") != NULL);
    /* A GRAPH attribute cannot be written: the error names node and attribute, and no file appears. */
    ref_attr *a = &m->graph.nodes[2].attrs[1];
    a->type = REF_ATTR_GRAPH;
    char path[128];
    snprintf(path, sizeof path, "%s/graph_attr.onnx", tmpdir);
    CHECK(ref_onnx_write(m, path, false, &err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "'foo'") && strstr(err.msg, "'count'"));
    CHECK(access(path, F_OK) != 0);
    a->type = REF_ATTR_INT;
    /* An initializer claiming bytes it does not have. */
    void *keep = m->graph.inits[1].t.data;
    m->graph.inits[1].t.data = NULL;
    CHECK(ref_onnx_write(m, path, false, &err) == REF_E_INVALID && strstr(err.msg, "'B'"));
    m->graph.inits[1].t.data = keep;
    CHECK(ref_onnx_write(NULL, path, false, &err) == REF_E_INVALID);
    /* The data file cannot take its name (a folder is in the way): the error names it, no model appears. */
    char blocked[128], blocked_data[140];
    snprintf(blocked, sizeof blocked, "%s/blocked.onnx", tmpdir);
    snprintf(blocked_data, sizeof blocked_data, "%s.data", blocked);
    CHECK(mkdir(blocked_data, 0755) == 0);
    CHECK(ref_onnx_write(m, blocked, true, &err) == REF_E_IO);
    CHECK(strstr(err.msg, "blocked.onnx.data") != NULL && access(blocked, F_OK) != 0);
    CHECK(count_tmp_files() == 0);
    ref_model_unref(m);
}

/* SQLite-style: fail allocation k for k = 0, 1, ... until the write succeeds; each failure is clean. */
static void test_oom_loop(void)
{
    ref_model *m = build_model();
    char path[128], data[140];
    snprintf(path, sizeof path, "%s/oom.onnx", tmpdir);
    snprintf(data, sizeof data, "%s.data", path);
    int k, rc = -1, clean = 1;
    for (k = 0; k < 1000 && rc != 0; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_alloc_fail_after(k, 0);
        rc = ref_onnx_write(m, path, true, &err);
        ref_alloc_fail_after(-1, 0);
        ref_alloc_get_stats(&s1);
        if (rc)
            clean &= rc == REF_E_NOMEM && access(path, F_OK) != 0 && access(data, F_OK) != 0;
        clean &= s1.live_bytes == s0.live_bytes;
    }
    CHECK(rc == 0 && clean && k > 1);
    CHECK(count_tmp_files() == 0);
    ref_model_unref(m);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_onnx_write.XXXXXX");
    if (!mkdtemp(tmpdir))
        CHECK_SKIP("cannot create a temporary folder");
    ref_alloc_stats s0, s1;
    ref_alloc_get_stats(&s0);
    test_round_trip(0);
    test_round_trip(1);
    test_defaults_and_overwrite();
    test_errors();
    test_oom_loop();
    ref_alloc_get_stats(&s1);
    CHECK(s1.live_bytes == s0.live_bytes);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
