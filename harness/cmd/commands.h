/* commands.h: memleak-run's subcommands besides running a scenario, one file each (cmd_*.c).
 * A subcommand must never exit() itself: it returns the process exit code. */
#ifndef MLK_COMMANDS_H
#define MLK_COMMANDS_H

/* Each gets argv[0] = the subcommand's name. Exit codes: 0 ok, 1 a finding (compare: a regression), 2 usage or
 * input error, 3 internal error. */
int mlk_cmd_baseline(int argc, char **argv); /* baseline pin RUN [--branch B] [--db PATH] */
int mlk_cmd_compare(int argc, char **argv);  /* compare [--run ID|latest] [--baseline ID|auto] ... */
int mlk_cmd_history(int argc, char **argv);  /* history --config KEY --metric M [--step S] */
int mlk_cmd_report(int argc, char **argv);   /* report [--run ID] --out DIR */
int mlk_cmd_merge(int argc, char **argv);    /* merge OUT.db IN.db... */
int mlk_cmd_import_gbench(int argc, char **argv); /* import-gbench FILE.json [--commit C] [--db PATH] */

#endif
