/* cmd_gen.c: the "refengine gen" subcommand: parse options, generate a synthetic model, print a one-line summary.
 * It must never exit() itself, and never write a file when an option is bad (usage errors exit 2 before any I/O). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "gen/gen.h"
#include "refengine.h"

typedef enum { OPT_FLAG, OPT_INT, OPT_U64, OPT_FLOAT, OPT_PATH, OPT_STR } opt_kind;

typedef struct gen_opt {
    const char *name;
    opt_kind kind;
    size_t offset;       /* into ref_gen_options; unused for OPT_PATH */
    const char *archs;   /* architectures it applies to, NULL for all */
    const char *help;
} gen_opt;

#define OFF(f) offsetof(ref_gen_options, f)
static const gen_opt gen_opts[] = {
    {"out", OPT_PATH, 0, NULL, "FILE.onnx  where to write the model (required)"},
    {"external-data", OPT_FLAG, OFF(external_data), NULL, "weights to FILE.onnx.data at 4096-aligned offsets"},
    {"batch", OPT_INT, OFF(batch), NULL, "N  batch size (default 1)"},
    {"seed", OPT_U64, OFF(seed), NULL, "S  weight seed, decimal or 0x-hex; same seed, same bytes (default 1)"},
    {"dynamic", OPT_FLAG, OFF(dynamic), NULL, "symbolic dims \"batch\" (and \"seq\" for transformer)"},
    {"width-mult", OPT_FLOAT, OFF(width_mult), "mobilenetv2", "F  channel width multiplier (default 1.0)"},
    {"image-size", OPT_INT, OFF(image_size), "mobilenetv2 resnet18 resnet50", "N  input height and width (default 224)"},
    {"layers", OPT_INT, OFF(layers), "transformer chain", "N  encoder layers, or chain nodes (default 4)"},
    {"hidden", OPT_INT, OFF(hidden), "transformer chain", "N  hidden size (default 256)"},
    {"heads", OPT_INT, OFF(heads), "transformer", "N  attention heads (default 4)"},
    {"seq", OPT_INT, OFF(seq), "transformer", "N  sequence length (default 128)"},
    {"mlp-hidden", OPT_INT, OFF(mlp_hidden), "mlp", "N  hidden width (default 1024)"},
    {"dtype", OPT_STR, OFF(dtype), NULL, "T  float or float16: weights, inputs and outputs (default float)"},
    {"quantize", OPT_STR, OFF(quantize), NULL, "Q  none or uint8: dynamic quantization of Conv/Gemm/MatMul weights"},
};
#define N_OPTS (sizeof gen_opts / sizeof gen_opts[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: refengine gen ARCH --out FILE.onnx [options]\n"
               "  ARCH is one of: %s\n\noptions:\n", ref_gen_arch_names());
    for (size_t i = 0; i < N_OPTS; i++)
        fprintf(f, "  --%-14s %s%s%s%s\n", gen_opts[i].name, gen_opts[i].help, gen_opts[i].archs ? " [" : "",
                gen_opts[i].archs ? gen_opts[i].archs : "", gen_opts[i].archs ? "]" : "");
    fprintf(f, "  --%-14s %s\n", "help", "this text");
}

/* Store value text v of option op into o (or *out_path). Returns 0, or 2 after printing what is wrong. */
static int set_value(const gen_opt *op, const char *v, ref_gen_options *o, const char **out_path)
{
    char *end = NULL;
    void *field = (char *)o + op->offset;
    errno = 0;
    switch (op->kind) {
    case OPT_PATH:
        if (!v[0])
            break;
        *out_path = v;
        return 0;
    case OPT_INT: {
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end || x < -2147483647L || x > 2147483647L)
            break;
        *(int *)field = (int)x;
        return 0;
    }
    case OPT_U64: {
        /* Decimal or 0x-hex; never octal, so "010" is ten. */
        int hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
        unsigned long long x = strtoull(v, &end, hex ? 16 : 10);
        if (errno || end == v || *end || v[0] == '-')
            break;
        *(uint64_t *)field = (uint64_t)x;
        return 0;
    }
    case OPT_FLOAT: {
        float x = strtof(v, &end);
        if (errno || end == v || *end)
            break;
        *(float *)field = x;
        return 0;
    }
    case OPT_STR:
        if (!v[0])
            break;
        *(const char **)field = v;
        return 0;
    case OPT_FLAG:
        break;
    }
    static const char *const expect[] = {"no value", "an integer", "an unsigned integer", "a number", "a path",
                                         "a word"};
    fprintf(stderr, "refengine gen: --%s: '%s' is not %s\n", op->name, v, expect[op->kind]);
    return 2;
}

static const gen_opt *find_opt(const char *name, size_t len)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strlen(gen_opts[i].name) == len && !strncmp(gen_opts[i].name, name, len))
            return &gen_opts[i];
    return NULL;
}

/* Parse argv into o; given[i] marks the options seen. Returns -1 for --help, 0 ok, 2 on a usage error. */
static int parse_args(int argc, char **argv, ref_gen_options *o, const char **out_path, int *given)
{
    const char *arch = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return -1;
        if (strncmp(a, "--", 2)) {
            if (arch) {
                fprintf(stderr, "refengine gen: unexpected argument '%s' (ARCH is already '%s')\n", a, arch);
                return 2;
            }
            arch = a;
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        const gen_opt *op = find_opt(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!op) {
            fprintf(stderr, "refengine gen: unknown option '%s' (see refengine gen --help)\n", a);
            return 2;
        }
        given[op - gen_opts] = 1;
        if (op->kind == OPT_FLAG) {
            if (eq) {
                fprintf(stderr, "refengine gen: --%s takes no value\n", op->name);
                return 2;
            }
            *(int *)((char *)o + op->offset) = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) {
            fprintf(stderr, "refengine gen: --%s needs a value\n", op->name);
            return 2;
        }
        if (set_value(op, v, o, out_path))
            return 2;
    }
    if (!arch) {
        fprintf(stderr, "refengine gen: no ARCH given (one of %s)\n", ref_gen_arch_names());
        return 2;
    }
    o->arch = arch;
    return 0;
}

/* Does the space-separated list contain word? */
static int list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
            return 1;
    return 0;
}

static double file_mib(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1.0 : (double)st.st_size / (1024.0 * 1024.0);
}

static void print_summary(const ref_gen_options *o, const char *out_path, const ref_gen_stats *st)
{
    printf("%s: %zu nodes, %lld parameters (+%lld buffer values), %.2f MiB of weights -> %s (%.2f MiB)", o->arch,
           st->n_nodes, (long long)st->n_params, (long long)st->n_buffers,
           (double)st->weight_bytes / (1024.0 * 1024.0), out_path, file_mib(out_path));
    if (o->external_data) {
        char data[4096];
        snprintf(data, sizeof data, "%s.data", out_path);
        printf(" + %s (%.2f MiB)", data, file_mib(data));
    }
    printf("\n");
}

int ref_cli_gen(int argc, char **argv)
{
    ref_gen_options o;
    ref_gen_options_init(&o);
    const char *out_path = NULL;
    int given[N_OPTS] = {0};
    int rc = parse_args(argc, argv, &o, &out_path, given);
    if (rc < 0) {
        usage(stdout);
        return 0;
    }
    if (rc)
        return rc;
    if (!out_path) {
        fprintf(stderr, "refengine gen: --out FILE.onnx is required\n");
        return 2;
    }
    ref_error err = {0};
    if (ref_gen_validate(&o, &err)) {
        fprintf(stderr, "refengine %s\n", err.msg);
        return 2;
    }
    for (size_t i = 0; i < N_OPTS; i++)
        if (given[i] && gen_opts[i].archs && !list_has(gen_opts[i].archs, o.arch))
            fprintf(stderr, "refengine gen: warning: --%s does not apply to %s (ignored)\n", gen_opts[i].name,
                    o.arch);
    ref_gen_stats st;
    if (ref_gen_write(&o, out_path, &st, &err)) {
        fprintf(stderr, "refengine %s (%s)\n", err.msg, ref_status_name(err.code));
        return 1;
    }
    print_summary(&o, out_path, &st);
    return 0;
}
