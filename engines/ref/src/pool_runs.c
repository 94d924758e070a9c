/* pool_runs.c: the run-level arbiter (pool_runs.h): per kind of run, the last few wall times with the workers and on
 * the caller alone, the faster mode kept and the other probed at growing intervals. It must never allocate after
 * ref_runs_new, and never change a result: it only says which threads run the loops. */
#include "pool_runs.h"

#include "alloc.h"

/* Kinds of run remembered (input shapes of one model; a schedule cycling through more evicts the oldest). */
#define RUNS_SLOTS 16
/* Times kept per mode; the median of these is the mode's figure (one run's scheduler noise does not decide). */
#define RUNS_KEEP 3
/* Runs in the better mode between probes of the other: GAP_MIN after a switch, doubling while probes confirm it up
 * to GAP_MAX, so a probe costs at most 1/GAP_MAX of the runs once the choice is settled (a quiet machine's solo probe
 * of a 2-thread resnet18 is one run in 64 at twice the time), while a machine that turns busy or quiet again is
 * seen within GAP_MAX runs. */
#define RUNS_GAP_MIN 8
#define RUNS_GAP_MAX 64

typedef struct {
    uint64_t kind;
    bool live;                    /* false: an unused slot */
    int64_t seen;                 /* runs of this kind ended, failed ones included */
    int64_t t[2][RUNS_KEEP];      /* the last wall times, per mode, a ring */
    int n[2], at[2];              /* times held and the next ring slot, per mode */
    int64_t since_probe, gap;     /* runs in the better mode since the last probe, and the interval */
    int64_t used;                 /* last use, for eviction */
} runs_slot;

struct ref_runs {
    runs_slot slot[RUNS_SLOTS];
    int cur;                      /* the current run's slot */
    int64_t t0, clock, booked[2];
    ref_run_mode mode;
    bool active;
};

int ref_runs_new(ref_runs **out, ref_error *err)
{
    ref_runs *r = ref_calloc(1, sizeof *r);
    if (!r)
        return ref_fail(err, REF_E_NOMEM, "thread pool: out of memory for the run arbiter");
    *out = r;
    return REF_OK;
}

void ref_runs_free(ref_runs *r) { ref_free(r); }

static int64_t median(const runs_slot *s, int m)
{
    const int64_t *t = s->t[m];
    if (s->n[m] == 1)
        return t[0];
    if (s->n[m] == 2)
        return (t[0] + t[1]) / 2;
    int64_t lo = t[0] < t[1] ? t[0] : t[1], hi = t[0] < t[1] ? t[1] : t[0];
    return t[2] < lo ? lo : t[2] > hi ? hi : t[2];
}

/* The arbiter has a choice to make: both modes timed twice, or once each and more than a quarter apart (a second
 * thread on a quiet machine, or one beside a busy core, is 1.3-2x either way: deciding after one time each keeps the
 * slow mode out of all but the first runs, which a harness's warm-up absorbs). */
static bool settled(const runs_slot *s)
{
    int nw = s->n[REF_RUN_WORKERS], ns = s->n[REF_RUN_SOLO];
    if (nw >= 2 && ns >= 2)
        return true;
    if (nw < 1 || ns < 1)
        return false;
    int64_t w = s->t[REF_RUN_WORKERS][0], so = s->t[REF_RUN_SOLO][0];
    int64_t lo = w < so ? w : so, hi = w < so ? so : w;
    return hi / 5 > lo / 4;
}

/* The workers only when their median is at least WORKERS_GAIN_PCT below the caller's alone. Beside a busy core a run
 * with workers is bimodal (generated mobilenetv2, 2 threads: 2.9 ms when the worker got its core, 6.8-10.9 ms when
 * it did not, 1 thread 4.8), so a median of three can land on either side of the caller's time; the caller alone is
 * the choice that never costs more than one thread. On a quiet machine the workers win by 40-50%. */
#define WORKERS_GAIN_PCT 8

/* Mode m, taking t, is to be preferred to the other mode taking other. */
static bool wins(ref_run_mode m, int64_t t, int64_t other)
{
    bool workers = (m == REF_RUN_WORKERS ? t : other) * 100 <
                   (m == REF_RUN_WORKERS ? other : t) * (100 - WORKERS_GAIN_PCT);
    return m == REF_RUN_WORKERS ? workers : !workers;
}

static ref_run_mode best(const runs_slot *s)
{
    return wins(REF_RUN_WORKERS, median(s, REF_RUN_WORKERS), median(s, REF_RUN_SOLO)) ? REF_RUN_WORKERS
                                                                                        : REF_RUN_SOLO;
}

static ref_run_mode choose(const runs_slot *s)
{
    /* a kind's first run is cold (arena, page faults, plans) and not booked; run it as configured */
    if (s->seen == 0)
        return REF_RUN_WORKERS;
    if (!settled(s)) /* alternate, workers first, until both modes have two times */
        return s->n[REF_RUN_SOLO] < s->n[REF_RUN_WORKERS] ? REF_RUN_SOLO : REF_RUN_WORKERS;
    ref_run_mode b = best(s);
    return s->since_probe >= s->gap ? (ref_run_mode)!b : b;
}

static int find_slot(ref_runs *r, uint64_t kind);

ref_run_mode ref_runs_begin(ref_runs *r, uint64_t kind, int64_t now)
{
    r->cur = find_slot(r, kind);
    r->slot[r->cur].used = ++r->clock;
    r->mode = choose(&r->slot[r->cur]);
    r->t0 = now;
    r->active = true;
    return r->mode;
}

static int find_slot(ref_runs *r, uint64_t kind)
{
    int victim = 0;
    for (int i = 0; i < RUNS_SLOTS; i++) {
        if (r->slot[i].live && r->slot[i].kind == kind)
            return i;
        if (r->slot[i].used < r->slot[victim].used)
            victim = i;
    }
    runs_slot *s = &r->slot[victim];
    *s = (runs_slot){.kind = kind, .live = true, .gap = RUNS_GAP_MIN};
    return victim;
}

static void book(runs_slot *s, ref_run_mode m, int64_t t)
{
    bool was_settled = settled(s);
    ref_run_mode before = was_settled ? best(s) : m;
    s->t[m][s->at[m]] = t;
    s->at[m] = (s->at[m] + 1) % RUNS_KEEP;
    s->n[m] += s->n[m] < RUNS_KEEP;
    if (!was_settled)
        return;
    if (m == before) {
        s->since_probe++;
        return;
    }
    /* a probe of the other mode */
    s->since_probe = 0;
    if (best(s) != before) /* it won: now the better one, and the old one is probed soon */
        s->gap = RUNS_GAP_MIN;
    else if (wins(m, t, median(s, before))) /* better this once but not yet on the median: look again next run */
        s->since_probe = s->gap;
    else
        s->gap = s->gap * 2 < RUNS_GAP_MAX ? s->gap * 2 : RUNS_GAP_MAX;
}

void ref_runs_end(ref_runs *r, int64_t now, bool ok)
{
    if (!r->active)
        return;
    r->active = false;
    runs_slot *s = &r->slot[r->cur];
    if (!ok || s->seen++ == 0)
        return;
    book(s, r->mode, now - r->t0);
    r->booked[r->mode]++;
}

void ref_runs_counts(const ref_runs *r, int64_t *workers, int64_t *solo)
{
    *workers = r->booked[REF_RUN_WORKERS];
    *solo = r->booked[REF_RUN_SOLO];
}
