/* rows.h: float rows of Softmax (a contiguous lane) and LayerNormalization (dense float Scale and B) for the hot
 * case of both ops, portable or AVX2 by the CPU, the same bits either way (rows_fastmath.h).
 * It must never hold state but the test switch that forces the portable build. */
#ifndef REF_ROWS_H
#define REF_ROWS_H

#include <stdbool.h>
#include <stdint.h>

/* Softmax of x[0..n) into y; y may be x. */
typedef void (*ref_rows_softmax_fn)(const float *x, float *y, int64_t n);
/* LayerNormalization of x[0..n) into y with scale[0..n) and bias[0..n) (or NULL); the row's mean and 1/std out. */
typedef void (*ref_rows_layernorm_fn)(const float *x, float *y, int64_t n, const float *scale, const float *bias,
                                      double eps, double *mean, double *inv_std);

/* The build this CPU runs (AVX2 unless it lacks it or ref_rows_force_portable is on). */
ref_rows_softmax_fn ref_rows_softmax(void);
ref_rows_layernorm_fn ref_rows_layernorm(void);

/* Tests: run the portable build whatever the CPU, to compare its bits with the AVX2 one. */
void ref_rows_force_portable(bool on);

void ref_rows_softmax_f32_avx2(const float *x, float *y, int64_t n);
void ref_rows_layernorm_f32_avx2(const float *x, float *y, int64_t n, const float *scale, const float *bias,
                                 double eps, double *mean, double *inv_std);

#endif
