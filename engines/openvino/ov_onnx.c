/* ov_onnx.c: the symbolic dim names (dim_param) of an ONNX model's graph inputs, which OpenVINO's ports do not keep,
 * read with common/onnx's graph-input reader from a read-only mapping of the file. It must never read anything but
 * graph.input and the initializers' names, nor leave the mapping behind (the weights it skips are never touched). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "onnx/file.h"
#include "onnx/model_inputs.h"
#include "ov_internal.h"

/* Copy the inputs' names and named dims into d (its arrays sized for n inputs). */
static int fill(ov_onnx_dims *d, const onnx_input *in, size_t n)
{
    if (!(d->input = calloc(n ? n : 1, sizeof *d->input)) ||
        !(d->param = calloc((n ? n : 1) * ENGINE_MAX_RANK, sizeof *d->param)))
        return -1;
    for (size_t i = 0; i < n; i++, d->n++) {
        if (!(d->input[i] = strdup(in[i].name)))
            return -1;
        for (int k = 0; k < in[i].rank && k < ENGINE_MAX_RANK && k < ONNX_INPUT_MAX_RANK; k++)
            if (in[i].dims[k].param[0] && !(d->param[i * ENGINE_MAX_RANK + (size_t)k] = strdup(in[i].dims[k].param)))
                return -1;
    }
    return 0;
}

int ov_onnx_dims_read(const char *path, ov_onnx_dims *out, engine_error *err)
{
    onnx_error oe = {0};
    void *addr = NULL;
    size_t len = 0, n = 0;
    onnx_input *in = NULL;
    memset(out, 0, sizeof *out);
    int rc = onnx_file_map(path, &addr, &len, &oe);
    if (rc)
        return ov_fail(err, OV_E_NOTFOUND, "read_model: %s: %s", path, oe.msg);
    rc = onnx_model_inputs(addr, len, &in, &n, &oe);
    if (addr)
        munmap(addr, len);
    if (rc)
        return ov_fail(err, rc == ONNX_E_NOMEM ? OV_E_NOMEM : OV_E_PARSE,
                       "read_model: %s is not an ONNX model whose inputs the plugin can read: %s", path, oe.msg);
    rc = fill(out, in, n);
    free(in);
    if (rc) {
        ov_onnx_dims_free(out);
        return ov_fail(err, OV_E_NOMEM, "read_model: %s: out of memory", path);
    }
    return 0;
}

const char *ov_onnx_dims_param(const ov_onnx_dims *d, const char *name, int axis)
{
    if (!name || axis < 0 || axis >= ENGINE_MAX_RANK)
        return NULL;
    for (size_t i = 0; i < d->n; i++)
        if (d->input[i] && !strcmp(d->input[i], name))
            return d->param[i * ENGINE_MAX_RANK + (size_t)axis];
    return NULL;
}

void ov_onnx_dims_free(ov_onnx_dims *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->input[i]);
        for (int k = 0; k < ENGINE_MAX_RANK; k++)
            free(d->param[i * ENGINE_MAX_RANK + (size_t)k]);
    }
    free(d->input);
    free(d->param);
    memset(d, 0, sizeof *d);
}
