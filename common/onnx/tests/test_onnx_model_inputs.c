/* test_onnx_model_inputs.c: the graph-input lister over hand-encoded ModelProtos: inputs minus initializers, element
 * types, dims as sizes, named or neither, and every truncation of the model failing cleanly. Fixtures: our writer. */
#include <stdlib.h>
#include <string.h>

#include "onnx/dtype.h"
#include "onnx/model_inputs.h"
#include "onnx/pb.h"
#include "onnx_check.h"

static onnx_error err;

/* A ValueInfo with dims: > 0 a size, 0 a dim_param from params, -1 neither. */
static void value_info(onnx_pbw *w, const char *name, const int *dims, const char *const *params, int rank)
{
    size_t v = onnx_pbw_begin(w, 11);
    onnx_pbw_str(w, 1, name);
    size_t t = onnx_pbw_begin(w, 2), tt = onnx_pbw_begin(w, 1);
    onnx_pbw_i64(w, 1, ONNX_DT_FLOAT);
    size_t sh = onnx_pbw_begin(w, 2);
    for (int k = 0; k < rank; k++) {
        size_t d = onnx_pbw_begin(w, 1);
        if (dims[k] > 0)
            onnx_pbw_i64(w, 1, dims[k]);
        else if (dims[k] == 0)
            onnx_pbw_str(w, 2, params[k]);
        onnx_pbw_end(w, d);
    }
    onnx_pbw_end(w, sh);
    onnx_pbw_end(w, tt);
    onnx_pbw_end(w, t);
    onnx_pbw_end(w, v);
}

int main(void)
{
    onnx_pbw w;
    onnx_pbw_init(&w, NULL);
    onnx_pbw_i64(&w, 1, 8);
    size_t g = onnx_pbw_begin(&w, 7);
    const int xd[] = {0, 3, 0, -1}, wd[] = {4, 4};
    const char *const xp[] = {"batch", "", "height", ""};
    value_info(&w, "x", xd, xp, 4);
    value_info(&w, "weight", wd, NULL, 2); /* fed by an initializer: not an input to give */
    size_t t = onnx_pbw_begin(&w, 5);
    onnx_pbw_str(&w, 8, "weight");
    onnx_pbw_end(&w, t);
    onnx_pbw_f32(&w, 1000, 1.0f); /* unknown fields are stepped over */
    onnx_pbw_end(&w, g);
    CHECK(w.status == 0);

    onnx_input *in = NULL;
    size_t n = 0;
    CHECK(onnx_model_inputs(w.buf, w.len, &in, &n, &err) == ONNX_OK && n == 1);
    if (n == 1) {
        CHECK(!strcmp(in[0].name, "x") && in[0].elem_type == ONNX_DT_FLOAT && in[0].rank == 4);
        CHECK(in[0].dims[0].value == -1 && !strcmp(in[0].dims[0].param, "batch"));
        CHECK(in[0].dims[1].value == 3 && !in[0].dims[1].param[0]);
        CHECK(!strcmp(in[0].dims[2].param, "height") && in[0].dims[3].value == -1 && !in[0].dims[3].param[0]);
    }
    free(in);
    /* every prefix: parsed or refused with the field path, never read past the end, nothing leaked */
    int refused = 0;
    for (size_t cut = 0; cut < w.len; cut++) {
        in = NULL;
        int rc = onnx_model_inputs(w.buf, cut, &in, &n, &err);
        CHECK(rc == ONNX_OK || rc == ONNX_E_PARSE);
        refused += rc == ONNX_E_PARSE;
        free(in);
    }
    CHECK(refused > 0);
    CHECK(onnx_model_inputs(NULL, 3, &in, &n, &err) == ONNX_E_INVALID);
    onnx_pbw_free(&w);
    return check_summary();
}
