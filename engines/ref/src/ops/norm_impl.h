/* norm_impl.h: what the norm family's files share: dtype checks, the per-row statistics helper and the
 * LayerNormalization / MeanVarianceNormalization entry points norm.c lists in its table.
 * It must never hold state: declarations only. */
#ifndef REF_NORM_IMPL_H
#define REF_NORM_IMPL_H

#include "op.h"

/* Fail unless input i exists and is float or double; `what` names it in the message. */
int ref_norm_want_float(ref_op_ctx *c, int i, const char *what);

/* Mean and 1/sqrt(population variance + eps) of x[base .. base+n), two-pass in double. */
void ref_norm_stats(const void *x, int dt, int64_t base, int64_t n, double *mean, double *inv_std, double eps);

int ref_norm_layer_infer(ref_op_ctx *c);
int ref_norm_layer_run(ref_op_ctx *c);
int ref_norm_mvn_infer(ref_op_ctx *c);
int ref_norm_mvn_run(ref_op_ctx *c);

#endif
