/* cast_string.h: the string half of Cast and CastLike, which cast.c hands over when either side is a string.
 * It must never be reached for two non-string types. */
#ifndef REF_CAST_STRING_H
#define REF_CAST_STRING_H

#include "op.h"

/* Run a Cast whose input or output (or both) is REF_DT_STRING; shapes already set. */
int ref_cast_string_run(ref_op_ctx *c);

#endif
