/* quant_ms.h: what the com.microsoft quantized operators share (quant_ms.c, quant_ms_gemm.c, quant_ms_pool.c):
 * per-tensor parameter checks that name the input, and the ORT-style float32 requantization. It must never round
 * other than to nearest with ties to even, then saturate, as ONNX Runtime's MLAS kernels do. */
#ifndef REF_QUANT_MS_H
#define REF_QUANT_MS_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

/* Input i (named `what` in messages) is a one-value scale of dtype float: REF_E_INVALID when absent and required,
 * REF_E_UNSUPPORTED for another dtype or more than one value. An absent optional one passes. */
int ref_qms_want_scale(ref_op_ctx *c, int i, const char *what, bool required);
/* Input i is an omitted zero point or a one-value tensor of dtype dt. */
int ref_qms_want_zp(ref_op_ctx *c, int i, const char *what, int dt);
/* Input i as float (scale), 0 when absent; as int (zero point), 0 when absent. Index 0 of a per-tensor value. */
float ref_qms_scale(const ref_op_ctx *c, int i);
int ref_qms_zp(const ref_op_ctx *c, int i);
/* Element i of an 8-bit tensor. */
int ref_qms_ld8(const ref_tensor *t, int64_t i);
/* v (already scaled into the output's units) rounded ties-to-even in float32, plus zp, saturated to dt; NaN gives
 * dt's lowest value. */
int ref_qms_requant(float v, int zp, int dt);
/* Output 0 of shape `t` checked against the op's tensor limit, naming the output. */
int ref_qms_set_out(ref_op_ctx *c, int j, int dt, int rank, const int64_t *dims);

/* QLinearGlobalAveragePool's arithmetic (x, x_scale, x_zp, y_scale, y_zp at inputs 0..4) on n images of ch channels
 * of img values each, NCHW or (last) NHWC, into y: MLAS's float32 multiplier on exact sums. */
int ref_qms_global_avg(ref_op_ctx *c, const ref_tensor *x, int64_t n, int64_t ch, int64_t img, bool last,
                       ref_tensor *y);

#endif
