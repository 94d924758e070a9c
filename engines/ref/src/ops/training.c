/* training.c: the training operators ONNX specifies for inference engines to run: Adagrad, Adam and Momentum
 * (domain ai.onnx.preview.training), BatchNormalization with training_mode=1 (batch statistics, and running
 * mean and variance updated with momentum), computed in double, and Dropout with training_mode=true (numpy's
 * MT19937 from the seed attribute). It must never update an input in place: every new value goes to its own
 * output. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"
#include "training.h"

/* R (scalar float), T (scalar int64), then n groups of k tensors each: X..., G..., (V...), (H...). */
static int optim_check(ref_op_ctx *c, int groups, int *n)
{
    if (c->n_in < 2 + groups || (c->n_in - 2) % groups || c->n_out != (c->n_in - 2) / groups * (groups - 1))
        return ref_fail(c->err, REF_E_SHAPE, "%s: %d inputs and %d outputs do not make R, T and groups of %d",
                        c->node->op_type, c->n_in, c->n_out, groups);
    *n = (c->n_in - 2) / groups;
    if (!c->in[0] || !c->in[1] || ref_tensor_numel(c->in[0]) != 1 || ref_tensor_numel(c->in[1]) != 1 ||
        c->in[1]->dtype != REF_DT_INT64 || !ref_elem_is_float(c->in[0]->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "%s: R must be a float scalar and T an int64 scalar", c->node->op_type);
    for (int i = 2; i < c->n_in; i++) {
        const ref_tensor *x = c->in[i], *first = c->in[2 + (i - 2) % *n];
        if (!x || !ref_elem_is_float(x->dtype) || !ref_shape_equal(x, first))
            return ref_fail(c->err, REF_E_SHAPE, "%s: input %d must be float and shaped like its X",
                            c->node->op_type, i);
    }
    return REF_OK;
}

static int optim_infer(ref_op_ctx *c)
{
    int groups = !strcmp(c->node->op_type, "Adam") ? 4 : 3, n;
    int rc = optim_check(c, groups, &n);
    if (rc)
        return rc;
    for (int j = 0; j < c->n_out; j++) {
        const ref_tensor *x = c->in[2 + j % n];
        c->out[j]->dtype = x->dtype;
        ref_tensor_set_shape(c->out[j], x->rank, x->dims);
    }
    return REF_OK;
}

static int optim_run(ref_op_ctx *c)
{
    const char *op = c->node->op_type;
    bool adam = !strcmp(op, "Adam"), adagrad = !strcmp(op, "Adagrad");
    int groups = adam ? 4 : 3, n;
    int rc = optim_check(c, groups, &n);
    if (rc)
        return rc;
    double r = ref_elem_ld(c->in[0]->data, c->in[0]->dtype, 0);
    int64_t t = *(const int64_t *)c->in[1]->data;
    double norm = ref_attr_float_or(c->node, "norm_coefficient", 0.0f);
    double alpha = ref_attr_float_or(c->node, "alpha", adam ? 0.9f : 0.0f);
    double beta = ref_attr_float_or(c->node, "beta", adam ? 0.999f : 0.0f);
    double eps = ref_attr_float_or(c->node, "epsilon", 1e-6f); /* the spec's default for Adam and Adagrad */
    double post = ref_attr_float_or(c->node, "norm_coefficient_post", 0.0f);
    double decay = ref_attr_float_or(c->node, "decay_factor", 0.0f);
    bool nesterov = !strcmp(ref_attr_str_or(c->node, "mode", "standard"), "nesterov");
    if (adagrad)
        r /= 1.0 + (double)t * decay;
    if (adam && t > 0)
        r *= sqrt(1.0 - pow(beta, (double)t)) / (1.0 - pow(alpha, (double)t));
    for (int k = 0; k < n; k++) {
        const ref_tensor *x = c->in[2 + k], *g = c->in[2 + n + k], *v = c->in[2 + 2 * n + k];
        const ref_tensor *h = adam ? c->in[2 + 3 * n + k] : NULL;
        ref_tensor *xo = c->out[k], *o1 = c->out[n + k], *o2 = adam ? c->out[2 * n + k] : NULL;
        for (int64_t i = 0; i < ref_tensor_numel(x); i++) {
            double xi = ref_elem_ld(x->data, x->dtype, i), gi = norm * xi + ref_elem_ld(g->data, g->dtype, i);
            double vi = ref_elem_ld(v->data, v->dtype, i), nx;
            if (adagrad) { /* v is H */
                double hn = vi + gi * gi;
                nx = xi - r * gi / (sqrt(hn) + eps);
                ref_elem_st(o1->data, o1->dtype, i, hn);
            } else if (adam) {
                double vn = alpha * vi + (1.0 - alpha) * gi;
                double hn = beta * ref_elem_ld(h->data, h->dtype, i) + (1.0 - beta) * gi * gi;
                nx = (1.0 - post) * (xi - r * vn / (sqrt(hn) + eps));
                ref_elem_st(o1->data, o1->dtype, i, vn);
                ref_elem_st(o2->data, o2->dtype, i, hn);
            } else {
                double vn = alpha * vi + (t > 0 ? beta : 1.0) * gi;
                nx = xi - r * (nesterov ? gi + alpha * vn : vn);
                ref_elem_st(o1->data, o1->dtype, i, vn);
            }
            ref_elem_st(xo->data, xo->dtype, i, nx);
        }
    }
    return REF_OK;
}

const ref_op ref_ops_training[] = {
    {.name = "Adagrad", .infer = optim_infer, .run = optim_run},
    {.name = "Adam", .infer = optim_infer, .run = optim_run},
    {.name = "Momentum", .infer = optim_infer, .run = optim_run},
    {.name = NULL},
};

/* ---- BatchNormalization, training_mode=1 -------------------------------------------------------- */

int ref_bn_train_infer(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    if (c->n_in < 5 || x->rank < 2 || !ref_elem_is_float(x->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "BatchNormalization needs float X of rank >= 2 and 4 parameters");
    for (int i = 1; i < 5; i++)
        if (!c->in[i] || ref_tensor_numel(c->in[i]) != x->dims[1])
            return ref_fail(c->err, REF_E_SHAPE, "BatchNormalization: input %d must have %lld values", i,
                            (long long)x->dims[1]);
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    for (int j = 1; j < c->n_out && j < 3; j++) {
        if (!c->out[j])
            continue;
        c->out[j]->dtype = c->in[j + 2]->dtype;
        ref_tensor_set_shape(c->out[j], 1, &x->dims[1]);
    }
    return REF_OK;
}

int ref_bn_train_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int64_t n = x->dims[0], ch = x->dims[1], inner = ref_dims_prod(x->dims, 2, x->rank), cnt = n * inner;
    double eps = ref_attr_float_or(c->node, "epsilon", 1e-5f), mom = ref_attr_float_or(c->node, "momentum", 0.9f);
    for (int64_t k = 0; k < ch; k++) {
        double sum = 0, sq = 0;
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < inner; i++) {
                double v = ref_elem_ld(x->data, x->dtype, (b * ch + k) * inner + i);
                sum += v;
                sq += v * v;
            }
        double mean = cnt ? sum / (double)cnt : 0, var = cnt ? sq / (double)cnt - mean * mean : 0;
        double a = ref_elem_ld(c->in[1]->data, c->in[1]->dtype, k) / sqrt(var + eps);
        double shift = ref_elem_ld(c->in[2]->data, c->in[2]->dtype, k) - mean * a;
        for (int64_t b = 0; b < n; b++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t at = (b * ch + k) * inner + i;
                ref_elem_st(c->out[0]->data, x->dtype, at, ref_elem_ld(x->data, x->dtype, at) * a + shift);
            }
        for (int j = 1; j < c->n_out && j < 3; j++)
            if (c->out[j] && c->out[j]->data)
                ref_elem_st(c->out[j]->data, c->out[j]->dtype, k,
                            ref_elem_ld(c->in[j + 2]->data, c->in[j + 2]->dtype, k) * mom +
                                (j == 1 ? mean : var) * (1.0 - mom));
    }
    return REF_OK;
}

/* ---- Dropout, training_mode=true ---------------------------------------------------------------- */

/* numpy's legacy RandomState: MT19937 seeded with init_genrand, doubles from two draws (53 bits). */
typedef struct {
    uint32_t mt[624];
    int pos;
} np_mt;

static void np_seed(np_mt *g, uint32_t seed)
{
    for (int i = 0; i < 624; i++) {
        g->mt[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1u;
    }
    g->pos = 624;
}

static uint32_t np_next(np_mt *g)
{
    if (g->pos == 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (g->mt[i] & 0x80000000u) | (g->mt[(i + 1) % 624] & 0x7fffffffu);
            g->mt[i] = g->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->pos = 0;
    }
    uint32_t y = g->mt[g->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double np_double(np_mt *g)
{
    uint32_t a = np_next(g) >> 5, b = np_next(g) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static double dropout_ratio(ref_op_ctx *c)
{
    const ref_tensor *r = c->n_in > 1 ? c->in[1] : NULL;
    return r && r->data && ref_tensor_numel(r) == 1 ? ref_elem_ld(r->data, r->dtype, 0) : 0.5;
}

int ref_dropout_train_check(ref_op_ctx *c)
{
    const ref_tensor *r = c->n_in > 1 ? c->in[1] : NULL;
    if (r && !r->data)
        return REF_OK; /* decided at run time */
    double ratio = dropout_ratio(c);
    if (ratio < 0 || ratio >= 1)
        return ref_fail(c->err, REF_E_RANGE, "Dropout: ratio %g is not in [0, 1)", ratio);
    if (ratio > 0 && !ref_node_attr(c->node, "seed"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Dropout: training_mode=true without a seed drops at random");
    if (ratio > 0 && c->in[0]->dtype != REF_DT_FLOAT && c->in[0]->dtype != REF_DT_DOUBLE)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Dropout training of %s", ref_dtype_name(c->in[0]->dtype));
    return REF_OK;
}

int ref_dropout_train_run(ref_op_ctx *c)
{
    int rc = ref_dropout_train_check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0], *mask = c->n_out > 1 ? c->out[1] : NULL;
    double ratio = dropout_ratio(c);
    int64_t n = ref_tensor_numel(x);
    np_mt g;
    if (ratio > 0)
        np_seed(&g, (uint32_t)ref_attr_int_or(c->node, "seed", 0));
    float fscale = (float)(1.0 / (1.0 - ratio)); /* numpy multiplies float32 by the scale cast to float32 */
    for (int64_t i = 0; i < n; i++) {
        bool keep = ratio == 0 || np_double(&g) >= ratio;
        double v = ref_elem_ld(x->data, x->dtype, i);
        double out = !keep ? 0.0 : ratio == 0 ? v : x->dtype == REF_DT_FLOAT ? (double)((float)v * fscale) : v / (1.0 - ratio);
        if (ratio == 0 && x->data != y->data)
            memcpy((char *)y->data + (size_t)i * ref_dtype_size(x->dtype),
                   (const char *)x->data + (size_t)i * ref_dtype_size(x->dtype), ref_dtype_size(x->dtype));
        else
            ref_elem_st(y->data, y->dtype, i, out);
        if (mask && mask->data)
            ((uint8_t *)mask->data)[i] = keep;
    }
    return REF_OK;
}
