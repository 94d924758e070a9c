/* training.h: BatchNormalization's training mode, which norm.c's BatchNormalization hands over to training.c.
 * It must never be reached with training_mode=0: inference keeps norm.c's kernel. */
#ifndef REF_TRAINING_H
#define REF_TRAINING_H

#include "op.h"

/* Shapes and run of BatchNormalization with training_mode=1: y from the batch's own mean and (biased) variance;
 * outputs 1 and 2, when present, the running mean and variance updated with momentum. */
int ref_bn_train_infer(ref_op_ctx *c);
int ref_bn_train_run(ref_op_ctx *c);

#endif
