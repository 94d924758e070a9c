/* spawn.h: running helper programs (the model generator, git) with an argument vector, never a shell string.
 * It must never pass anything through /bin/sh: a path with spaces or quotes is only ever one argument. */
#ifndef MLK_SPAWN_H
#define MLK_SPAWN_H

#include <stddef.h>

#include "status.h"

/* Run argv[0] (searched in PATH when it has no '/') with argv, wait, and return its exit status through
 * *exit_code (128+signal when killed). stdout goes to out (up to len-1 bytes, NUL-terminated) when out is
 * non-NULL, else it is inherited. stderr is inherited unless quiet. Returns 0 when it ran, MLK_E_CHILD if it
 * could not be started, MLK_E_INTERRUPTED when mlk_run_interrupted was set while it ran (it is then killed). */
int mlk_spawn(const char *const *argv, char *out, size_t len, int quiet, int *exit_code, mlk_error *err);

#endif
