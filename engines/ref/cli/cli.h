/* cli.h: the refengine command-line tool's subcommands, one file each.
 * A subcommand must never exit() itself: it returns main's exit code (0 ok, 1 failure, 2 usage). */
#ifndef REF_CLI_H
#define REF_CLI_H

/* Each takes argv[0] = subcommand name and returns the process exit code. */
int ref_cli_run(int argc, char **argv);
int ref_cli_plan(int argc, char **argv);
int ref_cli_gen(int argc, char **argv);
int ref_cli_conformance(int argc, char **argv);

#endif
