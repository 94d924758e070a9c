/* gemm_ops.h: what Gemm and MatMul share: the node state holding pre-packed constant operands, and the
 * staging/packing step prepare runs. It must never allocate at run time. */
#ifndef REF_GEMM_OPS_H
#define REF_GEMM_OPS_H

#include "op.h"
#include "sgemm.h"

/* Always made by prepare (packed == NULL when nothing was constant), so scratch sizing can tell "prepare
 * ran and packed nothing" from "prepare has not run yet". */
typedef struct ref_gemm_state {
    float *packed;     /* n_mats packed matrices, mat_floats apart */
    bool is_a;         /* Gemm: the packed operand is op(A) (else op(B)) */
    int64_t n_mats;
    size_t mat_floats;
    int64_t rows, cols; /* the packed op(X) of one matrix, rows x cols (K x N for B, M x K for A) */
} ref_gemm_state;

/* A fresh unpacked state, or NULL (with c->err set) when out of memory. */
ref_gemm_state *ref_gemm_state_new(ref_op_ctx *c);

/* Pack n_mats matrices of op(X) (rows x cols each; X stored rows x cols, or cols x rows when trans, mats
 * contiguous) into s: each is first copied (transposed when trans) into stage (rows*cols floats, the
 * worker's prepare scratch), then packed from there as A (is_a) or B. */
int ref_gemm_state_pack(ref_op_ctx *c, ref_gemm_state *s, const float *x, int64_t n_mats, int64_t rows,
                        int64_t cols, bool trans, bool is_a);

void ref_gemm_state_free(void *state);
size_t ref_gemm_state_bytes(const void *state);

/* MatMul's entry points (gemm_matmul.c). */
int ref_matmul_infer(ref_op_ctx *c);
int ref_matmul_prepare(ref_op_ctx *c, void **state);
size_t ref_matmul_prepare_scratch_bytes(const ref_op_ctx *c);
size_t ref_matmul_scratch_bytes(const ref_op_ctx *c);
int ref_matmul_run(ref_op_ctx *c);

#endif
