/* softmax_impl.h: the loss operators (softmax_loss.c) that softmax.c lists in the family's table.
 * It must never hold state: declarations only. */
#ifndef REF_SOFTMAX_IMPL_H
#define REF_SOFTMAX_IMPL_H

#include "op.h"

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the op_type picks which). */
int ref_softmax_loss_infer(ref_op_ctx *c);
int ref_softmax_loss_run(ref_op_ctx *c);

#endif
