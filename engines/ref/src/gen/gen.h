/* gen.h: the model generator's internal entry points, shared by ref_gen_model, the CLI's "gen" and the tests.
 * It must never write a file before the options are validated and the whole model is built. */
#ifndef REF_GEN_H
#define REF_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "refengine.h"

/* What a generated model holds. Parameters count learned tensors (conv/linear weights and biases, norm scales
 * and shifts) as PyTorch's parameters() does; buffers are the batch-norm running statistics; shape and scalar
 * constants count as neither but are in weight_bytes. */
typedef struct ref_gen_stats {
    size_t n_nodes;
    size_t n_initializers;
    int64_t n_params;
    int64_t n_buffers;
    size_t weight_bytes;
} ref_gen_stats;

/* The architectures, as ref_gen_options.arch spells them, comma-separated (static storage). */
const char *ref_gen_arch_names(void);

/* Check o: a known arch and every option in range. Fails with REF_E_INVALID naming the option and value. */
int ref_gen_validate(const ref_gen_options *o, ref_error *err);

/* Build the model in memory. On success *out holds it (the caller unrefs it) and *st, when non-NULL, its figures.
 * Fails with REF_E_INVALID (bad options), REF_E_RANGE (weights past the size limit) or REF_E_NOMEM; *out is
 * untouched on failure. */
int ref_gen_build(const ref_gen_options *o, ref_model **out, ref_gen_stats *st, ref_error *err);

/* Build and write to out_path (plus out_path + ".data" with external data). st may be NULL.
 * Fails as ref_gen_build does, or with the writer's REF_E_IO naming the file. */
int ref_gen_write(const ref_gen_options *o, const char *out_path, ref_gen_stats *st, ref_error *err);

#endif
