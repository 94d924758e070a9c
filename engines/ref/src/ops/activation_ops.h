/* activation_ops.h: entry points of the activations that take extra inputs (Clip, PRelu), defined in
 * activation_clip.c and listed in ops/activation.c's table. It must never expose kernel internals. */
#ifndef REF_ACTIVATION_OPS_H
#define REF_ACTIVATION_OPS_H

#include "op.h"

int ref_act_clip_infer(ref_op_ctx *c);
int ref_act_clip_run(ref_op_ctx *c);
int ref_act_prelu_infer(ref_op_ctx *c);
int ref_act_prelu_run(ref_op_ctx *c);

#endif
