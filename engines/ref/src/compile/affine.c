/* affine.c: placeholder */
#include "compiled.h"
int ref_fold_affine(ref_compiled *c, ref_error *err)
{
    (void)c;
    (void)err;
    return REF_OK;
}
