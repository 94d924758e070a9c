/* detect_stats.c: the detector's statistics: Theil-Sen slope (exact median of pairwise slopes by
 * histogram selection) and the Mann-Kendall trend test (S counted by merge sort). It must never hold more
 * than O(n) scratch (pairs are re-enumerated, not stored), nor read outside y[0..n). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"

/* Above this many pairs Theil-Sen takes every k-th one: 2000 samples give 1,999,000 pairs, all of them. */
#define TS_MAX_PAIRS 2000000
/* Up to this many pairs (series up to 181 samples) one pass collects every slope; 96 KiB of scratch, under
 * glibc's mmap threshold so a call does not map and unmap pages. */
#define TS_MIN_COLLECT 12288
/* Samples beyond this are refused: pairwise differences and bucket arithmetic must stay finite. */
#define TS_MAX_ABS 1e300
/* Unreachable guard: each histogram pass shrinks the candidate range by the bucket count, so a double
 * range is exhausted in well under this many passes. */
#define TS_MAX_PASSES 256

static int series_ok(const double *y, int n)
{
    if (!y || n < 2)
        return 0;
    for (int i = 0; i < n; i++)
        if (!(fabs(y[i]) <= TS_MAX_ABS)) /* also false for NaN */
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Theil-Sen
 *
 * The pairwise slopes are never stored: each pass re-enumerates them (O(pairs) time, O(1) memory) and
 * keeps only a histogram of the candidate range [lo, hi] with each bucket's count, min and max. The
 * bucket holding the wanted rank becomes the next range, exactly: bucket indices are a monotone function
 * of the slope, so every slope between a bucket's min and max falls in that bucket. When the range holds
 * few enough slopes they are collected and selected. Every pass computes each slope with the same
 * expression, so the answer is the exact median of the slopes as doubles.
 * ---------------------------------------------------------------------------------------------- */

typedef enum { TS_MINMAX, TS_HIST, TS_COLLECT } ts_mode;

typedef struct ts_scan {
    const double *y;
    int n;
    int64_t stride; /* 1: every pair; k: the pairs whose row-major index is k/2 mod k */
    ts_mode mode;
    double lo, hi;  /* the candidate range (closed) */
    /* outputs */
    int64_t count;           /* TS_MINMAX: pairs visited */
    double min, max;         /* TS_MINMAX */
    int n_buckets;           /* TS_HIST */
    int64_t *bcount;         /* TS_HIST: [n_buckets] */
    double *bmin, *bmax;     /* TS_HIST: [n_buckets] */
    double *buf;             /* TS_COLLECT: room for the slopes in [lo, hi] */
    int64_t n_buf, cap_buf;
} ts_scan;

/* Run BODY with v bound to each slope the scan looks at, in a fixed order. */
#define TS_FOR_EACH_SLOPE(sc, v, BODY)                                                \
    do {                                                                              \
        const double *y_ = (sc)->y;                                                   \
        int n_ = (sc)->n;                                                             \
        if ((sc)->stride == 1) {                                                      \
            for (int i_ = 0; i_ < n_ - 1; i_++)                                       \
                for (int j_ = i_ + 1; j_ < n_; j_++) {                                \
                    double v = (y_[j_] - y_[i_]) / (double)(j_ - i_);                 \
                    BODY                                                              \
                }                                                                     \
        } else { /* row i holds the pairs (i, i+1..n-1) at row-major indices base.. */ \
            int64_t k_ = (sc)->stride, off_ = k_ / 2, base_ = 0;                      \
            for (int i_ = 0; i_ < n_ - 1; i_++) {                                     \
                int64_t first_ = ((off_ - base_ % k_) % k_ + k_) % k_;                \
                for (int64_t j_ = i_ + 1 + first_; j_ < n_; j_ += k_) {               \
                    double v = (y_[j_] - y_[i_]) / (double)(j_ - i_);                 \
                    BODY                                                              \
                }                                                                     \
                base_ += n_ - 1 - i_;                                                 \
            }                                                                         \
        }                                                                             \
    } while (0)

static void ts_pass(ts_scan *s)
{
    switch (s->mode) {
    case TS_MINMAX: {
        int64_t count = 0;
        double mn = INFINITY, mx = -INFINITY;
        TS_FOR_EACH_SLOPE(s, v, {
            count++;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        });
        s->count = count;
        s->min = mn;
        s->max = mx;
        break;
    }
    case TS_HIST: {
        /* lo < hi here; the index is monotone in v, so each bucket is a contiguous range of slopes */
        double lo = s->lo, hi = s->hi, scale = s->n_buckets / (hi - lo);
        int last = s->n_buckets - 1;
        TS_FOR_EACH_SLOPE(s, v, {
            if (v >= lo && v <= hi) {
                int b = (int)((v - lo) * scale);
                b = b > last ? last : b;
                if (s->bcount[b]++ == 0) {
                    s->bmin[b] = s->bmax[b] = v;
                } else {
                    s->bmin[b] = v < s->bmin[b] ? v : s->bmin[b];
                    s->bmax[b] = v > s->bmax[b] ? v : s->bmax[b];
                }
            }
        });
        break;
    }
    case TS_COLLECT: {
        double lo = s->lo, hi = s->hi;
        int64_t k = 0, cap = s->cap_buf;
        TS_FOR_EACH_SLOPE(s, v, {
            if (v >= lo && v <= hi && k < cap)
                s->buf[k++] = v;
        });
        s->n_buf = k;
        break;
    }
    }
}

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Put the r-th smallest of a[0..len) at a[r], smaller-or-equal before it, greater-or-equal after. */
static void select_rank(double *a, int64_t len, int64_t r)
{
    int64_t lo = 0, hi = len - 1;
    while (hi > lo) {
        int64_t mid = lo + (hi - lo) / 2;
        /* median of three as pivot, left at a[mid] */
        if (a[mid] < a[lo])
            swap_d(&a[mid], &a[lo]);
        if (a[hi] < a[lo])
            swap_d(&a[hi], &a[lo]);
        if (a[hi] < a[mid])
            swap_d(&a[hi], &a[mid]);
        double p = a[mid];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i <= j) {
                swap_d(&a[i], &a[j]);
                i++;
                j--;
            }
        }
        if (r <= j)
            hi = j;
        else if (r >= i)
            lo = i;
        else
            return;
    }
}

/* The state of a rank search: ranks k (and k+1) lie among the `in` slopes in [lo, hi]; `below` slopes
 * are smaller than lo; above_min is the smallest slope above hi (+inf if none). */
typedef struct ts_rank {
    int64_t k, below, in;
    double lo, hi, above_min;
} ts_rank;

/* One histogram pass over st's range: narrow it to the bucket holding rank k. */
static void ts_narrow(ts_scan *sc, ts_rank *st)
{
    sc->mode = TS_HIST;
    sc->lo = st->lo;
    sc->hi = st->hi;
    memset(sc->bcount, 0, sizeof *sc->bcount * (size_t)sc->n_buckets);
    ts_pass(sc);
    int64_t acc = st->below;
    int b = 0;
    while (b < sc->n_buckets - 1 && acc + sc->bcount[b] <= st->k)
        acc += sc->bcount[b++];
    double next = st->above_min;
    for (int c = b + 1; c < sc->n_buckets; c++)
        if (sc->bcount[c]) {
            next = sc->bmin[c];
            break;
        }
    st->below = acc;
    st->in = sc->bcount[b];
    st->lo = sc->bmin[b];
    st->hi = sc->bmax[b];
    st->above_min = next;
}

/* The slopes at ranks k and k+1 (0-based; v2 is only meaningful when k+1 < pairs). Returns 0 or -1. */
static int ts_select(ts_scan *sc, ts_rank *st, double *v1, double *v2)
{
    for (int pass = 0; pass < TS_MAX_PASSES; pass++) {
        if (st->lo == st->hi) {
            *v1 = st->lo;
            *v2 = st->k + 1 < st->below + st->in ? st->lo : st->above_min;
            return 0;
        }
        if (st->in <= sc->cap_buf) {
            sc->mode = TS_COLLECT;
            sc->lo = st->lo;
            sc->hi = st->hi;
            sc->n_buf = 0;
            ts_pass(sc);
            if (sc->n_buf != st->in)
                return -1; /* the passes disagree: cannot happen with deterministic arithmetic */
            int64_t r = st->k - st->below;
            select_rank(sc->buf, sc->n_buf, r);
            *v1 = sc->buf[r];
            double m = st->above_min;
            for (int64_t i = r + 1; i < sc->n_buf; i++)
                if (sc->buf[i] < m)
                    m = sc->buf[i];
            *v2 = m;
            return 0;
        }
        ts_narrow(sc, st);
    }
    return -1;
}

int mlk_theil_sen(const double *y, int n, double *slope)
{
    if (!slope || !series_ok(y, n))
        return -1;
    int64_t all = (int64_t)n * (n - 1) / 2;
    int64_t stride = all <= TS_MAX_PAIRS ? 1 : (all + TS_MAX_PAIRS - 1) / TS_MAX_PAIRS;
    int64_t cap = 4 * (int64_t)n < TS_MIN_COLLECT ? TS_MIN_COLLECT : 4 * (int64_t)n;
    int rc = -1;
    ts_scan sc = {.y = y, .n = n, .stride = stride, .cap_buf = cap};
    ts_rank st = {.k = 0, .below = 0, .in = 0, .lo = -INFINITY, .hi = INFINITY, .above_min = INFINITY};
    double v1, v2;
    sc.buf = malloc(sizeof *sc.buf * (size_t)cap);
    if (!sc.buf)
        goto fail;
    if (stride == 1 && all <= cap) { /* few pairs: one pass collects them all */
        st.in = all;
    } else {
        sc.n_buckets = (int)(cap / 2);
        sc.bcount = malloc(sizeof *sc.bcount * (size_t)sc.n_buckets);
        sc.bmin = malloc(sizeof *sc.bmin * (size_t)sc.n_buckets);
        sc.bmax = malloc(sizeof *sc.bmax * (size_t)sc.n_buckets);
        if (!sc.bcount || !sc.bmin || !sc.bmax)
            goto fail;
        sc.mode = TS_MINMAX;
        ts_pass(&sc);
        st.in = sc.count;
        st.lo = sc.min;
        st.hi = sc.max;
    }
    if (st.in < 1)
        goto fail;
    st.k = (st.in - 1) / 2;
    int64_t count = st.in;
    if (ts_select(&sc, &st, &v1, &v2) != 0)
        goto fail;
    *slope = count % 2 ? v1 : v1 + (v2 - v1) / 2;
    rc = 0;
fail:
    free(sc.bcount);
    free(sc.bmin);
    free(sc.bmax);
    free(sc.buf);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Mann-Kendall
 *
 * S = #(i<j, y[j] > y[i]) - #(i<j, y[j] < y[i]). A bottom-up merge sort counts the strict inversions
 * (the decreasing pairs), the sorted copy gives the tie groups, and the increasing pairs are what is
 * left: all pairs minus decreasing minus tied. Integers all the way, so S is exact.
 * ---------------------------------------------------------------------------------------------- */

/* Sort a[0..n) (tmp: n doubles of scratch) and return the number of pairs i<j with a[i] > a[j]. */
static int64_t sort_count_inversions(double *a, double *tmp, int n)
{
    int64_t inv = 0;
    double *src = a, *dst = tmp;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                if (src[j] < src[i]) { /* ties go left first: equal values are not inversions */
                    inv += mid - i;
                    dst[o++] = src[j++];
                } else {
                    dst[o++] = src[i++];
                }
            }
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        double *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, sizeof *a * (size_t)n);
    return inv;
}

int mlk_mann_kendall(const double *y, int n, double *z, double *p_increasing)
{
    if (!z || !p_increasing || !series_ok(y, n))
        return -1;
    double *a = malloc(sizeof *a * (size_t)n * 2);
    if (!a)
        return -1;
    memcpy(a, y, sizeof *a * (size_t)n);
    int64_t dec = sort_count_inversions(a, a + n, n);
    int64_t tied = 0;
    double tie_var = 0; /* sum over tie groups of t(t-1)(2t+5) */
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && a[j] == a[i])
            j++;
        double t = j - i;
        tied += (int64_t)(j - i) * (j - i - 1) / 2;
        tie_var += t * (t - 1) * (2 * t + 5);
        i = j;
    }
    free(a);
    int64_t all = (int64_t)n * (n - 1) / 2;
    int64_t s = (all - dec - tied) - dec;
    double dn = n;
    double var = (dn * (dn - 1) * (2 * dn + 5) - tie_var) / 18.0;
    double zz = 0;
    if (var > 0 && s > 0)
        zz = (double)(s - 1) / sqrt(var);
    else if (var > 0 && s < 0)
        zz = (double)(s + 1) / sqrt(var);
    *z = zz;
    *p_increasing = 0.5 * erfc(zz / sqrt(2.0));
    return 0;
}
