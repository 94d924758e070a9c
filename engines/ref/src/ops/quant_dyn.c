/* quant_dyn.c: DynamicQuantizeLinear: uint8 with a scale and zero point from the data's range (and 0), both passes
 * (min/max, then quantize) split over the pool in chunks and vectorized where the CPU allows. It must never give
 * bytes that depend on the path or the thread count: min and max are exact in any order (NaN skipped, +0 kept over
 * -0 as the scalar loop does) and the quantization divides, as the spec's formula does. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "quant.h"
#include "quant_kernels.h"

#define DYN_CHUNKS 64         /* chunks at most, each with its own min and max */
#define DYN_CHUNK_MIN 16384   /* floats a chunk at least: a pass over it pays for a share of a parallel loop */

int ref_dyn_quant_infer(ref_op_ctx *c)
{
    if (c->in[0]->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "DynamicQuantizeLinear of %s", ref_dtype_name(c->in[0]->dtype));
    c->out[0]->dtype = REF_DT_UINT8;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    for (int j = 1; j < 3 && j < c->n_out; j++) {
        c->out[j]->dtype = j == 1 ? REF_DT_FLOAT : REF_DT_UINT8;
        c->out[j]->rank = 0;
    }
    return REF_OK;
}

/* x < l ? x : l, the scalar rule every path follows (vminps(x, l) is exactly this, NaN x included). */
static void min_max_scalar(const float *x, int64_t n, float *lo, float *hi)
{
    float l = *lo, h = *hi;
    for (int64_t i = 0; i < n; i++) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    *lo = l;
    *hi = h;
}

__attribute__((target("avx2"))) static void min_max_avx2(const float *x, int64_t n, float *lo, float *hi)
{
    __m256 l0 = _mm256_set1_ps(*lo), l1 = l0, h0 = _mm256_set1_ps(*hi), h1 = h0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        l0 = _mm256_min_ps(a, l0), l1 = _mm256_min_ps(b, l1);
        h0 = _mm256_max_ps(a, h0), h1 = _mm256_max_ps(b, h1);
    }
    float lv[16], hv[16];
    _mm256_storeu_ps(lv, l0), _mm256_storeu_ps(lv + 8, l1);
    _mm256_storeu_ps(hv, h0), _mm256_storeu_ps(hv + 8, h1);
    min_max_scalar(lv, 16, lo, hi); /* lanes hold only values of x and the start, so lv for hi is fine too */
    min_max_scalar(hv, 16, lo, hi);
    min_max_scalar(x + i, n - i, lo, hi);
}

typedef struct {
    const float *x;
    uint8_t *y;
    int64_t n, chunk;
    float scale, lo[DYN_CHUNKS], hi[DYN_CHUNKS];
    uint8_t zp;
    bool avx2;
} dyn_job;

static void range_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    dyn_job *j = arg;
    for (int64_t t = begin; t < end; t++) {
        int64_t i0 = t * j->chunk, len = j->n - i0 < j->chunk ? j->n - i0 : j->chunk;
        float l = 0, h = 0;
        if (j->avx2)
            min_max_avx2(j->x + i0, len, &l, &h);
        else
            min_max_scalar(j->x + i0, len, &l, &h);
        j->lo[t] = l, j->hi[t] = h;
    }
}

static void quant_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const dyn_job *j = arg;
    int64_t i0 = begin * j->chunk, i1 = end * j->chunk < j->n ? end * j->chunk : j->n;
    ref_quant_f32_8(j->x + i0, i1 - i0, j->scale, j->zp, false, j->y + i0);
}

int ref_dyn_quant_run(ref_op_ctx *c)
{
    dyn_job j = {.x = c->in[0]->data, .y = c->out[0]->data, .n = ref_tensor_numel(c->in[0]),
                 .avx2 = __builtin_cpu_supports("avx2")};
    j.chunk = (j.n + DYN_CHUNKS - 1) / DYN_CHUNKS;
    j.chunk = j.chunk < DYN_CHUNK_MIN ? DYN_CHUNK_MIN : (j.chunk + 15) / 16 * 16;
    int64_t chunks = (j.n + j.chunk - 1) / j.chunk;
    ref_parallel_for(c->pool, chunks, 1, range_task, &j);
    float lo = 0, hi = 0;
    min_max_scalar(j.lo, chunks, &lo, &hi);
    min_max_scalar(j.hi, chunks, &lo, &hi);
    j.scale = (hi - lo) / 255.0f;
    float zpf = j.scale != 0 ? rintf(-lo / j.scale) : 0;
    j.zp = (uint8_t)(zpf < 0 ? 0 : zpf > 255 ? 255 : zpf);
    if (j.scale != 0)
        ref_parallel_for(c->pool, chunks, 1, quant_task, &j);
    else
        memset(j.y, j.zp, (size_t)j.n);
    if (c->n_out > 1 && c->out[1])
        *(float *)c->out[1]->data = j.scale;
    if (c->n_out > 2 && c->out[2])
        *(uint8_t *)c->out[2]->data = j.zp;
    return REF_OK;
}
