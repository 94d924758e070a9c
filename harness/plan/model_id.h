/* model_id.h: what a run needs to know a model by before any worker reads it: that it is a well-formed ONNX model,
 * that its external-data files are regular files inside its folder, and one hash over all of it (the config key's
 * and --resume's identity of the model). It must never take longer than a bounded read of the files: a huge model is
 * hashed by samples, and says so. */
#ifndef MLK_MODEL_ID_H
#define MLK_MODEL_ID_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* A model whose files (the .onnx and its external data) hold at most this many bytes is hashed byte for byte. */
#define MLK_HASH_WHOLE_MAX_BYTES ((int64_t)1 << 30)
/* Above it, each file larger than MLK_HASH_SAMPLES * MLK_HASH_SAMPLE_BYTES (64 MiB) is hashed by its size and that
 * many blocks at evenly spaced offsets (the first and the last included); smaller files still whole. */
#define MLK_HASH_SAMPLES 1024
#define MLK_HASH_SAMPLE_BYTES 65536

typedef struct mlk_model_id {
    char hash[17];      /* FNV-1a 64, hex: of the .onnx's bytes alone when it has no external data and is whole */
    bool sampled;       /* hashed by samples (the files hold more than MLK_HASH_WHOLE_MAX_BYTES) */
    int64_t bytes;      /* the .onnx and its external data */
    int n_external;     /* external-data files */
} mlk_model_id;

/* Check the model at path (a regular file) and hash it with its external data: MLK_E_PARSE for a model that is not
 * a well-formed ONNX ModelProto (naming the field and byte) or an external-data location that is absolute, holds
 * "..", leads out of the model's folder or is not a regular file there; MLK_E_NOTFOUND for a missing one;
 * MLK_E_INTERRUPTED when SIGINT/SIGTERM came; MLK_E_IO. Messages start with the file. */
int mlk_model_identify(const char *path, mlk_model_id *out, mlk_error *err);

/* Read the .pb tensor at path as the worker will (onnx_tensor_load): MLK_E_PARSE naming field and byte when it
 * would refuse it. */
int mlk_input_check(const char *path, mlk_error *err);

#endif
