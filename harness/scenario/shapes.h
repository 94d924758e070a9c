/* shapes.h: a shape schedule, the size each named symbolic input dim takes at each iteration: as a scenario writes it
 * (`shapes:`), as a worker argument carries it, and as the worker evaluates it. It must never depend on anything but
 * the schedule, its seed and the iteration number: every run of a cell feeds the same shapes in the same order. */
#ifndef MLK_SHAPES_H
#define MLK_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define MLK_SHAPE_MAX_DIMS 8      /* named dims in one schedule */
#define MLK_SHAPE_MAX_VALUES 64   /* values of one cycle or choice list */
#define MLK_SHAPE_MAX_SIZE 1000000 /* the largest size a dim may be given */
#define MLK_SHAPE_NAME_MAX 64

/* Each kind: X(ENUM, "name"): how a dim's size is picked per iteration. */
#define MLK_SHAPE_KINDS(X)                                                                                          \
    X(RANGE, "range")   /* seeded uniform choice in lo..hi by step */                                              \
    X(CYCLE, "cycle")   /* values in order, again and again */                                                     \
    X(CHOICE, "choice") /* seeded uniform choice among values */

typedef enum {
#define X_(e, n) MLK_SHAPE_##e,
    MLK_SHAPE_KINDS(X_)
#undef X_
} mlk_shape_kind;

typedef struct mlk_shape_dim {
    char name[MLK_SHAPE_NAME_MAX]; /* the dim's dim_param in the model */
    mlk_shape_kind kind;
    int64_t lo, hi, step;                 /* range: sizes lo, lo+step, ... up to hi (all >= 1) */
    int64_t values[MLK_SHAPE_MAX_VALUES]; /* cycle, choice: sizes >= 1 */
    int n_values;
} mlk_shape_dim;

/* A whole schedule; fixed size, so a worker holds one without allocating. */
typedef struct mlk_shapes {
    mlk_shape_dim dims[MLK_SHAPE_MAX_DIMS];
    int n_dims;
    uint64_t seed; /* for range and choice */
} mlk_shapes;

/* "range", "cycle", "choice"; NULL out of range. */
const char *mlk_shape_kind_name(mlk_shape_kind k);

/* Dim d's size at iteration it (0-based over warmup and measured iterations). */
int64_t mlk_shapes_value(const mlk_shapes *s, int d, int64_t it);
/* The largest size dim d can take. */
int64_t mlk_shapes_max(const mlk_shapes *s, int d);
/* Distinct combinations of sizes the schedule can give (saturating at INT64_MAX). */
int64_t mlk_shapes_combinations(const mlk_shapes *s);

/* One dim as a worker argument: "NAME=range:LO:HI:STEP", "NAME=cycle:16,64,256", "NAME=choice:...". Returns the
 * length written (< len), or -1 when it does not fit. */
int mlk_shape_dim_format(const mlk_shape_dim *d, char *buf, size_t len);
/* The inverse; MLK_E_USAGE naming what is wrong for anything mlk_shape_dim_format cannot have written. */
int mlk_shape_dim_parse(const char *arg, mlk_shape_dim *out, mlk_error *err);

/* The schedule in one line for messages and run records: "seq=cycle:16,64,256 batch=range:1:8:1 (seed 1)". */
void mlk_shapes_describe(const mlk_shapes *s, char *buf, size_t len);

#endif
