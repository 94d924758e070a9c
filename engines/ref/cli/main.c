/* main.c: entry point of the refengine tool; dispatches to one subcommand per file.
 * It must never do a subcommand's work itself. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", ref_cli_run, "run MODEL [options]: repeated inference, prints latency, VmHWM and arena bytes"},
    {"plan", ref_cli_plan, "plan MODEL [options]: naive, planned and lower-bound activation bytes"},
    {"gen", ref_cli_gen, "gen ARCH --out FILE.onnx [options]: write a synthetic model"},
    {"conformance", ref_cli_conformance, "conformance DIR...: run ONNX backend test cases"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: refengine COMMAND [ARGS]   (refengine COMMAND --help for details)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "refengine: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
