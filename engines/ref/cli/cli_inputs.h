/* cli_inputs.h: input shapes and data given on the command line (--shape NAME=1x3x64x64[,1x3x32x32...] and
 * --input [NAME=]FILE.pb) for "refengine plan" and "refengine run": compile plans for the first shape of each,
 * run cycles through the list. It must never guess a name: inputs without one map by position. */
#ifndef REF_CLI_INPUTS_H
#define REF_CLI_INPUTS_H

#include <stdbool.h>

#include "refengine.h"

#define REF_CLI_MAX_INPUTS 16
#define REF_CLI_MAX_SHAPES 64

typedef struct ref_cli_input {
    char name[128];       /* "" until resolved (an --input whose .pb names no tensor maps by position) */
    int n_shapes;         /* --shape: run cycles through shapes[0..n_shapes) */
    ref_tensor shapes[REF_CLI_MAX_SHAPES];
    const char *pb_path;  /* --input: the data comes from this file */
    ref_tensor pb;        /* its tensor (data on the heap) once loaded */
    bool loaded;
} ref_cli_input;

typedef struct ref_cli_inputs {
    int n;
    ref_cli_input in[REF_CLI_MAX_INPUTS];
} ref_cli_inputs;

/* If argv[*i] is --shape or --input, record it (consuming its value) and return 1; 0 when it is neither; -1 after
 * printing "refengine CMD: why" for a bad value. */
int ref_cli_input_option(const char *cmd, int argc, char **argv, int *i, ref_cli_inputs *ins);
/* Load the .pb files, name unnamed entries by position among m's inputs, and set shape.NAME in o to each input's
 * first shape. Returns 0, or -1 after printing why. */
int ref_cli_inputs_apply(const char *cmd, ref_cli_inputs *ins, const ref_model *m, ref_options *o);
/* The entry for input name, or NULL. */
const ref_cli_input *ref_cli_inputs_find(const ref_cli_inputs *ins, const char *name);
/* The longest shape list (1 when nothing cycles). */
int ref_cli_inputs_cycle(const ref_cli_inputs *ins);
void ref_cli_inputs_free(ref_cli_inputs *ins);

extern const char ref_cli_inputs_help[];

#endif
