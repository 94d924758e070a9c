/* gen_rng.c: splitmix64 streams, one per (seed, tensor), read at random positions.
 * It must never depend on call order or global state, so weights are reproducible tensor by tensor. */
#include "gen_rng.h"

#define GOLDEN 0x9E3779B97F4A7C15ull

uint64_t ref_gen_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Start of the stream of one tensor. Mixing the index before xoring in the seed keeps streams of
 * neighbouring (seed, tensor) pairs from being shifted copies of each other. */
static uint64_t stream_base(uint64_t seed, uint64_t tensor)
{
    return ref_gen_mix64(ref_gen_mix64(seed + GOLDEN) ^ ref_gen_mix64(tensor * GOLDEN + 1));
}

static float to_uniform(uint64_t r)
{
    /* The top 24 bits give an exact float in [0, 1); 2u - 1 is exact too. */
    float u = (float)(r >> 40) * (1.0f / 16777216.0f);
    return 2.0f * u - 1.0f;
}

float ref_gen_uniform(uint64_t seed, uint64_t tensor, uint64_t k)
{
    return to_uniform(ref_gen_mix64(stream_base(seed, tensor) + (k + 1) * GOLDEN));
}

void ref_gen_fill(float *dst, size_t n, uint64_t seed, uint64_t tensor, float center, float half_width)
{
    uint64_t base = stream_base(seed, tensor);
    for (size_t k = 0; k < n; k++)
        dst[k] = center + half_width * to_uniform(ref_gen_mix64(base + ((uint64_t)k + 1) * GOLDEN));
}
