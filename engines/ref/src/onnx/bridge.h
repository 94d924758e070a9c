/* bridge.h: where the reference engine meets common/onnx: its allocation hook as an onnx_alloc table and
 * ref_tensor shapes from scanned TensorProtos. It must never hold parsing logic: conversions only. */
#ifndef REF_ONNX_BRIDGE_H
#define REF_ONNX_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>

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

/* Whether tensor bytes of this type at p may stay where they are (a mapping, or the model's copy of a buffer)
 * instead of being copied to an aligned heap buffer. float16 at any address: compile widens it through
 * ref_half_to_float_n, which loads it unaligned, and gives an aligned copy to the rare float16 constant a kernel
 * would read as is (compile/half.c), so the float16 weights a file stores at odd offsets are not copied. Every other
 * type only when aligned to its element size: kernels load it through typed pointers. */
static inline bool ref_onnx_can_borrow(int dtype, const void *p)
{
    size_t es = onnx_dtype_size(dtype);
    return dtype == ONNX_DT_FLOAT16 || (es && (uintptr_t)p % es == 0);
}

#endif
