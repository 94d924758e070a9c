/* test_ops_matmul_nbits_ms.c: com.microsoft MatMulNBits against products worked out in the comments: 4-bit blocks
 * (low nibble first) with the default zero point 8 and with packed zero points, a partial last block, 8-bit blocks
 * with the default 128, float zero points, a bias, B constant (dequantized at prepare) or not, and the refusals
 * (g_idx, a B of the wrong size) naming the input. It must never take an expectation from the kernels, nor leave
 * engine bytes allocated. */
#include <string.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

static ref_node *nbits(int n_in, int64_t K, int64_t N, int64_t bits, int64_t bs)
{
    ref_node *n = oh_node(m, "MatMulNBits", n_in, 1);
    n->domain = "com.microsoft";
    oh_attr_int(m, n, "K", K);
    oh_attr_int(m, n, "N", N);
    oh_attr_int(m, n, "bits", bits);
    oh_attr_int(m, n, "block_size", bs);
    return n;
}

static void test_four_bit(void)
{
    ref_error errs, *err = &errs;
    /* K 4, one block of 4, N 2. Row 0: q (1, 2, 3, 4) = bytes 0x21 0x43, scale 0.5; row 1: q (15, 0, 8, 9) = 0x0f 0x98,
     * scale 0.25. Default zero point 8: w0 = (-3.5, -3, -2.5, -2), w1 = (1.75, -2, 0, 0.25).
     * x (1, 2, 3, 4): y = (-3.5 - 6 - 7.5 - 8, 1.75 - 4 + 0 + 1) = (-25, -1.25) */
    float xv[] = {1, 2, 3, 4}, sv[] = {0.5f, 0.25f}, bv[] = {1, -1};
    uint8_t b[] = {0x21, 0x43, 0x0f, 0x98}, zp[] = {0x08, 0x07};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 4}, xv), tb = oh_tensor(REF_DT_UINT8, 3, (int64_t[]){2, 1, 2}, b);
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, sv), tz = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){2}, zp);
    ref_tensor tbias = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, bv), y;
    const ref_tensor *in[6] = {&x, &tb, &ts};
    for (unsigned shown = 0; shown < 2; shown++) { /* B, scales constant (prepared) or not */
        CHECK_OK(oh_run(nbits(3, 4, 2, 4, 4), 17, 3, in, 1, &y, shown ? 0x6u : 0u, 1, err), err);
        CHECK(y.rank == 2 && y.dims[0] == 1 && y.dims[1] == 2);
        CHECK_EQ_ARRAY(float, &y, -25.0f, -1.25f);
        oh_free_outputs(1, &y);
    }
    /* packed zero points 8 and 7: row 1 becomes (8, -7, 1, 2) * 0.25 -> 2 - 3.5 + 0.75 + 2 = 1.25; bias (1, -1) */
    in[3] = &tz;
    in[5] = &tbias;
    CHECK_OK(oh_run(nbits(6, 4, 2, 4, 4), 17, 6, in, 1, &y, 0xeu, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, -24.0f, 0.25f);
    oh_free_outputs(1, &y);
    /* float zero points (8, 7) like the scales: the same */
    float zf[] = {8, 7};
    ref_tensor tzf = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, zf);
    in[3] = &tzf;
    CHECK_OK(oh_run(nbits(6, 4, 2, 4, 4), 17, 6, in, 1, &y, 0, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, -24.0f, 0.25f);
    oh_free_outputs(1, &y);

    /* K 3 in a block of 4 (the last value of each row unused): x (1, 2, 3): y0 = -3.5 - 6 - 7.5 = -17 */
    ref_tensor x3 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 3}, xv);
    const ref_tensor *in3[] = {&x3, &tb, &ts};
    CHECK_OK(oh_run(nbits(3, 3, 2, 4, 4), 17, 3, in3, 1, &y, 0x6u, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, -17.0f, -2.25f); /* row 1: 1.75 - 4 + 0 */
    oh_free_outputs(1, &y);

    in[3] = NULL;
    in[4] = &tz; /* g_idx */
    CHECK(oh_run(nbits(5, 4, 2, 4, 4), 17, 5, in, 1, &y, 0, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "g_idx") != NULL);
    CHECK(oh_run(nbits(3, 8, 2, 4, 4), 17, 3, in, 1, &y, 0, 1, err) == REF_E_SHAPE); /* K 8 against x's 4 */
}

static void test_eight_bit(void)
{
    ref_error errs, *err = &errs;
    /* 8-bit, K 4, one block, N 1: q (130, 126, 128, 138), default zero point 128, scale 0.5 -> (1, -1, 0, 5);
     * x rows (1, 1, 1, 1) and (0, 2, 0, 1): y = (5, 3) */
    float xv[] = {1, 1, 1, 1, 0, 2, 0, 1}, sv[] = {0.5f};
    uint8_t b[] = {130, 126, 128, 138};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 2, 4}, xv), tb = oh_tensor(REF_DT_UINT8, 3, (int64_t[]){1, 1, 4}, b);
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){1}, sv), y;
    const ref_tensor *in[] = {&x, &tb, &ts};
    CHECK_OK(oh_run(nbits(3, 4, 1, 8, 4), 17, 3, in, 1, &y, 0x6u, 2, err), err);
    CHECK(y.rank == 3 && y.dims[1] == 2 && y.dims[2] == 1);
    CHECK_EQ_ARRAY(float, &y, 5.0f, 3.0f);
    oh_free_outputs(1, &y);
}

int main(void)
{
    m = ref_model_new();
    test_four_bit();
    test_eight_bit();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
