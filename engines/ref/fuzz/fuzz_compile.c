/* fuzz_compile.c: libFuzzer target for what follows reading: compile (shape inference, folding, planning) and one
 * infer on zero inputs of the compiled shapes, under a small max_tensor_bytes so a shape out of bounds is refused
 * fast. It must never hide a finding: a failure without a message, or engine bytes left after the input, traps. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "refengine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_TENSOR_BYTES "16M"

/* Every input zero-filled at its compiled shape; 0, or a status (the request refuses what it must). */
static int feed_zeros(ref_compiled *c, ref_request *r, ref_error *err)
{
    for (size_t i = 0; i < ref_compiled_n_inputs(c); i++) {
        ref_value_desc d;
        if (ref_compiled_input(c, i, &d) || d.shape.rank < 0)
            return REF_E_DYNAMIC;
        size_t bytes = ref_tensor_nbytes(&d.shape);
        if (bytes > ((size_t)16 << 20))
            return REF_E_RANGE;
        void *buf = calloc(1, bytes + 1);
        if (!buf)
            return REF_E_NOMEM;
        d.shape.data = buf;
        int rc = ref_request_set_input(r, i, &d.shape, err);
        free(buf);
        if (rc)
            return rc;
    }
    return REF_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    ref_options o;
    ref_options_init(&o);
    ref_error err = {0};
    if (ref_options_set(&o, "max_tensor_bytes", FUZZ_MAX_TENSOR_BYTES, &err))
        __builtin_trap();
    ref_model *m = NULL;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    int rc = ref_model_read_buffer(data, size, &o, &m, &err);
    if (!rc && (rc = ref_compile(m, &o, &c, &err)) && (c || !err.msg[0]))
        __builtin_trap(); /* failures leave *out alone and always say why */
    if (!rc && !(rc = ref_request_new(c, &r, &err)) && !(rc = feed_zeros(c, r, &err)))
        rc = ref_infer(r, &err);
    if (rc && rc != REF_E_DYNAMIC && rc != REF_E_NOMEM && rc != REF_E_RANGE && !err.msg[0])
        __builtin_trap();
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
    ref_alloc_get_stats(&after);
    if (after.live_bytes != before.live_bytes)
        __builtin_trap();
    return 0;
}
