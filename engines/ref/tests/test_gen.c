/* test_gen.c: unit tests of the model generator: structure, parameter counts, determinism, external-data layout,
 * symbolic dims, bad options and out-of-memory behaviour, each model written and read back through the engine.
 * It must never trust the generator's own figures: expected counts are computed here from the architectures. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gen/gen.h"
#include "model.h"
#include "refengine.h"

static char tmpdir[256];

/* ------------------------------------------------------------------------------------------------
 * Files
 * ---------------------------------------------------------------------------------------------- */

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(tmp_path(e->d_name));
    closedir(d);
    rmdir(tmpdir);
}

/* The whole file in a malloc'd buffer (test memory, not the engine's), or NULL. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

static int same_bytes(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    unsigned char *pa = slurp(a, &la), *pb = slurp(b, &lb);
    int same = pa && pb && la == lb && !memcmp(pa, pb, la);
    free(pa);
    free(pb);
    return same;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* ------------------------------------------------------------------------------------------------
 * Generating and inspecting models
 * ---------------------------------------------------------------------------------------------- */

static ref_gen_options small(const char *arch)
{
    ref_gen_options o;
    ref_gen_options_init(&o);
    o.arch = arch;
    o.image_size = 32;
    o.mlp_hidden = 64;
    o.hidden = 32;
    o.heads = 2;
    o.layers = 2;
    o.seq = 8;
    return o;
}

/* Generate o into tmp file `name` and read it back (mmap on), or NULL after a failed check. */
static ref_model *gen_read(const ref_gen_options *o, const char *name)
{
    ref_error err = {0};
    const char *path = tmp_path(name);
    int rc = ref_gen_model(o, path, &err);
    CHECK_OK(rc, &err);
    if (rc)
        return NULL;
    ref_model *m = NULL;
    rc = ref_model_read(path, NULL, &m, &err);
    CHECK_OK(rc, &err);
    return rc ? NULL : m;
}

/* Node names, node outputs and initializer names are each unique, and no output shadows an initializer. */
static void check_names(const ref_model *m)
{
    const ref_graph *g = &m->graph;
    int dup = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        for (size_t j = 0; j < i; j++)
            dup += !strcmp(g->nodes[i].name, g->nodes[j].name) ||
                   !strcmp(g->nodes[i].outputs[0], g->nodes[j].outputs[0]);
        dup += ref_model_find_init(m, g->nodes[i].outputs[0]) != NULL;
    }
    for (size_t i = 0; i < g->n_inits; i++)
        for (size_t j = 0; j < i; j++)
            dup += !strcmp(g->inits[i].name, g->inits[j].name);
    CHECK(dup == 0);
}

static int count_op(const ref_model *m, const char *op)
{
    int n = 0;
    for (size_t i = 0; i < m->graph.n_nodes; i++)
        n += !strcmp(m->graph.nodes[i].op_type, op);
    return n;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Elements of float initializers whose names end in .weight or .bias (params), .running_mean or .running_var
 * (buffers). */
static void count_tensors(const ref_model *m, int64_t *params, int64_t *buffers)
{
    *params = *buffers = 0;
    for (size_t i = 0; i < m->graph.n_inits; i++) {
        const ref_initializer *in = &m->graph.inits[i];
        int64_t n = ref_tensor_numel(&in->t);
        if (ends_with(in->name, ".weight") || ends_with(in->name, ".bias"))
            *params += n;
        else if (ends_with(in->name, ".running_mean") || ends_with(in->name, ".running_var"))
            *buffers += n;
    }
}

static const ref_initializer *find(const ref_model *m, const char *name)
{
    const ref_initializer *in = ref_model_find_init(m, name);
    CHECK(in != NULL);
    if (!in)
        fprintf(stderr, "  missing initializer %s\n", name);
    return in;
}

struct op_count {
    const char *op;
    int n;
};

static void check_ops(const ref_model *m, const struct op_count *want, size_t n_want, size_t total)
{
    for (size_t i = 0; i < n_want; i++) {
        int got = count_op(m, want[i].op);
        CHECK(got == want[i].n);
        if (got != want[i].n)
            fprintf(stderr, "  %s: %d nodes, expected %d\n", want[i].op, got, want[i].n);
    }
    CHECK(m->graph.n_nodes == total);
    check_names(m);
}

/* Input 0 and output 0 are float with exactly these dims (param names where dims[i] < 0). */
static void check_io(const ref_value_info *v, const char *name, int rank, const int64_t *dims, const char *const *params)
{
    CHECK(!strcmp(v->name, name));
    CHECK(v->elem_type == REF_DT_FLOAT);
    CHECK(v->rank == rank);
    for (int i = 0; i < rank && i < v->rank; i++) {
        if (params && params[i])
            CHECK(v->dims[i].param && !strcmp(v->dims[i].param, params[i]));
        else
            CHECK(!v->dims[i].param && v->dims[i].value == dims[i]);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Parameter counts, derived from the architectures' definitions
 * ---------------------------------------------------------------------------------------------- */

static int64_t conv_params(int64_t cin, int64_t cout, int64_t k, int64_t group)
{
    return cout * (cin / group) * k * k;
}

static int64_t linear_params(int64_t in, int64_t out)
{
    return in * out + out;
}

/* MobileNetV2's rounding of channel counts to multiples of 8 (paper / reference implementation). */
static int64_t round8(double v)
{
    int64_t r = (int64_t)((v + 4.0) / 8.0) * 8;
    if (r < 8)
        r = 8;
    return (double)r < 0.9 * v ? r + 8 : r;
}

/* Parameters and batch-norm channels (each BN has 2 params and 2 buffers per channel) of MobileNetV2. */
static void mobilenet_expected(double w, int64_t *params, int64_t *bn_channels)
{
    static const int t[] = {1, 6, 6, 6, 6, 6, 6}, c[] = {16, 24, 32, 64, 96, 160, 320}, n[] = {1, 2, 3, 4, 3, 3, 1};
    int64_t in = round8(32 * w), p = conv_params(3, in, 3, 1), bn = in;
    for (int r = 0; r < 7; r++) {
        int64_t out = round8(c[r] * w);
        for (int i = 0; i < n[r]; i++) {
            int64_t h = in * t[r];
            if (t[r] != 1) {
                p += conv_params(in, h, 1, 1);
                bn += h;
            }
            p += conv_params(h, h, 3, h) + conv_params(h, out, 1, 1);
            bn += h + out;
            in = out;
        }
    }
    int64_t last = round8(1280 * (w > 1 ? w : 1));
    p += conv_params(in, last, 1, 1) + linear_params(last, 1000);
    bn += last;
    *params = p + 2 * bn;
    *bn_channels = bn;
}

static void resnet_expected(int depth, int64_t *params, int64_t *bn_channels)
{
    const int blocks[4] = {depth == 50 ? 3 : 2, depth == 50 ? 4 : 2, depth == 50 ? 6 : 2, depth == 50 ? 3 : 2};
    int64_t p = conv_params(3, 64, 7, 1), bn = 64, in = 64;
    for (int l = 0; l < 4; l++) {
        int64_t planes = 64 << l;
        for (int i = 0; i < blocks[l]; i++) {
            int64_t out = depth == 50 ? planes * 4 : planes;
            if (depth == 50) {
                p += conv_params(in, planes, 1, 1) + conv_params(planes, planes, 3, 1) + conv_params(planes, out, 1, 1);
                bn += planes + planes + out;
            } else {
                p += conv_params(in, planes, 3, 1) + conv_params(planes, planes, 3, 1);
                bn += 2 * planes;
            }
            if (in != out || (l > 0 && i == 0)) {
                p += conv_params(in, out, 1, 1);
                bn += out;
            }
            in = out;
        }
    }
    p += linear_params(in, 1000);
    *params = p + 2 * bn;
    *bn_channels = bn;
}

/* ------------------------------------------------------------------------------------------------
 * Tests per architecture
 * ---------------------------------------------------------------------------------------------- */

static void test_mlp(void)
{
    ref_gen_options o = small("mlp");
    ref_model *m = gen_read(&o, "mlp.onnx");
    if (!m)
        return;
    static const struct op_count ops[] = {{"Gemm", 4}, {"Relu", 3}, {"Softmax", 1}};
    check_ops(m, ops, 3, 8);
    int64_t p, bufs;
    count_tensors(m, &p, &bufs);
    CHECK(p == linear_params(784, 64) + 2 * linear_params(64, 64) + linear_params(64, 10));
    CHECK(bufs == 0);
    CHECK(m->ir_version == 8 && ref_model_opset(m) == 17);
    CHECK(m->producer_name && !strcmp(m->producer_name, "memleak-refengine"));
    check_io(&m->graph.inputs[0], "input", 2, (const int64_t[]){1, 784}, NULL);
    check_io(&m->graph.outputs[0], "output", 2, (const int64_t[]){1, 10}, NULL);

    /* Fan-in scaling: fc1 reads a signed input (gain 1), so |w| <= sqrt(3/784) and var(w) ~ 1/784. */
    const ref_initializer *w = find(m, "fc1.weight");
    if (w) {
        CHECK(w->t.dtype == REF_DT_FLOAT && w->t.rank == 2 && w->t.dims[0] == 64 && w->t.dims[1] == 784);
        const float *v = w->t.data;
        double bound = sqrt(3.0 / 784), sum = 0, sq = 0, maxabs = 0;
        int64_t n = ref_tensor_numel(&w->t);
        for (int64_t i = 0; i < n; i++) {
            sum += v[i];
            sq += (double)v[i] * v[i];
            maxabs = fabs(v[i]) > maxabs ? fabs(v[i]) : maxabs;
        }
        CHECK(maxabs <= bound && maxabs > 0.95 * bound);
        CHECK_NEAR(sum / (double)n, 0.0, 0.01 * bound);
        CHECK_NEAR(sq / (double)n, 1.0 / 784, 0.05 / 784);
    }
    const ref_node *g = &m->graph.nodes[0];
    CHECK(!strcmp(g->op_type, "Gemm") && ref_attr_int_or(g, "transB", 0) == 1);
    ref_model_free(m);
}

static void test_mobilenet(void)
{
    ref_gen_options o = small("mobilenetv2");
    ref_model *m = gen_read(&o, "mbv2.onnx");
    if (!m)
        return;
    /* 17 inverted residual blocks, 16 with an expansion conv; 10 have stride 1 and equal channels. */
    static const struct op_count ops[] = {{"Conv", 52}, {"BatchNormalization", 52}, {"Clip", 35}, {"Add", 10},
                                          {"GlobalAveragePool", 1}, {"Flatten", 1}, {"Gemm", 1}};
    check_ops(m, ops, 7, 152);
    int64_t p, bufs, want_p, bn;
    count_tensors(m, &p, &bufs);
    mobilenet_expected(1.0, &want_p, &bn);
    CHECK(want_p == 3504872); /* torchvision's mobilenet_v2() */
    CHECK(p == want_p);
    CHECK(bufs == 2 * bn);
    check_io(&m->graph.inputs[0], "input", 4, (const int64_t[]){1, 3, 32, 32}, NULL);
    check_io(&m->graph.outputs[0], "output", 2, (const int64_t[]){1, 1000}, NULL);

    /* Depthwise convs have group = channels; Clip takes its bounds 0 and 6 as inputs. */
    int depthwise = 0;
    for (size_t i = 0; i < m->graph.n_nodes; i++) {
        const ref_node *n = &m->graph.nodes[i];
        if (!strcmp(n->op_type, "Conv") && ref_attr_int_or(n, "group", 1) > 1) {
            const ref_initializer *w = ref_model_find_init(m, n->inputs[1]);
            CHECK(w && w->t.dims[1] == 1 && w->t.dims[0] == ref_attr_int_or(n, "group", 1));
            depthwise++;
        }
        if (!strcmp(n->op_type, "Clip")) {
            CHECK(n->n_inputs == 3);
            const ref_initializer *lo = ref_model_find_init(m, n->inputs[1]), *hi = ref_model_find_init(m, n->inputs[2]);
            CHECK(lo && hi && lo->t.rank == 0 && hi->t.rank == 0);
            if (lo && hi)
                CHECK(*(const float *)lo->t.data == 0.0f && *(const float *)hi->t.data == 6.0f);
        }
    }
    CHECK(depthwise == 17);
    /* Batch norm stays near identity: var in 1 ± 0.1, gamma of a non-residual BN in 1 ± 0.1. */
    const ref_initializer *var = find(m, "features.0.1.running_var"), *gamma = find(m, "features.0.1.weight");
    for (int64_t i = 0; var && gamma && i < var->t.dims[0]; i++) {
        float v = ((const float *)var->t.data)[i], g = ((const float *)gamma->t.data)[i];
        CHECK(v >= 0.9f && v <= 1.1f && g >= 0.9f && g <= 1.1f);
    }
    ref_model_free(m);

    /* A width multiplier changes every channel count; check against the formula. */
    o.width_mult = 0.5f;
    m = gen_read(&o, "mbv2_050.onnx");
    if (!m)
        return;
    count_tensors(m, &p, &bufs);
    mobilenet_expected(0.5, &want_p, &bn);
    CHECK(p == want_p);
    CHECK(bufs == 2 * bn);
    const ref_initializer *stem = find(m, "features.0.0.weight");
    CHECK(stem && stem->t.dims[0] == 16);
    ref_model_free(m);
}

static void test_resnet(int depth)
{
    ref_gen_options o = small(depth == 50 ? "resnet50" : "resnet18");
    ref_model *m = gen_read(&o, depth == 50 ? "r50.onnx" : "r18.onnx");
    if (!m)
        return;
    int blocks = depth == 50 ? 16 : 8, convs_per_block = depth == 50 ? 3 : 2, downsample = depth == 50 ? 4 : 3;
    int conv = 1 + blocks * convs_per_block + downsample;
    const struct op_count ops[] = {{"Conv", conv}, {"BatchNormalization", conv}, {"Relu", 1 + blocks * convs_per_block},
                                   {"Add", blocks}, {"MaxPool", 1}, {"GlobalAveragePool", 1}, {"Flatten", 1},
                                   {"Gemm", 1}};
    check_ops(m, ops, 8, (size_t)(2 * conv + 1 + blocks * convs_per_block + blocks + 4));
    int64_t p, bufs, want_p, bn;
    count_tensors(m, &p, &bufs);
    resnet_expected(depth, &want_p, &bn);
    CHECK(want_p == (depth == 50 ? 25557032 : 11689512)); /* torchvision's resnet50() / resnet18() */
    CHECK(p == want_p);
    CHECK(bufs == 2 * bn);
    find(m, "layer2.0.downsample.0.weight");
    find(m, "layer4.1.bn2.running_var");
    const ref_node *mp = NULL;
    for (size_t i = 0; i < m->graph.n_nodes; i++)
        if (!strcmp(m->graph.nodes[i].op_type, "MaxPool"))
            mp = &m->graph.nodes[i];
    const int64_t *v;
    CHECK(mp && ref_attr_ints(mp, "kernel_shape", &v) == 2 && v[0] == 3 && v[1] == 3);
    CHECK(mp && ref_attr_ints(mp, "strides", &v) == 2 && v[0] == 2 && v[1] == 2);
    CHECK(mp && ref_attr_ints(mp, "pads", &v) == 4 && v[0] == 1 && v[3] == 1);
    ref_model_free(m);
}

/* The reshape targets must come from Shape -> Gather -> Unsqueeze -> Concat, never from an initializer. */
static void check_reshape_targets(const ref_model *m)
{
    for (size_t i = 0; i < m->graph.n_nodes; i++) {
        const ref_node *n = &m->graph.nodes[i];
        if (strcmp(n->op_type, "Reshape"))
            continue;
        CHECK(!ref_model_find_init(m, n->inputs[1]));
        const ref_node *src = NULL;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(m->graph.nodes[j].outputs[0], n->inputs[1]))
                src = &m->graph.nodes[j];
        CHECK(src && !strcmp(src->op_type, "Concat"));
    }
}

static void test_transformer(void)
{
    ref_gen_options o = small("transformer");
    ref_model *m = gen_read(&o, "tf.onnx");
    if (!m)
        return;
    /* Per layer: 4 projections + 2 attention MatMuls + 2 FFN MatMuls; 6 bias Adds, 2 residuals, 1 in GELU;
     * Mul by the scale and 2 in GELU; 4 Reshape/Transpose pairs; the shape subgraph. */
    static const struct op_count ops[] = {
        {"MatMul", 16}, {"Add", 18}, {"Mul", 6}, {"Div", 2}, {"Erf", 2}, {"Softmax", 2}, {"Reshape", 8},
        {"Transpose", 8}, {"LayerNormalization", 4}, {"Shape", 2}, {"Gather", 4}, {"Unsqueeze", 4}, {"Concat", 4}};
    check_ops(m, ops, 13, 80);
    int64_t p, bufs, h = 32;
    count_tensors(m, &p, &bufs);
    CHECK(p == 2 * (4 * linear_params(h, h) + linear_params(h, 4 * h) + linear_params(4 * h, h) + 2 * 2 * h));
    CHECK(bufs == 0);
    check_io(&m->graph.inputs[0], "input", 3, (const int64_t[]){1, 8, 32}, NULL);
    check_io(&m->graph.outputs[0], "output", 3, (const int64_t[]){1, 8, 32}, NULL);
    check_reshape_targets(m);
    const ref_initializer *scale = find(m, "const.attn_scale");
    if (scale)
        CHECK_NEAR(*(const float *)scale->t.data, 1.0 / sqrt(16.0), 1e-7);
    for (size_t i = 0; i < m->graph.n_nodes; i++) {
        const ref_node *n = &m->graph.nodes[i];
        const int64_t *perm;
        if (!strcmp(n->name, "layers.0.attn.k.transpose"))
            CHECK(ref_attr_ints(n, "perm", &perm) == 4 && perm[1] == 2 && perm[2] == 3 && perm[3] == 1);
        if (!strcmp(n->op_type, "LayerNormalization"))
            CHECK(ref_attr_int_or(n, "axis", 0) == -1);
    }
    ref_model_free(m);
}

/* ------------------------------------------------------------------------------------------------
 * Options that cut across architectures
 * ---------------------------------------------------------------------------------------------- */

static void test_determinism(void)
{
    ref_error err = {0};
    ref_gen_options o = small("transformer");
    CHECK_OK(ref_gen_model(&o, tmp_path("d1.onnx"), &err), &err);
    CHECK_OK(ref_gen_model(&o, tmp_path("d2.onnx"), &err), &err);
    CHECK(same_bytes(tmp_path("d1.onnx"), tmp_path("d2.onnx")));
    o.external_data = 1;
    CHECK_OK(ref_gen_model(&o, tmp_path("e1.onnx"), &err), &err);
    CHECK_OK(ref_gen_model(&o, tmp_path("e2.onnx"), &err), &err);
    CHECK(same_bytes(tmp_path("e1.onnx.data"), tmp_path("e2.onnx.data")));
    o.seed = 2;
    o.external_data = 0;
    CHECK_OK(ref_gen_model(&o, tmp_path("d3.onnx"), &err), &err);
    CHECK(!same_bytes(tmp_path("d1.onnx"), tmp_path("d3.onnx")));

    /* Same structure, different weights, every random tensor changed. */
    ref_model *a = NULL, *b = NULL;
    CHECK_OK(ref_model_read(tmp_path("d1.onnx"), NULL, &a, &err), &err);
    CHECK_OK(ref_model_read(tmp_path("d3.onnx"), NULL, &b, &err), &err);
    if (a && b) {
        CHECK(a->graph.n_nodes == b->graph.n_nodes && a->graph.n_inits == b->graph.n_inits);
        for (size_t i = 0; i < a->graph.n_inits && i < b->graph.n_inits; i++) {
            const ref_initializer *x = &a->graph.inits[i], *y = &b->graph.inits[i];
            CHECK(x->nbytes == y->nbytes && !strcmp(x->name, y->name));
            int random = ends_with(x->name, ".weight") || ends_with(x->name, ".bias");
            if (x->nbytes == y->nbytes)
                CHECK(random == (memcmp(x->t.data, y->t.data, x->nbytes) != 0));
        }
    }
    ref_model_free(a);
    ref_model_free(b);

    /* Weights are a function of (seed, tensor index, element index) only: a wider first layer keeps the
     * narrower one's values as its leading rows. */
    ref_gen_options n1 = small("mlp"), n2 = small("mlp");
    n2.mlp_hidden = 2 * n1.mlp_hidden;
    a = gen_read(&n1, "narrow.onnx");
    b = gen_read(&n2, "wide.onnx");
    const ref_initializer *wa = a ? find(a, "fc1.weight") : NULL, *wb = b ? find(b, "fc1.weight") : NULL;
    if (wa && wb) {
        /* Same tensor index and elements, but the bound sqrt(3/fan_in) is the same too (fan-in is 784). */
        CHECK(!memcmp(wa->t.data, wb->t.data, wa->nbytes));
    }
    ref_model_free(a);
    ref_model_free(b);
}

static void test_external_data(void)
{
    ref_gen_options o = small("resnet18");
    o.external_data = 1;
    ref_model *m = gen_read(&o, "ext.onnx");
    if (!m)
        return;
    struct stat onnx_st, data_st;
    CHECK(stat(tmp_path("ext.onnx"), &onnx_st) == 0 && stat(tmp_path("ext.onnx.data"), &data_st) == 0);
    CHECK(onnx_st.st_size < 64 * 1024); /* only the graph and the small tensors stay inline */

    /* The data file is mapped whole at a page boundary, so a 4096-aligned pointer is a 4096-aligned offset. */
    const ref_mapping *data_map = NULL;
    for (size_t i = 0; i < m->n_maps; i++)
        if ((off_t)m->maps[i].len == data_st.st_size)
            data_map = &m->maps[i];
    CHECK(data_map != NULL);
    int external = 0;
    int64_t external_bytes = 0;
    for (size_t i = 0; data_map && i < m->graph.n_inits; i++) {
        const ref_initializer *in = &m->graph.inits[i];
        if (in->nbytes < 1024)
            continue;
        const char *d = in->t.data, *base = data_map->addr;
        int inside = in->storage == REF_STORAGE_MAPPED && d >= base && d + in->nbytes <= base + data_map->len;
        CHECK(inside);
        if (inside) {
            CHECK((size_t)(d - base) % 4096 == 0);
            external++;
            external_bytes += (int64_t)in->nbytes;
        }
    }
    CHECK(external > 50);
    /* Nothing but the weights and their padding: less than a page of slack per tensor. */
    CHECK(data_st.st_size >= external_bytes && data_st.st_size < external_bytes + 4096 * (int64_t)external);
    ref_model_free(m);

    /* Same weights either way. */
    o.external_data = 0;
    ref_model *inl = gen_read(&o, "inline.onnx");
    ref_error err = {0};
    m = NULL;
    CHECK_OK(ref_model_read(tmp_path("ext.onnx"), NULL, &m, &err), &err);
    for (size_t i = 0; inl && m && i < m->graph.n_inits; i++) {
        const ref_initializer *a = &m->graph.inits[i], *b = ref_model_find_init(inl, a->name);
        CHECK(b && b->nbytes == a->nbytes && !memcmp(a->t.data, b->t.data, a->nbytes));
    }
    ref_model_free(inl);
    ref_model_free(m);
}

static void test_dynamic(void)
{
    static const char *const archs[] = {"mlp", "mobilenetv2", "resnet18", "transformer"};
    for (size_t i = 0; i < 4; i++) {
        ref_gen_options o = small(archs[i]);
        o.dynamic = 1;
        o.batch = 3;
        char name[64];
        snprintf(name, sizeof name, "dyn_%s.onnx", archs[i]);
        ref_model *m = gen_read(&o, name);
        if (!m)
            continue;
        const ref_value_info *in = &m->graph.inputs[0], *out = &m->graph.outputs[0];
        int tf = !strcmp(archs[i], "transformer");
        static const char *const bs[] = {"batch", "seq", NULL}, *const b[] = {"batch", NULL, NULL, NULL};
        if (tf) {
            check_io(in, "input", 3, (const int64_t[]){-1, -1, 32}, bs);
            check_io(out, "output", 3, (const int64_t[]){-1, -1, 32}, bs);
        } else {
            CHECK(in->rank >= 2 && in->dims[0].param && !strcmp(in->dims[0].param, "batch"));
            CHECK(in->rank >= 2 && !in->dims[1].param && in->dims[1].value == (i == 0 ? 784 : 3));
            check_io(out, "output", 2, (const int64_t[]){-1, i == 0 ? 10 : 1000}, b);
        }
        ref_model_free(m);
    }
    /* Without --dynamic the batch is a fixed dim. */
    ref_gen_options o = small("mlp");
    o.batch = 5;
    ref_model *m = gen_read(&o, "batch5.onnx");
    if (m)
        check_io(&m->graph.inputs[0], "input", 2, (const int64_t[]){5, 784}, NULL);
    ref_model_free(m);
}

static void expect_invalid(ref_gen_options o, const char *needle)
{
    ref_error err = {0};
    const char *path = tmp_path("bad.onnx");
    int rc = ref_gen_model(&o, path, &err);
    CHECK(rc == REF_E_INVALID && err.code == REF_E_INVALID);
    CHECK(strstr(err.msg, needle) != NULL);
    if (!strstr(err.msg, needle))
        fprintf(stderr, "  message '%s' does not name '%s'\n", err.msg, needle);
    CHECK(!file_exists(path));
}

static void test_bad_options(void)
{
    ref_gen_options o = small("vgg16");
    expect_invalid(o, "vgg16");
    o = small("mlp");
    o.batch = 0;
    expect_invalid(o, "batch");
    o = small("mobilenetv2");
    o.width_mult = 0.0f;
    expect_invalid(o, "width_mult");
    o.width_mult = NAN;
    expect_invalid(o, "width_mult");
    o = small("transformer");
    o.heads = 3;
    expect_invalid(o, "heads");
    o = small("resnet18");
    o.image_size = 2;
    expect_invalid(o, "image_size");
    o.arch = NULL;
    expect_invalid(o, "arch");

    /* Options an architecture does not use are not checked. */
    ref_error err = {0};
    o = small("mlp");
    o.heads = 3;
    o.width_mult = NAN;
    o.image_size = 0;
    CHECK_OK(ref_gen_validate(&o, &err), &err);

    o = small("mlp");
    CHECK(ref_gen_model(&o, NULL, &err) == REF_E_INVALID);
    CHECK(ref_gen_model(&o, "", &err) == REF_E_INVALID);
    /* An unwritable path is an I/O error naming the file. */
    CHECK(ref_gen_model(&o, "/nonexistent-dir/x/model.onnx", &err) == REF_E_IO);
    CHECK(strstr(err.msg, "/nonexistent-dir/x/model.onnx") != NULL);
    /* Past the single-file limit without external data: a range error before any allocation of that size. */
    o.mlp_hidden = 1 << 15;
    ref_gen_stats st;
    ref_model *m = NULL;
    CHECK(ref_gen_build(&o, &m, &st, &err) == REF_E_RANGE);
    CHECK(strstr(err.msg, "external data") != NULL && m == NULL);
}

/* SQLite-style: fail the n-th allocation for n = 0, 1, ... until the build succeeds; every failure must be a
 * clean REF_E_NOMEM with nothing leaked and nothing returned. */
static void test_oom(const char *arch)
{
    ref_gen_options o = small(arch);
    o.width_mult = 0.25f; /* keeps the mobilenet's weights small: each pass refills them */
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    int n, failures = 0;
    for (n = 0; n < 100000; n++) {
        ref_model *m = NULL;
        ref_error err = {0};
        ref_gen_stats st;
        ref_alloc_fail_after(n, 0);
        int rc = ref_gen_build(&o, &m, &st, &err);
        ref_alloc_fail_after(-1, 0);
        if (rc == REF_OK) {
            CHECK(m != NULL);
            ref_model_unref(m);
            break;
        }
        failures += rc != REF_E_NOMEM || m != NULL || !err.msg[0];
        ref_alloc_get_stats(&after);
        failures += after.live_bytes != before.live_bytes;
    }
    CHECK(failures == 0);
    CHECK(n > 10 && n < 100000);
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/test_gen.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    ref_alloc_stats start, end;
    ref_alloc_get_stats(&start);

    test_mlp();
    test_mobilenet();
    test_resnet(18);
    test_resnet(50);
    test_transformer();
    test_determinism();
    test_external_data();
    test_dynamic();
    test_bad_options();
    test_oom("mlp");
    test_oom("transformer");
    test_oom("mobilenetv2");

    ref_alloc_get_stats(&end);
    CHECK(end.live_bytes == start.live_bytes);
    remove_tmpdir();
    return check_summary();
}
