/* training.h: the training modes of BatchNormalization and Dropout, which norm.c and shape.c hand over to
 * training.c. It must never be reached with training_mode=0: inference keeps their own kernels. */
#ifndef REF_TRAINING_H
#define REF_TRAINING_H

#include "op.h"

/* Shapes and run of BatchNormalization with training_mode=1: y from the batch's own mean and (biased) variance;
 * outputs 1 and 2, when present, the running mean and variance updated with momentum. */
int ref_bn_train_infer(ref_op_ctx *c);
int ref_bn_train_run(ref_op_ctx *c);

/* Dropout with training_mode=true: ratio 0 is the identity; otherwise the seed attribute drives numpy's legacy
 * generator (MT19937, np.random.seed then uniform), so a seeded node drops exactly what ONNX's reference drops.
 * Without a seed the outputs would be random: REF_E_UNSUPPORTED. */
int ref_dropout_train_check(ref_op_ctx *c);
int ref_dropout_train_run(ref_op_ctx *c);

#endif
