/* engine_opts.h: the option values every plugin parses alike (on/off, bounded integers, one of a list, dim.NAME), so
 * that the same spelling is accepted and the same message given by ref's plugins, ORT, OpenCV and OpenVINO.
 * It must never know a plugin's keys or keep state: each call checks one value and fills the caller's storage. */
#ifndef ENGINE_OPTS_H
#define ENGINE_OPTS_H

#include <stdint.h>

#include "engine.h"

/* A symbolic dimension's value set by dim.NAME. */
typedef struct engine_opt_dim {
    char name[64];
    int64_t value;
} engine_opt_dim;

/* on|off (also true/false, yes/no, 1/0) into *out as 1 or 0. Fails with the plugin's invalid code, naming key. */
int engine_opt_bool(const char *key, const char *v, int invalid, int *out, engine_error *err);
/* A decimal integer in [lo, hi] into *out. Fails with invalid, naming key and the range. */
int engine_opt_int(const char *key, const char *v, int64_t lo, int64_t hi, int invalid, int64_t *out,
                   engine_error *err);
/* One of names[0..n) into *index. Fails with invalid, naming key and the names allowed. */
int engine_opt_enum(const char *key, const char *v, const char *const *names, int n, int invalid, int *index,
                    engine_error *err);
/* dim.NAME = v (an integer in [1, INT32_MAX]): replaces NAME's value in dims[0..*n), else appends it while fewer than
 * max are set. Fails with invalid naming the option (bad value, empty or long name, too many dims). */
int engine_opt_dim_set(engine_opt_dim *dims, int *n, int max, const char *name, const char *v, int invalid,
                       engine_error *err);

#endif
