/* qgemm8.c: ref_qgemm8: tiles of rows by a column block spread over the pool, on the AVX-512 VNNI, AVX-VNNI or
 * portable kernel (chosen once per call from the CPU), all exact integer sums, so the same bits on every path.
 * It must never allocate: its operands are packed by the caller. */
#include <stdlib.h>
#include <string.h>

#include "qgemm8.h"

#define NB_MIN 32 /* columns per task at least (two panels, the AVX-512 tile's width) */

bool ref_qgemm8_path_ok(ref_qgemm8_path path)
{
    switch (path) {
    case REF_QGEMM8_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vnni");
    case REF_QGEMM8_AVXVNNI:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni");
    case REF_QGEMM8_PORTABLE:
        return true;
    }
    return false;
}

#define REF_QGEMM8_NAME(id, name) name,
static const char *const names[] = {REF_QGEMM8_PATHS(REF_QGEMM8_NAME)};
#undef REF_QGEMM8_NAME

ref_qgemm8_path ref_qgemm8_best(void)
{
    static int best = -1; /* racing first calls (compile threads) store the same value, atomically */
    int b = __atomic_load_n(&best, __ATOMIC_RELAXED);
    if (b < 0) {
        b = ref_qgemm8_path_ok(REF_QGEMM8_AVX512)    ? REF_QGEMM8_AVX512
            : ref_qgemm8_path_ok(REF_QGEMM8_AVXVNNI) ? REF_QGEMM8_AVXVNNI
                                                     : REF_QGEMM8_PORTABLE;
        const char *want = getenv("MLK_REF_QGEMM8");
        for (int p = 0; want && p < (int)(sizeof names / sizeof names[0]); p++)
            if (!strcmp(want, names[p]) && ref_qgemm8_path_ok((ref_qgemm8_path)p))
                b = p;
        __atomic_store_n(&best, b, __ATOMIC_RELAXED);
    }
    return (ref_qgemm8_path)b;
}

bool ref_qgemm8_fast(void) { return ref_qgemm8_best() != REF_QGEMM8_PORTABLE; }

static int32_t epi_at(const ref_qgemm8_epi *e, int64_t m, int64_t n)
{
    if (!e)
        return 0;
    uint32_t v = e->row_add ? (uint32_t)e->row_add[m] : 0;
    if (e->row_mul && e->col)
        v += (uint32_t)e->row_mul[m] * (uint32_t)e->col[n];
    if (e->row_mul2 && e->col2)
        v += (uint32_t)e->row_mul2[m] * (uint32_t)e->col2[n];
    return (int32_t)v;
}

/* One row, columns [n0, n1): sums in uint32, which wrap where vpdpbusd's int32 lanes do (and the result fits). */
static void row_portable(const ref_qgemm8_args *g, int64_t m, int64_t n0, int64_t n1)
{
    const uint8_t *ar = g->a + m * g->Kq * 4;
    for (int64_t n = n0; n < n1; n++) {
        const uint8_t *p = g->b + ref_qgemm8_b_at(g->Kq, 0, n);
        uint32_t s = 0;
        for (int64_t kq = 0; kq < g->Kq; kq++, p += 64)
            for (int h = 0; h < 4; h++) {
                int32_t av = g->a_u8 ? ar[kq * 4 + h] : (int8_t)ar[kq * 4 + h];
                int32_t bv = g->a_u8 ? (int8_t)p[h] : p[h];
                s += (uint32_t)(av * bv);
            }
        g->y[m * g->ldy + n] = (int32_t)(s + (uint32_t)epi_at(g->e, m, n));
    }
}

void ref_qgemm8_colsums_u8(const uint8_t *panel, int64_t Kq, int32_t col[16])
{
    if (ref_qgemm8_best() == REF_QGEMM8_AVX512) {
        ref_qgemm8_colsums_avx512(panel, Kq, col);
        return;
    }
    for (int i = 0; i < 16; i++)
        col[i] = 0;
    for (int64_t kq = 0; kq < Kq; kq++, panel += 64)
        for (int i = 0; i < 16; i++)
            col[i] += panel[i * 4] + panel[i * 4 + 1] + panel[i * 4 + 2] + panel[i * 4 + 3];
}

typedef struct {
    ref_qgemm8_args g;
    int64_t M, N, nb, m_blocks;
    int mr;
    ref_qgemm8_path path;
} qg8_job;

void ref_qgemm8_block(ref_qgemm8_path path, const ref_qgemm8_args *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1)
{
    if (path == REF_QGEMM8_AVX512) {
        for (int64_t m = m0; m < m1; m += 8)
            ref_qgemm8_rows_avx512(g, m, m1 - m < 8 ? (int)(m1 - m) : 8, n0, n1);
    } else if (path == REF_QGEMM8_AVXVNNI) {
        for (int64_t m = m0; m < m1; m += 4)
            ref_qgemm8_rows_avxvnni(g, m, m1 - m < 4 ? (int)(m1 - m) : 4, n0, n1);
    } else {
        for (int64_t m = m0; m < m1; m++)
            row_portable(g, m, n0, n1);
    }
}

/* Task t: column block t / m_blocks, row block t % m_blocks, so consecutive tasks reuse one block of b from cache. */
static void qg8_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const qg8_job *j = arg;
    for (int64_t t = begin; t < end; t++) {
        int64_t n0 = t / j->m_blocks * j->nb, m0 = t % j->m_blocks * j->mr;
        int64_t n1 = n0 + j->nb < j->N ? n0 + j->nb : j->N, m1 = m0 + j->mr < j->M ? m0 + j->mr : j->M;
        ref_qgemm8_block(j->path, &j->g, m0, m1, n0, n1);
    }
}

void ref_qgemm8_on(ref_qgemm8_path path, int64_t M, int64_t N, int64_t Kq, const uint8_t *a, const uint8_t *b,
                   bool a_u8, const ref_qgemm8_epi *e, int32_t *y, int64_t ldy, ref_pool *pool)
{
    if (M <= 0 || N <= 0)
        return;
    qg8_job j = {.g = {.Kq = Kq, .ldy = ldy, .a = a, .b = b, .e = e, .y = y, .a_u8 = a_u8}, .M = M, .N = N,
                 .mr = 8, .path = path};
    /* A column block of about 128 KiB of b stays in L2 while every row block passes over it. */
    int64_t nb = (int64_t)(128 * 1024) / (Kq * 4 > 0 ? Kq * 4 : 1) / NB_MIN * NB_MIN;
    j.nb = nb < NB_MIN ? NB_MIN : nb;
    j.m_blocks = (M + j.mr - 1) / j.mr;
    int64_t n_blocks = (N + j.nb - 1) / j.nb;
    if (n_blocks == 1 && j.m_blocks < 4 && N > NB_MIN) { /* few rows: split columns instead, so threads share */
        j.nb = (N + 3) / 4 / NB_MIN * NB_MIN;
        j.nb = j.nb < NB_MIN ? NB_MIN : j.nb;
        n_blocks = (N + j.nb - 1) / j.nb;
    }
    double tile_ops = 2.0 * j.mr * (double)(N < j.nb ? N : j.nb) * 4 * (double)Kq;
    int64_t grain = tile_ops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / tile_ops) + 1;
    ref_parallel_for(pool, n_blocks * j.m_blocks, grain, qg8_task, &j);
}

void ref_qgemm8(int64_t M, int64_t N, int64_t Kq, const uint8_t *a, const uint8_t *b, bool a_u8,
                const ref_qgemm8_epi *e, int32_t *y, int64_t ldy, ref_pool *pool)
{
    ref_qgemm8_on(ref_qgemm8_best(), M, N, Kq, a, b, a_u8, e, y, ldy, pool);
}
