/* cli_opts.h: engine options shared by the refengine subcommands (--threads, --mmap, --option K=V, ...).
 * It must never print usage itself: callers own their --help text. */
#ifndef REF_CLI_OPTS_H
#define REF_CLI_OPTS_H

#include "refengine.h"

/* If argv[*i] is an engine option, apply it to o (consuming its value too) and return 1; return 0 when it
 * is not one; on a bad value print "refengine CMD: message" and return -1. */
int ref_cli_engine_option(const char *cmd, int argc, char **argv, int *i, ref_options *o);

/* Help lines for the engine options. */
extern const char ref_cli_engine_help[];

#endif
