/* test_ops_resize.c: Resize (opsets 10, 11, 13, 18) and Upsample (7, 9) on small hand-computed cases:
 * nearest rounding modes, linear and cubic under several coordinate maps, tf_crop_and_resize, shapes.
 * It must never compare the engine only with itself: expected values are worked out in the comments. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "op_harness.h"
#include "tensor.h"

#define ALL 0xffffu
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static ref_model *M;
static ref_error err;

static void check_floats(const ref_tensor *y, const float *want, int64_t n, double tol)
{
    CHECK(ref_tensor_numel(y) == n);
    if (ref_tensor_numel(y) != n)
        return;
    for (int64_t i = 0; i < n; i++)
        CHECK_NEAR(((const float *)y->data)[i], want[i], tol);
}

/* Resize-13 of x (rank 1, length n) to `size` elements with the given modes; y is filled. */
static int resize_1d(const float *x, int64_t n, int64_t size, const char *mode, const char *ctm,
                     const char *nearest, int exclude_outside, ref_tensor *y)
{
    ref_node *nd = oh_node(M, "Resize", 4, 1);
    oh_attr_str(M, nd, "mode", mode);
    oh_attr_str(M, nd, "coordinate_transformation_mode", ctm);
    if (nearest)
        oh_attr_str(M, nd, "nearest_mode", nearest);
    if (exclude_outside)
        oh_attr_int(M, nd, "exclude_outside", 1);
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 1, DIMS(n), (void *)x);
    ref_tensor S = oh_tensor(REF_DT_INT64, 1, DIMS(1), &size);
    const ref_tensor *in[] = {&X, NULL, NULL, &S};
    memset(&err, 0, sizeof err);
    return oh_run(nd, 13, 4, in, 1, y, ALL, 1, &err);
}

static void test_nearest_modes(void)
{
    /* [1,2,3,4] -> 3 with half_pixel: scale 0.75 maps x to (x + 0.5) / 0.75 - 0.5 = 0.167, 1.5, 2.833 */
    const float x[] = {1, 2, 3, 4};
    ref_tensor y;
    CHECK_OK(resize_1d(x, 4, 3, "nearest", "half_pixel", NULL, 0, &y), &err); /* round_prefer_floor */
    check_floats(&y, (const float[]){1, 2, 4}, 3, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(resize_1d(x, 4, 3, "nearest", "half_pixel", "round_prefer_ceil", 0, &y), &err);
    check_floats(&y, (const float[]){1, 3, 4}, 3, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(resize_1d(x, 4, 3, "nearest", "half_pixel", "floor", 0, &y), &err);
    check_floats(&y, (const float[]){1, 2, 3}, 3, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(resize_1d(x, 4, 3, "nearest", "half_pixel", "ceil", 0, &y), &err);
    check_floats(&y, (const float[]){2, 3, 4}, 3, 0);
    oh_free_outputs(1, &y);
    /* asymmetric 4 -> 2: x / 0.5 = 0, 2; align_corners 4 -> 3: x * 3 / 2 = 0, 1.5, 3 */
    CHECK_OK(resize_1d(x, 4, 2, "nearest", "asymmetric", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){1, 3}, 2, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(resize_1d(x, 4, 3, "nearest", "align_corners", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){1, 2, 4}, 3, 0);
    oh_free_outputs(1, &y);
    /* tf_half_pixel_for_nn 4 -> 3: (x + 0.5) / 0.75 = 0.667, 2, 3.333 */
    CHECK_OK(resize_1d(x, 4, 3, "nearest", "tf_half_pixel_for_nn", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){2, 3, 4}, 3, 0);
    oh_free_outputs(1, &y);
}

static void test_linear(void)
{
    /* [0,10] -> 4. half_pixel: -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1) */
    const float x[] = {0, 10};
    ref_tensor y;
    CHECK_OK(resize_1d(x, 2, 4, "linear", "half_pixel", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){0, 2.5f, 7.5f, 10}, 4, 1e-5);
    oh_free_outputs(1, &y);
    /* align_corners: x * 1 / 3 */
    CHECK_OK(resize_1d(x, 2, 4, "linear", "align_corners", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){0, 10.0f / 3, 20.0f / 3, 10}, 4, 1e-5);
    oh_free_outputs(1, &y);
    /* asymmetric: x / 2 */
    CHECK_OK(resize_1d(x, 2, 4, "linear", "asymmetric", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){0, 5, 10, 10}, 4, 1e-5);
    oh_free_outputs(1, &y);
    /* pytorch_half_pixel to one element reads -0.5: halfway between x[-1] (edge = x[0]) and x[0] */
    const float x2[] = {4, 10};
    CHECK_OK(resize_1d(x2, 2, 1, "linear", "pytorch_half_pixel", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){4}, 1, 1e-6);
    oh_free_outputs(1, &y);
    CHECK_OK(resize_1d(x2, 2, 1, "linear", "half_pixel", NULL, 0, &y), &err); /* 0.5 / 0.5 - 0.5 = 0.5 */
    check_floats(&y, (const float[]){7}, 1, 1e-6);
    oh_free_outputs(1, &y);

    /* bilinear 2x2 -> 4x4 by scales (half_pixel): rows at -0.25, 0.25, 0.75, 1.25, same for columns */
    float x4[] = {1, 2, 3, 4}, sc[] = {1, 1, 2, 2};
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 4, DIMS(1, 1, 2, 2), x4), S = oh_tensor(REF_DT_FLOAT, 1, DIMS(4), sc);
    ref_tensor E = oh_tensor(REF_DT_FLOAT, 1, DIMS(0), NULL); /* empty roi counts as absent */
    const ref_tensor *in[] = {&X, &E, &S};
    ref_node *n = oh_node(M, "Resize", 3, 1);
    oh_attr_str(M, n, "mode", "linear");
    CHECK(oh_run(n, 13, 3, in, 1, &y, 1u, 1, &err) == REF_E_DYNAMIC); /* scales unknown */
    CHECK_OK(oh_run(n, 13, 3, in, 1, &y, ALL, 2, &err), &err);
    CHECK(y.rank == 4 && y.dims[2] == 4 && y.dims[3] == 4);
    check_floats(&y,
                 (const float[]){1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f,
                                 3.75f, 4},
                 16, 1e-5);
    oh_free_outputs(1, &y);
}

static void test_cubic(void)
{
    /* [0,1,2,3] x2, asymmetric, A = -0.75. At fraction 0.5 the weights are -0.09375, 0.59375, 0.59375,
     * -0.09375. Out 1 reads 0.5 from taps -1..2 (clamped: 0,0,1,2): 0.59375 - 0.1875 = 0.40625.
     * Out 3 reads 1.5 from taps 0..3: 1.5 exactly. Out 5: taps 1..4 -> 1,2,3,3: 2.59375.
     * Out 7: taps 2..5 -> 2,3,3,3: 3.09375. Even outputs land on inputs 0..3. */
    const float x[] = {0, 1, 2, 3};
    ref_tensor y;
    CHECK_OK(resize_1d(x, 4, 8, "cubic", "asymmetric", NULL, 0, &y), &err);
    check_floats(&y, (const float[]){0, 0.40625f, 1, 1.5f, 2, 2.59375f, 3, 3.09375f}, 8, 1e-5);
    oh_free_outputs(1, &y);
    /* exclude_outside drops tap -1 at out 1 and renormalizes: (0.59375 - 0.1875) / 1.09375; at out 7
     * taps 4 and 5 fall out: (2 * -0.09375 + 3 * 0.59375) / 0.5; at out 5 tap 4 does:
     * (1 * -0.09375 + 2 * 0.59375 + 3 * 0.59375) / 1.09375 */
    CHECK_OK(resize_1d(x, 4, 8, "cubic", "asymmetric", NULL, 1, &y), &err);
    check_floats(&y, (const float[]){0, 0.40625f / 1.09375f, 1, 1.5f, 2, 2.875f / 1.09375f, 3, 1.59375f / 0.5f}, 8,
                 1e-5);
    oh_free_outputs(1, &y);
}

static void test_crop_and_resize(void)
{
    /* roi [0.4, 1.2] over [0,10,20,30] to 3: x * 0.8 * 3 / 2 + 1.2 = 1.2, 2.4, 3.6 (outside: -1) */
    float x[] = {0, 10, 20, 30}, roi[] = {0.4f, 1.2f};
    int64_t size = 3;
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 1, DIMS(4), x), R = oh_tensor(REF_DT_FLOAT, 1, DIMS(2), roi);
    ref_tensor S = oh_tensor(REF_DT_INT64, 1, DIMS(1), &size), E = oh_tensor(REF_DT_FLOAT, 1, DIMS(0), NULL);
    const ref_tensor *in[] = {&X, &R, &E, &S};
    ref_tensor y;
    ref_node *n = oh_node(M, "Resize", 4, 1);
    oh_attr_str(M, n, "mode", "linear");
    oh_attr_str(M, n, "coordinate_transformation_mode", "tf_crop_and_resize");
    oh_attr_float(M, n, "extrapolation_value", -1.0f);
    CHECK_OK(oh_run(n, 11, 4, in, 1, &y, 1u | 8u, 1, &err), &err); /* roi unknown to infer is fine */
    check_floats(&y, (const float[]){12, 24, -1}, 3, 1e-4);
    oh_free_outputs(1, &y);
    /* scales and sizes both given is an error; neither too */
    float sc = 2.0f;
    ref_tensor SC = oh_tensor(REF_DT_FLOAT, 1, DIMS(1), &sc);
    const ref_tensor *both[] = {&X, &R, &SC, &S};
    CHECK(oh_run(n, 11, 4, both, 1, &y, ALL, 1, &err) == REF_E_INVALID);
    const ref_tensor *none[] = {&X, &R, &E, NULL};
    CHECK(oh_run(n, 11, 4, none, 1, &y, ALL, 1, &err) == REF_E_INVALID);
}

static void test_legacy_and_dtypes(void)
{
    /* Upsample-9 nearest [1,1,2,3] on 2x2 (the spec's example): each value repeats 2 x 3 */
    float x[] = {1, 2, 3, 4}, sc[] = {1, 1, 2, 3};
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 4, DIMS(1, 1, 2, 2), x), S = oh_tensor(REF_DT_FLOAT, 1, DIMS(4), sc);
    const ref_tensor *in[] = {&X, &S};
    ref_tensor y;
    ref_node *n = oh_node(M, "Upsample", 2, 1);
    CHECK_OK(oh_run(n, 9, 2, in, 1, &y, ALL, 1, &err), &err);
    check_floats(&y, (const float[]){1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 24, 0);
    oh_free_outputs(1, &y);
    /* Upsample-7 linear with the scales attribute: columns at x / 2 = 0, 0.5, 1, 1.5 (clamped) */
    n = oh_node(M, "Upsample", 1, 1);
    oh_attr_str(M, n, "mode", "linear");
    oh_attr_floats(M, n, "scales", 4, (const float[]){1, 1, 1, 2});
    CHECK_OK(oh_run(n, 7, 1, in, 1, &y, ALL, 1, &err), &err);
    check_floats(&y, (const float[]){1, 1.5f, 2, 2, 3, 3.5f, 4, 4}, 8, 1e-6);
    oh_free_outputs(1, &y);
    /* Resize-10 nearest is asymmetric + floor: 4 * 0.6 -> 2 outputs at 0, 1.667 -> inputs 0, 1 */
    float x1[] = {5, 6, 7, 8}, s1 = 0.6f;
    ref_tensor X1 = oh_tensor(REF_DT_FLOAT, 1, DIMS(4), x1), S1 = oh_tensor(REF_DT_FLOAT, 1, DIMS(1), &s1);
    const ref_tensor *in1[] = {&X1, &S1};
    n = oh_node(M, "Resize", 2, 1);
    CHECK_OK(oh_run(n, 10, 2, in1, 1, &y, ALL, 1, &err), &err);
    check_floats(&y, (const float[]){5, 6}, 2, 0);
    oh_free_outputs(1, &y);

    /* int32 data: nearest works, linear is refused */
    int32_t xi[] = {7, 9};
    float s2 = 2.0f;
    ref_tensor XI = oh_tensor(REF_DT_INT32, 1, DIMS(2), xi), S2 = oh_tensor(REF_DT_FLOAT, 1, DIMS(1), &s2);
    const ref_tensor *ini[] = {&XI, NULL, &S2};
    n = oh_node(M, "Resize", 3, 1);
    oh_attr_str(M, n, "coordinate_transformation_mode", "asymmetric");
    CHECK_OK(oh_run(n, 13, 3, ini, 1, &y, ALL, 1, &err), &err);
    CHECK(y.dtype == REF_DT_INT32 && ref_tensor_numel(&y) == 4);
    if (ref_tensor_numel(&y) == 4) {
        const int32_t *o = y.data;
        CHECK(o[0] == 7 && o[1] == 7 && o[2] == 9 && o[3] == 9);
    }
    oh_free_outputs(1, &y);
    oh_attr_str(M, n, "mode", "linear");
    CHECK(oh_run(n, 13, 3, ini, 1, &y, ALL, 1, &err) == REF_E_UNSUPPORTED);
}

/* Resize-13 of 8-bit x (dims given) by scales sc in the given mode and map; y is filled. */
static int resize_q8(int dt, int rank, const int64_t *dims, void *x, float *sc, const char *mode, const char *ctm,
                     ref_tensor *y)
{
    ref_node *n = oh_node(M, "Resize", 3, 1);
    oh_attr_str(M, n, "mode", mode);
    oh_attr_str(M, n, "coordinate_transformation_mode", ctm);
    ref_tensor X = oh_tensor(dt, rank, dims, x), S = oh_tensor(REF_DT_FLOAT, 1, DIMS(rank), sc);
    const ref_tensor *in[] = {&X, NULL, &S};
    memset(&err, 0, sizeof err);
    return oh_run(n, 13, 3, in, 1, y, ALL, 1, &err);
}

static void check_bytes(const ref_tensor *y, int dt, const void *want, int64_t n)
{
    CHECK(y->dtype == dt && ref_tensor_numel(y) == n);
    if (y->dtype == dt && ref_tensor_numel(y) == n)
        for (int64_t i = 0; i < n; i++)
            CHECK(((const uint8_t *)y->data)[i] == ((const uint8_t *)want)[i]);
}

/* 8-bit linear Resize as ONNX Runtime computes it: float weights, the sum truncated toward zero. */
static void test_linear_8bit(void)
{
    /* [0,255] -> 4, half_pixel: coordinates -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1, both taps on
     * input 1 at 0.5 each): 0, 0.25 * 255 = 63.75 -> 63 (rounding would give 64), 191.25 -> 191, 255. The height
     * axis (scale 1, one row) blends that row with itself at 0.5 + 0.5, exactly. */
    uint8_t xu[] = {0, 255};
    float s2[] = {1, 2};
    ref_tensor y;
    CHECK_OK(resize_q8(REF_DT_UINT8, 2, DIMS(1, 2), xu, s2, "linear", "half_pixel", &y), &err);
    check_bytes(&y, REF_DT_UINT8, (const uint8_t[]){0, 63, 191, 255}, 4);
    oh_free_outputs(1, &y);
    /* int8 [-1,-100]: -0.75 - 25 = -25.75 -> -25 and -0.25 - 75 = -75.25 -> -75, toward zero (floor: -26, -76) */
    int8_t xs[] = {-1, -100};
    CHECK_OK(resize_q8(REF_DT_INT8, 2, DIMS(1, 2), xs, s2, "linear", "half_pixel", &y), &err);
    check_bytes(&y, REF_DT_INT8, (const int8_t[]){-1, -25, -75, -100}, 4);
    oh_free_outputs(1, &y);
    /* NCHW [[0,100],[200,255]] x2 asymmetric: coordinates 0, 0.5, 1, 1.5 (clamped to 1) on both axes. Row 0.5,
     * column 0.5: top 50, bottom 227.5, 0.5 * 50 + 0.5 * 227.5 = 138.75 -> 138; row 1 is [200, 227, 255, 255]. */
    uint8_t x4[] = {0, 100, 200, 255};
    float s4[] = {1, 1, 2, 2};
    CHECK_OK(resize_q8(REF_DT_UINT8, 4, DIMS(1, 1, 2, 2), x4, s4, "linear", "asymmetric", &y), &err);
    check_bytes(&y, REF_DT_UINT8,
                (const uint8_t[]){0, 50, 100, 100, 100, 138, 177, 177, 200, 227, 255, 255, 200, 227, 255, 255}, 16);
    oh_free_outputs(1, &y);
    /* align_corners 2 -> 3 columns: 0, 0.5, 1: 0.5 * 0 + 0.5 * 255 = 127.5 -> 127 */
    float sa[] = {1, 1.5f};
    CHECK_OK(resize_q8(REF_DT_UINT8, 2, DIMS(1, 2), xu, sa, "linear", "align_corners", &y), &err);
    check_bytes(&y, REF_DT_UINT8, (const uint8_t[]){0, 127, 255}, 3);
    oh_free_outputs(1, &y);
    /* Trilinear, rank 3: [[0,255]],[[100,-]] as depth 2 x 1 x 2 = {0, 255, 100, 50}, x2 on depth and width,
     * asymmetric. Depth 0.5, width 0.5: 0.25 * (0 + 255 + 100 + 50) = 101.25 -> 101; depth 0.5, width 0: 50. */
    uint8_t x3[] = {0, 255, 100, 50};
    float s3[] = {2, 1, 2};
    CHECK_OK(resize_q8(REF_DT_UINT8, 3, DIMS(2, 1, 2), x3, s3, "linear", "asymmetric", &y), &err);
    check_bytes(&y, REF_DT_UINT8, (const uint8_t[]){0, 127, 255, 255, 50, 101, 152, 152,
                                                    100, 75, 50, 50, 100, 75, 50, 50}, 16);
    oh_free_outputs(1, &y);
    /* What ORT's 8-bit kernel does not compute is refused, not guessed: cubic, rank 6, a scaled channel axis. */
    CHECK(resize_q8(REF_DT_UINT8, 2, DIMS(1, 2), xu, s2, "cubic", "half_pixel", &y) == REF_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "uint8") != NULL);
    float s6[] = {1, 1, 1, 1, 1, 2};
    CHECK(resize_q8(REF_DT_UINT8, 6, DIMS(1, 1, 1, 1, 1, 2), xu, s6, "linear", "half_pixel", &y) ==
          REF_E_UNSUPPORTED);
    float sc[] = {1, 2, 1, 1};
    CHECK(resize_q8(REF_DT_INT8, 4, DIMS(1, 1, 1, 2), xs, sc, "linear", "half_pixel", &y) == REF_E_UNSUPPORTED);
}

/* Opset 18: axes and keep_aspect_ratio_policy. [1,1,2,4] with sizes [4,4] on axes 2,3: per-axis
 * scales 2 and 1; not_larger takes 1 (shape unchanged), not_smaller takes 2 ([1,1,4,8]). */
static void test_opset18(void)
{
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t sz[] = {4, 4};
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 4, DIMS(1, 1, 2, 4), x), S = oh_tensor(REF_DT_INT64, 1, DIMS(2), sz);
    const ref_tensor *in[] = {&X, NULL, NULL, &S};
    ref_tensor y;
    const char *pol[] = {"not_larger", "not_smaller"};
    for (int k = 0; k < 2; k++) {
        ref_node *n = oh_node(M, "Resize", 4, 1);
        oh_attr_ints(M, n, "axes", 2, (const int64_t[]){2, -1});
        oh_attr_str(M, n, "keep_aspect_ratio_policy", pol[k]);
        CHECK_OK(oh_run(n, 18, 4, in, 1, &y, ALL, 1, &err), &err);
        CHECK(y.rank == 4 && y.dims[2] == (k ? 4 : 2) && y.dims[3] == (k ? 8 : 4));
        /* nearest half_pixel at scale 2: output (1,1) reads (0.25, 0.25) -> x[0][0]; at scale 1: copy */
        if (ref_tensor_numel(&y) == (k ? 32 : 8))
            CHECK(((float *)y.data)[k ? 9 : 5] == (k ? 0.0f : 5.0f));
        oh_free_outputs(1, &y);
    }
}

/* A larger cubic resize on 1 and 2 threads must agree bit for bit, and at integer-aligned points
 * (align_corners, 2x-1 upsampling) reproduce the input. */
/* Linear half_pixel sample of an input axis of n values at output o of m, as the spec's numpy reference does it:
 * source coordinate, its floor and fraction, the two neighbours clamped to the axis. */
static void lin_tap(int64_t o, int64_t n, int64_t m, int64_t *i0, int64_t *i1, double *r)
{
    double xo = ((double)o + 0.5) / ((double)m / (double)n) - 0.5, fl = floor(xo);
    *r = xo - fl;
    *i0 = (int64_t)fl < 0 ? 0 : (int64_t)fl >= n ? n - 1 : (int64_t)fl;
    *i1 = (int64_t)fl + 1 < 0 ? 0 : (int64_t)fl + 1 >= n ? n - 1 : (int64_t)fl + 1;
}

/* NCHW planes in blocks of output columns: an upsample by 2 and an arbitrary size over several blocks, a steep
 * downscale whose blocks read more input columns than a block buffers, and nearest; bilinear values within
 * 1e-6 (data within +-4: a float ulp is 2.4e-7 there) of the double reference worked out here, nearest exact,
 * and 1 and 2 threads giving the same bits. */
static void test_plane_blocks(void)
{
    static const int64_t cases[][4] = {{37, 300, 74, 600}, {37, 300, 50, 1001}, {9, 2000, 5, 3}, {5, 700, 11, 129}};
    enum { C = 3 };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t h = cases[k][0], w = cases[k][1], oh = cases[k][2], ow = cases[k][3];
        float *x = ref_malloc((size_t)(C * h * w) * sizeof(float));
        CHECK(x != NULL);
        if (!x)
            return;
        for (int64_t i = 0; i < C * h * w; i++)
            x[i] = (float)((i * 7919 + k * 31) % 8001) / 1000.0f - 4.0f;
        int64_t sz[] = {1, C, oh, ow};
        ref_tensor X = oh_tensor(REF_DT_FLOAT, 4, DIMS(1, C, h, w), x), S = oh_tensor(REF_DT_INT64, 1, DIMS(4), sz);
        const ref_tensor *in[] = {&X, NULL, NULL, &S};
        for (int nearest = 0; nearest < 2; nearest++) {
            ref_tensor y1, y2;
            ref_node *n = oh_node(M, "Resize", 4, 1);
            oh_attr_str(M, n, "mode", nearest ? "nearest" : "linear");
            oh_attr_str(M, n, "nearest_mode", "floor");
            oh_attr_str(M, n, "coordinate_transformation_mode", nearest ? "asymmetric" : "half_pixel");
            CHECK_OK(oh_run(n, 13, 4, in, 1, &y1, ALL, 1, &err), &err);
            CHECK_OK(oh_run(n, 13, 4, in, 1, &y2, ALL, 2, &err), &err);
            CHECK(ref_tensor_numel(&y1) == C * oh * ow);
            CHECK(memcmp(y1.data, y2.data, ref_tensor_nbytes(&y1)) == 0);
            const float *o = y1.data;
            int bad = 0;
            for (int64_t c = 0; c < C && o; c++)
                for (int64_t i = 0; i < oh; i++)
                    for (int64_t j = 0; j < ow; j++) {
                        const float *p = x + c * h * w;
                        double want;
                        if (nearest) {
                            want = p[(i * h / oh) * w + j * w / ow]; /* asymmetric floor: o * n / m */
                        } else {
                            int64_t a0, a1, b0, b1;
                            double ry, rx;
                            lin_tap(i, h, oh, &a0, &a1, &ry);
                            lin_tap(j, w, ow, &b0, &b1, &rx);
                            double top = (1 - rx) * p[a0 * w + b0] + rx * p[a0 * w + b1];
                            double bot = (1 - rx) * p[a1 * w + b0] + rx * p[a1 * w + b1];
                            want = (1 - ry) * top + ry * bot;
                        }
                        double d = o[(c * oh + i) * ow + j] - want;
                        bad += nearest ? d != 0 : (d > 1e-6 || d < -1e-6);
                    }
            CHECK(bad == 0);
            oh_free_outputs(1, &y1);
            oh_free_outputs(1, &y2);
        }
        ref_free(x);
    }
}

static void test_threads(void)
{
    enum { H = 17, W = 19, OH = 33, OW = 37 };
    static float x[3 * H * W];
    for (int i = 0; i < 3 * H * W; i++)
        x[i] = (float)((i * 7919) % 1000) / 100.0f;
    int64_t sz[] = {1, 3, OH, OW};
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 4, DIMS(1, 3, H, W), x), S = oh_tensor(REF_DT_INT64, 1, DIMS(4), sz);
    const ref_tensor *in[] = {&X, NULL, NULL, &S};
    ref_tensor y1, y2;
    ref_node *n = oh_node(M, "Resize", 4, 1);
    oh_attr_str(M, n, "mode", "cubic");
    oh_attr_str(M, n, "coordinate_transformation_mode", "align_corners");
    CHECK_OK(oh_run(n, 13, 4, in, 1, &y1, ALL, 1, &err), &err);
    CHECK_OK(oh_run(n, 13, 4, in, 1, &y2, ALL, 2, &err), &err);
    CHECK(memcmp(y1.data, y2.data, ref_tensor_nbytes(&y1)) == 0);
    int bad = 0;
    const float *o = y1.data;
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < H; i++) /* OH - 1 = 2 (H - 1): output 2i sits on input row i */
            for (int j = 0; j < W; j++) {
                float got = o[(c * OH + 2 * i) * OW + 2 * j], want = x[(c * H + i) * W + j];
                bad += got - want > 1e-4f || want - got > 1e-4f;
            }
    CHECK(bad == 0);
    oh_free_outputs(1, &y1);
    oh_free_outputs(1, &y2);
}

int main(void)
{
    M = ref_model_new();
    if (!M) {
        printf("cannot make a model\n");
        return 1;
    }
    test_nearest_modes();
    test_linear();
    test_cubic();
    test_crop_and_resize();
    test_legacy_and_dtypes();
    test_linear_8bit();
    test_opset18();
    test_plane_blocks();
    test_threads();
    ref_model_free(M);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
