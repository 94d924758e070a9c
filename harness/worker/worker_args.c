/* worker_args.c: the argument vector the parent builds for a worker, and its parser.
 * It must never accept a malformed vector: the parent built it, so any error here is an internal bug. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static int parse_steps(const char *list, mlk_step *out, int max, int *n)
{
    *n = 0;
    /* Scanned in place: a list of MLK_MAX_STEPS long names is longer than any fixed copy we would make. */
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[32];
        if (len == 0 || len >= sizeof name || *n >= max)
            return -1;
        memcpy(name, p, len);
        name[len] = '\0';
        int s = mlk_step_from_name(name);
        if (s < 0)
            return -1;
        out[(*n)++] = (mlk_step)s;
        p += len + (comma != NULL);
        if (comma && !*p)
            return -1; /* a trailing comma */
    }
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > 1000000000) /* the scenario's own bound on iterations and on warmup */
        return -1;
    *out = (int)v;
    return 0;
}

int mlk_worker_parse(int argc, char **argv, mlk_worker_args *a)
{
    memset(a, 0, sizeof *a);
    a->fd = -1;
    a->control_fd = -1;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(k, "--worker")) {
            continue;
        } else if (!strcmp(k, "--trim")) {
            a->trim = true;
            continue;
        } else if (!v) {
            bad = 1;
        } else if (!strcmp(k, "--fd")) {
            bad = parse_int(v, 0, &a->fd);
        } else if (!strcmp(k, "--engine-lib")) {
            a->engine_lib = v;
        } else if (!strcmp(k, "--model")) {
            a->model = v;
        } else if (!strcmp(k, "--input")) {
            bad = a->n_inputs >= MLK_WORKER_MAX_INPUTS;
            if (!bad)
                a->inputs[a->n_inputs++] = v;
        } else if (!strcmp(k, "--setup")) {
            bad = parse_steps(v, a->setup, MLK_MAX_STEPS, &a->n_setup);
        } else if (!strcmp(k, "--pipeline")) {
            bad = parse_steps(v, a->pipeline, MLK_MAX_STEPS, &a->n_pipeline);
        } else if (!strcmp(k, "--teardown")) {
            bad = parse_steps(v, a->teardown, MLK_MAX_STEPS, &a->n_teardown);
        } else if (!strcmp(k, "--iterations")) {
            bad = parse_int(v, 0, &a->iterations);
        } else if (!strcmp(k, "--duration-ms")) {
            char *end = NULL;
            long long ms = v ? strtoll(v, &end, 10) : 0;
            bad = !v || !*v || *end || ms <= 0;
            if (!bad)
                a->duration_ms = ms;
        } else if (!strcmp(k, "--shape")) {
            mlk_error e = {0};
            bad = a->shapes.n_dims >= MLK_SHAPE_MAX_DIMS ||
                  mlk_shape_dim_parse(v, &a->shapes.dims[a->shapes.n_dims], &e) != MLK_OK;
            if (!bad)
                a->shapes.n_dims++;
        } else if (!strcmp(k, "--shape-seed")) {
            char *end = NULL;
            unsigned long long seed = strtoull(v, &end, 10);
            bad = !*v || *end || v[0] == '-';
            a->shapes.seed = seed;
        } else if (!strcmp(k, "--warmup")) {
            bad = parse_int(v, 0, &a->warmup);
        } else if (!strcmp(k, "--auto-min")) {
            bad = parse_int(v, 1, &a->auto_min);
        } else if (!strcmp(k, "--control-fd")) {
            bad = parse_int(v, 0, &a->control_fd);
        } else if (!strcmp(k, "--opt")) {
            char *eq = strchr(v, '=');
            bad = !eq || a->n_opts >= MLK_WORKER_MAX_OPTS;
            if (!bad) {
                *eq = '\0'; /* argv is ours to split: key and value point into it */
                a->opts[a->n_opts].key = v;
                a->opts[a->n_opts++].value = eq + 1;
            }
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "memleak-run worker: bad argument %s %s\n", k, v ? v : "");
            return -1;
        }
        i++;
    }
    if ((int64_t)a->warmup + a->iterations > INT_MAX - 1) {
        fprintf(stderr, "memleak-run worker: warmup + iterations (%d + %d) is more than one process can count\n",
                a->warmup, a->iterations);
        return -1;
    }
    if ((a->auto_min > 0) != (a->control_fd >= 0)) {
        fprintf(stderr, "memleak-run worker: --auto-min and --control-fd go together\n");
        return -1;
    }
    if (a->fd < 0 || !a->engine_lib || !a->model) {
        fprintf(stderr, "memleak-run worker: --fd, --engine-lib and --model are required\n");
        return -1;
    }
    return 0;
}
