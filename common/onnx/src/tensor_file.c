/* tensor_file.c: a standalone TensorProto into one malloc'd block (struct, values, name), from memory or a file.
 * It must never allocate before the scan has checked every size against the bytes present. */
#include <stdlib.h>
#include <string.h>

#include "onnx/file.h"
#include "onnx/tensor_file.h"

#define DATA_ALIGN 64

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

int onnx_tensor_parse(const void *buf, size_t len, onnx_tensor **out, onnx_error *err)
{
    if ((!buf && len) || !out)
        return onnx_fail(err, ONNX_E_INVALID, "onnx_tensor_parse: buf and out are required");
    onnx_pb_trace tr;
    onnx_pb_trace_init(&tr, err, "tensor");
    onnx_pb r;
    onnx_pb_init(&r, buf, len, &tr);
    onnx_tensor_pb tp;
    int rc = onnx_tensor_pb_scan(&r, &tp);
    if (rc)
        return rc;
    if (tp.external)
        return onnx_pb_fail(&tr, 0, ONNX_E_UNSUPPORTED,
                            "tensor " ONNX_TPB_NAME_FMT ": external data in a standalone tensor",
                            ONNX_TPB_NAME_ARG(&tp));
    if (tp.dtype == ONNX_DT_STRING)
        return onnx_pb_fail(&tr, 0, ONNX_E_UNSUPPORTED,
                            "tensor " ONNX_TPB_NAME_FMT ": string values have no fixed size to load",
                            ONNX_TPB_NAME_ARG(&tp));
    /* The scan bounded nbytes by SIZE_MAX / 2, so the sums below cannot wrap. */
    size_t head = round_up(sizeof(onnx_tensor), DATA_ALIGN);
    size_t total = round_up(head + tp.nbytes + tp.name_len + 1, DATA_ALIGN);
    uint8_t *block = aligned_alloc(DATA_ALIGN, total);
    if (!block)
        return onnx_pb_fail(&tr, 0, ONNX_E_NOMEM, "out of memory for %zu bytes of tensor data", tp.nbytes);
    onnx_tensor *t = (onnx_tensor *)(void *)block;
    memset(t, 0, sizeof *t);
    t->data = block + head;
    t->name = (char *)block + head + tp.nbytes;
    if ((rc = onnx_tensor_pb_decode(&tp, t->data)) != 0) {
        free(block);
        return rc;
    }
    memcpy(t->name, tp.name, tp.name_len);
    t->name[tp.name_len] = '\0';
    t->dtype = tp.dtype;
    t->rank = tp.rank;
    t->numel = 1;
    for (int i = 0; i < tp.rank; i++) {
        t->dims[i] = tp.dims[i];
        t->numel *= tp.dims[i];
    }
    t->nbytes = tp.nbytes;
    *out = t;
    return ONNX_OK;
}

int onnx_tensor_load(const char *path, onnx_tensor **out, onnx_error *err)
{
    if (!path || !out)
        return onnx_fail(err, ONNX_E_INVALID, "onnx_tensor_load: path and out are required");
    uint8_t *buf;
    size_t len;
    int rc = onnx_file_read(path, NULL, &buf, &len, err);
    if (rc)
        return rc; /* the message already names the file */
    rc = onnx_tensor_parse(buf, len, out, err);
    free(buf);
    if (rc && err)
        onnx_fail_prefix(err, "%s: ", path);
    return rc;
}

void onnx_tensor_free(onnx_tensor *t) { free(t); }
