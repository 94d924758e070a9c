/* gen_rng.h: the generator's counter-based pseudo-random numbers (splitmix64), keyed by seed and tensor index.
 * It must never keep hidden state: a value depends only on (seed, tensor index, element index). */
#ifndef REF_GEN_RNG_H
#define REF_GEN_RNG_H

#include <stddef.h>
#include <stdint.h>

/* The splitmix64 output function applied to x (a bijection on 64-bit words). */
uint64_t ref_gen_mix64(uint64_t x);

/* Element k of tensor `tensor` under `seed`, uniform in [-1, 1) on a 2^-23 grid. */
float ref_gen_uniform(uint64_t seed, uint64_t tensor, uint64_t k);

/* dst[k] = center + half_width * ref_gen_uniform(seed, tensor, k) for k < n. */
void ref_gen_fill(float *dst, size_t n, uint64_t seed, uint64_t tensor, float center, float half_width);

#endif
