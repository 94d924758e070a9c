/* elementwise_ops.h: the kernels and operator entry points the elementwise family's files share
 * (arithmetic kernels, comparison/logic/select operators) so ops/elementwise.c can list them all.
 * It must never expose state: every function here is pure or works only on what it is handed. */
#ifndef REF_ELEMENTWISE_OPS_H
#define REF_ELEMENTWISE_OPS_H

#include "elementwise_broadcast.h"

typedef enum ref_ew_arith {
    REF_EW_ADD,
    REF_EW_SUB,
    REF_EW_MUL,
    REF_EW_DIV,  /* integers truncate toward zero; x/0 is 0 */
    REF_EW_MAX,  /* NaN propagates */
    REF_EW_MIN,
    REF_EW_MOD,  /* fmod=0: the result takes the divisor's sign (Python %); x%0 is 0 for integers */
    REF_EW_FMOD, /* fmod=1: the dividend's sign (C fmod / %) */
    REF_EW_N_ARITH
} ref_ew_arith;

/* Row kernel for op on dtype (float, double and the eight integer types), or NULL. Half types run the
 * float kernel through ref_ew_half_row. The kernels take no arg. */
ref_ew_row_fn ref_ew_arith_fn(ref_ew_arith op, int dtype);

/* Row kernel copying (step 1) or filling (step 0) elements of elem_size bytes (1, 2, 4 or 8), or NULL. */
ref_ew_row_fn ref_ew_copy_fn(size_t elem_size);

/* Row kernel for Pow with a base of base_dt (float, double, int32, int64) and an exponent of exp_dt (any
 * numeric dtype but the half ones), or NULL. Its arg must point at an int holding exp_dt. Integer bases
 * with integer exponents follow numpy (exact, wrapping); with float exponents the double result is
 * truncated toward zero. */
ref_ew_row_fn ref_ew_pow_fn(int base_dt, int exp_dt);

/* Comparison, logic and select operators (elementwise_compare.c). */
int ref_ew_compare_infer(ref_op_ctx *c);
int ref_ew_equal_run(ref_op_ctx *c);
int ref_ew_less_run(ref_op_ctx *c);
int ref_ew_greater_run(ref_op_ctx *c);
int ref_ew_less_equal_run(ref_op_ctx *c);
int ref_ew_greater_equal_run(ref_op_ctx *c);
int ref_ew_logic_infer(ref_op_ctx *c);
int ref_ew_and_run(ref_op_ctx *c);
int ref_ew_or_run(ref_op_ctx *c);
int ref_ew_xor_run(ref_op_ctx *c);
int ref_ew_not_infer(ref_op_ctx *c);
int ref_ew_not_run(ref_op_ctx *c);
int ref_ew_where_infer(ref_op_ctx *c);
int ref_ew_where_run(ref_op_ctx *c);
int ref_ew_bitshift_infer(ref_op_ctx *c);
int ref_ew_bitshift_run(ref_op_ctx *c);

#endif
