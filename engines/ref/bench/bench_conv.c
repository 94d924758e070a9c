/* bench_conv.c: times the Conv operator (pre-packed weights, planned scratch) on ResNet-50 and MobileNetV2
 * layer shapes, 1 and 2 threads, median of repeated runs. It must never be run by ctest: timings are not
 * assertions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "model.h"
#include "ops/op.h"
#include "pool.h"
#include "tensor.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct layer {
    const char *name;
    int64_t cin, hw, cout, k, stride, group;
} layer;

static ref_attr *add_attr(ref_node *n, const char *name, int type)
{
    ref_attr *a = &n->attrs[n->n_attrs++];
    a->name = name;
    a->type = type;
    return a;
}

/* Median GFLOP/s of `reps` timed batches of runs of one Conv node. */
static double bench_layer(const layer *L, ref_pool *pool, int reps)
{
    int64_t pad = L->k / 2, out = (L->hw + 2 * pad - L->k) / L->stride + 1;
    int64_t xd[4] = {1, L->cin, L->hw, L->hw}, wd[4] = {L->cout, L->cin / L->group, L->k, L->k};
    int64_t bd[1] = {L->cout}, pads[4] = {pad, pad, pad, pad}, strides[2] = {L->stride, L->stride};
    ref_tensor X = {.dtype = REF_DT_FLOAT}, W = {.dtype = REF_DT_FLOAT}, B = {.dtype = REF_DT_FLOAT};
    ref_tensor Y = {0};
    ref_tensor_set_shape(&X, 4, xd);
    ref_tensor_set_shape(&W, 4, wd);
    ref_tensor_set_shape(&B, 1, bd);
    X.data = ref_aligned_alloc(ref_tensor_nbytes(&X));
    W.data = ref_aligned_alloc(ref_tensor_nbytes(&W));
    B.data = ref_aligned_alloc(ref_tensor_nbytes(&B));
    for (int64_t i = 0; i < ref_tensor_numel(&X); i++)
        ((float *)X.data)[i] = (float)(i % 7) * 0.1f;
    for (int64_t i = 0; i < ref_tensor_numel(&W); i++)
        ((float *)W.data)[i] = (float)(i % 5) * 0.01f;
    memset(B.data, 0, ref_tensor_nbytes(&B));
    ref_attr attrs[4];
    memset(attrs, 0, sizeof attrs);
    ref_node n = {.name = "conv", .op_type = "Conv", .domain = "", .n_inputs = 3, .n_outputs = 1, .attrs = attrs};
    ref_attr *a = add_attr(&n, "pads", REF_ATTR_INTS);
    a->ints = pads;
    a->n = 4;
    a = add_attr(&n, "strides", REF_ATTR_INTS);
    a->ints = strides;
    a->n = 2;
    add_attr(&n, "group", REF_ATTR_INT)->i = L->group;
    const ref_op *op = ref_op_find("", "Conv");
    const ref_tensor *in[3] = {&X, &W, &B};
    ref_tensor *outp[1] = {&Y};
    ref_error err = {0};
    ref_op_ctx c = {.node = &n, .opset = 17, .n_in = 3, .n_out = 1, .in = in, .out = outp, .pool = pool,
                    .n_threads = ref_pool_threads(pool), .err = &err};
    void *state = NULL;
    if (op->infer(&c))
        goto fail;
    Y.data = ref_aligned_alloc(ref_tensor_nbytes(&Y));
    size_t ws = op->prepare_scratch_bytes(&c);
    c.scratch = ref_aligned_alloc(ws + 1);
    c.scratch_bytes = ws;
    int rc = op->prepare(&c, &state);
    ref_free(c.scratch);
    if (rc)
        goto fail;
    c.state = state;
    c.scratch_bytes = op->scratch_bytes(&c);
    c.scratch = ref_aligned_alloc(c.scratch_bytes + 1);
    double flops = 2.0 * (double)(L->cout * (L->cin / L->group) * L->k * L->k) * (double)(out * out), g[64];
    int inner = 1;
    for (;;) {
        double t0 = now_s();
        for (int i = 0; i < inner; i++)
            op->run(&c);
        if (now_s() - t0 >= 0.02)
            break;
        inner *= 2;
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (int i = 0; i < inner; i++)
            op->run(&c);
        g[r] = flops * inner / (now_s() - t0) * 1e-9;
    }
    qsort(g, (size_t)reps, sizeof g[0], cmp_double);
    op->state_free(state);
    ref_free(c.scratch);
    ref_free(X.data);
    ref_free(W.data);
    ref_free(B.data);
    ref_free(Y.data);
    return g[reps / 2];
fail:
    fprintf(stderr, "%s: %s\n", L->name, err.msg);
    exit(1);
}

int main(int argc, char **argv)
{
    /* bench_conv [REPS [NAME-SUBSTRING]] */
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1 || reps > 64)
        reps = 5;
    ref_error err = {0};
    ref_pool *p1 = NULL, *p2 = NULL;
    if (ref_pool_new(1, &p1, &err) || ref_pool_new(2, &p2, &err)) {
        fprintf(stderr, "pool: %s\n", err.msg);
        return 1;
    }
    const layer layers[] = {
        {"r50 conv1 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 1},
        {"r50 3x3 64->64 @56", 64, 56, 64, 3, 1, 1},
        {"r50 1x1 64->256 @56", 64, 56, 256, 1, 1, 1},
        {"r50 1x1 256->64 @56", 256, 56, 64, 1, 1, 1},
        {"r50 3x3/2 128->128 @56", 128, 56, 128, 3, 2, 1},
        {"r50 3x3 256->256 @14", 256, 14, 256, 3, 1, 1},
        {"r50 3x3 512->512 @7", 512, 7, 512, 3, 1, 1},
        {"r50 1x1 512->2048 @7", 512, 7, 2048, 1, 1, 1},
        {"r50 3x3/2 512->512 @14", 512, 14, 512, 3, 2, 1},
        {"mv2 dw 3x3 144 @56", 144, 56, 144, 3, 1, 144},
        {"mv2 dw 3x3/2 144 @56", 144, 56, 144, 3, 2, 144},
        {"mv2 1x1 144->24 @56", 144, 56, 24, 1, 1, 1},
        {"mv2 conv0 3x3/2 3->32 @224", 3, 224, 32, 3, 2, 1},
        {"mv2 1x1 32->16 @112", 32, 112, 16, 1, 1, 1},
        {"mv2 dw 3x3/2 96 @112", 96, 112, 96, 3, 2, 96},
        {"mv2 dw 3x3 32 @112", 32, 112, 32, 3, 1, 32},
        {"mv2 dw 3x3/2 576 @14", 576, 14, 576, 3, 2, 576},
        {"mv2 dw 3x3 960 @7", 960, 7, 960, 3, 1, 960},
    };
    printf("%-30s %9s %9s %8s   (GFLOP/s, median of %d)\n", "layer", "1 thr", "2 thr", "speedup", reps);
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        if (argc > 2 && !strstr(layers[i].name, argv[2]))
            continue;
        double g1 = bench_layer(&layers[i], p1, reps), g2 = bench_layer(&layers[i], p2, reps);
        printf("%-30s %9.1f %9.1f %8.2f\n", layers[i].name, g1, g2, g2 / g1);
    }
    ref_pool_free(p1);
    ref_pool_free(p2);
    return 0;
}
