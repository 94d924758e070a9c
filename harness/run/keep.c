/* keep.c: the bounded resolution of a long cell's stored samples (keep.h). Its memory is the tail window and the
 * kept middle iterations, never the run's length. It must never drop what it has not been told was stored. */
#include <stdbool.h>
#include <stdlib.h>

#include "keep.h"

typedef struct span {
    int64_t it, lo, hi; /* an iteration and the seqs of its samples */
} span;

struct mlk_keep {
    int64_t head, tail;
    int mid;
    span cur;             /* the iteration being received (cur.it < 0: none) */
    span *ring;           /* the last `tail` whole iterations, oldest at ring_start */
    int64_t ring_start, ring_n;
    span *kept;           /* middle iterations kept so far */
    int n_kept;
    int64_t stride;
    int64_t (*drops)[2];
    int n_drops, cap_drops;
    bool dropped_any;
    int64_t max_it, tail_from;
};

mlk_keep *mlk_keep_new(int64_t head, int64_t tail, int mid)
{
    if (head < 0 || tail < 1 || mid < 2)
        return NULL;
    mlk_keep *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->head = head;
    k->tail = tail;
    k->mid = mid;
    k->stride = 1;
    k->cur.it = -1;
    k->max_it = -1;
    k->ring = malloc(sizeof *k->ring * (size_t)tail);
    k->kept = malloc(sizeof *k->kept * (size_t)mid);
    if (!k->ring || !k->kept) {
        mlk_keep_free(k);
        return NULL;
    }
    return k;
}

void mlk_keep_free(mlk_keep *k)
{
    if (!k)
        return;
    free(k->ring);
    free(k->kept);
    free(k->drops);
    free(k);
}

static int drop(mlk_keep *k, const span *s)
{
    k->dropped_any = true;
    if (k->n_drops && k->drops[k->n_drops - 1][1] + 1 == s->lo) { /* neighbours: one range */
        k->drops[k->n_drops - 1][1] = s->hi;
        return 0;
    }
    if (k->n_drops == k->cap_drops) {
        int cap = k->cap_drops ? k->cap_drops * 2 : 64;
        int64_t(*v)[2] = realloc(k->drops, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        k->drops = v;
        k->cap_drops = cap;
    }
    k->drops[k->n_drops][0] = s->lo;
    k->drops[k->n_drops][1] = s->hi;
    k->n_drops++;
    return 0;
}

/* An iteration left the tail window: keep it among the middle ones, or drop it. */
static int decide(mlk_keep *k, const span *s)
{
    if ((s->it - k->head) % k->stride != 0)
        return drop(k, s);
    k->kept[k->n_kept++] = *s;
    if (k->n_kept < k->mid)
        return 0;
    /* Full: keep one in twice as many, so the middle covers the whole run at half the density. */
    k->stride *= 2;
    int w = 0, rc = 0;
    for (int i = 0; i < k->n_kept; i++) {
        if ((k->kept[i].it - k->head) % k->stride == 0)
            k->kept[w++] = k->kept[i];
        else
            rc |= drop(k, &k->kept[i]);
    }
    k->n_kept = w;
    return rc;
}

/* The iteration in cur is whole: into the tail window, pushing its oldest out. */
static int close_current(mlk_keep *k)
{
    if (k->cur.it < k->head) /* the head, setup and teardown are always kept */
        return 0;
    int rc = 0;
    if (k->ring_n == k->tail) {
        rc = decide(k, &k->ring[k->ring_start]);
        k->ring[k->ring_start] = k->cur;
        k->ring_start = (k->ring_start + 1) % k->tail;
    } else {
        k->ring[(k->ring_start + k->ring_n++) % k->tail] = k->cur;
    }
    return rc;
}

int mlk_keep_note(mlk_keep *k, const mlk_sample *s, int64_t seq)
{
    int64_t it = s->iteration;
    if (it == k->cur.it && k->cur.it >= 0) {
        k->cur.hi = seq;
        return 0;
    }
    int rc = k->cur.it >= 0 ? close_current(k) : 0;
    k->cur = (span){it, seq, seq};
    if (it > k->max_it)
        k->max_it = it;
    return rc;
}

const int64_t (*mlk_keep_drops(mlk_keep *k, int *n))[2]
{
    *n = k->n_drops;
    return (const int64_t(*)[2])k->drops;
}

void mlk_keep_drops_done(mlk_keep *k) { k->n_drops = 0; }

bool mlk_keep_summary(const mlk_keep *k, int64_t *head, int64_t *stride, int64_t *tail_from, int64_t *iterations)
{
    *head = k->head;
    *stride = k->stride;
    /* The oldest iteration still in the tail window, or the current one when the window is empty. */
    *tail_from = k->ring_n ? k->ring[k->ring_start].it : k->cur.it;
    *iterations = k->max_it + 1;
    return k->dropped_any;
}
