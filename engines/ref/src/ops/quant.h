/* quant.h: what the quantized operators share (quant*.c): rounding, saturation, zero points, entry points.
 * It must never round other than to nearest with ties to even, as ONNX specifies. */
#ifndef REF_QUANT_H
#define REF_QUANT_H

#include <stdbool.h>

#include "op.h"

/* uint8 or int8. */
bool ref_quant_int8(int dt);
/* v rounded (ties to even) and clamped to dt's range (uint8, int8, int32). */
int64_t ref_quant_saturate(double v, int dt);
/* Element i of t as double, t's only element when it has one, 0 when t is NULL (an omitted zero point). */
double ref_quant_at(const ref_tensor *t, int64_t i);

/* quant.c: MatMulIntegerToFloat on the integer GEMM (ref_qgemm8 where the CPU has VNNI): B (input 1) and its zero
 * points (input 5) packed at compile when constant; sums exact, scaled in float32. quant_ms_gemm.c lists it and
 * checks its inputs; compile/fuse_qdq.c turns MatMul(DequantizeLinear, DequantizeLinear) into it. */
int ref_quant_mmif_run(ref_op_ctx *c);
int ref_quant_mmif_prepare(ref_op_ctx *c, void **state);
size_t ref_quant_mmif_scratch(const ref_op_ctx *c);
void ref_quant_mm_state_free(void *s);
size_t ref_quant_mm_state_bytes(const void *s);

/* quant_dyn.c */
int ref_dyn_quant_infer(ref_op_ctx *c);
int ref_dyn_quant_run(ref_op_ctx *c);

/* quant_conv.c */
int ref_conv_integer_infer(ref_op_ctx *c);
int ref_conv_integer_run(ref_op_ctx *c);
size_t ref_conv_integer_scratch_bytes(const ref_op_ctx *c);
int ref_conv_integer_prepare(ref_op_ctx *c, void **state);
int ref_qlinear_conv_prepare(ref_op_ctx *c, void **state);
void ref_qconv_state_free(void *s);
size_t ref_qconv_state_bytes(const void *s);
int ref_qlinear_conv_infer(ref_op_ctx *c);
int ref_qlinear_conv_run(ref_op_ctx *c);
size_t ref_qlinear_conv_scratch_bytes(const ref_op_ctx *c);

#endif
