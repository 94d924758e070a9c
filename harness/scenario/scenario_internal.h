/* scenario_internal.h: internal to the scenario parser: a small YAML node tree built from libyaml events
 * (scenario_yaml.c), typed readers of its scalars that fail with "PATH:LINE:COL: ", and what scenario.c and
 * scenario_matrix.c share. It must never be included outside scenario*.c. */
#ifndef MLK_SCENARIO_INTERNAL_H
#define MLK_SCENARIO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

/* Deeper documents are refused; nothing in a scenario nests more than four levels. */
#define MLK_YAML_MAX_DEPTH 32

typedef enum { MLK_YSCALAR = 0, MLK_YSEQ, MLK_YMAP } mlk_ykind;

typedef struct mlk_ynode mlk_ynode;
struct mlk_ynode {
    mlk_ykind kind;
    mlk_loc loc;
    char *text;        /* scalar: NUL-terminated (NULs inside are refused) */
    bool plain;        /* scalar: unquoted, so it may be a number, boolean or null */
    mlk_ynode **items; /* sequence: the items; mapping: key, value, key, value, ... (keys are scalars) */
    int n_items, cap_items;
};

/* Parse one document into a tree. *doc_loc is where the document starts (for "missing key" errors).
 * Fails with MLK_E_PARSE ("name:LINE:COL: ...") for syntax errors, several documents, anchors, aliases,
 * tags, non-scalar or duplicate mapping keys and too deep nesting; MLK_E_NOMEM. *out untouched on failure. */
int mlk_yaml_parse(const char *text, size_t len, const char *name, mlk_ynode **out, mlk_loc *doc_loc, mlk_error *err);
void mlk_ynode_free(mlk_ynode *n);

/* Fill err with MLK_E_PARSE and "name:LINE:COL: " + the formatted message; returns MLK_E_PARSE. */
int mlk_yfail(mlk_error *err, const char *name, mlk_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The allocator every scenario allocation goes through (so tests can fail the n-th). */
void *mlk_yalloc(size_t n);
void *mlk_ycalloc(size_t n, size_t size);
char *mlk_ystrdup(const char *s);

/* A mapping's value for key, or NULL. */
const mlk_ynode *mlk_ymap_get(const mlk_ynode *map, const char *key);

/* Describe a node for "got ..." in messages: "a list", "a mapping", "nothing" (null), or the quoted text,
 * shortened. buf must hold at least 64 bytes. */
const char *mlk_ydescribe(const mlk_ynode *n, char *buf, size_t cap);

/* A plain scalar that YAML reads as null: empty, "~", "null". */
bool mlk_ynull(const mlk_ynode *n);

/* Typed readers. what names the field in messages ("iterations"); each error says what was expected and
 * what was found, at the node. Outputs are untouched on failure. A string is any non-null scalar, kept as
 * written (so `threads: 2` gives "2"); numbers and booleans must be unquoted. Integers are decimal without
 * leading zeros (YAML 1.1 reads 010 as octal); numbers are decimal, never inf or nan. */
int mlk_yget_string(const mlk_ynode *n, const char *what, const char *name, char **out, mlk_error *err);
int mlk_yget_int(const mlk_ynode *n, const char *what, int64_t lo, int64_t hi, const char *name, int64_t *out,
                 mlk_error *err);
int mlk_yget_number(const mlk_ynode *n, const char *what, double lo_exclusive, double hi, const char *name, double *out,
                    mlk_error *err);
int mlk_yget_bool(const mlk_ynode *n, const char *what, const char *name, bool *out, mlk_error *err);

/* Parse a YAML 1.1 boolean word (on/off/true/false/yes/no, any case); -1 when it is none. */
int mlk_ybool_word(const char *s);

/* ------------------------------------------------------------------------------------------------
 * Shared by scenario.c and scenario_matrix.c
 * ---------------------------------------------------------------------------------------------- */

/* Where the step lists were written; a defaulted list points at the pipeline. */
typedef struct scn_locs {
    mlk_loc doc;
    mlk_loc *setup, *pipeline, *teardown; /* one per step */
    mlk_loc setup_list, pipeline_list, teardown_list;
    bool setup_default, teardown_default;
} scn_locs;

/* A mapping of scalars (engine options, a variant) to key/value pairs; skip names a key to leave out
 * (NULL for none). Fails at the first value that is not a non-null scalar. */
int mlk_scn_kvs(const mlk_ynode *map, const char *what, const char *skip, const char *name, mlk_kv **out, int *n,
                mlk_error *err);
void mlk_scn_kvs_free(mlk_kv *kv, int n);

/* A name that ends up in paths, argument vectors and db keys (name, engine): 1 to 128 characters, a letter or digit
 * first, then letters, digits, '.', '_', '-'. */
bool mlk_scn_ident_ok(const char *s);
/* MLK_E_PARSE at loc, naming what, when prefix + value[0..len) + NUL would be longer than execve takes in one
 * argument or environment string (MAX_ARG_STRLEN: 32 pages, 128 KiB here); MLK_OK otherwise. */
int mlk_scn_exec_string(const char *what, const char *prefix, const char *value, size_t len, const char *name,
                        mlk_loc loc, mlk_error *err);

/* A list of step names (possibly empty); *locs gets each step's location (the caller frees both). */
int mlk_scn_steps(const mlk_ynode *n, const char *what, const char *name, mlk_step **out, mlk_loc **locs, int *n_out,
                  mlk_error *err);
/* Setup from nothing, then a pipeline that leaves alive what it found (it repeats), then a teardown that
 * releases everything; each step must find what it needs. Errors point at the step, or at the list. */
int mlk_scn_check_pipeline(const mlk_scenario *s, const scn_locs *L, const char *name, mlk_error *err);

/* `matrix:` into s->axes (s->axes is untouched on failure). */
int mlk_scn_matrix(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err);
/* Engine options that would be set twice in a cell (an axis and engine_options, two variant axes, a
 * variant and a scalar axis). */
int mlk_scn_check_options(const mlk_scenario *s, const char *name, mlk_error *err);
void mlk_scn_axes_free(mlk_axis *axes, int n);

/* scenario.c: a model mapping (path or generate, generator options, inputs); allow_name accepts the `name:` key of a
 * model axis value. On failure what was built stays in m for mlk_scn_model_free. */
int mlk_scn_model_map(mlk_model_spec *m, const mlk_ynode *v, bool allow_name, const char *name, mlk_error *err);
void mlk_scn_model_free(mlk_model_spec *m);
/* The top-level model: (a path or a mapping) into m; on failure what was built stays in m for mlk_scn_model_free. */
int mlk_scn_model_parse(mlk_model_spec *m, const mlk_ynode *v, const char *name, mlk_error *err);
/* A model's inputs: (a non-empty list of .pb paths) into m->inputs. */
int mlk_scn_model_inputs(mlk_model_spec *m, const mlk_ynode *v, const char *name, mlk_error *err);

/* scenario_shapes.c: `shapes:` into s->shapes (untouched on failure). */
int mlk_scn_shapes(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err);
/* scenario_expect.c: `expect:` into s->expect; and their release. */
int mlk_scn_expect(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err);
void mlk_scn_expect_free(mlk_expect *e, int n);
/* scenario_budgets.c: `budgets:` into s->budgets; and their release. */
int mlk_scn_budgets(mlk_scenario *s, const mlk_ynode *v, const char *name, mlk_error *err);
void mlk_scn_budgets_free(mlk_budget *b, int n);

#endif
