/* test_seq.c: sequence and optional blobs: written and read back, refused when damaged (short, bad magic, counts
 * and offsets past the end), SequenceProto and OptionalProto files read through ref_value_load_pb (also under every
 * failing allocation), and a graph of sequence ops run end to end. It must never leave live bytes behind. */
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "graph_builder.h"
#include "onnx/pb.h"
#include "seq.h"

static ref_error err;

static void test_blob_roundtrip_and_damage(void)
{
    float a[3] = {1, 2, 3};
    int32_t b[4] = {7, 8, 9, 10};
    ref_tensor ta = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, a), tb = oh_tensor(REF_DT_INT32, 2, (int64_t[]){2, 2}, b);
    const ref_tensor *elems[2] = {&ta, &tb};
    size_t bytes = ref_seq_bytes(2, elems);
    char *blob = ref_aligned_alloc(bytes);
    CHECK(blob != NULL);
    if (!blob)
        return;
    ref_seq_write(blob, REF_DT_SEQUENCE, true, 0, REF_DT_FLOAT, 2, elems);
    ref_tensor t = ref_seq_shape(REF_DT_SEQUENCE, bytes);
    t.data = blob;
    int n = -1, has = -1;
    CHECK_OK(ref_value_count(&t, &n, &has, &err), &err);
    CHECK(n == 2 && has == 1);
    ref_tensor e;
    CHECK_OK(ref_value_element(&t, 1, &e, &err), &err);
    CHECK(e.dtype == REF_DT_INT32 && e.rank == 2 && ((int32_t *)e.data)[3] == 10);
    CHECK(ref_value_element(&t, 2, &e, &err) == REF_E_RANGE);
    /* A copy elsewhere reads the same: the blob holds offsets only. */
    char *copy = ref_aligned_alloc(bytes);
    if (copy) {
        memcpy(copy, blob, bytes);
        ref_tensor t2 = t;
        t2.data = copy;
        CHECK_OK(ref_value_element(&t2, 0, &e, &err), &err);
        CHECK(e.data == copy + ((char *)ref_seq_at(&t, 0).data - blob) && ((float *)e.data)[2] == 3);
        ref_free(copy);
    }
    /* Damage: too short, wrong magic, an element past the end, a negative count. */
    ref_tensor bad = t;
    bad.dims[0] = 8;
    CHECK(ref_value_count(&bad, &n, &has, &err) == REF_E_PARSE);
    bad.dims[0] = (int64_t)bytes - 1;
    CHECK(ref_value_count(&bad, &n, &has, &err) == REF_E_PARSE && strstr(err.msg, "outside its blob"));
    blob[0] ^= 1;
    CHECK(ref_value_count(&t, &n, &has, &err) == REF_E_PARSE);
    blob[0] ^= 1;
    int32_t neg = -1;
    memcpy(blob + 4, &neg, sizeof neg);
    CHECK(ref_value_count(&t, &n, &has, &err) == REF_E_PARSE);
    ref_tensor not_blob = ta;
    CHECK(ref_value_count(&not_blob, &n, &has, &err) == REF_E_SHAPE);
    ref_free(blob);
}

/* A SequenceProto of two float tensors, or an OptionalProto holding one, into path. */
static int write_proto(const char *path, bool optional)
{
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    onnx_pbw_str(&w, 1, "s");
    onnx_pbw_i64(&w, 2, 1);
    for (int k = 0; k < (optional ? 1 : 2); k++) {
        size_t t = onnx_pbw_begin(&w, 3);
        onnx_pbw_i64(&w, 1, 2);
        onnx_pbw_i64(&w, 2, REF_DT_FLOAT);
        float v[2] = {1.5f + (float)k, -2};
        onnx_pbw_bytes(&w, 9, v, sizeof v);
        onnx_pbw_end(&w, t);
    }
    FILE *f = w.status ? NULL : fopen(path, "wb");
    int ok = f && fwrite(w.buf, 1, w.len, f) == w.len;
    if (f)
        fclose(f);
    onnx_pbw_free(&w);
    return ok ? 0 : -1;
}

static void test_load_pb(void)
{
    char dir[] = "/tmp/test_seq.XXXXXX", seq[64], opt[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(seq, sizeof seq, "%s/seq.pb", dir);
    snprintf(opt, sizeof opt, "%s/opt.pb", dir);
    CHECK(write_proto(seq, false) == 0 && write_proto(opt, true) == 0);
    ref_tensor t;
    char *name = NULL;
    CHECK_OK(ref_value_load_pb(seq, REF_DT_SEQUENCE, &t, &name, &err), &err);
    int n, has;
    ref_tensor e;
    CHECK(!ref_value_count(&t, &n, &has, &err) && n == 2 && has && name && !strcmp(name, "s"));
    CHECK(!ref_value_element(&t, 1, &e, &err) && e.dtype == REF_DT_FLOAT && ((float *)e.data)[0] == 2.5f);
    ref_tensor_data_free(&t);
    ref_string_free(name);
    CHECK_OK(ref_value_load_pb(opt, REF_DT_OPTIONAL, &t, NULL, &err), &err);
    CHECK(t.dtype == REF_DT_OPTIONAL && !ref_value_count(&t, &n, &has, &err) && n == 1 && has);
    ref_tensor_data_free(&t);
    CHECK(ref_value_load_pb(seq, REF_DT_FLOAT, &t, NULL, &err) == REF_E_INVALID);
    CHECK(ref_value_load_pb("/nonexistent.pb", REF_DT_SEQUENCE, &t, NULL, &err) != REF_OK);
    /* Every allocation failing in turn: a clean NOMEM, nothing kept. */
    int succeeded = 0, failures = 0;
    for (int64_t k = 0; k < 100 && !succeeded; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_alloc_fail_after(k, 0);
        int rc = ref_value_load_pb(seq, REF_DT_SEQUENCE, &t, &name, &err);
        ref_alloc_fail_after(-1, 0);
        if (rc) {
            CHECK(rc == REF_E_NOMEM);
            failures++;
        } else {
            succeeded = 1;
            ref_tensor_data_free(&t);
            ref_string_free(name);
        }
        ref_alloc_get_stats(&s1);
        CHECK(s1.live_bytes == s0.live_bytes);
    }
    CHECK(succeeded && failures >= 3);
    unlink(seq);
    unlink(opt);
    rmdir(dir);
}

/* x -> SplitToSequence (chunks of 1 along 0) -> SequenceInsert(x at front) -> SequenceLength, ConcatFromSequence. */
static void test_sequence_graph(void)
{
    ref_model *m = gb_model(13);
    int64_t d[] = {3, 2};
    ref_node *n;
    int ok = m && !gb_input(m, "x", REF_DT_FLOAT, 2, d, NULL) && gb_node(m, "SplitToSequence", "x", "s") &&
             gb_node(m, "SequenceInsert", "s,x", "s2") && gb_node(m, "SequenceLength", "s2", "len") &&
             (n = gb_node(m, "ConcatFromSequence", "s2", "cat")) && !gb_output(m, "len", REF_DT_INT64) &&
             !gb_output(m, "cat", REF_DT_FLOAT);
    if (ok)
        oh_attr_int(m, n, "axis", 0);
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    float x[6] = {1, 2, 3, 4, 5, 6};
    ref_tensor in = oh_tensor(REF_DT_FLOAT, 2, d, x), y;
    CHECK(ok);
    int rc = ok ? ref_compile(m, NULL, &c, &err) : REF_E_NOMEM;
    if (!rc)
        rc = ref_request_new(c, &r, &err);
    if (!rc)
        rc = ref_request_set_input(r, 0, &in, &err);
    for (int it = 0; it < 2 && !rc; it++)
        rc = ref_infer(r, &err);
    CHECK_OK(rc, &err);
    if (!rc && !ref_request_output(r, 0, &y, &err))
        CHECK(y.dtype == REF_DT_INT64 && *(int64_t *)y.data == 4);
    if (!rc && !ref_request_output(r, 1, &y, &err)) {
        CHECK(y.rank == 2 && y.dims[0] == 6 && y.dims[1] == 2);
        CHECK_EQ_ARRAY(float, &y, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6);
    }
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

int main(void)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_blob_roundtrip_and_damage();
    test_load_pb();
    test_sequence_graph();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
