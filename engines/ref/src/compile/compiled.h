/* compiled.h: internals of a compiled model (value table, execution order, prepared state) and its plans.
 * Nothing here may change after ref_compile returns, except the lazily prepared states under prep_mu. */
#ifndef REF_COMPILED_H
#define REF_COMPILED_H

#include <pthread.h>
#include <stdbool.h>

#include "../model.h"
#include "../ops/op.h"

typedef enum {
    REF_VAL_INPUT = 0, /* graph input fed by the caller */
    REF_VAL_CONST,     /* initializer or value folded at compile time; data set (NULL: a packed weight) */
    REF_VAL_ACT        /* produced by a node */
} ref_val_kind;

typedef struct ref_value {
    const char *name;   /* borrowed from the model */
    ref_val_kind kind;
    ref_tensor t;       /* dtype; shape and data for constants */
    int producer;       /* node index in execution order, or -1 */
    int last_use;       /* last consuming node; n_nodes when it is a graph output; -1 if unused */
    void *owned;        /* data folded at compile time, freed with the compiled model */
    const ref_value_info *declared; /* graph input's declared type and shape, or NULL */
    bool graph_output;  /* the graph returns it */
    bool half_copy;     /* owned is the float32 copy of a float16 constant (half.c): freed once nothing reads it */
    const void *half;   /* a float16 constant's own bytes (the model's, often mapped), or NULL (half.c) */
    bool half_later;    /* t is float32 but has no data yet: half is widened when a step needs the values (half.c) */
} ref_value;

typedef struct ref_exec_node {
    const ref_node *node; /* borrowed from the model */
    const ref_op *op;
    int *in;              /* value ids; -1 for omitted optional inputs; n_in explicit, then n_implicit */
    int n_in;
    int n_implicit;       /* outer-scope values its subgraphs read (in[n_in..n_in + n_implicit)) */
    ref_compiled **subs;  /* compiled subgraphs, one per GRAPH attribute in attribute order; owned */
    int n_subs;
    bool elided;          /* folded into the node producing its input (BatchNormalization after Conv): never runs */
    int *out;             /* value ids; -1 for omitted optional outputs */
    int n_out;
    bool folded;          /* computed at compile time: its outputs are REF_VAL_CONST */
    void *state;          /* from op->prepare */
    bool prepared;        /* prepare ran (or the op has none) */
    /* A Relu or Clip fused into this Conv or BatchNormalization (fuse_act.c): its outputs are clamped to [act_lo, act_hi] as they are made,
     * and the activation node is elided. */
    bool act;
    float act_lo, act_hi;
} ref_exec_node;

/* One memory plan: the shapes of every value for one set of input shapes, plus arena offsets. */
typedef struct ref_plan {
    ref_tensor *in_shapes;  /* key: dtype and dims of each graph input */
    ref_tensor *shapes;     /* per value: dtype and dims (valid for nodes before dynamic_from) */
    void **folded;          /* per value: data folded while planning (Shape of an activation...), owned */
    bool *skip;             /* per node: nothing to run (folded at compile time or while planning) */
    int64_t *offset;        /* per value: arena offset, -1 when not in the arena */
    int64_t *scratch_off;   /* per node: offset of its run-time scratch */
    size_t *scratch_bytes;  /* per node */
    size_t arena_bytes, naive_bytes, lower_bound_bytes;
    size_t n_tensors;
    int dynamic_from;       /* first node whose output shapes need run-time values; n_nodes if none */
    bool incomplete;        /* built with guessed dims and failed at dynamic_from: good for pre-packing only */
} ref_plan;

struct ref_compiled {
    ref_model *model;       /* holds a reference */
    const ref_graph *graph; /* the model's graph, or a subgraph of it */
    ref_options opts;
    int opset;
    ref_value *vals;
    int n_vals;
    ref_exec_node *nodes;   /* in execution (topological) order */
    int n_nodes;
    int *inputs, n_inputs;  /* value ids of graph inputs (initializers excluded) */
    int *outputs, n_outputs;
    int *node_ids;          /* one block holding every node's in/out id arrays */
    bool omitted_outputs;   /* some node skips an output in the middle: the arena path can't run it */
    int max_in, max_out;    /* largest n_in and n_out of any node, to size argument arrays (on the heap) */
    ref_plan *default_plan; /* for the declared input shapes; NULL when they are not all known */
    size_t packed_bytes;
    bool prepacked;         /* compile-time preparation is over: later plans prepare what it left */
    pthread_mutex_t prep_mu; /* guards lazy prepare of nodes whose shapes were unknown at compile */
    bool guessed_dims;      /* the default plan's shapes bind some symbolic dim to 1 (no option named it) */
    char no_plan_why[384];  /* why there is no default plan, when there is none */

    /* A subgraph (If's branch, Loop's or Scan's body): compiled with its parent, run by the control-flow op. */
    const ref_compiled *parent;
    int parent_node;        /* the node of parent whose attribute this is */
    int n_formal;           /* formal inputs: inputs[0..n_formal) */
    int n_captures;         /* outer-scope names it reads, in first-use order */
    int *capture_slot;      /* per capture: index among the parent node's implicit inputs */
    int *capture_input;     /* per capture: index in inputs[], or -1 when the parent's value is a constant */
    void **extra;           /* buffers rewrites allocated (input id arrays), freed with the compiled model */
    int n_extra, cap_extra;

    /* Who reads what, for the rewrites after folding (release.c builds it, affine.c and fuse_act.c keep it true), so
     * that each question costs O(1) instead of a scan of every node. Sized cap_vals like vals. */
    int cap_vals;
    int *readers;           /* per value: reads by nodes that run (neither folded nor elided), one per input slot */
    int *only_reader;       /* per value: the one node reading it explicitly (any node), -1 none, -2 several or a
                             * subgraph; exact for activations (the rewrites change only constant inputs) */
    const ref_initializer **mapped; /* the graph's mapped initializers sorted by data address, n_mapped of them */
    size_t n_mapped;
    /* float16 values run as float32 (half.c): constants converted at compile, float16 inputs converted as they are
     * set, float16 graph outputs converted after each infer. */
    bool half;
};

/* compile.c: compile subgraph g of node k of parent (after parent's values up to k are final). */
int ref_compile_sub(const ref_compiled *parent, int k, const ref_graph *g, ref_compiled **out, ref_error *err);
/* subgraph.c: compile every subgraph of node k (GRAPH attributes) into c->nodes[k].subs. */
int ref_compile_node_subs(ref_compiled *c, int k, ref_error *err);
/* affine.c: fold BatchNormalization, and Mul or Add by per-channel constants, into the Conv or Gemm before them. */
int ref_fold_affine(ref_compiled *c, ref_error *err);
/* A node of the default domain with this op_type. */
bool ref_exec_is_op(const ref_exec_node *e, const char *op);
/* The only node reading activation v, or -1 when none or several read it, a subgraph reads it, it is a graph output
 * or not an activation. Needs the reader index (ref_readers_build). */
int ref_only_consumer(const ref_compiled *c, int v);
/* affine.c: keep buffer p (an input id array a rewrite made) until the compiled model is freed; on failure p is
 * freed and REF_E_NOMEM returned. */
int ref_compile_keep(ref_compiled *c, void *p, ref_error *err);
/* fuse_qdq.c: MatMul(DequantizeLinear(8-bit activation), DequantizeLinear(8-bit constant weights)) becomes
 * com.microsoft MatMulIntegerToFloat on the 8-bit values (integer GEMM); Conv of the same (int32 bias at the product
 * scale) read only by a QuantizeLinear (maybe through a redundant Relu) becomes QLinearConv writing its output; the
 * dequantized copies go when unread. Runs before ref_fuse_activations. */
int ref_fuse_qdq(ref_compiled *c, ref_error *err);
/* fuse_act.c: a Relu or Clip (constant bounds) that alone reads a float Conv's output is fused into the Conv, which
 * then clamps as it writes (ref_exec_node.act), and elided. */
int ref_fuse_activations(ref_compiled *c, ref_error *err);

/* half.c: when the graph has float16 inputs, outputs or constants (or its parent runs as float32), make its
 * float16 constants float32 and its Casts to float16 round in float32; sets c->half. Runs before folding. A
 * constant whose one reader is a Conv's, Gemm's or MatMul's weight input (directly or through a Cast to float) stays
 * float16 (half_later) until pre-packing widens it; every other one gets its float32 copy now. */
int ref_half_graph(ref_compiled *c, ref_error *err);
/* half.c: give half_later constant v its float32 copy (owned, half_copy); nothing when v is not half_later. Safe
 * on distinct values from several threads. Fails with REF_E_NOMEM, v unchanged. */
int ref_half_widen(ref_compiled *c, int v, ref_error *err);
/* half.c: widen every constant still half_later (its reader was not pre-packed); after ref_prepack. */
int ref_half_finish(ref_compiled *c, ref_error *err);

/* graph.c: build vals/nodes in topological order from the model (no shapes yet). */
int ref_graph_build(ref_compiled *c, ref_error *err);

/* fold.c: evaluate every node whose inputs are all constants; their outputs become REF_VAL_CONST. */
int ref_fold_constants(ref_compiled *c, ref_error *err);

/* Argument arrays for one node at a time, with room for the widest node (max_in inputs, max_out outputs)
 * in one heap block. A crafted node may list millions of inputs or outputs, so these never live on the stack. */
typedef struct ref_node_io {
    const ref_tensor **in; /* input pointers; NULL for omitted inputs */
    ref_tensor **outp;     /* output pointers, into out[] or elsewhere */
    ref_tensor *out;       /* output tensors */
} ref_node_io;

/* Allocate io for c's widest node. Fails with REF_E_NOMEM, leaving io's pointers NULL. */
int ref_node_io_init(ref_node_io *io, const ref_compiled *c, ref_error *err);
/* Free what init allocated; a zeroed or failed io is fine. */
void ref_node_io_deinit(ref_node_io *io);

/* Run node k once over io->in[0..n_in) with freshly allocated outputs in io->out[0..n_out) (data from
 * ref_aligned_alloc, owned by the caller) and scratch; io->outp is overwritten. Used by folding and planning.
 * On failure no output holds data and nothing else is kept. */
int ref_node_eval(const ref_compiled *c, int k, ref_node_io *io, ref_error *err);

/* Set up an op context for node k over the given tensors. */
void ref_node_ctx(const ref_compiled *c, int k, const ref_tensor *const *in, ref_tensor *const *out,
                  ref_op_ctx *ctx, ref_error *err);

/* After op->infer: every output's shape passes ref_shape_check against ctx->max_tensor_bytes (REF_E_RANGE
 * otherwise, for the caller to prefix with the node). Every path that sizes an output from infer calls it first. */
int ref_check_outputs(const ref_op_ctx *ctx, ref_error *err);

/* Prefix err with "node 'name' (Op): ". Returns err's code. */
int ref_node_fail(const ref_compiled *c, int k, ref_error *err);

/* prepack.c: run op->prepare of every node with known shapes over opts.compile_threads workers. */
int ref_prepack(ref_compiled *c, const ref_plan *p, ref_error *err);
/* release.c: the reader index (c->readers, c->only_reader, c->mapped), built once folding is over; then a rewrite
 * calls ref_readers_node(c, k, -1) before it changes node k's inputs or elides it, and (c, k, +1) after a change to
 * a node that still runs. ref_vals_grow makes room for one more value (its index entries zero and -1). */
int ref_readers_build(ref_compiled *c, ref_error *err);
void ref_readers_node(ref_compiled *c, int k, int delta);
int ref_vals_grow(ref_compiled *c, ref_error *err);
/* release.c: drop from RSS the mapped constants no running node reads (after folding); free or drop the weight of
 * Conv, ConvTranspose, Gemm or MatMul node k once it is packed, when nothing else reads it (that constant's data is
 * then NULL). */
void ref_release_unread_mapped(ref_compiled *c);
void ref_release_unread(ref_compiled *c, int v);
void ref_release_packed_weight(ref_compiled *c, int k);
/* Prepare node k now if it was not (its shapes were unknown at compile); thread-safe. */
int ref_prepare_lazy(ref_compiled *c, int k, const ref_tensor *const *in, ref_error *err);

/* plan.c: shapes for the given input shapes (shape inference plus folding of shape-only subgraphs),
 * then the memory plan. in_shapes has n_inputs entries (dtype and dims). */
int ref_plan_build(const ref_compiled *c, const ref_tensor *in_shapes, ref_plan **out, ref_error *err);
/* The same, but a node that fails stops the plan there (incomplete, with the message in err) instead of failing
 * it; allocation failures still fail. For shapes with guessed dims, where a failure says nothing of the model. */
int ref_plan_build_tolerant(const ref_compiled *c, const ref_tensor *in_shapes, ref_plan **out, ref_error *err);
void ref_plan_free(const ref_compiled *c, ref_plan *p);
/* True when p was built for exactly these input shapes. */
bool ref_plan_matches(const ref_compiled *c, const ref_plan *p, const ref_tensor *in_shapes);
/* Default shape of graph input i: opts.shapes when it names the input, else the declared dims with symbolic ones
 * from opts.dims or 1 (*guessed set true then; guessed may be NULL). REF_E_DYNAMIC when the model declares no
 * shape for it and no option gives one; REF_E_SHAPE when an option contradicts the declaration. */
int ref_input_default_shape(const ref_compiled *c, int i, ref_tensor *out, bool *guessed, ref_error *err);

/* planner.c: offsets for the tensors of p (sizes and lifetimes known) with the given strategy. */
int ref_plan_memory(const ref_compiled *c, ref_plan *p, int strategy, ref_error *err);

#endif
