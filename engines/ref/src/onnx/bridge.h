/* bridge.h: where the reference engine meets common/onnx: its allocation hook as an onnx_alloc table and
 * ref_tensor shapes from scanned TensorProtos. It must never hold parsing logic: conversions only. */
#ifndef REF_ONNX_BRIDGE_H
#define REF_ONNX_BRIDGE_H

#include "../alloc.h"
#include "../status.h"
#include "onnx/tensor_pb.h"
#include "refengine.h"

/* A scanned shape is copied into ref_tensor's dims as is. */
_Static_assert(REF_MAX_RANK == ONNX_MAX_RANK, "ref_tensor must hold every rank the scan accepts");

/* ref_realloc and ref_free as a table, so buffers common/onnx hands the engine (the file it reads, the
 * bytes the writer grows) count in ref_alloc_get_stats and fail under ref_alloc_fail_after. */
static inline const onnx_alloc *ref_onnx_alloc(void)
{
    static const onnx_alloc hook = {ref_realloc, ref_free};
    return &hook;
}

/* dtype, rank and dims of a scanned tensor; data NULL. */
static inline ref_tensor ref_tensor_of_pb(const onnx_tensor_pb *tp)
{
    ref_tensor t = {.dtype = tp->dtype, .rank = tp->rank};
    for (int i = 0; i < tp->rank; i++)
        t.dims[i] = tp->dims[i];
    return t;
}

#endif
