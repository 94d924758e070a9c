/* cli_opts.c: maps --flag VALUE pairs onto ref_options_set keys for every subcommand.
 * It must never accept an option without checking its value through ref_options_set. */
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"

const char ref_cli_engine_help[] =
    "engine options:\n"
    "  --threads N            intra-op threads (default 1)\n"
    "  --compile-threads N    weight pre-packing workers (default 1)\n"
    "  --mmap on|off          map weights read-only instead of copying them (default on)\n"
    "  --planner naive|greedy activation memory planner (default greedy)\n"
    "  --arena on|off         one activation arena per request (default on)\n"
    "  --arena-growth pow2|exact   arena growth when input shapes change (default pow2)\n"
    "  --mem-pattern on|off   cache plans per input shape (default on)\n"
    "  --thread-arbiter on|off  with --threads > 1, run each infer on the caller alone when that has been\n"
    "                         faster lately, e.g. beside a busy core (default on)\n"
    "  --dim NAME=VALUE       value of a symbolic dimension (default 1)\n"
    "  --option KEY=VALUE     any engine option, e.g. inject_leak_bytes=4096\n";

static const struct {
    const char *flag, *key;
} flags[] = {
    {"--threads", "threads"},         {"--compile-threads", "compile_threads"},
    {"--mmap", "mmap"},               {"--planner", "planner"},
    {"--arena", "arena"},             {"--arena-growth", "arena_growth"},
    {"--mem-pattern", "mem_pattern"}, {"--thread-arbiter", "thread_arbiter"},
};

static int set_pair(const char *cmd, const char *pair, const char *prefix, ref_options *o)
{
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair) {
        fprintf(stderr, "refengine %s: expected KEY=VALUE, got '%s'\n", cmd, pair);
        return -1;
    }
    char key[128];
    int len = snprintf(key, sizeof key, "%s%.*s", prefix, (int)(eq - pair), pair);
    if (len < 0 || (size_t)len >= sizeof key) {
        fprintf(stderr, "refengine %s: key '%.*s' is longer than %zu bytes\n", cmd, (int)(eq - pair), pair,
                sizeof key - 1);
        return -1;
    }
    ref_error err = {0};
    if (ref_options_set(o, key, eq + 1, &err)) {
        fprintf(stderr, "refengine %s: %s\n", cmd, err.msg);
        return -1;
    }
    return 1;
}

int ref_cli_engine_option(const char *cmd, int argc, char **argv, int *i, ref_options *o)
{
    const char *a = argv[*i];
    int is_dim = !strcmp(a, "--dim"), is_opt = !strcmp(a, "--option");
    size_t f = 0, n = sizeof flags / sizeof flags[0];
    while (f < n && strcmp(a, flags[f].flag))
        f++;
    if (f == n && !is_dim && !is_opt)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "refengine %s: %s needs a value\n", cmd, a);
        return -1;
    }
    const char *v = argv[++*i];
    if (is_dim)
        return set_pair(cmd, v, "dim.", o);
    if (is_opt)
        return set_pair(cmd, v, "", o);
    ref_error err = {0};
    if (ref_options_set(o, flags[f].key, v, &err)) {
        fprintf(stderr, "refengine %s: %s\n", cmd, err.msg);
        return -1;
    }
    return 1;
}
