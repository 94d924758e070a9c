/* tensor_read.c: standalone TensorProtos for the engine (test-data .pb files): common/onnx scans and decodes,
 * the engine's allocation hook holds the bytes. It must never allocate outside ref_malloc and friends. */
#include <string.h>

#include "../model.h"
#include "bridge.h"
#include "onnx/file.h"
#include "onnx/tensor_pb.h"

/* string_data (field 6) into REF_STRING_BYTES slots, zero-padded; a longer string is refused. */
static int decode_strings(onnx_pb_trace *tr, const onnx_tensor_pb *tp, char *dst, size_t n)
{
    onnx_pb r = tp->msg;
    size_t k = 0;
    memset(dst, 0, n * REF_STRING_BYTES);
    while (onnx_pb_more(&r)) {
        uint32_t f;
        int wire;
        size_t at = r.pos;
        const uint8_t *p;
        size_t len;
        int rc = onnx_pb_tag(&r, &f, &wire);
        if (!rc && f == 6)
            rc = onnx_pb_read_str(&r, at, wire, &p, &len);
        else if (!rc)
            rc = onnx_pb_skip(&r, wire);
        if (rc)
            return rc;
        if (f != 6)
            continue;
        if (len >= REF_STRING_BYTES)
            return onnx_pb_fail(tr, at, ONNX_E_UNSUPPORTED, "a string of %zu bytes (the engine holds at most %d)", len,
                                REF_STRING_BYTES - 1);
        if (k < n)
            memcpy(dst + k * REF_STRING_BYTES, p, len);
        k++;
    }
    if (k != n)
        return onnx_pb_fail(tr, 0, ONNX_E_PARSE, "%zu strings for %zu elements", k, n);
    return ONNX_OK;
}

/* The work of ref_onnx_parse_tensor, with common/onnx statuses. */
static int parse_tensor(onnx_pb_trace *tr, const uint8_t *buf, size_t len, ref_tensor *t, void **data_out,
                        char **name)
{
    onnx_pb r;
    onnx_pb_init(&r, buf, len, tr);
    onnx_tensor_pb tp;
    int rc = onnx_tensor_pb_scan(&r, &tp);
    if (rc)
        return rc;
    if (tp.external)
        return onnx_pb_fail(tr, 0, ONNX_E_UNSUPPORTED,
                            "tensor " ONNX_TPB_NAME_FMT ": external data in a standalone tensor",
                            ONNX_TPB_NAME_ARG(&tp));
    void *data = NULL;
    char *nm = NULL;
    ref_tensor shape = ref_tensor_of_pb(&tp);
    size_t n_str = tp.dtype == ONNX_DT_STRING ? (size_t)ref_tensor_numel(&shape) : 0;
    size_t bytes = tp.dtype == ONNX_DT_STRING ? n_str * REF_STRING_BYTES : tp.nbytes;
    if (!(data = ref_aligned_alloc(bytes)))
        return onnx_pb_fail(tr, 0, ONNX_E_NOMEM, "out of memory for %zu bytes of tensor data", bytes);
    if (tp.dtype == ONNX_DT_STRING)
        rc = decode_strings(tr, &tp, data, n_str);
    else
        rc = onnx_tensor_pb_decode(&tp, data);
    if (rc)
        goto fail;
    if (name && !(nm = ref_strndup((const char *)tp.name, tp.name_len))) {
        rc = onnx_pb_fail(tr, 0, ONNX_E_NOMEM, "out of memory for the tensor name");
        goto fail;
    }
    *t = ref_tensor_of_pb(&tp);
    *data_out = data;
    if (name)
        *name = nm;
    return ONNX_OK;
fail:
    ref_free(data);
    return rc;
}

int ref_onnx_parse_tensor(const uint8_t *buf, size_t len, ref_tensor *t, void **data_out, char **name,
                          ref_error *err)
{
    onnx_error oe = {0};
    onnx_pb_trace tr;
    onnx_pb_trace_init(&tr, &oe, "tensor");
    int rc = parse_tensor(&tr, buf, len, t, data_out, name);
    return rc ? ref_fail_onnx(err, rc, &oe) : REF_OK;
}

int ref_tensor_load_pb(const char *path, ref_tensor *out, char **name, ref_error *err)
{
    if (!path || !out)
        return ref_fail(err, REF_E_INVALID, "ref_tensor_load_pb: path and out are required");
    onnx_error oe = {0};
    uint8_t *buf;
    size_t len;
    int rc = onnx_file_read(path, ref_onnx_alloc(), &buf, &len, &oe);
    if (rc)
        return ref_fail_onnx(err, rc, &oe); /* the message already names the file */
    ref_tensor t;
    void *data;
    rc = ref_onnx_parse_tensor(buf, len, &t, &data, name, err);
    ref_free(buf);
    if (rc) {
        ref_fail_prefix(err, "%s: ", path);
        return rc;
    }
    t.data = data;
    *out = t;
    return REF_OK;
}

void ref_tensor_data_free(ref_tensor *t)
{
    if (!t)
        return;
    ref_free(t->data);
    t->data = NULL;
}

void ref_string_free(char *s) { ref_free(s); }
