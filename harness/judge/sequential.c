/* sequential.c: the decisions of `iterations: auto` (issue 23), from the same judgement the cell's verdict uses: a
 * series is decided when its class of verdict holds over a longer run. It must never judge anything itself: it
 * only compares the judge's results at successive decision points. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "sequential.h"

void mlk_seq_init(mlk_seq *q) { memset(q, 0, sizeof *q); }

/* The growth the detector saw in the late part's two halves: a leak whose second half runs below 3/4 of its first
 * is slowing down, as a cache that fills does. */
static bool slowing(const mlk_detect_result *r, double before)
{
    return (isfinite(r->late_head_slope) && isfinite(r->late_tail_slope) && r->late_head_slope > 0 &&
            r->late_tail_slope < 0.75 * r->late_head_slope) ||
           (isfinite(r->slope) && r->late_slope < 0.75 * r->slope) || (isfinite(before) && r->late_slope < 0.75 * before);
}

/* Where in the series (0 to 1) the last new high came: a value above every earlier one by more than rise. */
static double last_high(const mlk_block_series *b, double rise)
{
    if (!b || b->n < 2)
        return 0;
    double hi = b->v[0];
    int at = 0;
    for (int i = 1; i < b->n; i++)
        if (b->v[i] > hi + rise) {
            hi = b->v[i];
            at = i;
        } else if (b->v[i] > hi) {
            hi = b->v[i];
        }
    return (double)at / (double)(b->n - 1);
}

bool mlk_seq_point(mlk_seq *q, const mlk_judgement *j, int n)
{
    return mlk_seq_point_stream(q, j, NULL, n);
}

bool mlk_seq_point_stream(mlk_seq *q, const mlk_judgement *j, const mlk_cell_stream *c, int n)
{
    const mlk_series_result *h = &j->s[MLK_SERIES_HEAP];
    bool heap_flat = h->judged && h->r.verdict != MLK_VERDICT_LEAK;
    bool all = true;
    for (int k = 0; k < MLK_SERIES_COUNT; k++) {
        const mlk_series_result *r = &j->s[k];
        q->decided[k] = q->settling[k] = false;
        if (!r->judged) {
            q->held[k] = 0;
            continue;
        }
        bool leak = r->r.verdict == MLK_VERDICT_LEAK;
        double before = q->held[k] && q->leak[k] && leak ? q->last_slope[k] : NAN;
        q->last_slope[k] = r->r.late_slope;
        if (q->held[k] && q->leak[k] == leak) {
            q->held[k]++;
        } else {
            q->held[k] = 1;
            q->leak[k] = leak;
            q->first_leak_n[k] = n;
            q->first_leak_slope[k] = r->r.late_slope;
        }
        q->settling[k] = leak && heap_flat && (k == MLK_SERIES_ANON || k == MLK_SERIES_MAPPED);
        if (!leak)
            q->decided[k] = q->held[k] >= 2 &&
                            (r->r.verdict != MLK_VERDICT_PLATEAU || !c ||
                             last_high(mlk_cell_stream_series(c, k), 2 * (r->quantum > 0 ? r->quantum : 1)) < 2.0 / 3);
        else if (q->settling[k])
            q->decided[k] = q->held[k] >= 4 && n >= 8 * q->first_leak_n[k] && !slowing(&r->r, before) &&
                            r->r.late_slope >= 0.75 * q->first_leak_slope[k];
        else
            q->decided[k] = q->held[k] >= 3 && !slowing(&r->r, before);
        all &= q->decided[k];
    }
    q->points++;
    return all;
}

bool mlk_seq_conclude(const mlk_seq *q, mlk_judgement *j, int n, const char *why)
{
    char names[200] = "";
    size_t used = 0;
    for (int k = 0; k < MLK_SERIES_COUNT; k++) {
        const mlk_series_result *r = &j->s[k];
        if (!r->judged)
            continue;
        if (q->decided[k] && r->r.verdict == MLK_VERDICT_LEAK)
            return false; /* a decided leak is the cell's verdict whatever else is still open */
        /* Undecided and leaking now, or just stopped leaking: either way a guess. A series that flips between pass
         * and plateau is decided enough: neither is a finding. */
        bool open = !q->decided[k] && (r->r.verdict == MLK_VERDICT_LEAK || (q->held[k] < 2 && q->points > 1));
        if (open && used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     mlk_series_name(k));
    }
    if (!used)
        return false;
    char first[sizeof j->detail];
    snprintf(first, sizeof first, "%s", j->detail);
    j->verdict = MLK_VERDICT_INCONCLUSIVE;
    snprintf(j->detail, sizeof j->detail, "inconclusive: %s undecided at %d iterations (%s); last judged %.500s",
             names, n, why, first);
    return true;
}

void mlk_seq_undecided(const mlk_seq *q, const mlk_judgement *j, char *out, size_t len)
{
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int k = 0; k < MLK_SERIES_COUNT && used < len; k++)
        if (j->s[k].judged && !q->decided[k])
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "", mlk_series_name(k));
}
