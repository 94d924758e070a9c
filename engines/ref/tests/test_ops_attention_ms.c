/* test_ops_attention_ms.c: com.microsoft Attention and MultiHeadAttention on a hand-sized case (weights that make Q = K = V = x, so every
 * output is a softmax-weighted sum of input rows worked out here in double): no mask, a raw 0/1 mask, key lengths,
 * causal, an attention bias, unequal V width, one and two threads, MultiHeadAttention's key padding mask and bias,
 * QAttention on 8-bit values that dequantize to the same, and the refusals that name the input. It must
 * never take an expectation from the kernels, nor leave engine bytes allocated. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;
/* x [1, 3, 2]: three tokens of width 2 */
static float xv[] = {1.0f, 0.0f, 0.0f, 2.0f, 1.0f, 1.0f};

static ref_node *att_node(int n_in, int64_t heads, int causal)
{
    ref_node *n = oh_node(m, "Attention", n_in, 1);
    n->domain = "com.microsoft";
    oh_attr_int(m, n, "num_heads", heads);
    if (causal)
        oh_attr_int(m, n, "unidirectional", 1);
    return n;
}

/* Row i of softmax(x x^T / sqrt(2) + add) x, for tokens allowed by keep(i, j); what a single head gives. */
static void expect_row(int i, const bool keep[3][3], const float add[3][3], double out[2])
{
    double s[3], mx = -1e300, z = 0;
    for (int j = 0; j < 3; j++) {
        s[j] = (xv[2 * i] * xv[2 * j] + xv[2 * i + 1] * xv[2 * j + 1]) / sqrt(2.0) + (add ? add[i][j] : 0);
        if (!keep[i][j])
            s[j] += -10000.0;
        mx = s[j] > mx ? s[j] : mx;
    }
    for (int j = 0; j < 3; j++)
        z += exp(s[j] - mx);
    out[0] = out[1] = 0;
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 2; d++)
            out[d] += exp(s[j] - mx) / z * xv[2 * j + d];
}

static void check_rows(const ref_tensor *y, const bool keep[3][3], const float add[3][3])
{
    CHECK(y->rank == 3 && y->dims[0] == 1 && y->dims[1] == 3 && y->dims[2] == 2);
    for (int i = 0; i < 3; i++) {
        double want[2];
        expect_row(i, keep, add, want);
        for (int d = 0; d < 2; d++)
            CHECK_NEAR(((const float *)y->data)[2 * i + d], want[d], 1e-6);
    }
}

static void test_masks(void)
{
    ref_error errs, *err = &errs;
    /* W [2, 6] = [I I I]: Q, K and V are x */
    float wv[] = {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1}, bz[6] = {0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 3, 2}, xv), w = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 6}, wv);
    ref_tensor b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, bz), y;
    const bool all[3][3] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, causal[3][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
    const bool no1[3][3] = {{1, 0, 1}, {1, 0, 1}, {1, 0, 1}}, first2[3][3] = {{1, 1, 0}, {1, 1, 0}, {1, 1, 0}};
    const ref_tensor *in[6] = {&x, &w, &b};
    for (int threads = 1; threads <= 2; threads++) {
        CHECK_OK(oh_run(att_node(3, 1, 0), 17, 3, in, 1, &y, 0, threads, err), err);
        check_rows(&y, all, NULL);
        oh_free_outputs(1, &y);
    }
    CHECK_OK(oh_run(att_node(3, 1, 1), 17, 3, in, 1, &y, 0, 1, err), err);
    check_rows(&y, causal, NULL);
    oh_free_outputs(1, &y);

    int32_t raw[] = {1, 0, 1}, len[] = {2};
    ref_tensor traw = oh_tensor(REF_DT_INT32, 2, (int64_t[]){1, 3}, raw), tlen = oh_tensor(REF_DT_INT32, 1, (int64_t[]){1}, len);
    in[3] = &traw;
    CHECK_OK(oh_run(att_node(4, 1, 0), 17, 4, in, 1, &y, 0, 1, err), err);
    check_rows(&y, no1, NULL);
    oh_free_outputs(1, &y);
    in[3] = &tlen;
    CHECK_OK(oh_run(att_node(4, 1, 0), 17, 4, in, 1, &y, 0, 1, err), err);
    check_rows(&y, first2, NULL);
    oh_free_outputs(1, &y);

    /* attention_bias [1, 1, 3, 3] */
    const float add[3][3] = {{0.5f, -1, 0}, {0, 0, 2}, {-3, 1, 0.25f}};
    ref_tensor tab = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 3, 3}, (void *)add);
    in[3] = NULL;
    in[4] = NULL;
    in[5] = &tab;
    CHECK_OK(oh_run(att_node(6, 1, 0), 17, 6, in, 1, &y, 0, 1, err), err);
    check_rows(&y, all, add);
    oh_free_outputs(1, &y);

    /* past given: refused naming it; a float mask: refused naming mask_index */
    in[4] = &x;
    in[5] = NULL;
    CHECK(oh_run(att_node(5, 1, 0), 17, 5, in, 1, &y, 0, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "past") != NULL);
    in[4] = NULL;
    ref_tensor fm = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 3}, xv);
    in[3] = &fm;
    CHECK(oh_run(att_node(4, 1, 0), 17, 4, in, 1, &y, 0, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "mask_index") != NULL);
    /* 3 heads do not divide a width of 2 */
    CHECK(oh_run(att_node(3, 3, 0), 17, 3, in, 1, &y, 0, 1, err) == REF_E_SHAPE);
}

static void test_two_heads_narrow_v(void)
{
    ref_error errs, *err = &errs;
    /* qkv_hidden_sizes (2, 2, 2) with 2 heads of width 1: head h attends with x[:, h] alone, scale 1; V = x */
    float wv[] = {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 3, 2}, xv), w = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 6}, wv);
    ref_tensor y;
    const ref_tensor *in[] = {&x, &w};
    ref_node *n = att_node(2, 2, 0);
    oh_attr_ints(m, n, "qkv_hidden_sizes", 3, (const int64_t[]){2, 2, 2});
    CHECK_OK(oh_run(n, 17, 2, in, 1, &y, 0, 1, err), err);
    for (int i = 0; i < 3; i++)
        for (int h = 0; h < 2; h++) {
            double s[3], z = 0, o = 0;
            for (int j = 0; j < 3; j++)
                z += (s[j] = exp(xv[2 * i + h] * xv[2 * j + h]));
            for (int j = 0; j < 3; j++)
                o += s[j] / z * xv[2 * j + h];
            CHECK_NEAR(((float *)y.data)[2 * i + h], o, 1e-6);
        }
    oh_free_outputs(1, &y);
}

static void test_multi_head(void)
{
    ref_error errs, *err = &errs;
    /* MultiHeadAttention with query = key = value = x, one head: the rows above; a [B, T] key padding mask without
     * token 1; a bias of 0.5 on every value column moves every output by 0.5 (softmax weights sum to 1) */
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 3, 2}, xv), y;
    const bool all[3][3] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, no1[3][3] = {{1, 0, 1}, {1, 0, 1}, {1, 0, 1}};
    int32_t raw[] = {1, 0, 1};
    float bias[] = {0, 0, 0, 0, 0.5f, 0.5f};
    ref_tensor traw = oh_tensor(REF_DT_INT32, 2, (int64_t[]){1, 3}, raw), tb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, bias);
    const ref_tensor *in[8] = {&x, &x, &x};
    ref_node *n = oh_node(m, "MultiHeadAttention", 3, 1);
    n->domain = "com.microsoft";
    oh_attr_int(m, n, "num_heads", 1);
    CHECK_OK(oh_run(n, 17, 3, in, 1, &y, 0, 1, err), err);
    check_rows(&y, all, NULL);
    oh_free_outputs(1, &y);
    in[4] = &traw;
    CHECK_OK(oh_run(n, 17, 5, in, 1, &y, 0, 2, err), err);
    check_rows(&y, no1, NULL);
    oh_free_outputs(1, &y);
    in[3] = &tb;
    in[4] = NULL;
    CHECK_OK(oh_run(n, 17, 4, in, 1, &y, 0, 1, err), err);
    for (int i = 0; i < 3; i++) {
        double want[2];
        expect_row(i, all, NULL, want);
        for (int d = 0; d < 2; d++)
            CHECK_NEAR(((float *)y.data)[2 * i + d], want[d] + 0.5, 1e-6);
    }
    oh_free_outputs(1, &y);
    in[3] = NULL;
    in[6] = &x; /* past_key */
    CHECK(oh_run(n, 17, 7, in, 1, &y, 0, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "past_key") != NULL);
}

static void test_quantized(void)
{
    ref_error errs, *err = &errs;
    /* QAttention: x as uint8 with scale 0.5 and zero point 10 gives back xv (1, 0 -> 12, 10; 0, 2 -> 10, 14; ...);
     * weights [I I I] as int8 with scale 0.25 and zero point 0 are 4s: Q = K = V = x again, so the same rows */
    uint8_t xq[6];
    for (int i = 0; i < 6; i++)
        xq[i] = (uint8_t)(xv[i] / 0.5f + 10);
    int8_t wq[] = {4, 0, 4, 0, 4, 0, 0, 4, 0, 4, 0, 4};
    float xs = 0.5f, ws = 0.25f;
    uint8_t xz = 10;
    int8_t wz = 0;
    ref_tensor x = oh_tensor(REF_DT_UINT8, 3, (int64_t[]){1, 3, 2}, xq), w = oh_tensor(REF_DT_INT8, 2, (int64_t[]){2, 6}, wq);
    ref_tensor txs = oh_tensor(REF_DT_FLOAT, 0, NULL, &xs), tws = oh_tensor(REF_DT_FLOAT, 0, NULL, &ws);
    ref_tensor txz = oh_tensor(REF_DT_UINT8, 0, NULL, &xz), twz = oh_tensor(REF_DT_INT8, 0, NULL, &wz), y;
    const bool all[3][3] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    const ref_tensor *in[9] = {&x, &w, NULL, &txs, &tws, NULL, &txz, &twz};
    ref_node *n = oh_node(m, "QAttention", 8, 1);
    n->domain = "com.microsoft";
    oh_attr_int(m, n, "num_heads", 1);
    for (unsigned shown = 0; shown < 2; shown++) { /* weights dequantized per run, or once at prepare */
        CHECK_OK(oh_run(n, 17, 8, in, 1, &y, shown ? 0xfeu : 0u, 1, err), err);
        check_rows(&y, all, NULL);
        oh_free_outputs(1, &y);
    }
    in[6] = &twz; /* an int8 zero point for uint8 x: refused */
    CHECK(oh_run(n, 17, 8, in, 1, &y, 0, 1, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "input_zero_point") != NULL);
}

int main(void)
{
    m = ref_model_new();
    test_quantized();
    test_masks();
    test_two_heads_narrow_v();
    test_multi_head();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
