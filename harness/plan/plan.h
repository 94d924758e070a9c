/* plan.h: everything resolved before a run starts: the engine plugin, the model file (generated and cached if
 * asked), option checks, and the matrix expanded into cells. It must never start a worker: any problem found here
 * is an input error (exit 2) and nothing has run. */
#ifndef MLK_PLAN_H
#define MLK_PLAN_H

#include <stdbool.h>

#include "engine.h"
#include "scenario.h"
#include "status.h"

#define MLK_CELL_MAX_OPTS 64

/* A model the cells run: the scenario's model, or one value of its model axis. */
typedef struct mlk_plan_model {
    const char *name;            /* the model axis value, or NULL for the top-level model */
    char *path;                  /* resolved model file (generated and cached when asked) */
    char *hash;                  /* FNV-1a 64, hex, of the model file and its external data (model_id.h) */
    bool hash_sampled;           /* hashed by samples: the files hold more than MLK_HASH_WHOLE_MAX_BYTES */
    int64_t bytes;               /* the model file and its external data */
    char **inputs;               /* resolved .pb paths */
    int n_inputs;
} mlk_plan_model;

typedef struct mlk_cell {
    int idx;
    const char *engine;          /* the top-level engine, or this cell's value of the engine axis */
    const char *engine_lib;      /* its plugin (one of mlk_plan.engine_libs) */
    int model;                   /* index into mlk_plan.models */
    const char *allocator;       /* "glibc" unless the allocator axis says otherwise */
    const char *allocator_preload; /* the scenario's own library for it ({name, preload}), or NULL: the registry's */
    bool trim;                   /* malloc_trim */
    const char *glibc_tunables;  /* NULL or "" for none */
    const char *malloc_conf;     /* jemalloc's MALLOC_CONF, NULL for none */
    const char *allocator_env;   /* "KEY=VALUE KEY=VALUE" for TCMALLOC_* / MIMALLOC_* / MALLOC_*, or NULL */
    int tool;                    /* mlk_tool (tool.h): the scenario's tool:, or this cell's value of the tool axis */
    engine_kv opts[MLK_CELL_MAX_OPTS]; /* engine options: fixed ones, axis values, variants */
    int n_opts;
    char *axes_json;             /* {"threads":"2","allocator":"jemalloc"} */
    char *config_key;            /* engine, model hash and axis values: stable across runs */
    char *label;                 /* short: "threads=2 allocator=jemalloc" */
} mlk_cell;

typedef struct mlk_plan {
    const mlk_scenario *s;       /* borrowed */
    char **engines, **engine_libs; /* every engine the cells use, and its resolved engine_<name>.so */
    int n_engines;
    mlk_plan_model *models;      /* one, or one per value of the model axis */
    int n_models;
    mlk_cell *cells;
    int n_cells;
    struct mlk_tool_paths *tools; /* valgrind, the lsan worker, ... (tool.h); NULL when no cell runs under a tool */
} mlk_plan;

typedef struct mlk_plan_opts {
    const char *engine_dir;      /* where engine_*.so live; NULL: $MLK_ENGINE_DIR, then next to the binary */
    const char *model_cache;     /* NULL: $XDG_CACHE_HOME/memleak/models or ~/.cache/memleak/models */
    const char *refengine;       /* the generator; NULL: $MLK_REFENGINE, then next to the binary */
    const char *self_dir;        /* the folder memleak-run runs from */
} mlk_plan_opts;

/* Resolve and check everything, expand cells. Errors name the scenario file:line:col where one applies. */
int mlk_plan_build(const mlk_scenario *s, const mlk_plan_opts *o, mlk_plan **out, mlk_error *err);
void mlk_plan_free(mlk_plan *p);

/* The plugin of engine name, or NULL when the plan does not use it. */
const char *mlk_plan_engine_lib(const mlk_plan *p, const char *name);

#endif
