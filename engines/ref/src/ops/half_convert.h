/* half_convert.h: float16 <-> float32 over whole arrays, with F16C where the CPU has it and a portable path.
 * It must never give a result that depends on which path ran: both round to nearest even and keep NaNs NaN. */
#ifndef REF_HALF_CONVERT_H
#define REF_HALF_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

/* dst[i] = the i-th float16 at src, for i < n (exact: every half is a float). src may have any alignment (mapped
 * weights sit at odd file offsets); dst is float-aligned. */
void ref_half_to_float_n(const void *src, float *dst, int64_t n);
/* dst[i] = src[i] rounded to the nearest half (ties to even; past 65504 to infinity). */
void ref_float_to_half_n(const float *src, uint16_t *dst, int64_t n);
/* Round every element to float16 precision in place (a Cast to float16 inside a graph run in float32). */
void ref_float_round_half_n(float *x, int64_t n);
/* Tests: force the portable path (true) or let the CPU decide (false). */
void ref_half_force_portable(bool on);
/* Whether the F16C path would run now. */
bool ref_half_fast(void);

#endif
