/* layout_ops.h: infer/run pairs (op.h contract) of the "layout" ops defined outside layout.c, listed in its table.
 * They must never allocate at run time, and write only their own outputs. */
#ifndef REF_LAYOUT_OPS_H
#define REF_LAYOUT_OPS_H

#include "op.h"

/* layout_transpose.c */
int ref_transpose_infer(ref_op_ctx *c);
int ref_transpose_run(ref_op_ctx *c);
int ref_depth_to_space_infer(ref_op_ctx *c);
int ref_depth_to_space_run(ref_op_ctx *c);
int ref_space_to_depth_infer(ref_op_ctx *c);
int ref_space_to_depth_run(ref_op_ctx *c);

/* layout_tile.c */
int ref_tile_infer(ref_op_ctx *c);
int ref_tile_run(ref_op_ctx *c);
int ref_expand_infer(ref_op_ctx *c);
int ref_expand_run(ref_op_ctx *c);

/* layout_pad.c */
int ref_pad_infer(ref_op_ctx *c);
int ref_pad_run(ref_op_ctx *c);

/* layout_trilu.c */
int ref_trilu_infer(ref_op_ctx *c);
int ref_trilu_run(ref_op_ctx *c);

#endif
