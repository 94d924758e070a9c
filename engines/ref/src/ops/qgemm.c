/* qgemm.c: ref_qgemm: tiles of 4 rows by a column block spread over the pool; the AVX2 tile where the CPU has it,
 * a portable row loop for the rest (edges, other CPUs), both exact integer sums, so the same bits either way.
 * It must never allocate: its operands are packed by the caller. */
#include <stdbool.h>

#include "qgemm.h"

#define NB 256 /* columns per task: b's block of Kp x 256 pairs stays in L2 while four rows pass over it */

static bool have_avx2(void) { return __builtin_cpu_supports("avx2"); }

/* Rows [m0, m1) x columns [n0, n1), one row at a time: y row = sum over kp of a pair times b's row kp. */
static void rows_portable(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t Kp, const int32_t *a,
                          const int16_t *b, int32_t *y, int64_t ldy)
{
    for (int64_t m = m0; m < m1; m++) {
        int32_t *yr = y + m * ldy;
        for (int64_t n = n0; n < n1; n++)
            yr[n] = 0;
        for (int64_t kp = 0; kp < Kp; kp++) {
            int32_t w0 = (int16_t)(a[m * Kp + kp] & 0xffff), w1 = (int16_t)((uint32_t)a[m * Kp + kp] >> 16);
            for (int64_t n = n0; n < n1; n++) {
                const int16_t *p = b + ref_qgemm_b_at(Kp, kp, n);
                yr[n] += w0 * p[0] + w1 * p[1];
            }
        }
    }
}

typedef struct {
    int64_t M, N, Kp, ldy, n_blocks;
    const int32_t *a;
    const int16_t *b;
    int32_t *y;
    bool avx2;
} qg_job;

/* The last, partial panel [nv, n1) of rows m0 .. m0+rows through the AVX2 tile into a 16-column buffer, of which
 * the columns in range are copied: the panel's padding columns are computed and dropped (b holds whole panels). */
static void tail_avx2(const qg_job *j, int64_t m0, int rows, int64_t nv, int64_t n1)
{
    int32_t tmp[4 * 16];
    const int16_t *panel = j->b + ref_qgemm_b_at(j->Kp, 0, nv);
    if (rows == 4)
        ref_qgemm_tile4x16_avx2(0, 16, j->Kp, j->a + m0 * j->Kp, panel, tmp, 16);
    else
        ref_qgemm_row1x16_avx2(0, 16, j->Kp, j->a + m0 * j->Kp, panel, tmp);
    for (int r = 0; r < rows; r++)
        for (int64_t n = nv; n < n1; n++)
            j->y[(m0 + r) * j->ldy + n] = tmp[r * 16 + (n - nv)];
}

static void qg_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const qg_job *j = arg;
    for (int64_t t = begin; t < end; t++) {
        int64_t m0 = t / j->n_blocks * 4, n0 = t % j->n_blocks * NB;
        int64_t m1 = m0 + 4 < j->M ? m0 + 4 : j->M, n1 = n0 + NB < j->N ? n0 + NB : j->N, nv = n0;
        if (j->avx2 && m1 - m0 == 4) {
            nv = n0 + (n1 - n0) / 16 * 16;
            ref_qgemm_tile4x16_avx2(n0, nv, j->Kp, j->a + m0 * j->Kp, j->b, j->y + m0 * j->ldy, j->ldy);
            if (nv < n1)
                tail_avx2(j, m0, 4, nv, n1);
            continue;
        }
        for (int64_t m = m0; m < m1; m++) { /* fewer than 4 rows left */
            nv = j->avx2 ? n0 + (n1 - n0) / 16 * 16 : n0;
            if (nv > n0)
                ref_qgemm_row1x16_avx2(n0, nv, j->Kp, j->a + m * j->Kp, j->b, j->y + m * j->ldy);
            if (j->avx2 && nv < n1)
                tail_avx2(j, m, 1, nv, n1);
            else
                rows_portable(m, m + 1, nv, n1, j->Kp, j->a, j->b, j->y, j->ldy);
        }
    }
}

void ref_qgemm(int64_t M, int64_t N, int64_t Kp, const int32_t *a, const int16_t *b, int32_t *y, int64_t ldy,
               ref_pool *pool)
{
    if (M <= 0 || N <= 0)
        return;
    qg_job j = {.M = M, .N = N, .Kp = Kp, .ldy = ldy, .n_blocks = (N + NB - 1) / NB, .a = a, .b = b, .y = y,
                .avx2 = have_avx2()};
    int64_t tiles = (M + 3) / 4 * j.n_blocks;
    double tile_ops = 2.0 * 4 * (double)(N < NB ? N : NB) * 2 * (double)Kp;
    int64_t grain = tile_ops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / tile_ops) + 1;
    ref_parallel_for(pool, tiles, grain, qg_task, &j);
}
