/* resize_q8.c: Resize in linear mode (bi- and trilinear) on uint8/int8 tensors, computed as ONNX Runtime's CPU
 * kernel does (float32 coordinates and weights, the sum truncated to the integer type). It must never allocate. */
#include <math.h>

#include "elementwise_kernels.h"
#include "resize_util.h"

/* ORT's float arithmetic, operation for operation: a fused multiply-add would round differently. */
REF_EW_NO_CONTRACT

/* ORT maps an output coordinate to the input in float32 with its own formula per mode; these are the
 * float twins of rz_coord's double ones, which would move a truncated 8-bit result by one. */
static float q8_coord(const rz_params *p, int d, int64_t x)
{
    float s = (float)p->scale[d], xf = (float)x, out = (float)p->out_dims[d], in = (float)p->in_dims[d];
    if (s == 1.0f)
        return xf; /* ORT skips the map for an axis it does not scale */
    switch (p->ctm) {
    case RZ_ASYMMETRIC: return xf / s;
    case RZ_PYTORCH_HALF_PIXEL: return out > 1 ? (xf + 0.5f) / s - 0.5f : 0.0f;
    case RZ_TF_HALF_PIXEL_FOR_NN: return (xf + 0.5f) / s;
    case RZ_ALIGN_CORNERS: return out == 1 ? 0.0f : xf * (in - 1) / (out - 1);
    default: return (xf + 0.5f) / s - 0.5f; /* half_pixel */
    }
}

/* Two taps per output coordinate: off[0..1] the clamped neighbours times stride, w[0] the weight of the
 * second (ORT's d*1, distance from the first) and w[1] of the first (d*2), both float32 values. */
static void q8_axis(const rz_params *p, int d, int64_t stride, rz_tap *t)
{
    float last = (float)(p->in_dims[d] - 1);
    for (int64_t x = 0; x < p->out_dims[d]; x++) {
        float c = q8_coord(p, d, x);
        c = fmaxf(0.0f, fminf(c, last));
        int64_t i1 = (int64_t)c < p->in_dims[d] - 1 ? (int64_t)c : p->in_dims[d] - 1;
        int64_t i2 = i1 + 1 < p->in_dims[d] - 1 ? i1 + 1 : p->in_dims[d] - 1;
        float d1 = fabsf(c - (float)i1), d2 = fabsf(c - (float)i2);
        if (i1 == i2)
            d1 = d2 = 0.5f;
        t[x] = (rz_tap){.n = 2, .off = {i1 * stride, i2 * stride}, .w = {d1, d2}};
    }
}

/* ORT 1.30's NCHW bilinear kernel: each of the four neighbours times its float product of weights, summed
 * left to right in float and truncated (static_cast to the 8-bit type: toward zero). A separable form (rows
 * blended first) was off by one step in 8 of the 14 outputs of tests/qoperator_models.py's resize-q8.onnx. */
#define Q8_PLANE_FN(name, T)                                                                        \
    static void name(const T *x, T *y, const rz_tap *th, const rz_tap *tw, int64_t oh, int64_t ow)  \
    {                                                                                               \
        for (int64_t r = 0; r < oh; r++) {                                                          \
            const T *r1 = x + th[r].off[0], *r2 = x + th[r].off[1];                                 \
            float dy1 = (float)th[r].w[0], dy2 = (float)th[r].w[1];                                 \
            for (int64_t c = 0; c < ow; c++) {                                                      \
                float dx1 = (float)tw[c].w[0], dx2 = (float)tw[c].w[1];                             \
                int64_t a = tw[c].off[0], b = tw[c].off[1];                                         \
                y[r * ow + c] = (T)(dx2 * dy2 * (float)r1[a] + dx1 * dy2 * (float)r1[b] +           \
                                    dx2 * dy1 * (float)r2[a] + dx1 * dy1 * (float)r2[b]);           \
            }                                                                                       \
        }                                                                                           \
    }

Q8_PLANE_FN(q8_plane_u8, uint8_t)
Q8_PLANE_FN(q8_plane_s8, int8_t)

/* Its trilinear kernel the same way: eight neighbours, x fastest then y then z, each times dx * dy * dz. */
#define Q8_VOLUME_FN(name, T)                                                                               \
    static void name(const T *x, T *y, const rz_tap *tz, const rz_tap *th, const rz_tap *tw, int64_t od,    \
                     int64_t oh, int64_t ow)                                                                \
    {                                                                                                       \
        for (int64_t z = 0; z < od; z++)                                                                    \
            for (int64_t r = 0; r < oh; r++) {                                                              \
                float dz1 = (float)tz[z].w[0], dz2 = (float)tz[z].w[1];                                     \
                float dy1 = (float)th[r].w[0], dy2 = (float)th[r].w[1];                                     \
                const T *p11 = x + tz[z].off[0] + th[r].off[0], *p21 = x + tz[z].off[0] + th[r].off[1];     \
                const T *p12 = x + tz[z].off[1] + th[r].off[0], *p22 = x + tz[z].off[1] + th[r].off[1];     \
                for (int64_t c = 0; c < ow; c++) {                                                          \
                    float dx1 = (float)tw[c].w[0], dx2 = (float)tw[c].w[1];                                 \
                    int64_t a = tw[c].off[0], b = tw[c].off[1];                                             \
                    y[(z * oh + r) * ow + c] =                                                              \
                        (T)(dx2 * dy2 * dz2 * (float)p11[a] + dx1 * dy2 * dz2 * (float)p11[b] +             \
                            dx2 * dy1 * dz2 * (float)p21[a] + dx1 * dy1 * dz2 * (float)p21[b] +             \
                            dx2 * dy2 * dz1 * (float)p12[a] + dx1 * dy2 * dz1 * (float)p12[b] +             \
                            dx2 * dy1 * dz1 * (float)p22[a] + dx1 * dy1 * dz1 * (float)p22[b]);             \
                }                                                                                           \
            }                                                                                               \
    }

Q8_VOLUME_FN(q8_volume_u8, uint8_t)
Q8_VOLUME_FN(q8_volume_s8, int8_t)

bool rz_q8_supported(const rz_params *p)
{
    if (p->mode != RZ_LINEAR || p->ctm == RZ_TF_CROP_AND_RESIZE || p->ctm == RZ_HALF_PIXEL_SYMMETRIC)
        return false;
    if (p->rank == 2 || p->rank == 3)
        return true;
    return (p->rank == 4 || p->rank == 5) && p->scale[0] == 1.0 && p->scale[1] == 1.0;
}

int rz_run_q8(const rz_params *p, const ref_tensor *x, ref_tensor *y, void *scratch, ref_error *err)
{
    if (!rz_q8_supported(p))
        return ref_fail(err, REF_E_UNSUPPORTED,
                        RZ_Q8_REFUSAL,
                        ref_dtype_name(x->dtype));
    if (ref_tensor_numel(y) == 0)
        return REF_OK;
    int h = p->rank - 2, w = p->rank - 1;
    int64_t ih = p->in_dims[h], iw = p->in_dims[w], oh = p->out_dims[h], ow = p->out_dims[w];
    rz_tap *th = scratch, *tw = th + oh;
    q8_axis(p, h, iw, th);
    q8_axis(p, w, 1, tw);
    if (p->rank == 3 || p->rank == 5) {
        int d = p->rank - 3;
        int64_t id = p->in_dims[d], od = p->out_dims[d];
        rz_tap *tz = tw + ow;
        q8_axis(p, d, ih * iw, tz);
        int64_t vols = ref_dims_prod(p->out_dims, 0, d), in_vol = id * ih * iw, out_vol = od * oh * ow;
        for (int64_t k = 0; k < vols; k++) {
            if (x->dtype == REF_DT_UINT8)
                q8_volume_u8((const uint8_t *)x->data + k * in_vol, (uint8_t *)y->data + k * out_vol, tz, th, tw,
                             od, oh, ow);
            else
                q8_volume_s8((const int8_t *)x->data + k * in_vol, (int8_t *)y->data + k * out_vol, tz, th, tw,
                             od, oh, ow);
        }
        return REF_OK;
    }
    int64_t planes = ref_dims_prod(p->out_dims, 0, h);
    for (int64_t k = 0; k < planes; k++) {
        if (x->dtype == REF_DT_UINT8)
            q8_plane_u8((const uint8_t *)x->data + k * ih * iw, (uint8_t *)y->data + k * oh * ow, th, tw, oh, ow);
        else
            q8_plane_s8((const int8_t *)x->data + k * ih * iw, (int8_t *)y->data + k * oh * ow, th, tw, oh, ow);
    }
    return REF_OK;
}
