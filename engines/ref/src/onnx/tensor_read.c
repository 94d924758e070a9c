/* tensor_read.c: standalone TensorProtos for the engine (test-data .pb files): common/onnx scans and decodes,
 * the engine's allocation hook holds the bytes. It must never allocate outside ref_malloc and friends. */
#include <string.h>

#include "../model.h"
#include "bridge.h"
#include "onnx/file.h"
#include "onnx/tensor_pb.h"

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
    if (tp.dtype != ONNX_DT_STRING && !(data = ref_aligned_alloc(tp.nbytes)))
        return onnx_pb_fail(tr, 0, ONNX_E_NOMEM, "out of memory for %zu bytes of tensor data", tp.nbytes);
    if (data && (rc = onnx_tensor_pb_decode(&tp, data)) != 0)
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
