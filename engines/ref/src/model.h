/* model.h: the in-memory ONNX graph (the IR) that the reader and the generator build and compile consumes.
 * It must never hold pointers into memory it does not own or keep alive: strings and arrays live in the
 * model's pool, initializer bytes in its heap buffers or its file mappings. */
#ifndef REF_MODEL_H
#define REF_MODEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "refengine.h"

/* ONNX AttributeProto.AttributeType numbers. */
enum {
    REF_ATTR_UNDEFINED = 0,
    REF_ATTR_FLOAT = 1,
    REF_ATTR_INT = 2,
    REF_ATTR_STRING = 3,
    REF_ATTR_TENSOR = 4,
    REF_ATTR_GRAPH = 5,
    REF_ATTR_FLOATS = 6,
    REF_ATTR_INTS = 7,
    REF_ATTR_STRINGS = 8,
    REF_ATTR_TENSORS = 9,
    REF_ATTR_GRAPHS = 10,
    REF_ATTR_SPARSE_TENSOR = 11,
    REF_ATTR_SPARSE_TENSORS = 12,
    REF_ATTR_TYPE_PROTO = 13,
    REF_ATTR_TYPE_PROTOS = 14
};

typedef struct ref_attr {
    const char *name;
    int32_t type;       /* REF_ATTR_*; when the file omits it, inferred from the fields present */
    float f;
    int64_t i;
    const char *s;      /* NUL-terminated copy; s_len excludes the NUL (bytes may contain NUL) */
    size_t s_len;
    ref_tensor *t;      /* TENSOR: shape and bytes owned by the model */
    const float *floats;
    const int64_t *ints;
    const char **strings;
    size_t n;           /* count of floats, ints or strings */
    const struct ref_graph *g;              /* GRAPH: the subgraph (If's branches, Loop's body), owned by the model */
    const struct ref_graph *const *graphs;  /* GRAPHS, n_graphs of them */
    size_t n_graphs;
} ref_attr;

typedef struct ref_node {
    const char *name;     /* "" when the file has none */
    const char *op_type;
    const char *domain;   /* "" for the default ONNX domain */
    const char **inputs;  /* "" marks an omitted optional input */
    int n_inputs;
    const char **outputs;
    int n_outputs;
    ref_attr *attrs;
    int n_attrs;
} ref_node;

/* A dimension: a fixed value, a symbolic name, or unknown (value < 0 and param NULL). */
typedef struct ref_dim {
    int64_t value;
    const char *param;
} ref_dim;

typedef struct ref_value_info {
    const char *name;
    int32_t elem_type; /* ref_dtype; 0 when the file gives no type */
    int32_t rank;      /* -1 when the file gives no shape */
    ref_dim *dims;
} ref_value_info;

typedef enum { REF_STORAGE_NONE = 0, REF_STORAGE_HEAP, REF_STORAGE_MAPPED } ref_storage;

typedef struct ref_initializer {
    const char *name;
    ref_tensor t;       /* t.data: 64-byte-aligned heap buffer, or a pointer into a mapping (float16: any address) */
    size_t nbytes;
    ref_storage storage;
} ref_initializer;

typedef struct ref_opset {
    const char *domain;
    int64_t version;
} ref_opset;

typedef struct ref_graph {
    const char *name;
    struct ref_graph *next_sub; /* the model's list of subgraphs, to free their arrays */
    ref_node *nodes;
    size_t n_nodes, cap_nodes;
    ref_initializer *inits;
    size_t n_inits, cap_inits;
    ref_value_info *inputs;
    size_t n_inputs, cap_inputs;
    ref_value_info *outputs;
    size_t n_outputs, cap_outputs;
    ref_value_info *value_infos;
    size_t n_value_infos, cap_value_infos;
} ref_graph;

typedef struct ref_mapping {
    void *addr;
    size_t len;
} ref_mapping;

typedef struct ref_pool_chunk ref_pool_chunk;
typedef struct ref_owned_buf ref_owned_buf;

struct ref_model {
    int64_t ir_version;
    ref_opset *opsets;
    size_t n_opsets, cap_opsets;
    const char *producer_name;
    const char *producer_version;
    ref_graph graph;
    ref_graph *subs;         /* every subgraph (attribute g or graphs), at any depth */

    ref_options opts;        /* the options it was read with */
    const char *path;        /* NULL when read from memory */
    _Atomic int refs;        /* the caller's reference plus one per compiled model */

    /* storage */
    ref_pool_chunk *pool;    /* bump allocator for names, attributes and small arrays */
    ref_owned_buf *bufs;     /* heap buffers (initializer data), freed with the model */
    ref_mapping *maps;
    size_t n_maps, cap_maps;
};

/* An empty model holding one reference, or NULL on allocation failure. */
ref_model *ref_model_new(void);
/* Take and drop references; the last drop frees everything. NULL is fine. */
void ref_model_ref(ref_model *m);
void ref_model_unref(ref_model *m);

/* Pool memory, zeroed and 16-byte aligned, freed with the model. NULL on allocation failure. */
void *ref_model_pool_alloc(ref_model *m, size_t bytes);
/* NUL-terminated pool copy of s[0..n). */
char *ref_model_strdup(ref_model *m, const char *s, size_t n);
/* A 64-byte-aligned heap buffer owned by the model (for initializer data when mmap is off). */
void *ref_model_heap_alloc(ref_model *m, size_t bytes);
/* Record a mapping to munmap when the model is freed. */
int ref_model_add_mapping(ref_model *m, void *addr, size_t len);

/* Append a zeroed element and return it; the pointer is valid until the next append to the same
 * array. NULL on allocation failure. */
ref_node *ref_graph_add_node(ref_model *m);
ref_initializer *ref_graph_add_init(ref_model *m);
ref_value_info *ref_graph_add_input(ref_model *m);
ref_value_info *ref_graph_add_output(ref_model *m);
ref_value_info *ref_graph_add_value_info(ref_model *m);
int ref_model_add_opset(ref_model *m, const char *domain, int64_t version);
/* The same appends on any graph of the model (the main one or a subgraph). */
ref_node *ref_graph_push_node(ref_graph *g);
ref_initializer *ref_graph_push_init(ref_graph *g);
ref_value_info *ref_graph_push_value(ref_value_info **arr, size_t *n, size_t *cap);
/* A new empty subgraph in the model's pool, freed with the model. NULL on allocation failure. */
ref_graph *ref_model_new_subgraph(ref_model *m);

/* Opset of the default domain ("" or "ai.onnx"); 0 when not imported. */
int64_t ref_model_opset(const ref_model *m);

/* Initializer by name, or NULL. Linear scan; compile indexes names itself. */
const ref_initializer *ref_model_find_init(const ref_model *m, const char *name);

/* Attribute lookups by name. The *_or forms return dflt when the attribute is absent. */
const ref_attr *ref_node_attr(const ref_node *n, const char *name);
int64_t ref_attr_int_or(const ref_node *n, const char *name, int64_t dflt);
float ref_attr_float_or(const ref_node *n, const char *name, float dflt);
const char *ref_attr_str_or(const ref_node *n, const char *name, const char *dflt);
/* Count of the INTS/FLOATS attribute and its values in *out; 0 (and *out NULL) when absent. */
size_t ref_attr_ints(const ref_node *n, const char *name, const int64_t **out);
size_t ref_attr_floats(const ref_node *n, const char *name, const float **out);

/* ------------------------------------------------------------------------------------------------
 * ONNX serialization (engines/ref/src/onnx/). Field paths and byte offsets name every error.
 * ---------------------------------------------------------------------------------------------- */

/* Parse a serialized ModelProto in buf[0..len) into m. dir is the folder external data resolves in
 * (NULL refuses external data). With m->opts.mmap, buf must stay mapped for the model's life (the
 * caller registers it) and raw data is borrowed from it where ref_onnx_can_borrow allows (float16 anywhere, other
 * types element-aligned); otherwise everything is copied. */
int ref_onnx_parse(ref_model *m, const uint8_t *buf, size_t len, const char *dir, ref_error *err);

/* Parse one serialized TensorProto into t, with data copied into a ref_aligned_alloc buffer
 * (*data_out, which the caller frees with ref_free) and the name into *name (ref_malloc, may be NULL). */
int ref_onnx_parse_tensor(const uint8_t *buf, size_t len, ref_tensor *t, void **data_out, char **name,
                          ref_error *err);

/* Serialize m to path. With external_data, every initializer of 1 KiB or more goes to
 * path + ".data" at offsets aligned to 4096 (location is the data file's base name). */
int ref_onnx_write(const ref_model *m, const char *path, bool external_data, ref_error *err);

#endif
