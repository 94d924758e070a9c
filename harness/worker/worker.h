/* worker.h: worker mode of memleak-run: one matrix cell in a fresh process, every step probed, samples streamed.
 * A worker must never write anything but protocol lines to the sample fd, and never outlive its parent. */
#ifndef MLK_WORKER_H
#define MLK_WORKER_H

#include <stdbool.h>

#include "engine.h"
#include "scenario.h"

#define MLK_WORKER_MAX_OPTS 64
#define MLK_WORKER_MAX_INPUTS 32

/* Exit codes a worker uses besides 0; the parent maps them to cell statuses. */
enum {
    MLK_WORKER_EXIT_STEP_FAILED = 3, /* a step returned an error: cell status "error" */
    MLK_WORKER_EXIT_OOM = 4,         /* a step ran out of memory (memory_limit_mb): "oom" */
    MLK_WORKER_EXIT_USAGE = 5,       /* bad worker arguments: an internal error of the parent */
};

typedef struct mlk_worker_args {
    int fd;                  /* sample stream */
    const char *engine_lib;  /* path of engine_<name>.so */
    const char *model;       /* model path */
    const char *inputs[MLK_WORKER_MAX_INPUTS]; /* optional .pb per graph input */
    int n_inputs;
    mlk_step setup[MLK_MAX_STEPS], pipeline[MLK_MAX_STEPS], teardown[MLK_MAX_STEPS]; /* the parser's limit */
    int n_setup, n_pipeline, n_teardown;
    int iterations, warmup;
    int64_t duration_ms;     /* > 0: measure until this much time has passed, whatever iterations says */
    bool trim;               /* call the allocator's release after each iteration */
    engine_kv opts[MLK_WORKER_MAX_OPTS];
    int n_opts;
    mlk_shapes shapes;       /* --shape NAME=KIND:SIZES (repeated) and --shape-seed N; n_dims 0 without */
    /* iterations: auto (issue 23): from --auto-min measured iterations on, at each decision point (auto_min, then
     * 1.5 times the last, up to iterations) the worker sends "P\tN" (N measured so far) and waits for one byte on
     * control_fd: 'c' to go on, anything else (or the parent gone) to stop measuring. 0 and -1 without. */
    int auto_min;
    int control_fd;
} mlk_worker_args;

/* Parse "--worker ..." arguments (argv[0] is the program). Returns 0 or -1 with a message on stderr. */
int mlk_worker_parse(int argc, char **argv, mlk_worker_args *a);

/* The decision point after p (the first is auto_min), capped at max: 1.5 times p, at least p + 1. */
int mlk_worker_next_point(int p, int max);

/* Run the cell; returns the process exit code. */
int mlk_worker_run(const mlk_worker_args *a);

#endif
