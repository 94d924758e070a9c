/* test_keep.c: the bounded resolution of a long cell's stored samples: every sample of setup, teardown, the head and
 * the tail is kept, the middle thins to at most the cap with even spacing, no sample is dropped twice or kept and
 * dropped, and the state stays bounded. It must never depend on timing. */
#include <stdlib.h>
#include <string.h>

#include "keep.h"
#include "mlk_check.h"

enum { ITERS = 200000, PER = 3, HEAD = 100, TAIL = 100, MID = 64 };

static void sample_at(mlk_sample *s, int it, int step)
{
    memset(s, 0, sizeof *s);
    s->iteration = it;
    s->step = step;
}

int main(void)
{
    CHECK(mlk_keep_new(10, 0, 8) == NULL); /* a tail is needed: the last iterations are always kept */
    mlk_keep *k = mlk_keep_new(HEAD, TAIL, MID);
    CHECK(k != NULL);
    if (!k)
        return check_summary();
    int64_t total = 2 + (int64_t)ITERS * PER + 2; /* setup 2, iterations, teardown 2 */
    unsigned char *state = calloc((size_t)total, 1); /* 0 kept, 1 dropped */
    CHECK(state != NULL);
    int64_t seq = 0, dropped_twice = 0;
    mlk_sample s;
    for (int i = 0; i < 2; i++, seq++) {
        sample_at(&s, -1, 0);
        CHECK(mlk_keep_note(k, &s, seq) == 0);
    }
    for (int it = 0; it < ITERS; it++)
        for (int p = 0; p < PER; p++, seq++) {
            sample_at(&s, it, p);
            if (mlk_keep_note(k, &s, seq))
                CHECK(!"note failed");
            if (seq % 1000 == 0 || it == ITERS - 1) { /* the run stage drops at each hand-over */
                int n = 0;
                const int64_t(*d)[2] = mlk_keep_drops(k, &n);
                for (int i = 0; i < n; i++)
                    for (int64_t q = d[i][0]; q <= d[i][1]; q++) {
                        dropped_twice += state[q];
                        state[q] = 1;
                    }
                mlk_keep_drops_done(k);
            }
        }
    for (int i = 0; i < 2; i++, seq++) {
        sample_at(&s, -1, 0);
        CHECK(mlk_keep_note(k, &s, seq) == 0);
    }
    int n = 0;
    const int64_t(*d)[2] = mlk_keep_drops(k, &n);
    for (int i = 0; i < n; i++)
        for (int64_t q = d[i][0]; q <= d[i][1]; q++) {
            dropped_twice += state[q];
            state[q] = 1;
        }
    mlk_keep_drops_done(k);
    CHECK(seq == total && dropped_twice == 0);
    /* setup, head, tail and teardown whole; an iteration is kept or dropped with all of its samples */
    int64_t kept_mid = 0, torn = 0, lost_edges = 0;
    for (int it = 0; it < ITERS; it++) {
        int64_t base = 2 + (int64_t)it * PER;
        int d0 = state[base];
        for (int p = 1; p < PER; p++)
            torn += state[base + p] != d0;
        if (it < HEAD || it >= ITERS - TAIL)
            lost_edges += d0;
        else
            kept_mid += !d0;
    }
    CHECK(torn == 0 && lost_edges == 0);
    CHECK(!state[0] && !state[1] && !state[total - 1] && !state[total - 2]);
    CHECK(kept_mid >= MID / 2 && kept_mid <= MID);
    int64_t head, stride, tail_from, iters;
    CHECK(mlk_keep_summary(k, &head, &stride, &tail_from, &iters));
    CHECK(head == HEAD && iters == ITERS && tail_from == ITERS - TAIL && stride > 1 && (stride & (stride - 1)) == 0);
    /* the kept middle iterations are exactly those on the stride */
    int64_t off_stride = 0;
    for (int it = HEAD; it < ITERS - TAIL; it++)
        off_stride += !state[2 + (int64_t)it * PER] != ((it - HEAD) % stride == 0);
    CHECK(off_stride == 0);
    free(state);
    mlk_keep_free(k);

    /* a short cell drops nothing */
    k = mlk_keep_new(HEAD, TAIL, MID);
    for (int it = 0; k && it < HEAD + TAIL + MID - 1; it++) {
        sample_at(&s, it, 0);
        mlk_keep_note(k, &s, it);
    }
    CHECK(k && !mlk_keep_summary(k, &head, &stride, &tail_from, &iters));
    mlk_keep_free(k);
    mlk_keep_free(NULL);
    return check_summary();
}
