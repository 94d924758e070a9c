/* quant_conv8.h: ConvInteger and QLinearConv on the 8-bit VNNI GEMM (qgemm8.h), for quant_conv.c: weights packed
 * once as int8 rows with their sums, columns built as uint8 panels per task. It must never be used where
 * ref_qgemm8_fast() is false (the int16 path is faster there) or for weights that are not constant. */
#ifndef REF_QUANT_CONV8_H
#define REF_QUANT_CONV8_H

#include "conv_ops.h"
#include "op.h"

/* What a quantized conv reads: ConvInteger leaves the scales and ys NULL (int32 out). */
typedef struct {
    const ref_tensor *x, *w, *xz, *wz, *b;
    const ref_tensor *xs, *ws, *ys; /* QLinearConv: y's scales; NULL ys for ConvInteger */
    double yz;
} ref_qconv_in;

/* W (cout x K) as int8 rows of Kq groups of 4 (uint8 weights shifted by -128), zeros past K, with each row's sum
 * and zero point in the same shifted domain. */
typedef struct {
    uint8_t *w;
    int32_t *rowsum, *wz;
    int64_t K, Kq;
    size_t bytes;
} ref_qconv8_w;

/* Packs q->w and q->wz (constant) for g; *out owned by the caller (ref_qconv8_w_free). REF_E_NOMEM on failure. */
int ref_qconv8_w_new(const ref_conv_geom *g, const ref_qconv_in *q, ref_qconv8_w **out);
void ref_qconv8_w_free(ref_qconv8_w *p);
/* Scratch ref_qconv8_run needs for threads threads (per-thread column panels, sums and, requantizing, int32 sums). */
size_t ref_qconv8_scratch_bytes(const ref_conv_geom *g, int threads, bool requant);
/* y = conv(q) through ref_qgemm8, int32 sums (q->ys NULL) or requantized. Fails only on too small a scratch. */
int ref_qconv8_run(ref_op_ctx *c, const ref_conv_geom *g, const ref_qconv_in *q, const ref_qconv8_w *w,
                   ref_tensor *y);

#endif
