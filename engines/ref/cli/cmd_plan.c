/* cmd_plan.c: "refengine plan MODEL": activation memory of the naive and greedy planners against the lower
 * bound, for the declared input shapes. It must never run inference: planning only. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: refengine plan MODEL [options]\n"
            "  Prints naive bytes (one buffer per tensor), planned bytes (greedy by size, one arena),\n"
            "  the lower bound (most bytes live at one operator), planned/lower bound and planned/naive.\n"
            "  --json   one JSON object instead of text\n\n%s",
            ref_cli_engine_help);
}

static int plan_with(ref_model *m, ref_options o, int planner, ref_plan_stats *out, const char *model)
{
    ref_error err = {0};
    ref_compiled *c = NULL;
    o.planner = planner;
    int rc = ref_compile(m, &o, &c, &err);
    if (!rc)
        rc = ref_compiled_plan_stats(c, out, &err);
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
    int json = 0;
    for (int i = 1; i < argc; i++) {
        int r = ref_cli_engine_option("plan", argc, argv, &i, &o);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (argv[i][0] == '-' || model) {
            fprintf(stderr, "refengine plan: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            model = argv[i];
        }
    }
    if (!model) {
        usage(stderr);
        return 2;
    }
    ref_error err = {0};
    ref_model *m = NULL;
    if (ref_model_read(model, &o, &m, &err)) {
        fprintf(stderr, "refengine plan: %s\n", err.msg);
        return 1;
    }
    ref_plan_stats naive, greedy;
    int rc = plan_with(m, o, REF_PLANNER_NAIVE, &naive, model);
    if (!rc)
        rc = plan_with(m, o, REF_PLANNER_GREEDY, &greedy, model);
    ref_model_free(m);
    if (rc)
        return 1;
    double vs_lb = greedy.lower_bound_bytes ? (double)greedy.planned_bytes / greedy.lower_bound_bytes : 1.0;
    double vs_naive = greedy.naive_bytes ? (double)greedy.planned_bytes / greedy.naive_bytes : 1.0;
    if (json) {
        printf("{\"model\":\"%s\",\"tensors\":%zu,\"naive_bytes\":%zu,\"planned_bytes\":%zu,"
               "\"lower_bound_bytes\":%zu,\"planned_over_lower_bound\":%.4f,\"planned_over_naive\":%.4f}\n",
               model, greedy.n_tensors, greedy.naive_bytes, greedy.planned_bytes, greedy.lower_bound_bytes, vs_lb,
               vs_naive);
        return 0;
    }
    printf("model:        %s (%zu tensors incl. scratch)\n", model, greedy.n_tensors);
    printf("naive:        %12zu bytes  (%.2f MiB)\n", naive.planned_bytes, naive.planned_bytes / 1048576.0);
    printf("planned:      %12zu bytes  (%.2f MiB, greedy by size)\n", greedy.planned_bytes,
           greedy.planned_bytes / 1048576.0);
    printf("lower bound:  %12zu bytes  (%.2f MiB)\n", greedy.lower_bound_bytes,
           greedy.lower_bound_bytes / 1048576.0);
    printf("planned / lower bound: %.4f\n", vs_lb);
    printf("planned / naive:       %.4f\n", vs_naive);
    return 0;
}
