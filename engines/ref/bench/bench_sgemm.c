/* bench_sgemm.c: measures ref_sgemm GFLOP/s (median of repeated runs) for square and ResNet-50-like shapes
 * on 1 and 2 threads. It must never be run by ctest: timings are not assertions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "ops/sgemm.h"
#include "pool.h"

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

/* Median GFLOP/s of `reps` timed calls (each call repeated until it lasts >= 20 ms). */
static double bench(ref_pool *pool, int64_t M, int64_t N, int64_t K, int pack_a, int pack_b, int reps)
{
    float *a = ref_aligned_alloc(sizeof(float) * (size_t)(M * K));
    float *b = ref_aligned_alloc(sizeof(float) * (size_t)(K * N));
    float *c = ref_aligned_alloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
    for (int64_t i = 0; i < K * N; i++)
        b[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
    ref_sgemm_operand A = {.data = a, .ld = K}, B = {.data = b, .ld = N};
    float *pa = NULL, *pb = NULL;
    if (pack_a) {
        pa = ref_aligned_alloc(sizeof(float) * ref_sgemm_packed_a_floats(M, K));
        ref_sgemm_pack_a(M, K, &A, pa);
        A = (ref_sgemm_operand){.data = pa, .packed = true};
    }
    if (pack_b) {
        pb = ref_aligned_alloc(sizeof(float) * ref_sgemm_packed_b_floats(K, N));
        ref_sgemm_pack_b(K, N, &B, pb);
        B = (ref_sgemm_operand){.data = pb, .packed = true};
    }
    size_t sb = ref_sgemm_scratch_bytes(M, N, K, A.packed, B.packed, ref_pool_threads(pool));
    void *s = ref_aligned_alloc(sb + 1);
    ref_error err = {0};
    double flops = 2.0 * (double)M * (double)N * (double)K, g[64];
    int inner = 1;
    for (;;) {
        double t0 = now_s();
        for (int i = 0; i < inner; i++)
            ref_sgemm(pool, M, N, K, 1.0f, &A, &B, 0.0f, c, N, s, sb, &err);
        if (now_s() - t0 >= 0.02)
            break;
        inner *= 2;
    }
    for (int r = 0; r < reps && r < 64; r++) {
        double t0 = now_s();
        for (int i = 0; i < inner; i++)
            ref_sgemm(pool, M, N, K, 1.0f, &A, &B, 0.0f, c, N, s, sb, &err);
        g[r] = flops * inner / (now_s() - t0) * 1e-9;
    }
    qsort(g, (size_t)reps, sizeof g[0], cmp_double);
    ref_free(a);
    ref_free(b);
    ref_free(c);
    ref_free(pa);
    ref_free(pb);
    ref_free(s);
    return g[reps / 2];
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > 64)
        reps = 7;
    if (argc > 2 && !strcmp(argv[2], "portable"))
        ref_sgemm_force_portable(true);
    if (argc > 2 && !strcmp(argv[2], "avx2"))
        ref_sgemm_limit_avx2(true);
    ref_error err = {0};
    ref_pool *p1 = NULL, *p2 = NULL;
    if (ref_pool_new(1, &p1, &err) || ref_pool_new(2, &p2, &err)) {
        fprintf(stderr, "pool: %s\n", err.msg);
        return 1;
    }
    /* M, N, K, pack A, pack B: conv shapes are W[Cout, Cin*kh*kw] x col[Cin*kh*kw, H*W], W pre-packed */
    const struct { const char *name; int64_t m, n, k; int pa, pb; } cases[] = {
        {"square 512", 512, 512, 512, 0, 0},
        {"square 512 (B packed)", 512, 512, 512, 0, 1},
        {"resnet50 conv3x3 256x2304x196", 256, 196, 2304, 1, 0},
        {"resnet50 conv3x3 64x576x3136", 64, 3136, 576, 1, 0},
        {"resnet50 conv1x1 256x64x3136", 256, 3136, 64, 1, 0},
        {"resnet50 conv3x3 512x4608x49", 512, 49, 4608, 1, 0},
        {"resnet50 conv1x1 2048x512x49", 2048, 49, 512, 1, 0},
        {"resnet50 fc 1x2048x1000", 1, 1000, 2048, 0, 1},
        {"mobilenetv2 conv1x1 1280x320x49", 1280, 49, 320, 1, 0},
        {"mobilenetv2 conv1x1 320x960x49", 320, 49, 960, 1, 0},
        {"mobilenetv2 conv1x1 16x32x12544", 16, 12544, 32, 1, 0},
        {"mobilenetv2 conv1x1 96x16x12544", 96, 12544, 16, 1, 0},
    };
    printf("kernel %s, median of %d\n", ref_sgemm_kernel_name(), reps);
    printf("%-34s %10s %10s %8s\n", "shape (MxKxN)", "1 thr", "2 thr", "speedup");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double g1 = bench(p1, cases[i].m, cases[i].n, cases[i].k, cases[i].pa, cases[i].pb, reps);
        double g2 = bench(p2, cases[i].m, cases[i].n, cases[i].k, cases[i].pa, cases[i].pb, reps);
        printf("%-34s %10.1f %10.1f %8.2f\n", cases[i].name, g1, g2, g2 / g1);
    }
    ref_pool_free(p1);
    ref_pool_free(p2);
    return 0;
}
