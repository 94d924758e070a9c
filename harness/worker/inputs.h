/* inputs.h: the data a worker feeds a model: deterministic values by default, or .pb tensors from the scenario.
 * It must never allocate after the first request: buffers are made once and reused every iteration. */
#ifndef MLK_INPUTS_H
#define MLK_INPUTS_H

#include <stdint.h>

#include "engine.h"
#include "shapes.h"
#include "status.h"

typedef struct mlk_inputs mlk_inputs;

/* pb_paths[i] (may be n = 0) feeds graph input i. The files are read now. */
int mlk_inputs_new(const char *const *pb_paths, int n, mlk_inputs **out, mlk_error *err);
void mlk_inputs_free(mlk_inputs *in);

/* Set every input of request r: from its .pb, else deterministic values for the input's default shape
 * (floats uniform in [-1, 1), integers in [0, 4), bools alternating; the same on every call). With a shape
 * schedule sh (NULL: none), each input dim the engine names (input_dim_param) after a dim of sh takes sizes[d]
 * instead; the buffers are made for the schedule's largest sizes on the first call, so later calls allocate
 * nothing. Fails, naming what is wrong, when the engine cannot name its dims, when a dim of sh names no input's
 * dim (the message lists the model's), or when a scheduled dim belongs to an input read from a .pb. */
int mlk_inputs_apply(mlk_inputs *in, const engine_api *api, engine_compiled *c, engine_request *r,
                     const mlk_shapes *sh, const int64_t *sizes, engine_error *err);

/* Fill buf (n elements of ONNX dtype) with the deterministic values for seed. */
void mlk_inputs_fill(int dtype, void *buf, int64_t n, uint64_t seed);

#endif
