/* test_ops_embed_ms.c: com.microsoft EmbedLayerNormalization against sums worked out by hand: word + position +
 * segment rows, the LayerNorm of each token (two values a token, so it is (-1, 1) times gamma plus beta), the sum
 * output, the mask index (how many mask values are 1), position_ids of one row for every batch, and an id out of range
 * refused naming batch and position. It must never take an expectation from the kernels, nor leave bytes allocated. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

static void test_embed(void)
{
    ref_error errs, *err = &errs;
    /* vocab 3, 3 positions, 2 segments, H 2 */
    float word[] = {0, 0, 1, 5, 4, 2}, pos[] = {0, 1, 2, 0, 0, 0}, seg[] = {0, 0, 10, 0};
    float gamma[] = {2, 3}, beta[] = {0.5f, -0.5f};
    int32_t ids[] = {1, 2, 0, 2, 1, 1}, segs[] = {0, 1, 0, 0, 0, 1}, mask[] = {1, 1, 0, 1, 2, 1};
    ref_tensor tid = oh_tensor(REF_DT_INT32, 2, (int64_t[]){2, 3}, ids), tsg = oh_tensor(REF_DT_INT32, 2, (int64_t[]){2, 3}, segs);
    ref_tensor tw = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){3, 2}, word), tp = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){3, 2}, pos);
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, seg), tg = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, gamma);
    ref_tensor tb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, beta), tm = oh_tensor(REF_DT_INT32, 2, (int64_t[]){2, 3}, mask);
    ref_tensor y[3];
    const ref_tensor *in[9] = {&tid, &tsg, &tw, &tp, &ts, &tg, &tb, &tm};
    ref_node *n = oh_node(m, "EmbedLayerNormalization", 8, 3);
    n->domain = "com.microsoft";
    CHECK_OK(oh_run(n, 17, 8, in, 3, y, 0, 1, err), err); /* epsilon 1e-12: (0, 0) normalizes to (0, 0) */
    /* sums: b0: (1,5)+(0,1)+(0,0) = (1,6); (4,2)+(2,0)+(10,0) = (16,2); (0,0)+(0,0)+0 = (0,0)
     *       b1: (4,2)+(0,1) = (4,3); (1,5)+(2,0) = (3,5); (1,5)+(0,0)+(10,0) = (11,5) */
    CHECK_EQ_ARRAY(float, &y[2], 1, 6, 16, 2, 0, 0, 4, 3, 3, 5, 11, 5);
    /* a < b gives (-1, 1), a > b (1, -1), a == b (0, 0): then times gamma plus beta */
    const float lo[] = {-1.5f, 2.5f}, hi[] = {2.5f, -3.5f}, eq[] = {0.5f, -0.5f};
    const float *want[] = {lo, hi, eq, hi, lo, hi};
    CHECK(y[0].rank == 3 && y[0].dims[2] == 2);
    for (int k = 0; k < 6; k++)
        for (int h = 0; h < 2; h++)
            CHECK_NEAR(((float *)y[0].data)[2 * k + h], want[k][h], 1e-6);
    CHECK(y[1].dtype == REF_DT_INT32 && y[1].rank == 1 && y[1].dims[0] == 2);
    CHECK_EQ_ARRAY(int32_t, &y[1], 2, 2); /* ones in (1, 1, 0) and (1, 2, 1) */
    oh_free_outputs(3, y);

    /* position_ids [1, 3] = (2, 2, 0), no segments, no mask: b0 token 0 is (1,5)+(2,0) = (3,5) -> lo */
    int32_t pids[] = {2, 2, 0};
    ref_tensor tpi = oh_tensor(REF_DT_INT32, 2, (int64_t[]){1, 3}, pids);
    const ref_tensor *in2[9] = {&tid, NULL, &tw, &tp, NULL, &tg, &tb, NULL, &tpi};
    ref_node *n2 = oh_node(m, "EmbedLayerNormalization", 9, 2);
    n2->domain = "com.microsoft";
    CHECK_OK(oh_run(n2, 17, 9, in2, 2, y, 0, 1, err), err);
    CHECK_NEAR(((float *)y[0].data)[0], -1.5f, 1e-6);
    CHECK_NEAR(((float *)y[0].data)[1], 2.5f, 1e-6);
    CHECK_EQ_ARRAY(int32_t, &y[1], 0, 0); /* no mask */
    oh_free_outputs(2, y);

    ids[4] = 3; /* batch 1, position 1: outside a vocabulary of 3 */
    CHECK(oh_run(n, 17, 8, in, 3, y, 0, 1, err) == REF_E_INVALID);
    CHECK(strstr(err->msg, "batch 1 position 1") != NULL);
    oh_free_outputs(3, y); /* a run-time refusal: the outputs were planned */
    ids[4] = 1;
    in[4] = NULL; /* segment ids without a segment table */
    CHECK(oh_run(n, 17, 8, in, 3, y, 0, 1, err) == REF_E_INVALID);
}

int main(void)
{
    m = ref_model_new();
    test_embed();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
