/* ov_release.c: which OpenVINO release the plugin drives: release strings, and where fetch.sh caches each release's
 * C library. It must never load OpenVINO (check_options runs without it) nor name a library it did not find: a release
 * not fetched is an error that says how to fetch it. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ov_internal.h"

/* A decimal number of 1 to max digits at *p, without a leading zero; advances *p. -1 when there is none. */
static long number(const char **p, int max)
{
    long v = 0;
    int n = 0;
    if ((*p)[0] == '0' && (*p)[1] >= '0' && (*p)[1] <= '9')
        return -1;
    while (**p >= '0' && **p <= '9' && n < max) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n && !(**p >= '0' && **p <= '9') ? v : -1;
}

int ov_release_parse(const char *s, const char *what, int64_t *code, engine_error *err)
{
    const char *p = s ? s : "";
    long year = number(&p, 4), minor = -1, patch = -1;
    if (year >= 0 && *p == '.' && (p++, (minor = number(&p, 3)) >= 0) && *p == '.')
        p++, patch = number(&p, 3);
    if (year < 2000 || minor < 0 || patch < 0 || *p)
        return ov_fail(err, OV_E_INVALID, "%s: '%s' is not an OpenVINO release such as 2024.6.0 (year.minor.patch)",
                       what, s ? s : "");
    if (code)
        *code = (int64_t)year * 1000000 + (int64_t)minor * 1000 + (int64_t)patch;
    return 0;
}

int ov_release_library(const char *version, const char *default_cache, char *lib, size_t len, engine_error *err)
{
    const char *env = getenv("MLK_OPENVINO_CACHE");
    const char *root = env && *env ? env : default_cache;
    char dir[1100], pattern[1200];
    snprintf(dir, sizeof dir, "%s/%s/libs", root, version);
    snprintf(pattern, sizeof pattern, "%s/libopenvino_c.so.*", dir);
    glob_t g;
    int grc = glob(pattern, 0, NULL, &g);
    if (grc == GLOB_NOSPACE)
        return ov_fail(err, OV_E_NOMEM, "option version: out of memory");
    if (grc || g.gl_pathc == 0) {
        if (!grc)
            globfree(&g);
        return ov_fail(err, OV_E_RELEASE, "option version: OpenVINO %s is not fetched (no libopenvino_c.so.* in %s); "
                       "fetch it with: %s%s%sengines/openvino/fetch.sh --versions %s", version, dir,
                       env && *env ? "MLK_OPENVINO_CACHE=" : "", env && *env ? env : "", env && *env ? " " : "",
                       version);
    }
    int rc = 0;
    if (g.gl_pathc > 1)
        rc = ov_fail(err, OV_E_RELEASE, "option version: %zu libopenvino_c.so.* in %s, expected one", g.gl_pathc, dir);
    else if (strlen(g.gl_pathv[0]) >= len)
        rc = ov_fail(err, OV_E_INVALID, "option version: the path %s is too long", g.gl_pathv[0]);
    else
        memcpy(lib, g.gl_pathv[0], strlen(g.gl_pathv[0]) + 1);
    globfree(&g);
    return rc;
}
