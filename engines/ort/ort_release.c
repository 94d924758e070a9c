/* ort_release.c: which ONNX Runtime release the plugin drives: release strings, where fetch.sh caches each release's
 * library, and what each option needs of the C API. It must never load ONNX Runtime (check_options runs without it)
 * nor name a library it did not find: a release not fetched is an error that says how to fetch it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ort_internal.h"

/* Options that call OrtApi members newer than ORT_API_MIN. Every release fetch.sh can fetch (1.10 on) serves the
 * first two; they matter for an older library given by MLK_ORT_LIBRARY. engine_ort.c asserts each api below against
 * the member's index in OrtApi, so this table cannot drift from the header. */
static const ort_need needs[] = {
    /* CreateArenaCfgV2 (API 8), CreateAndRegisterAllocator (5), then UnregisterAllocator (9) at unload_engine */
    {"arena_extend_strategy", 9, "UnregisterAllocator"},
    /* the run option memory.enable_memory_arena_shrinkage goes in through AddRunConfigEntry (8) */
    {"arena_shrinkage", 8, "AddRunConfigEntry"},
    /* mmap=off hands ORT the external-data files' bytes; without external data it needs only CreateSessionFromArray
     * (1), so this one is checked at compile_model, where the model is known */
    {"mmap=off with external data", 18, "AddExternalInitializersFromFilesInMemory"},
};

const ort_need *ort_needs(size_t *n)
{
    *n = sizeof needs / sizeof needs[0];
    return needs;
}

const ort_need *ort_need_find(const char *option)
{
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        if (!strcmp(needs[i].option, option))
            return &needs[i];
    return NULL;
}

/* A decimal number of 1 to 3 digits at *p, without a leading zero; advances *p. -1 when there is none. */
static long number(const char **p)
{
    long v = 0;
    int n = 0;
    if ((*p)[0] == '0' && (*p)[1] >= '0' && (*p)[1] <= '9')
        return -1;
    while (**p >= '0' && **p <= '9' && n < 3) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n && !(**p >= '0' && **p <= '9') ? v : -1;
}

int ort_release_parse(const char *s, const char *what, int *api, int64_t *code, engine_error *err)
{
    const char *p = s ? s : "";
    long major = number(&p), minor = -1, patch = -1;
    if (major >= 0 && *p == '.' && (p++, (minor = number(&p)) >= 0) && *p == '.')
        p++, patch = number(&p);
    if (major != 1 || minor < 0 || patch < 0 || *p)
        return ort_fail(err, ORT_E_INVALID, "%s: '%s' is not an ONNX Runtime 1.x release such as 1.23.2 "
                        "(major.minor.patch)", what, s ? s : "");
    if (minor < ORT_API_MIN)
        return ort_fail(err, ORT_E_INVALID, "%s: '%s': the ORT plugin needs C API %d or later (ONNX Runtime 1.%d; "
                        "engines/ort/fetch.sh fetches 1.%d.0 and later)", what, s, ORT_API_MIN, ORT_API_MIN,
                        ORT_RELEASE_FIRST_FETCHABLE);
    if (api)
        *api = (int)minor;
    if (code)
        *code = (int64_t)major * 1000000 + (int64_t)minor * 1000 + (int64_t)patch;
    return 0;
}

int ort_opts_check_api(const ort_opts *o, int api, const char *release, engine_error *err)
{
    /* The options the loaded library must serve; mmap=off is checked at compile_model (it depends on the model).
     * With the arena off, neither the extend strategy nor shrinkage is used (engine_ort.c ignores them). */
    const char *set[2];
    int n = 0;
    if (o->arena && o->extend_strategy >= 0)
        set[n++] = "arena_extend_strategy";
    if (o->arena && o->arena_shrinkage)
        set[n++] = "arena_shrinkage";
    for (int i = 0; i < n; i++) {
        const ort_need *need = ort_need_find(set[i]);
        if (need && need->api > api)
            return ort_fail(err, ORT_E_RELEASE, "option %s needs C API %d (ONNX Runtime 1.%d or later: %s); ONNX "
                            "Runtime %s serves C API %d", need->option, need->api, need->api, need->member,
                            release, api);
    }
    return 0;
}

/* fetch.sh's own cache folder in this environment (MLK_ORT_CACHE, else XDG_CACHE_HOME or HOME's .cache). */
static void fetch_default_dir(char *out, size_t len)
{
    const char *c = getenv("MLK_ORT_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (c && *c)
        snprintf(out, len, "%s", c);
    else if (x && *x)
        snprintf(out, len, "%s/memleak/ort", x);
    else
        snprintf(out, len, "%s/.cache/memleak/ort", h ? h : "");
}

int ort_release_library(const char *version, const char *default_lib, const char *default_version, char *path,
                        size_t len, engine_error *err)
{
    /* default_lib is <cache>/lib/libonnxruntime.so.1: the cache is two folders up. */
    char root[1024];
    int n = snprintf(root, sizeof root, "%s", default_lib);
    char *slash = n > 0 && (size_t)n < sizeof root ? strrchr(root, '/') : NULL;
    if (slash)
        *slash = '\0';
    slash = slash ? strrchr(root, '/') : NULL;
    if (!slash)
        return ort_fail(err, ORT_E_INVALID, "option version: cannot tell the cache folder from %s", default_lib);
    *slash = '\0';
    struct stat st;
    char want[1200];
    snprintf(want, sizeof want, "%s/%s/lib/libonnxruntime.so.1", root, version);
    const char *found = !stat(want, &st) && S_ISREG(st.st_mode) ? want
                        : !strcmp(version, default_version) ? default_lib
                                                            : NULL;
    if (!found) {
        char fetch_dir[1024];
        fetch_default_dir(fetch_dir, sizeof fetch_dir);
        int same = !strcmp(fetch_dir, root);
        return ort_fail(err, ORT_E_RELEASE, "option version: ONNX Runtime %s is not fetched (no %s); fetch it with: "
                        "%s%s%sengines/ort/fetch.sh --versions %s", version, want, same ? "" : "MLK_ORT_CACHE=",
                        same ? "" : root, same ? "" : " ", version);
    }
    if (strlen(found) >= len)
        return ort_fail(err, ORT_E_INVALID, "option version: the path %s is too long", found);
    memcpy(path, found, strlen(found) + 1);
    return 0;
}
