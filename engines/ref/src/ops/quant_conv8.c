/* quant_conv8.c: ConvInteger and QLinearConv over ref_qgemm8: each task builds the uint8 im2col panels of its own
 * column block (x shifted into uint8 when it is int8; padding is x's zero point, so it adds nothing), sums their
 * columns, and multiplies every weight row by them, all in one pass that stays in cache. The zero points fold into
 * row and column terms, so the sums are exactly the int16 path's. It must never read X outside its bounds. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../alloc.h"
#include "qgemm8.h"
#include "quant.h"
#include "quant_conv8.h"
#include "quant_kernels.h"
#include "reduce_elem.h"

static int64_t al64(int64_t n) { return (n + 63) / 64 * 64; }

void ref_qconv8_w_free(ref_qconv8_w *p)
{
    if (!p)
        return;
    ref_free(p->w);
    ref_free(p->rowsum);
    ref_free(p->wz);
    ref_free(p);
}

/* One weight row of K bytes as int8 (flip: 0x80 shifts uint8 by -128), zeros up to 4 Kq; returns its sum. */
static int32_t pack_row(const uint8_t *src, int64_t K, int64_t Kq, uint8_t flip, uint8_t *dst)
{
    int32_t sum = 0;
    for (int64_t k = 0; k < K; k++) {
        dst[k] = src[k] ^ flip;
        sum += (int8_t)dst[k];
    }
    memset(dst + K, 0, (size_t)(Kq * 4 - K));
    return sum;
}

int ref_qconv8_w_new(const ref_conv_geom *g, const ref_qconv_in *q, ref_qconv8_w **out)
{
    ref_qconv8_w *p = ref_calloc(1, sizeof *p);
    if (!p)
        return REF_E_NOMEM;
    p->K = g->cin_g * g->k_size;
    p->Kq = (p->K + 3) / 4;
    p->bytes = (size_t)(g->cout * p->Kq * 4 + 2 * g->cout * 4);
    p->w = ref_aligned_alloc((size_t)al64(g->cout * p->Kq * 4));
    p->rowsum = ref_calloc((size_t)g->cout, sizeof *p->rowsum);
    p->wz = ref_calloc((size_t)g->cout, sizeof *p->wz);
    if (!p->w || !p->rowsum || !p->wz) {
        ref_qconv8_w_free(p);
        return REF_E_NOMEM;
    }
    bool s = q->w->dtype == REF_DT_INT8;
    for (int64_t co = 0; co < g->cout; co++) {
        /* uint8 weights less 128 (the top bit flipped) fit int8; the zero point moves with them, so w - wz holds */
        p->wz[co] = (int32_t)ref_quant_at(q->wz, co) - (s ? 0 : 128);
        p->rowsum[co] = pack_row((const uint8_t *)q->w->data + co * p->K, p->K, p->Kq, s ? 0 : 0x80,
                                 p->w + co * p->Kq * 4);
    }
    *out = p;
    return REF_OK;
}

/* Columns per task: a block of panels of about 192 KiB at most, so it stays in L2 while every weight row passes over
 * it, and 64 columns at least: building fewer costs more in per-row setup than the GEMM takes (K 4608 gave 16). */
static int64_t cols_per_task(const ref_conv_geom *g, int64_t Kq)
{
    int64_t nb = (int64_t)(192 * 1024) / (Kq * 4) / 32 * 32; /* whole 32-column tiles, the kernel's widest */
    /* and about 16 MFLOP (~0.5 ms) a block at most: a worker descheduled in the middle of a block (a busy core)
     * holds the caller up for that long, and the pool waits only for pieces already running */
    int64_t cap = (int64_t)(16e6 / (2.0 * (double)g->cout_g * (double)(Kq * 4))) / 32 * 32;
    nb = nb < cap ? nb : cap;
    nb = nb < 64 ? 64 : nb;
    int64_t p16 = (g->out_size + 15) / 16 * 16;
    return nb < p16 ? nb : p16;
}

/* Output rows narrower than this read the columns from a copy of the group's input planes padded with the zero
 * point: a run of a few bytes is then one 32-byte copy with no bounds to find (finding them cost more than the
 * bytes: resnet18's 28-, 14- and 7-wide layers). */
#define QC8_PADDED_BELOW 32
#define QC8_SLACK 32 /* bytes a run may read past the planes and write past a row: one unaligned 32-byte copy */

static bool use_padded(const ref_conv_geom *g) { return g->out[2] < QC8_PADDED_BELOW; }

/* A padded plane's dims: the input with its pads, and at least what the last output's last tap reaches. */
static int64_t padded_dims(const ref_conv_geom *g, int64_t d[REF_CONV_SP])
{
    for (int i = 0; i < REF_CONV_SP; i++) {
        int64_t reach = (g->out[i] - 1) * g->stride[i] + (g->k[i] - 1) * g->dil[i] + 1;
        int64_t span = g->pad_lo[i] + g->in[i] + g->pad_hi[i];
        d[i] = span > reach ? span : reach;
    }
    return d[0] * d[1] * d[2];
}

/* Per thread: 4 rows of bytes (with slack), the panels, the column sums and (requantizing) the block's int32 sums. */
static int64_t per_thread_bytes(const ref_conv_geom *g, int64_t Kq, int64_t nb, bool requant)
{
    return al64(4 * (nb + QC8_SLACK)) + al64(nb * Kq * 4) + al64(nb * 4) + (requant ? al64(g->cout_g * nb * 4) : 0);
}

/* Fewer column blocks than this (a small output, a long K) build every column first and then split the GEMM's rows
 * too: one block per task would leave a second thread idle (resnet18's last layers have 49 columns, one block). */
#define QC8_SPLIT_BELOW 4
#define QC8_SPLIT_COLS 32 /* columns per task of the split build */

static bool use_split(const ref_conv_geom *g, int64_t Kq)
{
    int64_t nb = cols_per_task(g, Kq);
    return (g->out_size + nb - 1) / nb < QC8_SPLIT_BELOW && g->cout_g >= 16;
}

/* Scratch ahead of the per-thread parts: the row terms; split, every column's panels, sums and int32 sums; narrow,
 * the padded planes. */
static int64_t shared_bytes(const ref_conv_geom *g, int64_t Kq, bool requant)
{
    int64_t p16 = (g->out_size + 15) / 16 * 16, b = al64(2 * g->cout_g * 4), d[REF_CONV_SP];
    if (use_split(g, Kq))
        b += al64(p16 * Kq * 4) + al64(p16 * 4) + (requant ? al64(g->cout_g * g->out_size * 4) : 0);
    if (use_padded(g))
        b += al64(g->cin_g * padded_dims(g, d) + QC8_SLACK);
    return b;
}

size_t ref_qconv8_scratch_bytes(const ref_conv_geom *g, int threads, bool requant)
{
    int64_t Kq = (g->cin_g * g->k_size + 3) / 4, nb = cols_per_task(g, Kq);
    return (size_t)(shared_bytes(g, Kq, requant) + per_thread_bytes(g, Kq, nb, requant) * (threads > 0 ? threads : 1) +
                    64);
}

typedef struct {
    const ref_conv_geom *g;
    const ref_qconv_in *q;
    const ref_qconv8_w *w;
    ref_tensor *y;
    ref_qgemm8_epi epi; /* the group's row terms; col set per task */
    char *scratch;
    int64_t n, grp, nb, per_thread;
    uint8_t pad, flip; /* x's zero point in uint8, and 0x80 when x is int8 (to shift it into uint8) */
    bool direct;       /* a 1x1 conv, stride 1, no padding, uint8 x: the column rows are x's rows as they are */
    int64_t shared;    /* scratch bytes ahead of the per-thread parts: row terms and, split, every column */
    uint8_t *all_panels;
    int32_t *all_col, *all_acc;
    uint8_t *padded; /* narrow outputs: the group's input planes with their pads, plane bytes apart */
    int64_t plane, pd[REF_CONV_SP];
    ref_qgemm8_path path;
    double xs, ys;
} qc8_job;

/* Column row k of columns [p0, p0 + pn) into dst: x's bytes where the tap lands inside, pad where it does not. */
/* Where column row k and column p0 sit, counted up as k and p0 advance: a division per row cost more than the row's
 * bytes (40% of building ISNet's columns went to idiv). */
typedef struct {
    int64_t k, ci, tap, kx, ky, kz; /* row k = (input channel ci, tap (kz, ky, kx)) */
    int64_t ox, oy, oz;             /* output position of the block's first column */
} qc8_pos;

static void pos_init(const ref_conv_geom *g, int64_t p0, qc8_pos *ps)
{
    *ps = (qc8_pos){.ox = p0 % g->out[2], .oy = p0 / g->out[2] % g->out[1], .oz = p0 / (g->out[2] * g->out[1])};
}

static void pos_next_k(const ref_conv_geom *g, qc8_pos *ps)
{
    ps->k++;
    ps->tap++;
    if (++ps->kx < g->k[2])
        return;
    ps->kx = 0;
    if (++ps->ky < g->k[1])
        return;
    ps->ky = 0;
    if (++ps->kz < g->k[0])
        return;
    ps->kz = 0;
    ps->tap = 0;
    ps->ci++;
}

static void row_bytes(const qc8_job *j, const qc8_pos *ps, int64_t pn, uint8_t *dst)
{
    const ref_conv_geom *g = j->g;
    if (ps->k >= j->w->K) {
        memset(dst, 0, (size_t)pn); /* with the weights' zeros there: adds nothing, column sums included */
        return;
    }
    int64_t ci = ps->ci, kx = ps->kx, ky = ps->ky, kz = ps->kz, ox = ps->ox, oy = ps->oy, oz = ps->oz;
    const uint8_t *x = (const uint8_t *)j->q->x->data + (j->n * g->cin + j->grp * g->cin_g + ci) * g->in_size;
    for (int64_t q = 0; q < pn;) {
        int64_t iz = oz * g->stride[0] - g->pad_lo[0] + kz * g->dil[0];
        int64_t iy = oy * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
        bool row_in = iz >= 0 && iz < g->in[0] && iy >= 0 && iy < g->in[1];
        int64_t off = (iz * g->in[1] + iy) * g->in[2], run = g->out[2] - ox < pn - q ? g->out[2] - ox : pn - q;
        int64_t s = g->stride[2], c0 = kx * g->dil[2] - g->pad_lo[2], lo = 0, hi = row_in ? run : 0;
        while (lo < hi && (ox + lo) * s + c0 < 0)
            lo++;
        while (hi > lo && (ox + hi - 1) * s + c0 >= g->in[2])
            hi--;
        memset(dst + q, j->pad, (size_t)lo);
        int64_t at = off + (ox + lo) * s + c0; /* x's index of column lo: inside the row */
        if (s == 1 && !j->flip)
            memcpy(dst + q + lo, x + at, (size_t)(hi - lo));
        else
            for (int64_t r = 0; r < hi - lo; r++)
                dst[q + lo + r] = x[at + r * s] ^ j->flip;
        int64_t end = hi > lo ? hi : lo;
        memset(dst + q + end, j->pad, (size_t)(run - end));
        q += run;
        ox = 0;
        if (++oy == g->out[1]) {
            oy = 0;
            oz++;
        }
    }
}

/* Channels [begin, end) of the group's input into the padded planes: pad everywhere, x's rows (shifted into uint8)
 * at their place, and the slack after the last plane. */
static void pad_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const qc8_job *j = arg;
    const ref_conv_geom *g = j->g;
    const uint8_t *x = (const uint8_t *)j->q->x->data + (j->n * g->cin + j->grp * g->cin_g) * g->in_size;
    for (int64_t ci = begin; ci < end; ci++) {
        uint8_t *dst = j->padded + ci * j->plane;
        memset(dst, j->pad, (size_t)(j->plane + (ci == g->cin_g - 1 ? QC8_SLACK : 0)));
        for (int64_t iz = 0; iz < g->in[0]; iz++)
            for (int64_t iy = 0; iy < g->in[1]; iy++) {
                const uint8_t *src = x + ci * g->in_size + (iz * g->in[1] + iy) * g->in[2];
                uint8_t *row = dst + ((iz + g->pad_lo[0]) * j->pd[1] + iy + g->pad_lo[1]) * j->pd[2] + g->pad_lo[2];
                for (int64_t ix = 0; ix < g->in[2]; ix++)
                    row[ix] = src[ix] ^ j->flip;
            }
    }
}

/* Column row k from the padded planes: the same bytes as row_bytes. Writes up to QC8_SLACK bytes past pn. */
static void row_padded(const qc8_job *j, const qc8_pos *ps, int64_t pn, uint8_t *dst)
{
    const ref_conv_geom *g = j->g;
    if (ps->k >= j->w->K) {
        memset(dst, 0, (size_t)pn);
        return;
    }
    const uint8_t *xp = j->padded + ps->ci * j->plane + ps->kz * g->dil[0] * j->pd[1] * j->pd[2] +
                        ps->ky * g->dil[1] * j->pd[2] + ps->kx * g->dil[2];
    int64_t ox = ps->ox, oy = ps->oy, oz = ps->oz, sx = g->stride[2];
    for (int64_t q = 0; q < pn;) {
        int64_t run = g->out[2] - ox < pn - q ? g->out[2] - ox : pn - q;
        const uint8_t *src = xp + (oz * g->stride[0] * j->pd[1] + oy * g->stride[1]) * j->pd[2] + ox * sx;
        if (sx == 1 && run <= QC8_SLACK)
            memcpy(dst + q, src, QC8_SLACK); /* one fixed-size copy; what lands past the run is overwritten */
        else if (sx == 1)
            memcpy(dst + q, src, (size_t)run);
        else
            for (int64_t r = 0; r < run; r++)
                dst[q + r] = src[r * sx];
        q += run;
        ox = 0;
        if (++oy == g->out[1]) {
            oy = 0;
            oz++;
        }
    }
}

/* Four rows of n16 bytes (a multiple of 16) into group kq of each panel: column i's 4 bytes side by side. */
static void interleave4(uint8_t *const r[4], int64_t n16, int64_t Kq, int64_t kq, uint8_t *panels)
{
    for (int64_t i = 0; i < n16; i += 16) {
        uint8_t *d = panels + (i / 16 * Kq + kq) * 64;
#ifdef __SSE2__
        __m128i a = _mm_loadu_si128((const __m128i *)(r[0] + i)), b = _mm_loadu_si128((const __m128i *)(r[1] + i));
        __m128i c = _mm_loadu_si128((const __m128i *)(r[2] + i)), e = _mm_loadu_si128((const __m128i *)(r[3] + i));
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        __m128i ce0 = _mm_unpacklo_epi8(c, e), ce1 = _mm_unpackhi_epi8(c, e);
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(ab0, ce0));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(ab0, ce0));
        _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(ab1, ce1));
        _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(ab1, ce1));
#else
        for (int c = 0; c < 16; c++)
            for (int h = 0; h < 4; h++)
                d[c * 4 + h] = r[h][i + c];
#endif
    }
}

/* Requantize the block's sums: y = saturate(round((sum + B) * x_scale * w_scale / y_scale) + y_zero_point). */
static void requant(const qc8_job *j, const int32_t *acc, int64_t p0, int64_t pn)
{
    const ref_conv_geom *g = j->g;
    const ref_qconv_in *q = j->q;
    for (int64_t cl = 0; cl < g->cout_g; cl++) {
        int64_t co = j->grp * g->cout_g + cl, row0 = (j->n * g->cout + co) * g->out_size + p0;
        double m = j->xs * ref_quant_at(q->ws, co) / j->ys; /* the order the spec's formula has */
        int64_t b = q->b ? ref_elem_ldi(q->b->data, q->b->dtype, co) : 0;
        ref_requant_i32_8(acc + cl * pn, pn, b, m, q->yz, j->y->dtype == REF_DT_INT8, (uint8_t *)j->y->data + row0);
    }
}

/* Per-thread scratch of thread tid: 4 byte rows, the block's panels, column sums, int32 sums. */
typedef struct {
    uint8_t *r[4], *panels;
    int32_t *col, *acc;
} qc8_tls;

static qc8_tls tls_of(const qc8_job *j, int tid)
{
    int64_t nb = j->nb;
    char *base = j->scratch + j->shared + (int64_t)tid * j->per_thread;
    qc8_tls t = {.panels = (uint8_t *)base + al64(4 * (nb + QC8_SLACK))};
    for (int h = 0; h < 4; h++)
        t.r[h] = (uint8_t *)base + h * (nb + QC8_SLACK);
    t.col = (int32_t *)(t.panels + al64(nb * j->w->Kq * 4));
    t.acc = t.col + al64(nb * 4) / 4;
    return t;
}

/* Columns [p0, p0 + pn) as panels (and, with zero points in w, their sums) into panels and col. */
static void build_panels(const qc8_job *j, const qc8_tls *t, int64_t p0, int64_t pn, uint8_t *panels, int32_t *col)
{
    const ref_conv_geom *g = j->g;
    int64_t Kq = j->w->Kq, n16 = (pn + 15) / 16 * 16;
    bool direct = j->direct && pn == n16, padded = j->padded != NULL;
    qc8_pos ps;
    pos_init(g, p0, &ps);
    for (int64_t kq = 0; kq < Kq; kq++) {
        uint8_t *src[4];
        for (int h = 0; h < 4; h++, pos_next_k(g, &ps)) {
            int64_t k = ps.k;
            if (direct && k < j->w->K) { /* x's own row: column p of channel k is x[k][p] */
                src[h] = (uint8_t *)j->q->x->data + (j->n * g->cin + j->grp * g->cin_g + k) * g->in_size + p0;
                continue;
            }
            if (padded)
                row_padded(j, &ps, pn, t->r[h]);
            else
                row_bytes(j, &ps, pn, t->r[h]);
            memset(t->r[h] + pn, 0, (size_t)(n16 - pn)); /* the last panel's spare columns: computed, not stored */
            src[h] = t->r[h];
        }
        interleave4(src, n16, Kq, kq, panels);
    }
    for (int64_t i = 0; j->epi.row_mul && i < n16; i += 16)
        ref_qgemm8_colsums_u8(panels + i / 16 * Kq * 64, Kq, col + i);
}

/* Fused: task t builds column block t and runs every weight row over it while it is in cache. */
static void qc8_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const qc8_job *j = arg;
    const ref_conv_geom *g = j->g;
    int64_t Kq = j->w->Kq, nb = j->nb;
    qc8_tls t = tls_of(j, tid);
    for (int64_t b = begin; b < end; b++) {
        int64_t p0 = b * nb, pn = g->out_size - p0 < nb ? g->out_size - p0 : nb;
        build_panels(j, &t, p0, pn, t.panels, t.col);
        ref_qgemm8_epi e = j->epi;
        e.col = t.col;
        int64_t row0 = (j->n * g->cout + j->grp * g->cout_g) * g->out_size + p0;
        ref_qgemm8_args a = {.Kq = Kq, .a = j->w->w + j->grp * g->cout_g * Kq * 4, .b = t.panels, .e = &e,
                             .a_u8 = false};
        if (j->q->ys) {
            a.y = t.acc, a.ldy = pn;
            ref_qgemm8_block(j->path, &a, 0, g->cout_g, 0, pn);
            requant(j, t.acc, p0, pn);
        } else {
            a.y = (int32_t *)j->y->data + row0, a.ldy = g->out_size;
            ref_qgemm8_block(j->path, &a, 0, g->cout_g, 0, pn);
        }
    }
}

/* Split, phase 1: blocks of QC8_SPLIT_COLS columns into the shared panels. */
static void qc8_build_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const qc8_job *j = arg;
    qc8_tls t = tls_of(j, tid);
    for (int64_t b = begin; b < end; b++) {
        int64_t p0 = b * QC8_SPLIT_COLS, left = j->g->out_size - p0;
        int64_t pn = left < QC8_SPLIT_COLS ? left : QC8_SPLIT_COLS;
        build_panels(j, &t, p0, pn, j->all_panels + p0 / 16 * j->w->Kq * 64, j->all_col + p0);
    }
}

/* Split, phase 2: the GEMM over all columns, rows and columns spread over the pool. */
static void qc8_split(const qc8_job *j, ref_pool *pool)
{
    const ref_conv_geom *g = j->g;
    int64_t Kq = j->w->Kq, P = g->out_size;
    ref_qgemm8_epi e = j->epi;
    e.col = j->all_col;
    const uint8_t *a = j->w->w + j->grp * g->cout_g * Kq * 4;
    if (j->q->ys) {
        ref_qgemm8(g->cout_g, P, Kq, a, j->all_panels, false, &e, j->all_acc, P, pool);
        requant(j, j->all_acc, 0, P);
        return;
    }
    int32_t *y = (int32_t *)j->y->data + (j->n * g->cout + j->grp * g->cout_g) * P;
    ref_qgemm8(g->cout_g, P, Kq, a, j->all_panels, false, &e, y, P, pool);
}

int ref_qconv8_run(ref_op_ctx *c, const ref_conv_geom *g, const ref_qconv_in *q, const ref_qconv8_w *w,
                   ref_tensor *y)
{
    int threads = c->n_threads > 0 ? c->n_threads : 1;
    if (c->scratch_bytes < ref_qconv8_scratch_bytes(g, threads, q->ys != NULL))
        return ref_fail(c->err, REF_E_STATE, "%s: scratch too small", c->node->op_type);
    bool x_s8 = q->x->dtype == REF_DT_INT8;
    int32_t xz = (int32_t)ref_quant_at(q->xz, 0) + (x_s8 ? 128 : 0); /* in uint8, as the columns hold x */
    qc8_job j = {.g = g, .q = q, .w = w, .y = y, .scratch = c->scratch, .nb = cols_per_task(g, w->Kq),
                 .pad = (uint8_t)xz, .flip = x_s8 ? 0x80 : 0, .path = ref_qgemm8_best(),
                 .xs = q->ys ? ref_quant_at(q->xs, 0) : 0, .ys = q->ys ? ref_quant_at(q->ys, 0) : 1};
    j.per_thread = per_thread_bytes(g, w->Kq, j.nb, q->ys != NULL);
    j.direct = !x_s8 && g->k_size == 1 && g->in_size == g->out_size;
    for (int d = 0; d < REF_CONV_SP; d++)
        j.direct = j.direct && g->stride[d] == 1 && g->pad_lo[d] == 0 && g->in[d] == g->out[d];
    int32_t *row_add = (int32_t *)c->scratch, *row_mul = row_add + g->cout_g;
    bool split = use_split(g, w->Kq);
    j.shared = shared_bytes(g, w->Kq, q->ys != NULL);
    j.all_panels = (uint8_t *)c->scratch + al64(2 * g->cout_g * 4);
    j.all_col = (int32_t *)(j.all_panels + al64((g->out_size + 15) / 16 * 16 * w->Kq * 4));
    j.all_acc = j.all_col + al64((g->out_size + 15) / 16 * 16 * 4) / 4;
    if (use_padded(g) && !j.direct) { /* after the split's columns, if any; a 1x1 conv reads x in place */
        int64_t p16 = (g->out_size + 15) / 16 * 16, split_bytes = al64(p16 * w->Kq * 4) + al64(p16 * 4) +
                                                                  (q->ys ? al64(g->cout_g * g->out_size * 4) : 0);
        j.padded = j.all_panels + (split ? split_bytes : 0);
        j.plane = padded_dims(g, j.pd);
    }
    int64_t tasks = (g->out_size + j.nb - 1) / j.nb;
    double task_ops = 2.0 * (double)g->cout_g * (double)w->K * (double)j.nb;
    int64_t grain = task_ops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / task_ops) + 1;
    for (int64_t grp = 0; grp < g->group; grp++) {
        bool any_wz = false;
        for (int64_t cl = 0; cl < g->cout_g; cl++) {
            int64_t co = grp * g->cout_g + cl;
            /* sum (x - xz)(w - wz) = dot(x, w) - wz.colsum(x) + xz.(K.wz - rowsum(w)), mod 2^32 */
            row_add[cl] = (int32_t)((uint32_t)xz * ((uint32_t)w->K * (uint32_t)w->wz[co] - (uint32_t)w->rowsum[co]));
            row_mul[cl] = (int32_t)(0u - (uint32_t)w->wz[co]);
            any_wz |= w->wz[co] != 0;
        }
        j.epi = (ref_qgemm8_epi){.row_add = row_add, .row_mul = any_wz ? row_mul : NULL};
        j.grp = grp;
        for (int64_t n = 0; n < g->batch; n++) {
            j.n = n;
            if (j.padded)
                ref_parallel_for(c->pool, g->cin_g, 65536 / (j.plane + 1) + 1, pad_task, &j);
            if (!split) {
                ref_parallel_for(c->pool, tasks, grain, qc8_task, &j);
                continue;
            }
            int64_t blocks = (g->out_size + QC8_SPLIT_COLS - 1) / QC8_SPLIT_COLS;
            ref_parallel_for(c->pool, blocks, 1, qc8_build_task, &j);
            qc8_split(&j, c->pool);
        }
    }
    return REF_OK;
}
