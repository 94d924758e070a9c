/* quant_dw.h: depthwise ConvInteger on the float depthwise kernel (quant_dw.c), exact for up to REF_QDW_MAX_TAPS
 * taps. It must never be used for QLinearConv or where ref_qdw_float_ok is false. */
#ifndef REF_QUANT_DW_H
#define REF_QUANT_DW_H

#include "quant_conv8.h"

/* 258 taps of |(x - xz)(w - wz)| <= 255 * 255 stay below 2^24, the last integer float holds with its neighbours. */
#define REF_QDW_MAX_TAPS 258

/* A depthwise conv the float kernel takes, with few enough taps. */
bool ref_qdw_float_ok(const ref_conv_geom *g);
/* Scratch of ref_qdw_float_run: x as float, the weights as float, and the float kernel's own. */
size_t ref_qdw_float_scratch_bytes(const ref_conv_geom *g, int threads);
/* y (int32) = ConvInteger(q) for a depthwise g. Fails on a too small scratch or the kernel's own error. */
int ref_qdw_float_run(ref_op_ctx *c, const ref_conv_geom *g, const ref_qconv_in *q, ref_tensor *y);

#endif
