/* cmd_plan.c: "refengine plan MODEL": activation memory of the naive and greedy planners against the lower
 * bound, for the declared input shapes. It must never run inference: planning only. */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "cli.h"
#include "cli_inputs.h"
#include "cli_opts.h"
#include "cli_util.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: refengine plan MODEL [options]\n"
            "  Prints naive bytes (one buffer per tensor), planned bytes (greedy by size, one arena),\n"
            "  the lower bound (most bytes live at one operator), planned/lower bound and planned/naive.\n"
            "  Plans for the declared input shapes, with symbolic dims from --dim, or for --shape / --input.\n"
            "  --json   one JSON object instead of text\n\n%s\n%s",
            ref_cli_inputs_help, ref_cli_engine_help);
}

/* "x=1x3x64x64 y=2" into buf: the input shapes the plan is for. */
static void shapes_str(const ref_compiled *c, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ref_compiled_n_inputs(c) && at < len; i++) {
        ref_value_desc d;
        ref_compiled_input(c, i, &d);
        at += (size_t)snprintf(buf + at, len - at, "%s%s=", i ? " " : "", d.name);
        for (int k = 0; k < d.shape.rank && at < len; k++)
            at += (size_t)snprintf(buf + at, len - at, "%s%lld", k ? "x" : "", (long long)d.shape.dims[k]);
        if (d.shape.rank < 0 && at < len)
            at += (size_t)snprintf(buf + at, len - at, "?");
    }
}

static int plan_with(ref_model *m, ref_options o, int planner, ref_plan_stats *out, const char *model, char *shapes,
                     size_t len)
{
    ref_error err = {0};
    ref_compiled *c = NULL;
    o.planner = planner;
    int rc = ref_compile(m, &o, &c, &err);
    if (!rc) {
        shapes_str(c, shapes, len);
        rc = ref_compiled_plan_stats(c, out, &err);
    }
    if (rc)
        fprintf(stderr, "refengine plan: %s: %s\n", model, err.msg);
    ref_compiled_free(c);
    return rc;
}

int ref_cli_plan(int argc, char **argv)
{
    ref_options o;
    ref_options_init(&o);
    const char *model = NULL;
    int json = 0, status = 2;
    ref_cli_inputs *ins = calloc(1, sizeof *ins);
    if (!ins)
        return 1;
    for (int i = 1; i < argc; i++) {
        int r = ref_cli_engine_option("plan", argc, argv, &i, &o);
        if (!r)
            r = ref_cli_input_option("plan", argc, argv, &i, ins);
        if (r < 0)
            goto out;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            status = 0;
            goto out;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (argv[i][0] == '-' || model) {
            fprintf(stderr, "refengine plan: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            goto out;
        } else {
            model = argv[i];
        }
    }
    if (!model) {
        usage(stderr);
        goto out;
    }
    status = 1;
    ref_error err = {0};
    ref_model *m = NULL;
    int rc = ref_model_read(model, &o, &m, &err);
    if (rc) {
        fprintf(stderr, "refengine plan: %s\n", err.msg);
        status = ref_cli_exit_status(rc);
        goto out;
    }
    ref_plan_stats naive, greedy;
    char shapes[1024];
    rc = ref_cli_inputs_apply("plan", ins, m, &o);
    if (!rc)
        rc = plan_with(m, o, REF_PLANNER_NAIVE, &naive, model, shapes, sizeof shapes);
    if (!rc)
        rc = plan_with(m, o, REF_PLANNER_GREEDY, &greedy, model, shapes, sizeof shapes);
    ref_model_free(m);
    if (rc) {
        status = rc == -1 ? 2 : ref_cli_exit_status(rc); /* -1: the inputs' options, already reported */
        goto out;
    }
    status = 0;
    double vs_lb = greedy.lower_bound_bytes ? (double)greedy.planned_bytes / greedy.lower_bound_bytes : 1.0;
    double vs_naive = greedy.naive_bytes ? (double)greedy.planned_bytes / greedy.naive_bytes : 1.0;
    if (json) {
        printf("{\"model\":\"%s\",\"shapes\":\"%s\",\"guessed_dims\":%s,\"tensors\":%zu,\"naive_bytes\":%zu,\"planned_bytes\":%zu,"
               "\"lower_bound_bytes\":%zu,\"planned_over_lower_bound\":%.4f,\"planned_over_naive\":%.4f}\n",
               model, shapes, greedy.guessed_dims ? "true" : "false", greedy.n_tensors, greedy.naive_bytes, greedy.planned_bytes, greedy.lower_bound_bytes, vs_lb,
               vs_naive);
        goto out;
    }
    printf("model:        %s (%zu tensors incl. scratch)\n", model, greedy.n_tensors);
    printf("shapes:       %s%s\n", shapes, greedy.guessed_dims ? "  (symbolic dims nothing named taken as 1: give --shape)" : "");
    printf("naive:        %12zu bytes  (%.2f MiB)\n", naive.planned_bytes, naive.planned_bytes / 1048576.0);
    printf("planned:      %12zu bytes  (%.2f MiB, greedy by size)\n", greedy.planned_bytes,
           greedy.planned_bytes / 1048576.0);
    printf("lower bound:  %12zu bytes  (%.2f MiB)\n", greedy.lower_bound_bytes,
           greedy.lower_bound_bytes / 1048576.0);
    printf("planned / lower bound: %.4f\n", vs_lb);
    printf("planned / naive:       %.4f\n", vs_naive);
out:
    ref_cli_inputs_free(ins);
    free(ins);
    return status;
}
