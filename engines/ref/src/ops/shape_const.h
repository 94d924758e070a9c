/* shape_const.h: infer/run pairs (op.h contract) of Constant, ConstantOfShape and Range, listed in shape.c's table.
 * They must never allocate; values are computed by run, at fold time when the inputs are known. */
#ifndef REF_SHAPE_CONST_H
#define REF_SHAPE_CONST_H

#include "op.h"

int ref_constant_infer(ref_op_ctx *c);
int ref_constant_run(ref_op_ctx *c);
int ref_constant_of_shape_infer(ref_op_ctx *c);
int ref_constant_of_shape_run(ref_op_ctx *c);
int ref_range_infer(ref_op_ctx *c);
int ref_range_run(ref_op_ctx *c);

#endif
