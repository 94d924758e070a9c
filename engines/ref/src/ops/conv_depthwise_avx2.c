/* conv_depthwise_avx2.c: the depthwise kernels of conv_depthwise_row.h compiled for AVX2 (8 floats per
 * vector op). It must never run unless the CPU reports avx2 (conv_depthwise.c checks). */
#include "conv_ops.h"

#define DW_ROW_FN ref_conv_dw_row_avx2
#define DW_FLAT_FN ref_conv_dw_flat_avx2
#define DW_ROW_LINKAGE
#include "conv_depthwise_row.h"
