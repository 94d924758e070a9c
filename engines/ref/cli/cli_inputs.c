/* cli_inputs.c: --shape and --input for "refengine plan" and "refengine run" (see cli_inputs.h).
 * It must never accept a shape the engine's own shape.NAME option would refuse: every item goes through it. */
#include <stdio.h>
#include <string.h>

#include "cli_inputs.h"

const char ref_cli_inputs_help[] =
    "input shapes:\n"
    "  --shape NAME=1x3x640x640[,1x3x320x320...]   plan for this input shape (several: run cycles through them)\n"
    "  --input [NAME=]FILE.pb   the input's data from a serialized TensorProto (its shape too); without NAME the\n"
    "                           tensor's own name, else the position among the --input flags\n";

static ref_cli_input *entry(ref_cli_inputs *ins, const char *name)
{
    for (int k = 0; k < ins->n; k++)
        if (name[0] && !strcmp(ins->in[k].name, name))
            return &ins->in[k];
    if (ins->n == REF_CLI_MAX_INPUTS)
        return NULL;
    ref_cli_input *e = &ins->in[ins->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    return e;
}

/* "NAME=1x2,3x4": each item checked by the engine's own shape.NAME parser. */
static int parse_shapes(const char *cmd, const char *v, ref_cli_inputs *ins)
{
    const char *eq = strchr(v, '=');
    char name[128];
    if (!eq || eq == v || (size_t)(eq - v) >= sizeof name) {
        fprintf(stderr, "refengine %s: --shape expects NAME=1x3x224x224[,...], got '%s'\n", cmd, v);
        return -1;
    }
    snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
    ref_cli_input *e = entry(ins, name);
    if (!e) {
        fprintf(stderr, "refengine %s: at most %d inputs\n", cmd, REF_CLI_MAX_INPUTS);
        return -1;
    }
    e->n_shapes = 0;
    for (const char *p = eq + 1;;) {
        const char *end = strchr(p, ',');
        char item[256], key[160];
        snprintf(item, sizeof item, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
        snprintf(key, sizeof key, "shape.%s", name);
        ref_options tmp;
        ref_options_init(&tmp);
        ref_error err = {0};
        if (ref_options_set(&tmp, key, item, &err)) {
            fprintf(stderr, "refengine %s: %s\n", cmd, err.msg);
            return -1;
        }
        if (e->n_shapes == REF_CLI_MAX_SHAPES) {
            fprintf(stderr, "refengine %s: --shape %s: at most %d shapes\n", cmd, name, REF_CLI_MAX_SHAPES);
            return -1;
        }
        ref_tensor *t = &e->shapes[e->n_shapes++];
        memset(t, 0, sizeof *t);
        t->rank = tmp.shapes[0].rank;
        memcpy(t->dims, tmp.shapes[0].dims, sizeof t->dims);
        if (!end)
            break;
        p = end + 1;
    }
    return 1;
}

int ref_cli_input_option(const char *cmd, int argc, char **argv, int *i, ref_cli_inputs *ins)
{
    bool shape = !strcmp(argv[*i], "--shape"), input = !strcmp(argv[*i], "--input");
    if (!shape && !input)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "refengine %s: %s needs a value\n", cmd, argv[*i]);
        return -1;
    }
    const char *v = argv[++*i];
    if (shape)
        return parse_shapes(cmd, v, ins);
    const char *eq = strchr(v, '=');
    char name[128] = "";
    if (eq && (size_t)(eq - v) < sizeof name)
        snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
    ref_cli_input *e = entry(ins, name);
    if (!e) {
        fprintf(stderr, "refengine %s: at most %d inputs\n", cmd, REF_CLI_MAX_INPUTS);
        return -1;
    }
    e->pb_path = eq && name[0] ? eq + 1 : v;
    return 1;
}

int ref_cli_inputs_apply(const char *cmd, ref_cli_inputs *ins, const ref_model *m, ref_options *o)
{
    size_t ni = ref_model_n_inputs(m);
    for (int k = 0; k < ins->n; k++) {
        ref_cli_input *e = &ins->in[k];
        if (e->pb_path && !e->loaded) {
            ref_error err = {0};
            char *pb_name = NULL;
            if (ref_tensor_load_pb(e->pb_path, &e->pb, &pb_name, &err)) {
                fprintf(stderr, "refengine %s: %s\n", cmd, err.msg);
                return -1;
            }
            e->loaded = true;
            if (!e->name[0] && pb_name)
                snprintf(e->name, sizeof e->name, "%s", pb_name);
            ref_string_free(pb_name);
            bool known = false;
            for (size_t i = 0; i < ni; i++)
                known = known || !strcmp(e->name, ref_model_input_name(m, i));
            if (!known && (size_t)k < ni) /* a .pb named after nothing in the model: by position */
                snprintf(e->name, sizeof e->name, "%s", ref_model_input_name(m, (size_t)k));
            e->n_shapes = 1;
            e->shapes[0] = e->pb;
            e->shapes[0].data = NULL;
        }
        ref_error err = {0};
        if (e->n_shapes && ref_options_set_shape(o, e->name, &e->shapes[0], &err)) {
            fprintf(stderr, "refengine %s: %s\n", cmd, err.msg);
            return -1;
        }
        bool known = false;
        for (size_t i = 0; i < ni; i++)
            known = known || !strcmp(e->name, ref_model_input_name(m, i));
        if (!known) {
            fprintf(stderr, "refengine %s: the model has no input '%s'\n", cmd, e->name);
            return -1;
        }
    }
    return 0;
}

const ref_cli_input *ref_cli_inputs_find(const ref_cli_inputs *ins, const char *name)
{
    for (int k = 0; k < ins->n; k++)
        if (!strcmp(ins->in[k].name, name))
            return &ins->in[k];
    return NULL;
}

int ref_cli_inputs_cycle(const ref_cli_inputs *ins)
{
    int n = 1;
    for (int k = 0; k < ins->n; k++)
        if (ins->in[k].n_shapes > n)
            n = ins->in[k].n_shapes;
    return n;
}

void ref_cli_inputs_free(ref_cli_inputs *ins)
{
    for (int k = 0; k < ins->n; k++)
        if (ins->in[k].loaded)
            ref_tensor_data_free(&ins->in[k].pb);
    ins->n = 0;
}
