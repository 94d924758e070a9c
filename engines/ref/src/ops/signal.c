/* signal.c: operator family "signal": HannWindow, HammingWindow, BlackmanWindow, DFT, STFT and MelWeightMatrix
 * (opset 17), direct O(n^2) transforms accumulated in double. Sizes that are inputs must be known when planning
 * (constants or folded), else the node waits for run time. It must never read past a frame or a window. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

#define SIG_PI 3.14159265358979323846

/* Scalar integer input i, or -1 with err set (REF_E_DYNAMIC when its value is not known yet). */
static int scalar_int(ref_op_ctx *c, int i, int64_t *out)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t || ref_tensor_numel(t) != 1 || (t->dtype != REF_DT_INT64 && t->dtype != REF_DT_INT32))
        return ref_fail(c->err, REF_E_SHAPE, "input %d must be an int32 or int64 scalar", i);
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "input %d is only known at run time", i);
    *out = ref_elem_ldi(t->data, t->dtype, 0);
    return REF_OK;
}

static int out_dtype(ref_op_ctx *c, int *dt)
{
    *dt = (int)ref_attr_int_or(c->node, "output_datatype", REF_DT_FLOAT);
    if (*dt != REF_DT_FLOAT && *dt != REF_DT_DOUBLE)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "output_datatype %d (float and double only)", *dt);
    return REF_OK;
}

/* ================================================================================================
 * Windows: w[n] = a0 - a1 cos(2 pi n / N') + a2 cos(4 pi n / N'), N' = N (periodic) or N - 1 (symmetric).
 * ============================================================================================== */

static int window_infer(ref_op_ctx *c)
{
    int64_t n;
    int dt;
    int rc = scalar_int(c, 0, &n);
    if (!rc)
        rc = out_dtype(c, &dt);
    if (rc)
        return rc;
    if (n < 0)
        return ref_fail(c->err, REF_E_SHAPE, "window size %lld is negative", (long long)n);
    c->out[0]->dtype = dt;
    ref_tensor_set_shape(c->out[0], 1, &n);
    return REF_OK;
}

static int window_run(ref_op_ctx *c)
{
    const char *op = c->node->op_type;
    double a0 = 0.5, a1 = 0.5, a2 = 0.0;
    if (!strcmp(op, "HammingWindow")) {
        a0 = 25.0 / 46.0;
        a1 = 1.0 - a0;
    } else if (!strcmp(op, "BlackmanWindow")) {
        a0 = 0.42;
        a2 = 0.08;
    }
    int64_t n = c->out[0]->dims[0];
    double d = ref_attr_int_or(c->node, "periodic", 1) ? (double)n : (double)(n - 1);
    for (int64_t i = 0; i < n; i++) {
        double x = d > 0 ? 2.0 * SIG_PI * (double)i / d : 0.0;
        ref_elem_st(c->out[0]->data, c->out[0]->dtype, i, a0 - a1 * cos(x) + a2 * cos(2.0 * x));
    }
    return REF_OK;
}

/* ================================================================================================
 * DFT along one axis of [..., n, ..., 1 or 2]; dft_length pads or truncates; onesided keeps n/2 + 1 bins.
 * ============================================================================================== */

typedef struct {
    const void *x;
    void *y;
    int dt;
    int64_t outer, inner, n_in, n_fft, n_out; /* x is [outer, n_in, inner, cx], y [outer, n_out, inner, 2] */
    int cx;                                   /* 1 real, 2 complex */
    bool inverse;
} dft_job;

static void dft_do(const dft_job *j, const double *win, int64_t in_step, int64_t in_off)
{
    for (int64_t o = 0; o < j->outer; o++)
        for (int64_t q = 0; q < j->inner; q++)
            for (int64_t k = 0; k < j->n_out; k++) {
                double re = 0, im = 0, sgn = j->inverse ? 1.0 : -1.0;
                for (int64_t t = 0; t < j->n_fft && t < j->n_in; t++) {
                    int64_t at = ((o * in_step + in_off + t) * j->inner + q) * j->cx;
                    double xr = ref_elem_ld(j->x, j->dt, at), xi = j->cx == 2 ? ref_elem_ld(j->x, j->dt, at + 1) : 0;
                    double w = win ? win[t] : 1.0;
                    double ang = sgn * 2.0 * SIG_PI * (double)((k * t) % j->n_fft) / (double)j->n_fft;
                    re += w * (xr * cos(ang) - xi * sin(ang));
                    im += w * (xr * sin(ang) + xi * cos(ang));
                }
                if (j->inverse) {
                    re /= (double)j->n_fft;
                    im /= (double)j->n_fft;
                }
                int64_t at = ((o * j->n_out + k) * j->inner + q) * 2;
                ref_elem_st(j->y, j->dt, at, re);
                ref_elem_st(j->y, j->dt, at + 1, im);
            }
}

static int dft_geom(ref_op_ctx *c, dft_job *j, int *axis)
{
    const ref_tensor *x = c->in[0];
    if (x->dtype != REF_DT_FLOAT && x->dtype != REF_DT_DOUBLE)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "DFT of %s (float and double only)", ref_dtype_name(x->dtype));
    if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
        return ref_fail(c->err, REF_E_SHAPE, "DFT input must end in a dim of 1 (real) or 2 (complex)");
    int64_t a = ref_attr_int_or(c->node, "axis", 1);
    *axis = ref_norm_axis(a, x->rank - 1);
    if (*axis < 0 || *axis == 0)
        return ref_fail(c->err, REF_E_SHAPE, "DFT axis %lld out of range", (long long)a);
    memset(j, 0, sizeof *j);
    j->cx = (int)x->dims[x->rank - 1];
    j->n_in = x->dims[*axis];
    j->n_fft = j->n_in;
    if (c->n_in > 1 && c->in[1]) {
        int rc = scalar_int(c, 1, &j->n_fft);
        if (rc)
            return rc;
    }
    j->inverse = ref_attr_int_or(c->node, "inverse", 0) != 0;
    bool onesided = ref_attr_int_or(c->node, "onesided", 0) != 0;
    if (j->n_fft <= 0 || (onesided && j->inverse))
        return ref_fail(c->err, j->n_fft <= 0 ? REF_E_SHAPE : REF_E_UNSUPPORTED, "DFT length %lld%s",
                        (long long)j->n_fft, j->n_fft <= 0 ? "" : " with onesided and inverse");
    j->n_out = onesided ? j->n_fft / 2 + 1 : j->n_fft;
    j->outer = ref_dims_prod(x->dims, 0, *axis);
    j->inner = ref_dims_prod(x->dims, *axis + 1, x->rank - 1);
    j->dt = x->dtype;
    return REF_OK;
}

static int dft_infer(ref_op_ctx *c)
{
    dft_job j;
    int axis, rc = dft_geom(c, &j, &axis);
    if (rc)
        return rc;
    ref_tensor *y = c->out[0];
    y->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(y, c->in[0]->rank, c->in[0]->dims);
    y->dims[axis] = j.n_out;
    y->dims[y->rank - 1] = 2;
    return REF_OK;
}

static int dft_run(ref_op_ctx *c)
{
    dft_job j;
    int axis, rc = dft_geom(c, &j, &axis);
    if (rc)
        return rc;
    j.x = c->in[0]->data;
    j.y = c->out[0]->data;
    dft_do(&j, NULL, j.n_in, 0);
    return REF_OK;
}

/* ================================================================================================
 * STFT: signal [batch, length, 1 or 2], frames every frame_step, each windowed and transformed.
 * ============================================================================================== */

static int stft_geom(ref_op_ctx *c, int64_t *step, int64_t *len, int64_t *frames, int64_t *bins)
{
    const ref_tensor *x = c->in[0], *w = c->n_in > 2 ? c->in[2] : NULL;
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2) ||
        (x->dtype != REF_DT_FLOAT && x->dtype != REF_DT_DOUBLE))
        return ref_fail(c->err, REF_E_SHAPE, "STFT signal must be float [batch, length, 1 or 2]");
    int rc = scalar_int(c, 1, step);
    *len = w ? (w->rank == 1 ? w->dims[0] : -1) : -1;
    if (!rc && c->n_in > 3 && c->in[3])
        rc = scalar_int(c, 3, len);
    if (rc)
        return rc;
    if (*len <= 0 || *step <= 0 || *len > x->dims[1] || (w && (w->rank != 1 || w->dims[0] != *len)))
        return ref_fail(c->err, REF_E_SHAPE, "STFT: frame length %lld, step %lld, signal %lld", (long long)*len,
                        (long long)*step, (long long)x->dims[1]);
    *frames = (x->dims[1] - *len) / *step + 1;
    *bins = ref_attr_int_or(c->node, "onesided", 1) ? *len / 2 + 1 : *len;
    return REF_OK;
}

static int stft_infer(ref_op_ctx *c)
{
    int64_t step, len, frames, bins;
    int rc = stft_geom(c, &step, &len, &frames, &bins);
    if (rc)
        return rc;
    int64_t d[4] = {c->in[0]->dims[0], frames, bins, 2};
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], 4, d);
    return REF_OK;
}

static size_t stft_scratch_bytes(const ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    return sizeof(double) * (size_t)(x->rank == 3 && x->dims[1] > 0 ? x->dims[1] : 1);
}

static int stft_run(ref_op_ctx *c)
{
    int64_t step, len, frames, bins;
    int rc = stft_geom(c, &step, &len, &frames, &bins);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *w = c->n_in > 2 ? c->in[2] : NULL;
    double *win = w ? c->scratch : NULL;
    if (w && c->scratch_bytes < sizeof(double) * (size_t)len)
        return ref_fail(c->err, REF_E_INVALID, "STFT: scratch of %zu bytes", c->scratch_bytes);
    for (int64_t t = 0; w && t < len; t++)
        win[t] = ref_elem_ld(w->data, w->dtype, t);
    size_t es = ref_dtype_size(x->dtype), frame_out = (size_t)bins * 2 * es;
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t f = 0; f < frames; f++) {
            dft_job j = {.x = (const char *)x->data + (size_t)b * (size_t)x->dims[1] * (size_t)x->dims[2] * es,
                         .y = (char *)c->out[0]->data + ((size_t)b * (size_t)frames + (size_t)f) * frame_out,
                         .dt = x->dtype, .outer = 1, .inner = 1, .n_in = len, .n_fft = len, .n_out = bins,
                         .cx = (int)x->dims[2]};
            dft_do(&j, win, 0, f * step);
        }
    return REF_OK;
}

/* ================================================================================================
 * MelWeightMatrix: triangular filters, as ONNX's reference computes them (integer bin edges).
 * ============================================================================================== */

static int mel_params(ref_op_ctx *c, int64_t *mels, int64_t *dft, int64_t *rate, double *lo, double *hi)
{
    int rc = scalar_int(c, 0, mels);
    if (!rc)
        rc = scalar_int(c, 1, dft);
    if (!rc)
        rc = scalar_int(c, 2, rate);
    for (int i = 3; i < 5 && !rc; i++) {
        const ref_tensor *t = c->n_in > i ? c->in[i] : NULL;
        if (!t || ref_tensor_numel(t) != 1)
            return ref_fail(c->err, REF_E_SHAPE, "input %d must be a scalar", i);
        if (!t->data)
            return ref_fail(c->err, REF_E_DYNAMIC, "input %d is only known at run time", i);
        *(i == 3 ? lo : hi) = ref_elem_ld(t->data, t->dtype, 0);
    }
    if (!rc && (*mels <= 0 || *dft <= 0 || *rate <= 0))
        return ref_fail(c->err, REF_E_SHAPE, "MelWeightMatrix: sizes must be positive");
    return rc;
}

static int mel_infer(ref_op_ctx *c)
{
    int64_t mels, dft, rate;
    double lo, hi;
    int dt, rc = mel_params(c, &mels, &dft, &rate, &lo, &hi);
    if (!rc)
        rc = out_dtype(c, &dt);
    if (rc)
        return rc;
    int64_t d[2] = {dft / 2 + 1, mels};
    c->out[0]->dtype = dt;
    ref_tensor_set_shape(c->out[0], 2, d);
    return REF_OK;
}

static int64_t mel_edge(int64_t i, int64_t mels, int64_t dft, int64_t rate, double lo, double hi)
{
    double lo_mel = 2595.0 * log10(1.0 + lo / 700.0), hi_mel = 2595.0 * log10(1.0 + hi / 700.0);
    double mel = (double)i * ((hi_mel - lo_mel) / (double)(mels + 2)) + lo_mel;
    double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
    return (int64_t)floor((double)(dft + 1) * hz / (double)rate);
}

static int mel_run(ref_op_ctx *c)
{
    int64_t mels, dft, rate;
    double lo, hi;
    int rc = mel_params(c, &mels, &dft, &rate, &lo, &hi);
    if (rc)
        return rc;
    ref_tensor *y = c->out[0];
    int64_t rows = y->dims[0];
    memset(y->data, 0, ref_tensor_nbytes(y));
    for (int64_t i = 0; i < mels; i++) {
        int64_t l = mel_edge(i, mels, dft, rate, lo, hi), m = mel_edge(i + 1, mels, dft, rate, lo, hi);
        int64_t h = mel_edge(i + 2, mels, dft, rate, lo, hi);
        if (m - l == 0 && m >= 0 && m < rows)
            ref_elem_st(y->data, y->dtype, m * mels + i, 1.0);
        for (int64_t j = l; m - l != 0 && j <= m; j++)
            if (j >= 0 && j < rows)
                ref_elem_st(y->data, y->dtype, j * mels + i, (double)(j - l) / (double)(m - l));
        for (int64_t j = m; h - m > 0 && j < h; j++)
            if (j >= 0 && j < rows)
                ref_elem_st(y->data, y->dtype, j * mels + i, (double)(h - j) / (double)(h - m));
    }
    return REF_OK;
}

const ref_op ref_ops_signal[] = {
    {.name = "HannWindow", .infer = window_infer, .run = window_run},
    {.name = "HammingWindow", .infer = window_infer, .run = window_run},
    {.name = "BlackmanWindow", .infer = window_infer, .run = window_run},
    {.name = "DFT", .infer = dft_infer, .run = dft_run},
    {.name = "STFT", .infer = stft_infer, .scratch_bytes = stft_scratch_bytes, .run = stft_run},
    {.name = "MelWeightMatrix", .infer = mel_infer, .run = mel_run},
    {.name = NULL},
};
