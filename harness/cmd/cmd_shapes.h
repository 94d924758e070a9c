/* cmd_shapes.h: the input shapes every cell will run with, read from the model file before anything runs: printed
 * by --dry-run, and a symbolic dim that nothing sets named with the option that sets it (an error under --strict).
 * It must never guess silently: a dim that runs as 1 because nothing set it is always said. */
#ifndef MLK_CMD_SHAPES_H
#define MLK_CMD_SHAPES_H

#include <stdbool.h>
#include <stdio.h>

#include "plan.h"
#include "status.h"

/* For every model of p and each cell (only[i], or all when only is NULL): its inputs' shapes. print: write them
 * under each cell to out. A dim with no size that neither the scenario's shapes: nor the cell's dim.NAME / shape.INPUT
 * option sets runs as 1 (the engines' default): said once per model and dim on stderr, or, strict, MLK_E_USAGE
 * naming it. A model whose inputs come from .pb files, or that cannot be read here, is skipped (the worker says why).
 * texts, when not NULL, holds p->n_cells pointers (NULL on entry): each cell's shapes, as printed, malloc'd into
 * texts[i] for the store (cells skipped stay NULL); the caller frees them, also on failure.
 * Returns MLK_OK, MLK_E_USAGE (strict) or MLK_E_NOMEM. */
int mlk_cmd_shapes(const mlk_plan *p, const bool *only, FILE *out, bool strict, char **texts, mlk_error *err);

#endif
