/* external.h: TensorProto external data: resolve a location inside the model's folder and hand back the bytes,
 * mapped (each file once) or read into a model heap buffer. It must never open anything outside that folder. */
#ifndef REF_ONNX_EXTERNAL_H
#define REF_ONNX_EXTERNAL_H

#include "../model.h"
#include "onnx/tensor_pb.h"

typedef struct ref_ext_file ref_ext_file;

/* Per-parse state: the folder and the files opened or mapped so far. Mappings are registered with
 * the model (it unmaps them); descriptors and names are this struct's and go with ref_ext_deinit. */
typedef struct ref_ext {
    ref_model *m;
    const char *dir; /* NULL: external data is refused (model read from memory) */
    char *dir_real;  /* realpath(dir), resolved on first use */
    ref_ext_file *files;
    size_t n_files, cap_files;
} ref_ext;

void ref_ext_init(ref_ext *x, ref_model *m, const char *dir);
void ref_ext_deinit(ref_ext *x);

/* The bytes of external tensor tp (already scanned: tp->nbytes is its size). With m->opts.mmap the
 * file is mapped once and *data points into it when aligned to elem_size (storage MAPPED); otherwise
 * the bytes are copied into a ref_model_heap_alloc buffer (storage HEAP). Statuses are common/onnx's,
 * as everywhere under the trace: ONNX_E_PARSE for a location that is absolute, escapes the folder, or
 * a range outside the file or of the wrong length; ONNX_E_IO or -errno for a file that cannot be opened
 * or read; ONNX_E_UNSUPPORTED without a folder; ONNX_E_NOMEM. Messages carry the trace's path and `at`. */
int ref_ext_load(ref_ext *x, onnx_pb_trace *tr, size_t at, const onnx_tensor_pb *tp, void **data,
                 ref_storage *storage);

#endif
