/* prepack.c: runs every operator's compile-time preparation (weight pre-packing) on compile_threads workers.
 * Each worker owns one scratch buffer for its whole life (grown, never shrunk, for a float16 weight widened just
 * before packing), as OpenVINO's compile threads do, so the compile-time peak grows with the thread count.
 * It must never let two workers prepare the same node. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

typedef struct {
    ref_compiled *c;
    const ref_plan *p;
    int *jobs;           /* node indices to prepare */
    int n_jobs;
    int *status;         /* per job */
    ref_error *errs;     /* per job, only read when its status fails */
    _Atomic int next;
    size_t scratch_bytes;
    _Atomic int nomem;
} prepack_run;

static void build_inputs(const ref_compiled *c, const ref_plan *p, int k, const ref_tensor **in)
{
    const ref_exec_node *e = &c->nodes[k];
    for (int j = 0; j < e->n_in; j++)
        in[j] = e->in[j] >= 0 ? &p->shapes[e->in[j]] : NULL;
}

static int prepare_one(ref_compiled *c, int k, const ref_tensor *const *in, void *scratch, size_t bytes,
                       ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    ref_op_ctx ctx;
    ref_node_ctx(c, k, in, NULL, &ctx, err);
    ctx.scratch = scratch;
    ctx.scratch_bytes = bytes;
    void *state = NULL;
    int rc = e->op->prepare(&ctx, &state);
    if (rc) {
        if (state) /* an op that set its state before failing: as ref_node_eval does, free it */
            e->op->state_free(state);
        return rc;
    }
    e->state = state;
    e->prepared = true;
    return REF_OK;
}

/* Input pointers for the widest node; a crafted node may have millions, so never on the stack. */
static const ref_tensor **inputs_alloc(const ref_compiled *c)
{
    return ref_calloc((size_t)c->max_in + 1, sizeof(const ref_tensor *));
}

/* A float16 weight still waiting (half.c: only ever input 1, of a Conv, ConvTranspose, Gemm or MatMul) is widened now,
 * just before its node packs it, into a float32 copy the value owns until ref_release_packed_weight frees it: one
 * layer at a time. The plan's shape of it has no data, so *shown stands in for it. */
static int show_widened(ref_compiled *c, int k, const ref_tensor **in, ref_tensor *shown, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[k];
    int v = e->n_in > 1 ? e->in[1] : -1;
    if (v < 0 || !c->vals[v].half_later || !in[1])
        return REF_OK;
    int rc = ref_half_widen(c, v, err);
    if (rc)
        return rc;
    *shown = *in[1];
    shown->data = c->vals[v].t.data;
    in[1] = shown;
    return REF_OK;
}

/* The up-front sizing saw no data for a weight half.c widens later, so that node's scratch is sized here. */
static int grow_scratch(prepack_run *r, int k, const ref_tensor *const *in, void **scratch, size_t *bytes,
                        ref_error *err)
{
    const ref_op *op = r->c->nodes[k].op;
    if (!op->prepare_scratch_bytes)
        return REF_OK;
    ref_op_ctx ctx;
    ref_node_ctx(r->c, k, in, NULL, &ctx, err);
    size_t b = op->prepare_scratch_bytes(&ctx);
    if (b <= *bytes)
        return REF_OK;
    ref_free(*scratch);
    *bytes = 0;
    if (!(*scratch = ref_aligned_alloc(b)))
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory for %zu bytes of prepare scratch", b);
    *bytes = b;
    return REF_OK;
}

static void *worker(void *arg)
{
    prepack_run *r = arg;
    const ref_tensor **in = inputs_alloc(r->c);
    size_t bytes = r->scratch_bytes;
    void *scratch = bytes ? ref_aligned_alloc(bytes) : NULL;
    if (!in || (bytes && !scratch)) {
        atomic_store(&r->nomem, 1); /* the other workers take the jobs; ref_prepack still fails */
        goto out;
    }
    for (int j; (j = atomic_fetch_add(&r->next, 1)) < r->n_jobs;) {
        int k = r->jobs[j];
        ref_tensor shown;
        build_inputs(r->c, r->p, k, in);
        int rc = show_widened(r->c, k, in, &shown, &r->errs[j]);
        if (!rc && r->c->nodes[k].n_in > 1 && in[1] == &shown)
            rc = grow_scratch(r, k, in, &scratch, &bytes, &r->errs[j]);
        if (!rc)
            rc = prepare_one(r->c, k, in, scratch, bytes, &r->errs[j]);
        r->status[j] = rc;
        /* at once, not after every node: the raw and packed copies of all weights never coexist */
        if (!rc)
            ref_release_packed_weight(r->c, k);
    }
out:
    ref_free(in);
    ref_free(scratch);
    return NULL;
}

/* Nodes prepared now: they have a prepare, run at all, and have known shapes. Others wait for run time. */
static int collect_jobs(ref_compiled *c, const ref_plan *p, int *jobs)
{
    int n = 0;
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        e->prepared = !e->op->prepare || e->folded || e->elided;
        if (!e->prepared && p && k < p->dynamic_from && !p->skip[k])
            jobs[n++] = k;
    }
    return n;
}

int ref_prepack(ref_compiled *c, const ref_plan *p, ref_error *err)
{
    int *jobs = ref_malloc(sizeof(int) * (size_t)(c->n_nodes + 1));
    if (!jobs)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory");
    prepack_run r = {.c = c, .p = p, .jobs = jobs};
    r.n_jobs = collect_jobs(c, p, jobs);
    int rc = REF_OK;
    const ref_tensor **in = NULL;
    int n_workers = c->opts.compile_threads < r.n_jobs ? c->opts.compile_threads : r.n_jobs;
    pthread_t *threads = NULL; /* threads[0] stays unused: the calling thread is worker 0 */
    int started = 0;
    if (!r.n_jobs)
        goto out;
    in = inputs_alloc(c);
    threads = n_workers > 1 ? ref_calloc((size_t)n_workers, sizeof *threads) : NULL;
    if (!in || (n_workers > 1 && !threads)) {
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory");
        goto out;
    }
    for (int j = 0; j < r.n_jobs; j++) {
        const ref_op *op = c->nodes[jobs[j]].op;
        if (!op->prepare_scratch_bytes)
            continue;
        ref_op_ctx ctx;
        build_inputs(c, p, jobs[j], in);
        ref_node_ctx(c, jobs[j], in, NULL, &ctx, err);
        size_t b = op->prepare_scratch_bytes(&ctx);
        if (b > r.scratch_bytes)
            r.scratch_bytes = b;
    }
    r.status = ref_calloc((size_t)r.n_jobs, sizeof *r.status);
    r.errs = ref_calloc((size_t)r.n_jobs, sizeof *r.errs);
    if (!r.status || !r.errs) {
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory");
        goto out;
    }
    for (int t = 1; t < n_workers; t++) {
        if (pthread_create(&threads[t], NULL, worker, &r))
            break; /* fewer workers is still correct; the calling thread always works */
        started = t;
    }
    worker(&r);
    for (int t = 1; t <= started; t++)
        pthread_join(threads[t], NULL);
    if (atomic_load(&r.nomem)) {
        rc = ref_fail(err, REF_E_NOMEM, "compile: out of memory for a pre-packing worker (%zu bytes of scratch)",
                      r.scratch_bytes);
        goto out;
    }
    for (int j = 0; j < r.n_jobs; j++)
        if (r.status[j]) {
            if (err)
                *err = r.errs[j];
            rc = ref_node_fail(c, jobs[j], err);
            break;
        }
    for (int j = 0; j < r.n_jobs; j++) {
        const ref_exec_node *e = &c->nodes[jobs[j]];
        if (e->state && e->op->state_bytes)
            c->packed_bytes += e->op->state_bytes(e->state);
    }
out:
    ref_free(in);
    ref_free(threads);
    ref_free(r.status);
    ref_free(r.errs);
    ref_free(jobs);
    return rc;
}

/* Prepare node k showing it only what is constant: prepare may keep what it sees as constant data (pre-packed
 * weights), and at run time every input has data, so a packed activation would be reused by later runs.
 * The shown copies go on the heap: a node may have millions of inputs. Called under prep_mu. */
static int prepare_shown(ref_compiled *c, int k, const ref_tensor *const *in, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    size_t n = (size_t)e->n_in + 1;
    char *block = ref_calloc(n, sizeof(ref_tensor) + sizeof(const ref_tensor *));
    if (!block)
        return ref_fail(err, REF_E_NOMEM, "out of memory for the %d inputs prepare sees", e->n_in);
    ref_tensor *shown = (ref_tensor *)block;
    const ref_tensor **shown_p = (const ref_tensor **)(block + n * sizeof(ref_tensor));
    for (int j = 0; j < e->n_in; j++) {
        if (!in[j])
            continue; /* shown_p[j] stays NULL */
        shown[j] = *in[j];
        if (e->in[j] < 0 || c->vals[e->in[j]].kind != REF_VAL_CONST)
            shown[j].data = NULL;
        shown_p[j] = &shown[j];
    }
    ref_op_ctx ctx;
    ref_node_ctx(c, k, shown_p, NULL, &ctx, err);
    size_t b = e->op->prepare_scratch_bytes ? e->op->prepare_scratch_bytes(&ctx) : 0;
    void *scratch = b ? ref_aligned_alloc(b) : NULL;
    int rc;
    if (b && !scratch)
        rc = ref_fail(err, REF_E_NOMEM, "out of memory for %zu bytes of prepare scratch", b);
    else
        rc = prepare_one(c, k, shown_p, scratch, b, err);
    ref_free(scratch);
    ref_free(block);
    if (!rc && e->state && e->op->state_bytes)
        c->packed_bytes += e->op->state_bytes(e->state);
    return rc;
}

int ref_prepare_lazy(ref_compiled *c, int k, const ref_tensor *const *in, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    int rc = REF_OK;
    pthread_mutex_lock(&c->prep_mu);
    if (!e->op->prepare)
        e->prepared = true;
    if (!e->prepared)
        rc = prepare_shown(c, k, in, err);
    pthread_mutex_unlock(&c->prep_mu);
    return rc;
}
