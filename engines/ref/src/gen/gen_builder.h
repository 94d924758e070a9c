/* gen_builder.h: appends nodes, attributes, initializers and graph inputs/outputs to a ref_model under construction.
 * It must never hand out a model after a failure: the first failure sticks, every later helper is a no-op that
 * returns NULL (or the saved status), so generator code can chain calls and check once at the end. */
#ifndef REF_GEN_BUILDER_H
#define REF_GEN_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Whether an initializer counts as a parameter (learned: .weight/.bias) or a buffer (BN running stats).
 * Constants made with ref_gb_const_* count as neither. */
typedef enum ref_gb_kind { REF_GB_PARAM = 0, REF_GB_BUFFER = 1 } ref_gb_kind;

#define REF_GB_MAX_ATTRS 8

typedef struct ref_gb {
    ref_model *m;            /* owned until ref_gb_take */
    ref_error *err;          /* where the first failure is described; may be NULL */
    int rc;                  /* first failure, 0 while all is well */
    uint64_t seed;
    uint64_t n_random;       /* random tensors drawn so far: the tensor index weights are keyed on */
    int64_t n_params;        /* elements of REF_GB_PARAM tensors */
    int64_t n_buffers;       /* elements of REF_GB_BUFFER tensors */
    size_t weight_bytes;     /* bytes of every initializer */
    size_t max_weight_bytes; /* a larger model fails with REF_E_RANGE before allocating */
    bool quantize;           /* layers with weights are dynamically quantized to uint8 (gen option quantize) */
} ref_gb;

/* Start an empty opset-17, IR-8 model. Fails with REF_E_NOMEM (b->m NULL). */
int ref_gb_init(ref_gb *b, uint64_t seed, size_t max_weight_bytes, ref_error *err);
/* Free the model unless it was taken. Safe after a failed init. */
void ref_gb_deinit(ref_gb *b);
/* Hand the model to the caller (who unrefs it) when every step succeeded; else return b->rc and keep it. */
int ref_gb_take(ref_gb *b, ref_model **out);

/* Record a failure (the first one wins) and return it. */
int ref_gb_fail(ref_gb *b, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* printf into the model's pool. NULL after a failure or on overflow of 256 bytes. */
const char *ref_gb_str(ref_gb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Declare a float graph input or output. params[i] non-NULL makes dim i symbolic; params may be NULL. */
int ref_gb_io(ref_gb *b, bool output, const char *name, int rank, const int64_t *dims,
              const char *const *params);

/* Append node `op` named `name` whose one output is also called `name`; inputs are copied by pointer
 * (they must be pool strings or literals). Returns the output name, or NULL. */
const char *ref_gb_node(ref_gb *b, const char *op, const char *name, int n_in, const char *const *in);
#define REF_GB_NARGS(...) ((int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)))
#define REF_GB_NODE(b, op, name, ...) \
    ref_gb_node((b), (op), (name), REF_GB_NARGS(__VA_ARGS__), (const char *const[]){__VA_ARGS__})

/* Rename the output of the last node appended (e.g. to the graph output's name); returns the new name. */
const char *ref_gb_rename_output(ref_gb *b, const char *name);

/* Attributes of the last node appended (at most REF_GB_MAX_ATTRS). */
void ref_gb_attr_int(ref_gb *b, const char *name, int64_t v);
void ref_gb_attr_float(ref_gb *b, const char *name, float v);
void ref_gb_attr_ints(ref_gb *b, const char *name, size_t n, const int64_t *v);
#define REF_GB_INTS(b, name, ...)                                                               \
    ref_gb_attr_ints((b), (name), sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t), \
                     (const int64_t[]){__VA_ARGS__})

/* A float initializer of uniform values center ± half_width, keyed on the next tensor index. */
const char *ref_gb_random(ref_gb *b, const char *name, ref_gb_kind kind, int rank, const int64_t *dims,
                          float center, float half_width);
/* Constant initializers; rank 0 is a scalar. The values are copied. */
const char *ref_gb_const_f32(ref_gb *b, const char *name, int rank, const int64_t *dims, const float *v);
const char *ref_gb_const_i64(ref_gb *b, const char *name, int rank, const int64_t *dims, const int64_t *v);

/* Dynamic quantization, as ONNX Runtime's quantize_dynamic writes it:
 * DynamicQuantizeLinear `name` of x; out[0] the uint8 tensor, out[1] its scale, out[2] its zero point. */
void ref_gb_dynamic_quantize(ref_gb *b, const char *name, const char *x, const char *out[3]);
/* Turn float initializer w into uint8 in place (per tensor, the range widened to hold 0, zero point rounded),
 * transposing a 2-D one when asked; its scale and zero point become initializers w.scale and w.zero_point. */
void ref_gb_quantize_weight(ref_gb *b, const char *w, bool transpose, const char **scale, const char **zero_point);

#endif
