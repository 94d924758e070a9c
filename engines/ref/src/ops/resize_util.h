/* resize_util.h: the resolved parameters of one Resize/Upsample call, shared by the parser (resize.c)
 * and the kernels (resize_kernel.c). It must never hold pointers that outlive the call. */
#ifndef REF_RESIZE_UTIL_H
#define REF_RESIZE_UTIL_H

#include "op.h"

enum { RZ_NEAREST, RZ_LINEAR, RZ_CUBIC };

enum {
    RZ_HALF_PIXEL,
    RZ_HALF_PIXEL_SYMMETRIC,
    RZ_PYTORCH_HALF_PIXEL,
    RZ_ALIGN_CORNERS,
    RZ_ASYMMETRIC,
    RZ_TF_HALF_PIXEL_FOR_NN,
    RZ_TF_CROP_AND_RESIZE
};

enum { RZ_ROUND_PREFER_FLOOR, RZ_ROUND_PREFER_CEIL, RZ_FLOOR, RZ_CEIL };

/* Most taps one output coordinate reads along one axis (cubic). */
#define RZ_MAX_TAPS 4

typedef struct rz_params {
    int mode, ctm, nearest, exclude_outside;
    double cubic_a, extrapolation;
    int rank;
    int64_t in_dims[REF_MAX_RANK], out_dims[REF_MAX_RANK];
    /* Per axis: the scale the coordinate maps divide by, and the output length they use (the
     * reference keeps scale * input length unrounded, in float32 when scales came as float32). */
    double scale[REF_MAX_RANK], out_width[REF_MAX_RANK];
    /* tf_crop_and_resize box per axis, kept as float32 like the roi input the reference reads. */
    float roi_start[REF_MAX_RANK], roi_end[REF_MAX_RANK];
} rz_params;

/* One output coordinate along one axis: n input offsets (index times the axis stride) and weights. */
typedef struct rz_tap {
    int32_t n;
    int32_t outside; /* tf_crop_and_resize: the coordinate falls outside the input */
    int64_t off[RZ_MAX_TAPS];
    double w[RZ_MAX_TAPS];
} rz_tap;

/* Scratch run needs for p's output: one rz_tap per output coordinate of every axis. */
size_t rz_scratch_bytes(int rank, const int64_t *out_dims);

/* Fill y from x (shapes and dtypes already checked) using scratch of rz_scratch_bytes. Fails only
 * for a dtype the mode cannot compute, with a message. */
int rz_run(const rz_params *p, const ref_tensor *x, ref_tensor *y, void *scratch, ref_pool *pool,
           ref_error *err);

/* Can rz_run_q8 compute p (ORT's 8-bit linear mode: bilinear over a rank-2 tensor or the last two axes of a rank-4
 * one, trilinear over rank 3 or the last three axes of rank 5, the first two axes of rank 4/5 at scale 1; not
 * tf_crop_and_resize, not half_pixel_symmetric)? */
bool rz_q8_supported(const rz_params *p);

/* The refusal of what it cannot compute; one printf argument, the dtype's name. */
#define RZ_Q8_REFUSAL                                                                                            \
    "%s input supports nearest mode, or linear mode over ranks 2-5 (the first two axes of rank 4 and 5 at scale " \
    "1) without tf_crop_and_resize or half_pixel_symmetric"

/* Fill uint8/int8 y from x in linear mode the way ONNX Runtime's CPU kernel does (float32 weights, the
 * result truncated toward zero), using scratch of rz_scratch_bytes. Fails, writing nothing, when
 * rz_q8_supported says no. */
int rz_run_q8(const rz_params *p, const ref_tensor *x, ref_tensor *y, void *scratch, ref_error *err);

#endif
