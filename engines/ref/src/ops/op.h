/* op.h: the operator interface: shape inference, compile-time preparation (pre-packing), scratch sizing
 * and the kernel. Kernels must never allocate at run time: any working memory is declared through
 * scratch_bytes and handed in planned, so infer with arena=on allocates nothing. The exceptions are named here:
 * an op whose output sizes only running tells (sets_outputs) gets its outputs through ref_op_output, and a
 * control-flow op keeps sub-requests in its per-request slot (rt), made on first use and then reused. */
#ifndef REF_OP_H
#define REF_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model.h"
#include "../pool.h"
#include "../status.h"
#include "../tensor.h"

/* Everything one call of an operator sees. The caller owns every pointer in it. */
typedef struct ref_op_ctx {
    const ref_node *node;        /* attributes (ref_attr_* getters in model.h) */
    int opset;                   /* default-domain opset of the model */
    int n_in, n_out;
    const ref_tensor *const *in; /* in[i] is NULL for an omitted optional input (i >= n_in too) */
    ref_tensor *const *out;
    void *state;                 /* what prepare produced, or NULL */
    ref_pool *pool;              /* intra-op threads; NULL means run serially */
    int n_threads;               /* ref_pool_threads(pool): size per-thread scratch with it */
    void *scratch;               /* scratch_bytes(ctx) bytes, 64-byte aligned, contents undefined */
    size_t scratch_bytes;
    ref_error *err;

    /* Control flow. in[n_in..n_in + n_implicit) are the outer-scope values the subgraphs read. */
    int n_implicit;
    struct ref_compiled *const *subs; /* compiled subgraphs, one per GRAPH attribute in attribute order */
    int n_subs;
    void **rt;                   /* the request's own slot for this node (sub-requests); op->rt_free frees it */
    /* For ops with sets_outputs: give out[j] (whose dtype and shape the op set) its data. NULL at plan time. */
    int (*alloc_out)(struct ref_op_ctx *c, int j);
    void *alloc_arg;
    /* A fused activation (compile/fuse_act.c; Conv and BatchNormalization): clamp every output to [act_lo, act_hi], NaN kept. */
    bool act;
    float act_lo, act_hi;
    /* Largest tensor a shape may ask for (the compiled model's max_tensor_bytes): ref_op_output and the executor
     * refuse bigger outputs; an op sizing memory of its own (scratch, a table) holds it to this too. */
    size_t max_tensor_bytes;
} ref_op_ctx;

typedef struct ref_op {
    const char *name; /* ONNX op_type in the default domain */

    /* True when the outputs depend only on the inputs' shapes and dtypes (Shape, Size): the planner
     * then evaluates the node while planning, even when the inputs' values are unknown. */
    bool value_from_shape;

    /* Set every out[i]->dtype, rank and dims from the inputs' dtypes and shapes and the attributes.
     * An input's data is non-NULL only when its value is known (initializer, constant, folded); an op
     * that needs a value it lacks (Reshape's shape, say) returns REF_E_DYNAMIC. An output whose value
     * the op can state without running (Shape, Size) may be left to run at fold time.
     * Returns REF_E_UNSUPPORTED (attribute, dtype or mode) or REF_E_SHAPE with a message. Required. */
    int (*infer)(ref_op_ctx *c);

    /* Compile-time preparation, e.g. weight pre-packing. Called once per node, possibly from several
     * compile workers at once, so it may only touch its own state. Inputs with data are constants;
     * the state may depend only on attributes and constant inputs, since activation shapes can change
     * between runs. c->scratch is the worker's own scratch (prepare_scratch_bytes). On failure *state is
     * left untouched and nothing is kept. Optional (NULL). */
    int (*prepare)(ref_op_ctx *c, void **state);
    /* Bytes of worker scratch prepare needs; 0 if NULL. */
    size_t (*prepare_scratch_bytes)(const ref_op_ctx *c);
    /* Free what prepare made. Required when prepare is set. */
    void (*state_free)(void *state);
    /* Bytes the state holds (packed weights), for reporting. Optional. */
    size_t (*state_bytes)(const void *state);

    /* True when run may find out[] without shapes or data (its shapes are only known by running it: Loop, If
     * with a run-time condition) and gives them through ref_op_output. Then infer may return REF_E_DYNAMIC. */
    bool sets_outputs;
    /* Free what run left in *c->rt (per request). Required when run fills it. */
    void (*rt_free)(void *rt);

    /* Run-time scratch for the current shapes (and c->n_threads). Optional: NULL means none. */
    size_t (*scratch_bytes)(const ref_op_ctx *c);

    /* Compute the outputs. Shapes are already set on out[] and data points at room for them; inputs
     * have data. Must not allocate. Returns 0, or a status with a message. Required. */
    int (*run)(ref_op_ctx *c);
} ref_op;

/* The operator for op_type in the default domain, in ai.onnx.preview.training or in com.microsoft (opset-specific
 * behavior is the op's own business, through c->opset). NULL when unsupported. */
const ref_op *ref_op_find(const char *domain, const char *op_type);

/* A list per operator family, terminated by an entry whose name is NULL (ops/<family>.c). */
extern const ref_op ref_ops_elementwise[];
extern const ref_op ref_ops_unary[];
extern const ref_op ref_ops_activation[];
extern const ref_op ref_ops_cast[];
/* Cast to float16 in a graph whose float16 values run as float32: float32 out, rounded to float16 (cast.c). */
extern const ref_op ref_op_cast_round_half;
extern const ref_op ref_ops_gemm[];
extern const ref_op ref_ops_conv[];
extern const ref_op ref_ops_pool[];
extern const ref_op ref_ops_norm[];
extern const ref_op ref_ops_reduce[];
extern const ref_op ref_ops_softmax[];
extern const ref_op ref_ops_shape[];
extern const ref_op ref_ops_layout[];
extern const ref_op ref_ops_index[];
extern const ref_op ref_ops_resize[];
extern const ref_op ref_ops_control[];
extern const ref_op ref_ops_loop[];
extern const ref_op ref_ops_scan[];
extern const ref_op ref_ops_signal[];
extern const ref_op ref_ops_misc[];
extern const ref_op ref_ops_quant[];
extern const ref_op ref_ops_einsum[];
extern const ref_op ref_ops_select[];
extern const ref_op ref_ops_sample[];
extern const ref_op ref_ops_tfidf[];
extern const ref_op ref_ops_sequence[];
extern const ref_op ref_ops_sequence_map[];
extern const ref_op ref_ops_string[];
extern const ref_op ref_ops_training[]; /* domain ai.onnx.preview.training */
/* Domain com.microsoft: ONNX Runtime's quantized contrib operators (quant_ms.c, quant_ms_gemm.c, quant_ms_pool.c). */
extern const ref_op ref_ops_quant_ms[];
extern const ref_op ref_ops_quant_ms_gemm[];
extern const ref_op ref_ops_quant_ms_pool[];
/* The GELU family (gelu.c): ONNX Gelu in the default domain; Gelu, FastGelu, BiasGelu, QuickGelu in com.microsoft. */
extern const ref_op ref_ops_gelu[];
extern const ref_op ref_ops_gelu_ms[];
/* norm_skip.c: SimplifiedLayerNormalization and RMSNormalization (default domain); com.microsoft SkipLayerNormalization
 * and SkipSimplifiedLayerNormalization. */
extern const ref_op ref_ops_norm_rms[];
extern const ref_op ref_ops_norm_ms[];
/* attention_ms.c: com.microsoft Attention (no past state). */
extern const ref_op ref_ops_attention_ms[];
/* embed_ms.c: com.microsoft EmbedLayerNormalization. */
extern const ref_op ref_ops_embed_ms[];
/* fused_ms.c: com.microsoft FusedConv, FusedGemm, FusedMatMul. */
extern const ref_op ref_ops_fused_ms[];
/* matmul_nbits_ms.c: com.microsoft MatMulNBits (4- and 8-bit blockwise weights). */
extern const ref_op ref_ops_matmul_nbits_ms[];

/* Helpers for infer functions. */

/* Fail with REF_E_UNSUPPORTED unless in[i] exists and has one of the listed dtypes. */
int ref_op_want_dtype(ref_op_ctx *c, int i, int n_types, const int *types);
/* Output j gets shape t (dtype, rank, dims): when the executor planned its room already, t must match that
 * shape (else REF_E_SHAPE); otherwise its data is allocated through c->alloc_out. For sets_outputs ops. */
int ref_op_output(ref_op_ctx *c, int j, const ref_tensor *t);
/* The largest tensor this op may make (c->max_tensor_bytes; the machine's default when a caller left it 0). */
size_t ref_op_max_tensor_bytes(const ref_op_ctx *c);
/* Number of inputs actually present (trailing omitted ones not counted). */
int ref_op_n_present(const ref_op_ctx *c);
/* Read an int64 or int32 input tensor's values into out (at most max); returns the count or -1 when
 * the input is absent, has no data or is not an integer tensor. */
int ref_op_read_ints(const ref_op_ctx *c, int i, int64_t *out, int max);

#endif
