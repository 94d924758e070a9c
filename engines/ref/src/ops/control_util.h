/* control_util.h: what If, Loop and Scan share: a sub-request per subgraph kept in the request's node slot,
 * outer-scope values bound into it, output shapes of a subgraph for given input shapes, growable buffers.
 * It must never let a sub-request outlive the request that owns the slot (rt_free frees them). */
#ifndef REF_CONTROL_UTIL_H
#define REF_CONTROL_UTIL_H

#include "../compile/compiled.h"
#include "../runtime/request.h"
#include "op.h"

/* A growable heap buffer holding one tensor (shape in t, bytes at t.data, cap bytes reserved). */
typedef struct ctl_buf {
    ref_tensor t;
    size_t cap;
} ctl_buf;

/* Per request and node: one sub-request per subgraph, and buffers the op keeps between iterations. */
typedef struct ctl_rt {
    ref_request **req; /* n_subs */
    int n_req;
    ctl_buf *bufs;     /* n_bufs */
    int n_bufs;
} ctl_rt;

/* The node's ctl_rt (created on first use with n_bufs buffers). REF_E_NOMEM on failure. */
int ctl_rt_get(ref_op_ctx *c, int n_bufs, ctl_rt **out);
void ctl_rt_free(void *rt);
/* The sub-request of subgraph s, created on first use. */
int ctl_request(ref_op_ctx *c, ctl_rt *rt, int s, ref_request **out);
/* Bind every non-constant outer-scope value subgraph s reads from c's implicit inputs (zero-copy). */
int ctl_bind_captures(ref_op_ctx *c, int s, ref_request *r);
/* Index of the subgraph of attribute name, or -1. */
int ctl_sub_index(const ref_op_ctx *c, const char *name);
/* Output shapes of subgraph s for formal input shapes formal[0..n_formal): outs[i] for each output, *known false
 * when some depends on run-time values. Fails as planning the subgraph fails. */
int ctl_sub_shapes(ref_op_ctx *c, int s, const ref_tensor *formal, ref_tensor *outs, bool *known);
/* Make b hold a tensor of t's dtype and shape (data contents undefined); grows by doubling. */
int ctl_buf_reserve(ctl_buf *b, const ref_tensor *t, ref_error *err);
/* b = copy of t. */
int ctl_buf_set(ctl_buf *b, const ref_tensor *t, ref_error *err);
/* Give output j t's shape (ref_op_output) and copy t's bytes into it. */
int ctl_output_copy(ref_op_ctx *c, int j, const ref_tensor *t);
/* Prefix err with the subgraph's attribute name and return its code. */
int ctl_fail_sub(ref_op_ctx *c, int s, int rc);

#endif
