/* conv_ops.h: what Conv and ConvTranspose share: geometry from shapes and attributes (lifted to 3 spatial
 * dims), packed per-group weights, and the kernels' entry points. It must never allocate at run time. */
#ifndef REF_CONV_OPS_H
#define REF_CONV_OPS_H

#include "op.h"

/* Spatial dims the kernels handle. 1-D and 2-D convolutions are lifted to 3-D with leading unit dims
 * (size, kernel, stride and dilation 1, no padding), so one im2col and one col2im serve all three. */
#define REF_CONV_SP 3

typedef struct ref_conv_geom {
    int nsp;                      /* spatial rank as given, 1..3 */
    bool transpose;               /* ConvTranspose */
    int64_t batch, cin, cout, group;
    int64_t cin_g, cout_g;        /* channels per group */
    int64_t in[REF_CONV_SP], out[REF_CONV_SP], k[REF_CONV_SP];
    int64_t stride[REF_CONV_SP], dil[REF_CONV_SP], pad_lo[REF_CONV_SP], pad_hi[REF_CONV_SP];
    int64_t in_size, out_size, k_size; /* products over the spatial dims */
    bool has_bias;
    bool act;                     /* a fused Relu or Clip: outputs clamped to [act_lo, act_hi] (op.h) */
    float act_lo, act_hi;
} ref_conv_geom;

/* Geometry from c->in[0] (X), c->in[1] (W), the optional bias c->in[2] and the attributes. Fails with
 * REF_E_SHAPE (ranks, channel counts, kernel_shape vs W, pads, non-positive output) or REF_E_UNSUPPORTED
 * (more than 3 spatial dims, unknown auto_pad, non-float), with the reason in c->err. */
int ref_conv_geom_init(ref_op_ctx *c, bool transpose, ref_conv_geom *g);

/* Clamp y[0..n) to g's fused activation bounds, as Clip does (max then min, NaN kept); nothing without one. */
void ref_conv_act(const ref_conv_geom *g, float *y, int64_t n);

/* Output dims [N, Cout, spatial...] of g. */
void ref_conv_out_shape(const ref_conv_geom *g, ref_tensor *y);

/* Weights packed once as the sgemm A operand per group: Conv's W_g [cout_g, cin_g*k] and
 * ConvTranspose's W_g^T [cout_g*k, cin_g]. Group g's panels start at packed + g*group_floats. */
typedef struct ref_conv_state {
    float *packed; /* NULL when W was not a constant at prepare time */
    size_t group_floats;
    int64_t group, m, kdim; /* per group, A is m x kdim */
} ref_conv_state;

/* The A operand's shape per group, from W's shape and the group attribute alone (what prepare knows). */
void ref_conv_a_shape(const ref_tensor *w, int64_t group, bool transpose, int64_t *m, int64_t *kdim);

/* Pack every group of w (contiguous float32, Conv or ConvTranspose layout) into dst, staging each
 * group's A through stage (m*kdim floats): a plain copy for Conv, the transposed copy ConvTranspose needs. */
void ref_conv_pack_weights(const float *w, int64_t group, int64_t m, int64_t kdim, bool transpose, float *stage,
                           float *dst);

/* prepare / prepare_scratch_bytes / state_free / state_bytes shared by both ops. */
int ref_conv_prepare(ref_op_ctx *c, void **state);
size_t ref_conv_prepare_scratch_bytes(const ref_op_ctx *c);
void ref_conv_state_free(void *state);
size_t ref_conv_state_bytes(const void *state);
/* True when prepare packs this node's weights (constant float W, and not a depthwise Conv). */
bool ref_conv_will_pack(const ref_op_ctx *c);
/* Whether run will find packed weights: the state says once prepare ran (it always leaves one, packed
 * or not); before that (the first memory plan) the constant-ness of W predicts it. */
bool ref_conv_has_packed(const ref_op_ctx *c);

/* Depthwise Conv (cin_g == 1, group == cin, kernel rows up to REF_CONV_DW_MAX_KX wide, whose tap table
 * lives on the stack): direct kernel, no im2col. Wider kernels take the GEMM path. */
#define REF_CONV_DW_MAX_KX 32
#define REF_CONV_DW_MAX_ROWS 64 /* kernel rows (kz, ky) per output row, also on the stack */
bool ref_conv_is_depthwise(const ref_conv_geom *g);
/* Scratch the depthwise kernel needs for n_threads (per thread, zero-padded phase planes of the input and one output
 * plane, for 1-D/2-D convs with equal strides, and ahead of them the in-place form's mask table; 0 otherwise). */
size_t ref_conv_depthwise_scratch_bytes(const ref_conv_geom *g, int n_threads);
/* Fails with REF_E_INVALID when scratch is smaller than ref_conv_depthwise_scratch_bytes. */
int ref_conv_depthwise(const ref_conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                       ref_pool *pool, void *scratch, size_t scratch_bytes, ref_error *err);

/* Tests: run the portable depthwise kernels even when AVX2 is there. Process-wide. */
void ref_conv_force_portable(bool on);

/* The AVX2 builds of conv_depthwise_row.h's kernels (conv_depthwise_avx2.c). */
void ref_conv_dw_row_avx2(float *yrow, float bias, const float *const *xr, const float *const *wr, int n_rows,
                          int64_t kw, const int64_t *off, const int64_t *lo, const int64_t *hi, int64_t s,
                          int64_t out_w);
void ref_conv_dw_flat_avx2(float *z, int64_t len, float bias, const float *const *tp, const float *w, int ntaps);
/* The flat kernel with 16-wide vectors, its output clamped to [clamp[0], clamp[1]] when clamp is not NULL: the same
 * bits as the flat kernel and then ref_conv_act. */
void ref_conv_dw_flat_avx512(float *z, int64_t len, float bias, const float *const *tp, const float *w, int ntaps,
                             const float *clamp);

/* A depthwise plane the AVX-512 kernel reads in place (conv_depthwise_inplace_avx2.c): len outputs flat over rows of
 * w; tap (ky, kx) reads an h x w plane at row + dy[ky], column + dx[kx], a zero outside it. */
#define REF_DW_TAPS_MAX 64
typedef struct ref_dw_taps {
    int64_t len, h, w, kh, kw;
    int64_t dy[REF_DW_TAPS_MAX], dx[REF_DW_TAPS_MAX];
} ref_dw_taps;
/* Its lane masks, a function of the geometry alone: made once per convolution (ref_conv_dw_taps_mask_count entries). */
size_t ref_conv_dw_taps_mask_count(const ref_dw_taps *t);
void ref_conv_dw_taps_masks(const ref_dw_taps *t, uint16_t *masks);
/* y[j] = bias + sum over taps (kx outer, ky inner) of wt[ky*kw + kx] * x[toff[ky*kw + kx] + j] under the masks, then
 * the clamp (NULL: none): the same bits as the flat kernel over zero-padded planes and then ref_conv_act. */
void ref_conv_dw_taps_avx512(float *y, const ref_dw_taps *t, const float *x, const int64_t *toff, float bias,
                             const float *wt, const uint16_t *masks, const float *clamp);
/* The four phase planes of an in_h x in_w plane (both even), plane (py, px) at ph + (2*py + px) * in_h*in_w/4 holding
 * x[2r + py][2c + px]: a stride-2 convolution over them is a stride-1 one. */
void ref_conv_dw_phases2(const float *x, int64_t in_h, int64_t in_w, float *ph);
/* dst[i] = src[2i] for i < n, reading src[0 .. 2n-2] only; AVX-512F (conv_deal_avx2.c), so only where it is known. */
void ref_conv_deal2(const float *src, int64_t n, float *dst);

/* Convolutions (all but 1x1 stride 1, one output channel per group, or more than 64 stride phases) whose GEMM reads
 * the padded input, split by stride phase, in place (conv_direct.c), when the CPU has the kernel for it
 * (ref_sgemm_taps_available) and the tests have not forced im2col. Same bits as the im2col path. */
bool ref_conv_direct_ok(const ref_conv_geom *g);
size_t ref_conv_direct_scratch_bytes(const ref_conv_geom *g, int n_threads);
/* wp: the packed weights (group g at wp + g*group_floats). Fails with REF_E_INVALID when scratch is smaller than
 * ref_conv_direct_scratch_bytes for the pool's threads. */
int ref_conv_direct(const ref_conv_geom *g, const float *x, const float *wp, size_t group_floats, const float *bias,
                    float *y, ref_pool *pool, void *scratch, size_t scratch_bytes, ref_error *err);
/* 1x1 stride-1 convolutions with few input channels per group: the GEMM reads the input planes in place and writes
 * the output directly (conv_direct.c), under the same conditions and with the same bits as the direct path. */
bool ref_conv_pointwise_inplace_ok(const ref_conv_geom *g);
size_t ref_conv_pointwise_inplace_scratch_bytes(const ref_conv_geom *g);
int ref_conv_pointwise_inplace(const ref_conv_geom *g, const float *x, const float *wp, size_t group_floats,
                               const float *bias, float *y, ref_pool *pool, void *scratch, size_t scratch_bytes,
                               ref_error *err);
/* Tests: take the im2col path even where the direct one applies. Process-wide. */
void ref_conv_force_im2col(bool on);

/* im2col of columns [col0, col0+ncols) of group image x_g ([cin_g, in spatial]) written directly into dst, the
 * sgemm packed-B layout for K = cin_g*k_size of a B np columns wide (np a multiple of REF_SGEMM_NR), as its panels
 * p0.. (p0 + ncols rounded up to panels at most np / REF_SGEMM_NR). Ranges packed apart into one layout, each
 * starting at a panel, make the same bytes as the whole packed at once. */
void ref_conv_im2col_packed(const ref_conv_geom *g, const float *x_g, int64_t col0, int64_t ncols, int64_t np,
                            int64_t p0, float *dst);

/* col2im for ConvTranspose: y_c[out spatial] += col_c[k_size rows x in_size] for one output channel. */
void ref_conv_col2im(const ref_conv_geom *g, const float *col_c, float *y_c);

/* ConvTranspose entry points (conv_transpose.c). */
int ref_conv_transpose_infer(ref_op_ctx *c);
size_t ref_conv_transpose_scratch_bytes(const ref_op_ctx *c);
int ref_conv_transpose_run(ref_op_ctx *c);

#endif
