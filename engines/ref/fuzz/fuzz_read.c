/* fuzz_read.c: libFuzzer target for the ONNX reader: ModelProto from memory (mmap on and off) and TensorProto.
 * It must never hide a finding: a leak of accounted bytes or a bad initializer pointer traps at once. */
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "model.h"
#include "refengine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every byte the model claims to own, so ASan flags a pointer past a buffer or into freed memory. */
static unsigned touch_model(const ref_model *m)
{
    unsigned sum = 0;
    const ref_graph *g = &m->graph;
    for (size_t i = 0; i < g->n_inits; i++) {
        const uint8_t *p = g->inits[i].t.data;
        if (g->inits[i].nbytes && !p)
            __builtin_trap();
        for (size_t k = 0; k < g->inits[i].nbytes; k++)
            sum += p[k];
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attrs; a++) {
            const ref_attr *at = &g->nodes[i].attrs[a];
            if (at->t && at->t->data) {
                const uint8_t *p = at->t->data;
                size_t n = ref_tensor_nbytes(at->t);
                for (size_t k = 0; k < n; k++)
                    sum += p[k];
            }
            if (at->s)
                sum += (unsigned)at->s[at->s_len]; /* the NUL the reader promises */
        }
    return sum;
}

/* Where the touched bytes go, so the reads cannot be optimized away. */
volatile unsigned fuzz_read_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile unsigned sink = 0;
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    for (int mm = 0; mm < 2; mm++) {
        ref_options o;
        ref_options_init(&o);
        o.mmap = mm;
        ref_error err;
        ref_model *m = NULL;
        if (ref_model_read_buffer(data, size, &o, &m, &err) == 0) {
            sink += touch_model(m);
            ref_model_free(m);
        } else if (m || !err.msg[0]) {
            __builtin_trap(); /* failures leave *out alone and always say why */
        }
    }
    ref_tensor t;
    void *bytes = NULL;
    char *name = NULL;
    ref_error err;
    if (ref_onnx_parse_tensor(data, size, &t, &bytes, &name, &err) == 0) {
        size_t n = ref_tensor_nbytes(&t);
        for (size_t k = 0; k < n && bytes; k++)
            sink += ((const uint8_t *)bytes)[k];
        ref_free(bytes);
        ref_free(name);
    }
    fuzz_read_sink += sink;
    ref_alloc_get_stats(&after);
    if (after.live_bytes != before.live_bytes)
        __builtin_trap();
    return 0;
}
