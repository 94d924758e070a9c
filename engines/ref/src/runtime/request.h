/* request.h: internals of an inference request: inputs, output bindings, plan cache, arena.
 * A request is used by one thread at a time; it must never share mutable state with other requests. */
#ifndef REF_REQUEST_H
#define REF_REQUEST_H

#include <stdbool.h>

#include "../compile/compiled.h"

struct ref_request {
    ref_compiled *c;
    ref_pool *pool;
    bool own_pool;             /* false for a subgraph's request, which borrows its parent's */
    ref_tensor *vals;          /* per value: what the operators see during this run */
    ref_tensor *in;            /* per graph input: dtype, shape and where its data is */
    void **in_own;             /* per graph input: the request's own copy (set_input) */
    size_t *in_cap;
    bool *in_set;
    void **out_bind;           /* per graph output: caller buffer, or NULL */
    size_t *out_bind_bytes;
    /* per graph output handed out as float16 while it runs as float32 (compiled->half, top-level graph only):
     * where it is converted after each infer, the caller's bound buffer or the request's own */
    void **half_out;
    size_t *half_cap;          /* bytes of the request's own half_out buffer (0 when it is the caller's) */
    void **half_bind;
    size_t *half_bind_bytes;
    ref_plan **cache;          /* plans for input shapes other than the default, most recently used first */
    int n_cache, cap_cache;    /* at most opts.plan_cache: the least recently used is freed past it */
    int64_t n_plans_built, n_plans_evicted;
    void **node_rt;            /* per node: what a control-flow op keeps per request (its sub-requests) */
    int running;               /* the node running now (for alloc_out) */
    ref_plan *tmp_plan;        /* mem_pattern off: the plan of the last infer, rebuilt every time */
    void *arena;
    size_t arena_cap;
    void **dyn;                /* per value: buffer allocated during the run (arena off or dynamic) */
    /* Argument arrays for the widest node (max_in + 1 and max_out + 1 entries), allocated with the request:
     * a node may have millions of inputs, and infer with the arena must not allocate. */
    const ref_tensor **in_ptrs;
    ref_tensor **out_ptrs;
    ref_tensor *dummies;       /* per output of the running node: where an omitted output is written */
    void **dummy_bufs;         /* per output of the running node: a dummy's buffer (per-tensor path) */
};

/* request.c: a request for a subgraph: no fault injection, the parent's thread pool borrowed. */
int ref_request_new_sub(ref_compiled *c, ref_pool *pool, ref_request **out, ref_error *err);
/* Free a subgraph's request: ref_request_free without fault injection (no release_request step is counted). */
void ref_request_free_sub(ref_request *r);
/* ref_infer without fault injection (subgraphs run inside their parent's infer). */
int ref_infer_run(ref_request *r, ref_error *err);

/* exec.c: run every node of plan p; the request's vals must be bound for p first. */
int ref_exec_arena(ref_request *r, const ref_plan *p, ref_error *err);
int ref_exec_per_tensor(ref_request *r, const ref_plan *p, ref_error *err);
/* Free buffers the last per-tensor run left (graph outputs kept for ref_request_output). */
void ref_exec_release(ref_request *r);

#endif
