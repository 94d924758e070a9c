/* test_qgemm8.c: the 8-bit VNNI GEMM (qgemm8.h) on every path this CPU runs, against direct int64 sums and the
 * int16 vpmaddwd GEMM (qgemm.h): random shapes (odd K and N, rows past a tile), uint8 x int8 in both operand orders
 * and uint8 x uint8 / int8 x int8 shifted, per-row zero points, per-column ones or one, 1 and 2 threads. It must
 * never compare a path only with itself: every result is checked against the sums written here. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "alloc.h"
#include "ops/qgemm.h"
#include "ops/qgemm8.h"
#include "pool.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static int rnd(int lo, int hi)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (int)(rng % (uint64_t)(hi - lo + 1));
}

typedef struct {
    int64_t M, N, K;
    bool a_s8, b_s8; /* the operands' own types */
    int *a, *b, *za, *zb; /* values and zero points as their types read them (za per row, zb per column) */
    bool zb_per_col;      /* else zb[n] are all zb[0], folded as one value */
} mm;

static void mm_free(mm *t)
{
    free(t->a), free(t->b), free(t->za), free(t->zb);
}

static void mm_random(mm *t, int64_t M, int64_t N, int64_t K, bool a_s8, bool b_s8, bool zb_per_col)
{
    *t = (mm){.M = M, .N = N, .K = K, .a_s8 = a_s8, .b_s8 = b_s8, .zb_per_col = zb_per_col};
    t->zb = malloc((size_t)N * sizeof(int));
    t->a = malloc((size_t)(M * K) * sizeof(int));
    t->b = malloc((size_t)(K * N) * sizeof(int));
    t->za = malloc((size_t)M * sizeof(int));
    int alo = a_s8 ? -128 : 0, blo = b_s8 ? -128 : 0;
    for (int64_t i = 0; i < M * K; i++)
        t->a[i] = rnd(alo, alo + 255);
    for (int64_t i = 0; i < K * N; i++)
        t->b[i] = rnd(blo, blo + 255);
    for (int64_t m = 0; m < M; m++)
        t->za[m] = rnd(alo, alo + 255);
    for (int64_t n = 0; n < N; n++)
        t->zb[n] = zb_per_col || n == 0 ? rnd(blo, blo + 255) : t->zb[0];
}

static int64_t want(const mm *t, int64_t m, int64_t n)
{
    int64_t s = 0;
    for (int64_t k = 0; k < t->K; k++)
        s += (int64_t)(t->a[m * t->K + k] - t->za[m]) * (t->b[k * t->N + n] - t->zb[n]);
    return s;
}

/* The int16 GEMM: zero points subtracted as its operands hold them. Returns the mismatches with want(). */
static int64_t check_int16(const mm *t, ref_pool *pool)
{
    int64_t Kp = (t->K + 1) / 2, bad = 0;
    int32_t *a = malloc((size_t)(t->M * Kp) * 4), *y = malloc((size_t)(t->M * t->N) * 4);
    int16_t *b = ref_aligned_alloc((size_t)ref_qgemm_b_elems(Kp, t->N) * 2 + 64);
    memset(b, 0, (size_t)ref_qgemm_b_elems(Kp, t->N) * 2);
    for (int64_t m = 0; m < t->M; m++)
        for (int64_t kp = 0; kp < Kp; kp++) {
            int64_t k = 2 * kp;
            int v0 = t->a[m * t->K + k] - t->za[m], v1 = k + 1 < t->K ? t->a[m * t->K + k + 1] - t->za[m] : 0;
            a[m * Kp + kp] = ref_qgemm_pair(v0, v1);
        }
    for (int64_t k = 0; k < t->K; k++)
        for (int64_t n = 0; n < t->N; n++)
            b[ref_qgemm_b_at(Kp, k / 2, n) + k % 2] = (int16_t)(t->b[k * t->N + n] - t->zb[n]);
    ref_qgemm(t->M, t->N, Kp, a, b, y, t->N, pool);
    for (int64_t i = 0; i < t->M * t->N; i++)
        bad += y[i] != want(t, i / t->N, i % t->N);
    free(a), free(y);
    ref_free(b);
    return bad;
}

/* ref_qgemm8 on path with a as the uint8 operand (a_u8) or the int8 one: each operand shifted by 128 where its type
 * is not the one the instruction takes, the zero point with it, and the zero points folded into the epilogue: one
 * zero point of b as row_add + row_mul.col, per-column ones as row_mul.col + row_mul2.col2. */
static int64_t check_8(const mm *t, ref_qgemm8_path path, bool a_u8, ref_pool *pool)
{
    int64_t Kq = (t->K + 3) / 4, n16 = (t->N + 15) / 16 * 16, bad = 0;
    int sa = a_u8 ? (t->a_s8 ? 128 : 0) : (t->a_s8 ? 0 : -128); /* added to a to put it in its domain */
    int sb = a_u8 ? (t->b_s8 ? 0 : -128) : (t->b_s8 ? 128 : 0);
    uint8_t *a = calloc((size_t)(t->M * Kq * 4) + 1, 1), *b = calloc((size_t)ref_qgemm8_b_bytes(Kq, t->N), 1);
    int32_t *ra = malloc((size_t)t->M * 4), *rm = malloc((size_t)t->M * 4), *col = malloc((size_t)n16 * 4);
    int32_t *rm2 = malloc((size_t)t->M * 4), *col2 = calloc((size_t)n16, 4);
    int32_t *y = malloc((size_t)(t->M * t->N) * 4);
    int32_t zb = t->zb[0] + sb;
    for (int64_t m = 0; m < t->M; m++) {
        int32_t sum = 0;
        for (int64_t k = 0; k < t->K; k++) {
            int v = t->a[m * t->K + k] + sa;
            a[m * Kq * 4 + k] = (uint8_t)v;
            sum += v;
        }
        ra[m] = -zb * sum;
        rm[m] = t->za[m] + sa;
        rm2[m] = -sum;
    }
    for (int64_t n = 0; n < n16; n++) {
        int32_t sum = 0;
        for (int64_t k = 0; k < t->K && n < t->N; k++) {
            int v = t->b[k * t->N + n] + sb;
            b[ref_qgemm8_b_at(Kq, k, n)] = (uint8_t)v;
            sum += v;
        }
        int32_t zbn = n < t->N ? t->zb[n] + sb : 0;
        col[n] = (int32_t)t->K * (t->zb_per_col ? zbn : zb) - sum;
        col2[n] = zbn;
    }
    ref_qgemm8_epi e = {.row_add = ra, .row_mul = rm, .col = col};
    if (t->zb_per_col)
        e = (ref_qgemm8_epi){.row_mul = rm, .col = col, .row_mul2 = rm2, .col2 = col2};
    /* a one past its rows' bytes: the kernel must not need a's rows aligned */
    memmove(a + 1, a, (size_t)(t->M * Kq * 4));
    ref_qgemm8_on(path, t->M, t->N, Kq, a + 1, b, a_u8, &e, y, t->N, pool);
    for (int64_t i = 0; i < t->M * t->N; i++)
        bad += y[i] != want(t, i / t->N, i % t->N);
    free(a), free(b), free(ra), free(rm), free(col), free(rm2), free(col2), free(y);
    return bad;
}

static void test_colsums(void)
{
    int64_t Kq = 37;
    uint8_t *p = malloc((size_t)(Kq * 64));
    for (int64_t i = 0; i < Kq * 64; i++)
        p[i] = (uint8_t)rnd(0, 255);
    int32_t got[16];
    ref_qgemm8_colsums_u8(p, Kq, got);
    for (int c = 0; c < 16; c++) {
        int32_t s = 0;
        for (int64_t kq = 0; kq < Kq; kq++)
            for (int h = 0; h < 4; h++)
                s += p[kq * 64 + c * 4 + h];
        CHECK(got[c] == s);
    }
    free(p);
}

int main(void)
{
    ref_error err = {0};
    ref_pool *pool2 = NULL;
    CHECK_OK(ref_pool_new(2, &pool2, &err), &err);
    static const int64_t shapes[][3] = {{1, 1, 1}, {3, 17, 5}, {8, 32, 4}, {9, 33, 7}, {17, 100, 129},
                                        {40, 250, 300}, {8, 49, 4608}, {2, 700, 27}};
    int paths = 0;
    for (int p = REF_QGEMM8_AVX512; p <= REF_QGEMM8_PORTABLE; p++)
        paths += ref_qgemm8_path_ok((ref_qgemm8_path)p);
    printf("qgemm8 paths on this CPU: %d of %d (best %d)\n", paths, REF_QGEMM8_PORTABLE + 1, (int)ref_qgemm8_best());
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] + 6; s++) {
        int64_t M, N, K;
        if (s < sizeof shapes / sizeof shapes[0])
            M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        else
            M = rnd(1, 30), N = rnd(1, 90), K = rnd(1, 200);
        for (int types = 0; types < 4; types++) {
            mm t;
            mm_random(&t, M, N, K, types & 1, types & 2, s % 3 == 1);
            ref_pool *pool = s % 2 ? pool2 : NULL;
            CHECK(check_int16(&t, pool) == 0);
            for (int p = REF_QGEMM8_AVX512; p <= REF_QGEMM8_PORTABLE; p++)
                for (int a_u8 = 0; a_u8 < 2 && ref_qgemm8_path_ok((ref_qgemm8_path)p); a_u8++) {
                    int64_t bad = check_8(&t, (ref_qgemm8_path)p, a_u8, pool);
                    if (bad)
                        printf("path %d a_u8 %d M %lld N %lld K %lld types %d: %lld wrong\n", p, a_u8, (long long)M,
                               (long long)N, (long long)K, types, (long long)bad);
                    CHECK(bad == 0);
                }
            mm_free(&t);
        }
    }
    test_colsums();
    ref_pool_free(pool2);
    return check_summary();
}
