/* refengine.h: public C API of memleak's reference engine: read an ONNX model, compile it, run requests.
 * Nothing behind this header aborts on bad input: every fallible call returns a status and fills a ref_error. */
#ifndef REFENGINE_H
#define REFENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------
 * Status codes. 0 is success; every failure is negative. One list drives codes and names.
 * ---------------------------------------------------------------------------------------------- */
#define REF_STATUS_LIST(X)                                                 \
    X(REF_E_INVALID, -1001, "invalid argument")                            \
    X(REF_E_PARSE, -1002, "malformed model")                               \
    X(REF_E_UNSUPPORTED, -1003, "unsupported feature")                     \
    X(REF_E_SHAPE, -1004, "shape or type mismatch")                        \
    X(REF_E_DYNAMIC, -1005, "shape depends on a value not known yet")      \
    X(REF_E_NOMEM, -1006, "out of memory")                                 \
    X(REF_E_IO, -1007, "input/output error")                               \
    X(REF_E_STATE, -1008, "call out of order")                             \
    X(REF_E_NOTFOUND, -1009, "not found")                                  \
    X(REF_E_RANGE, -1010, "value out of range")

enum {
    REF_OK = 0,
#define REF_X_ENUM(sym, val, text) sym = (val),
    REF_STATUS_LIST(REF_X_ENUM)
#undef REF_X_ENUM
};

/* What went wrong and where. Caller-owned; every call that takes one may be given NULL. */
typedef struct ref_error {
    int code;      /* the status the call returned */
    char msg[512]; /* e.g. "graph.node[3].attribute[0] @ byte 1204: truncated varint" */
} ref_error;

/* Short fixed name for a status code (static storage). */
const char *ref_status_name(int code);

/* ------------------------------------------------------------------------------------------------
 * Tensors. Element types use ONNX's TensorProto.DataType numbers.
 * ---------------------------------------------------------------------------------------------- */
typedef enum ref_dtype {
    REF_DT_UNDEFINED = 0,
    REF_DT_FLOAT = 1,
    REF_DT_UINT8 = 2,
    REF_DT_INT8 = 3,
    REF_DT_UINT16 = 4,
    REF_DT_INT16 = 5,
    REF_DT_INT32 = 6,
    REF_DT_INT64 = 7,
    REF_DT_STRING = 8,
    REF_DT_BOOL = 9,
    REF_DT_FLOAT16 = 10,
    REF_DT_DOUBLE = 11,
    REF_DT_UINT32 = 12,
    REF_DT_UINT64 = 13,
    REF_DT_BFLOAT16 = 16,
    /* Not ONNX tensor types: a sequence of tensors, or an optional (a tensor or a sequence, or none), travels as one
     * self-contained byte blob of dtype SEQUENCE or OPTIONAL, rank 1, dims[0] its size in bytes (element size 1).
     * It may be copied anywhere: it holds offsets, never pointers. ref_value_* below read and write it. */
    REF_DT_SEQUENCE = 1001,
    REF_DT_OPTIONAL = 1002
} ref_dtype;

#define REF_MAX_RANK 8
/* A string element is a fixed slot of this many bytes: the string, NUL, zeros (at most REF_STRING_BYTES - 1
 * bytes each; longer ones are refused where they enter). So string tensors plan, copy and compare like any other. */
#define REF_STRING_BYTES 64

/* A dense row-major tensor. `data` is never owned by this struct: whoever filled it says who owns
 * the bytes. rank 0 is a scalar with one element. */
typedef struct ref_tensor {
    int32_t dtype; /* ref_dtype */
    int32_t rank;
    int64_t dims[REF_MAX_RANK];
    void *data; /* NULL when only the shape is known */
} ref_tensor;

/* Bytes per element of dtype, or 0 for types without a fixed size (string) or unknown ones. */
size_t ref_dtype_size(int dtype);
/* ONNX name of dtype ("float", "int64", ...); "?" when unknown. Static storage. */
const char *ref_dtype_name(int dtype);
/* Elements and bytes of t; 0 bytes for unsized types. */
int64_t ref_tensor_numel(const ref_tensor *t);
size_t ref_tensor_nbytes(const ref_tensor *t);

/* Read one serialized TensorProto file (the ONNX test-data input_N.pb / output_N.pb).
 * On success *out holds shape and a heap copy of the data (free it with ref_tensor_data_free) and,
 * when name is non-NULL, *name a heap copy of the tensor's name (free with ref_string_free).
 * Fails with REF_E_IO, REF_E_PARSE (field and byte offset in the message) or REF_E_UNSUPPORTED. */
int ref_tensor_load_pb(const char *path, ref_tensor *out, char **name, ref_error *err);
void ref_tensor_data_free(ref_tensor *t);
void ref_string_free(char *s);

/* Read a serialized SequenceProto (kind REF_DT_SEQUENCE) or OptionalProto (REF_DT_OPTIONAL) of tensors into a blob
 * (*out, data freed with ref_tensor_data_free), as ref_tensor_load_pb does for tensors. */
int ref_value_load_pb(const char *path, int kind, ref_tensor *out, char **name, ref_error *err);
/* Elements of a SEQUENCE or OPTIONAL blob: count (0 for an empty optional) and *has_value (optional only; 1 for a
 * sequence); element i with data pointing into the blob. REF_E_PARSE for a damaged blob. */
int ref_value_count(const ref_tensor *blob, int *count, int *has_value, ref_error *err);
int ref_value_element(const ref_tensor *blob, int i, ref_tensor *out, ref_error *err);

/* ------------------------------------------------------------------------------------------------
 * Options. One struct drives read, compile and run; the harness sets it from key/value strings.
 * ---------------------------------------------------------------------------------------------- */
typedef enum ref_step {
    REF_STEP_NONE = 0,
    REF_STEP_READ_MODEL,
    REF_STEP_COMPILE_MODEL,
    REF_STEP_CREATE_REQUEST,
    REF_STEP_INFER,
    REF_STEP_RELEASE_REQUEST,
    REF_STEP_RELEASE_COMPILED,
    REF_STEP_RELEASE_MODEL,
    REF_STEP_COUNT
} ref_step;

/* Name of a step as scenarios spell it ("compile_model"), and its inverse (REF_STEP_NONE if unknown). */
const char *ref_step_name(ref_step s);
ref_step ref_step_from_name(const char *name);

typedef enum { REF_PLANNER_NAIVE = 0, REF_PLANNER_GREEDY = 1 } ref_planner;
typedef enum { REF_GROWTH_POW2 = 0, REF_GROWTH_EXACT = 1 } ref_arena_growth;

#define REF_MAX_DIM_OVERRIDES 16
#define REF_MAX_SHAPE_OVERRIDES 16

typedef struct ref_options {
    int mmap;            /* 1: initializers point into a read-only file mapping; 0: heap copies. Default 1. */
    int threads;         /* intra-op threads for infer. Default 1. */
    int compile_threads; /* weight pre-packing workers; each keeps its own scratch. Default 1. */
    int planner;         /* ref_planner. Default greedy. */
    int arena;           /* 1: one activation arena per request; 0: malloc/free per tensor. Default 1. */
    int arena_growth;    /* ref_arena_growth, when a new input shape needs a bigger arena. Default pow2. */
    int mem_pattern;     /* 1: plans cached per input shape; 0: planned again on every infer. Default 1. */
    struct {
        char name[64];
        int64_t value;
    } dims[REF_MAX_DIM_OVERRIDES]; /* symbolic dimension values; unnamed ones default to 1 */
    int n_dims;
    struct {
        char name[128];
        int32_t rank;
        int64_t dims[REF_MAX_RANK];
    } shapes[REF_MAX_SHAPE_OVERRIDES]; /* whole input shapes ("shape.NAME"="1x3x640x640"; "" is a scalar) */
    int n_shapes;
    int plan_cache;      /* plans a request keeps for input shapes other than the compiled one (LRU). Default 8. */
    int fold_bn;         /* 1: fold BatchNormalization and Mul/Add by constants into the Conv/Gemm before. Default 1. */
    int thread_arbiter;  /* with threads > 1, 1: each infer runs on the threads or on the caller alone, whichever has
                          * been faster lately for its input shapes (the other probed now and then); 0: always on the
                          * threads. Default 1. */

    /* Fault injection, all off by default. They exist to validate the harness against planted truths. */
    int64_t inject_leak_bytes;            /* each call of inject_leak_step leaks this many touched bytes */
    int inject_leak_step;                 /* ref_step; default infer */
    int64_t inject_retention_bytes;       /* a process-wide cache grows by this much per call ... */
    int64_t inject_retention_cap_bytes;   /* ... until it holds this much, then stops (a plateau) */
    int inject_retention_step;            /* ref_step; default infer */
    int64_t inject_crash_at;              /* abort() on the K-th call (1-based) of inject_crash_step */
    int inject_crash_step;                /* ref_step; default infer */
    int inject_thread_leak;               /* 1: each call of inject_thread_step starts a thread never joined */
    int inject_thread_step;               /* ref_step; default create_request */

    /* Largest tensor (bytes; zero dims counted as one) a shape may ask for; a bigger one is refused naming the node
     * or input. 0 (the default): the machine's physical memory, or RLIMIT_AS / RLIMIT_DATA when lower. */
    int64_t max_tensor_bytes;
    /* 1: MatMul(DequantizeLinear, DequantizeLinear of 8-bit constants) runs as an integer GEMM scaled once, and such a
     * Conv followed by QuantizeLinear as QLinearConv, as ONNX Runtime fuses them; 0: the float arithmetic of the Q/DQ
     * nodes as written. Default 1. */
    int fuse_qdq;
} ref_options;

/* Fill o with the defaults above. */
void ref_options_init(ref_options *o);

/* Set one option from strings, as scenarios and the CLI spell them (e.g. "mmap"="off",
 * "dim.seq"="128", "inject_leak_step"="infer"). An unknown key fails with REF_E_NOTFOUND and a message
 * listing every accepted key; a bad value fails with REF_E_INVALID naming the key and the values allowed. */
int ref_options_set(ref_options *o, const char *key, const char *value, ref_error *err);

/* Set the shape of the graph input named name (as "shape.NAME" does). REF_E_INVALID when the name is too long
 * or the rank is out of range, REF_E_RANGE when every slot is taken. */
int ref_options_set_shape(ref_options *o, const char *name, const ref_tensor *shape, ref_error *err);

/* Comma-separated list of every key ref_options_set accepts (static storage). */
const char *ref_options_keys(void);

/* ------------------------------------------------------------------------------------------------
 * Models.
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_model ref_model;

/* Read an ONNX file. External data resolves relative to the file's folder; a location escaping that
 * folder is rejected. With o->mmap the file (and external data files) are mapped read-only and
 * initializers point into the mappings (float16 at any offset, other types when aligned to their element
 * size; the rest are copied). o may be NULL for defaults.
 * Errors name the field path and byte offset. On failure *out is untouched. */
int ref_model_read(const char *path, const ref_options *o, ref_model **out, ref_error *err);

/* Same, from memory. The bytes are copied; external data is refused (no folder to resolve it in). */
int ref_model_read_buffer(const void *buf, size_t len, const ref_options *o, ref_model **out,
                          ref_error *err);

/* Drop the caller's reference. Compiled models keep their own, so this may be called before them. NULL is fine. */
void ref_model_free(ref_model *m);

/* Graph inputs of the model (initializers excluded): count, and the name of input i (borrowed, valid while the
 * model lives; NULL when i is out of range). */
size_t ref_model_n_inputs(const ref_model *m);
const char *ref_model_input_name(const ref_model *m, size_t i);

typedef struct ref_model_info {
    size_t n_nodes;
    size_t n_initializers;
    size_t weight_bytes;  /* bytes of all initializers */
    size_t mapped_bytes;  /* of which point into file mappings */
    int64_t ir_version;
    int64_t opset;        /* default-domain opset */
} ref_model_info;
void ref_model_get_info(const ref_model *m, ref_model_info *out);

/* ------------------------------------------------------------------------------------------------
 * Compiled models and requests.
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_compiled ref_compiled;
typedef struct ref_request ref_request;

/* Compile: topological order, constant folding (BatchNormalization into Conv/Gemm with o->fold_bn), compiled
 * subgraphs (If, Loop, Scan), weight pre-packing over o->compile_threads workers, and shape inference, folding of
 * shape subgraphs and a memory plan for the default input shapes: o->shapes, else the declared dims with symbolic
 * ones from o->dims. A symbolic dim nothing names is guessed as 1; when planning fails for the guess, compile
 * still succeeds without a default plan (requests plan for the shapes their inputs bring). Fails with
 * REF_E_UNSUPPORTED naming the node, op and reason for anything not supported. */
int ref_compile(ref_model *m, const ref_options *o, ref_compiled **out, ref_error *err);
void ref_compiled_free(ref_compiled *c);

/* Inputs and outputs of the graph (initializers excluded). */
typedef struct ref_value_desc {
    const char *name; /* borrowed; valid while the compiled model lives */
    ref_tensor shape; /* dtype and default shape (symbolic dims resolved); data NULL */
} ref_value_desc;
size_t ref_compiled_n_inputs(const ref_compiled *c);
size_t ref_compiled_n_outputs(const ref_compiled *c);
int ref_compiled_input(const ref_compiled *c, size_t i, ref_value_desc *out);
/* The model's name for dim `axis` of input i when it is symbolic (dim_param), else NULL; borrowed like the name. */
const char *ref_compiled_input_dim_param(const ref_compiled *c, size_t i, int axis);
int ref_compiled_output(const ref_compiled *c, size_t i, ref_value_desc *out);

/* Memory plan figures for the default input shapes. Bytes include 64-byte alignment of each tensor. */
typedef struct ref_plan_stats {
    size_t naive_bytes;       /* one buffer per tensor, never reused */
    size_t planned_bytes;     /* the arena of the configured planner */
    size_t lower_bound_bytes; /* max over operators of the bytes live at once */
    size_t n_tensors;
    int is_static;            /* 0 when some shape depends on a runtime value (no plan possible) */
    int guessed_dims;         /* 1 when some symbolic dim was taken as 1 (no shape.NAME or dim.NAME named it) */
} ref_plan_stats;
int ref_compiled_plan_stats(const ref_compiled *c, ref_plan_stats *out, ref_error *err);

/* Bytes of pre-packed weights the compiled model owns. */
size_t ref_compiled_packed_bytes(const ref_compiled *c);

int ref_request_new(ref_compiled *c, ref_request **out, ref_error *err);
void ref_request_free(ref_request *r);

/* Copy t into the request's input i. The shape may differ from the default (a new plan follows). */
int ref_request_set_input(ref_request *r, size_t i, const ref_tensor *t, ref_error *err);
/* Zero-copy: the request reads input i straight from t->data, which must stay valid until it is
 * rebound or the request is freed. */
int ref_request_bind_input(ref_request *r, size_t i, const ref_tensor *t, ref_error *err);
/* Zero-copy: output i is written straight into buf; infer fails with REF_E_RANGE if it needs more
 * than nbytes. buf NULL unbinds. */
int ref_request_bind_output(ref_request *r, size_t i, void *buf, size_t nbytes, ref_error *err);

/* Run the graph once. With arena on and a cached plan it allocates nothing. */
int ref_infer(ref_request *r, ref_error *err);

/* Output i of the last infer. out->data is borrowed: valid until the next infer or the free. */
int ref_request_output(const ref_request *r, size_t i, ref_tensor *out, ref_error *err);

/* Plans a request built (one per infer whose input shapes no cached plan matches, or every infer with mem_pattern
 * off), plans it evicted from its cache (plan_cache), and plans it holds now. */
typedef struct ref_plan_counts {
    int64_t built, evicted;
    int cached;
} ref_plan_counts;
void ref_request_plan_counts(const ref_request *r, ref_plan_counts *out);

/* Activation arena bytes the request currently reserves (0 with arena off). */
size_t ref_request_arena_bytes(const ref_request *r);

/* ------------------------------------------------------------------------------------------------
 * Allocation accounting and the allocation fault injector. Every engine allocation goes through one
 * hook, so tests can count bytes and fail the N-th allocation (SQLite-style OOM loops).
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_alloc_stats {
    int64_t live_bytes;  /* requested bytes currently allocated by the engine */
    int64_t peak_bytes;  /* highest live_bytes since the last reset */
    int64_t n_allocs;    /* successful allocations since the process started */
    int64_t n_frees;
    int64_t n_failed;    /* allocations failed, injected or real */
} ref_alloc_stats;
void ref_alloc_get_stats(ref_alloc_stats *out);
void ref_alloc_reset_peak(void);
/* Let the next n allocations succeed and fail the one after; for_good keeps failing afterwards.
 * n < 0 disarms. Process-wide. */
void ref_alloc_fail_after(int64_t n, int for_good);

/* ------------------------------------------------------------------------------------------------
 * Model generator: deterministic synthetic models written with the engine's own ONNX writer.
 * ---------------------------------------------------------------------------------------------- */
typedef struct ref_gen_options {
    const char *arch;    /* "mlp", "mobilenetv2", "resnet18", "resnet50", "transformer" */
    int batch;           /* default 1 */
    uint64_t seed;       /* weights are a pure function of the seed; default 1 */
    int external_data;   /* 1: weights in OUT.data, offsets aligned to 4096 */
    float width_mult;    /* mobilenetv2 width multiplier; default 1.0 */
    int image_size;      /* CNN input height and width; default 224 */
    int layers, hidden, heads, seq; /* transformer; defaults 4, 256, 4, 128 */
    int mlp_hidden;      /* mlp; default 1024 */
    int dynamic;         /* 1: batch (and the transformer's seq) are symbolic dims "batch"/"seq" */
    const char *dtype;   /* "float" (default, NULL too) or "float16": float weights, inputs and outputs in float16 */
    const char *quantize; /* "none" (default, NULL too) or "uint8": Conv, Gemm and weight MatMuls dynamically
                           * quantized as ONNX Runtime's quantize_dynamic writes them (float dtype only) */
} ref_gen_options;
void ref_gen_options_init(ref_gen_options *o);
/* Write the model to out_path (and out_path + ".data" with external data).
 * Fails with REF_E_INVALID for an unknown arch or option, REF_E_IO naming the file. */
int ref_gen_model(const ref_gen_options *o, const char *out_path, ref_error *err);

#ifdef __cplusplus
}
#endif

#endif
