/* test_onnx_model_ext.c: the external-data location lister over hand-encoded ModelProtos: distinct locations in order,
 * fields it must step over, and malformed input named by field path and byte. Fixtures: our writer only. */
#include <string.h>

#include "onnx/dtype.h"
#include "onnx/model_ext.h"
#include "onnx/pb.h"
#include "onnx_check.h"

static onnx_error err;

/* One initializer; loc NULL embeds raw_data instead of external_data. */
static void initializer(onnx_pbw *w, const char *name, const char *loc)
{
    size_t t = onnx_pbw_begin(w, 5);
    onnx_pbw_i64(w, 1, 4);
    onnx_pbw_i64(w, 2, ONNX_DT_FLOAT);
    onnx_pbw_str(w, 8, name);
    if (loc) {
        const char *kv[3][2] = {{"offset", "0"}, {"location", loc}, {"length", "16"}};
        for (int i = 0; i < 3; i++) {
            size_t e = onnx_pbw_begin(w, 13);
            onnx_pbw_str(w, 1, kv[i][0]);
            onnx_pbw_str(w, 2, kv[i][1]);
            onnx_pbw_end(w, e);
        }
        onnx_pbw_u64(w, 14, 1);
    } else {
        static const float v[4] = {0};
        onnx_pbw_bytes(w, 9, v, sizeof v);
    }
    onnx_pbw_end(w, t);
}

static void test_lists_locations(void)
{
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    onnx_pbw_i64(&w, 1, 8);
    onnx_pbw_str(&w, 2, "handmade");
    size_t g = onnx_pbw_begin(&w, 7);
    size_t n = onnx_pbw_begin(&w, 1); /* a node whose attribute tensor names a file: not an initializer */
    onnx_pbw_str(&w, 4, "Constant");
    size_t a = onnx_pbw_begin(&w, 5);
    onnx_pbw_str(&w, 1, "value");
    initializer(&w, "c", "attr.bin");
    onnx_pbw_end(&w, a);
    onnx_pbw_end(&w, n);
    initializer(&w, "a", "weights.bin");
    initializer(&w, "b", NULL);
    initializer(&w, "c", "sub/more.bin");
    initializer(&w, "d", "weights.bin");
    onnx_pbw_f32(&w, 1000, 1.0f); /* unknown fields of other wire types are stepped over */
    onnx_pbw_f64(&w, 1001, 2.0);
    onnx_pbw_end(&w, g);
    size_t op = onnx_pbw_begin(&w, 8);
    onnx_pbw_i64(&w, 2, 17);
    onnx_pbw_end(&w, op);
    CHECK(w.status == 0);

    onnx_ext_locations l = {0};
    CHECK_OK(onnx_model_ext_locations(w.buf, w.len, &l, &err), &err);
    CHECK(l.n == 2 && l.loc && !strcmp(l.loc[0], "weights.bin") && !strcmp(l.loc[1], "sub/more.bin"));
    onnx_ext_locations_deinit(&l);
    CHECK(l.n == 0 && l.loc == NULL);
    onnx_ext_locations_deinit(&l);
    onnx_ext_locations_deinit(NULL);

    /* Every strict prefix is malformed (or lists nothing) and leaves *out alone. */
    int bad = 0;
    for (size_t cut = 0; cut < w.len; cut++) {
        onnx_ext_locations keep = {7, NULL};
        int rc = onnx_model_ext_locations(w.buf, cut, &keep, &err);
        if (rc)
            bad += rc != ONNX_E_PARSE || keep.n != 7 || !strstr(err.msg, "@ byte");
        else
            onnx_ext_locations_deinit(&keep);
    }
    CHECK(bad == 0);
    onnx_pbw_free(&w);

    /* No graph, no initializers: an empty list, not an error. */
    CHECK_OK(onnx_model_ext_locations("", 0, &l, &err), &err);
    CHECK(l.n == 0);
    onnx_ext_locations_deinit(&l);
}

static void test_malformed(void)
{
    onnx_ext_locations l = {0};
    /* graph as fixed32 */
    const uint8_t wire[] = {0x3d, 0, 0, 0, 0};
    CHECK(onnx_model_ext_locations(wire, sizeof wire, &l, &err) == ONNX_E_PARSE);
    CHECK(!strcmp(err.msg, "graph @ byte 0: wire type 5 (fixed32), expected 2 (length-delimited)"));
    /* graph { initializer { external_data { key: varint } } } */
    const uint8_t key[] = {0x3a, 0x06, 0x2a, 0x04, 0x6a, 0x02, 0x08, 0x01};
    CHECK(onnx_model_ext_locations(key, sizeof key, &l, &err) == ONNX_E_PARSE);
    CHECK(!strcmp(err.msg, "graph.initializer[0].external_data[0].key @ byte 6: wire type 0 (varint), expected 2 "
                           "(length-delimited)"));
    /* A location with a NUL byte could name another file than it shows. */
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    size_t g = onnx_pbw_begin(&w, 7), t = onnx_pbw_begin(&w, 5), e = onnx_pbw_begin(&w, 13);
    onnx_pbw_str(&w, 1, "location");
    onnx_pbw_bytes(&w, 2, "a\0b", 3);
    onnx_pbw_end(&w, e);
    onnx_pbw_end(&w, t);
    onnx_pbw_end(&w, g);
    CHECK(onnx_model_ext_locations(w.buf, w.len, &l, &err) == ONNX_E_PARSE && strstr(err.msg, "NUL byte") &&
          strstr(err.msg, "graph.initializer[0].external_data[0].value @ byte "));
    onnx_pbw_free(&w);
    CHECK(onnx_model_ext_locations(NULL, 3, &l, &err) == ONNX_E_INVALID);
}

int main(void)
{
    test_lists_locations();
    test_malformed();
    return check_summary();
}
