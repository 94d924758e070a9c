/* quant_kernels.h: the vector loops the quantized operators share (quant_kernels.c): float to 8-bit with one scale
 * and zero point, and back. They must never give other bytes than the scalar formulas they replace. */
#ifndef REF_QUANT_KERNELS_H
#define REF_QUANT_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

/* y[i] = saturate(rint(x[i] / scale) + zp) as int8 (s8) or uint8: float32 division, round half to even. */
void ref_quant_f32_8(const float *x, int64_t n, float scale, int zp, bool s8, uint8_t *y);
/* y[i] = (x[i] - zp) * scale, x int8 (s8) or uint8: the one float rounding the double formula has too (the
 * difference is an exact small integer, the product of it and a float fits a double exactly). */
void ref_dequant_8_f32(const uint8_t *x, int64_t n, bool s8, int zp, float scale, float *y);

/* y[i] = saturate(rint((acc[i] + bias) * mult + yz)) as int8 (s8) or uint8, in double as ref_quant_saturate has it:
 * QLinearConv's and QLinearMatMul's requantization. */
void ref_requant_i32_8(const int32_t *acc, int64_t n, int64_t bias, double mult, double yz, bool s8, uint8_t *y);

#endif
