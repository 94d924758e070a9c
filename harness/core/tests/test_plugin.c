/* test_plugin.c: the one plugin loader: a plugin built against a shorter, older table loads with its missing members
 * NULL; a missing mandatory call, another ABI version, a missing file and a library without the entry are refused
 * with the file named. It must never pass when the loader reads past a plugin's struct_size (ASan would catch it). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mlk_check.h"
#include "plugin.h"

/* The fixtures are built next to this test's executable. */
static void fixture(const char *name, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/%s", n > 0 ? self : ".", name);
}

int main(void)
{
    char path[PATH_MAX + 64];
    mlk_error err = {0};
    mlk_plugin p;

    fixture("plugin_fixture_short.so", path, sizeof path);
    CHECK_OK(mlk_plugin_init(&p, path, &err), &err);
    CHECK(p.dl != NULL && p.api.struct_size < sizeof(engine_api) && p.api.struct_size == MLK_PLUGIN_MIN_SIZE);
    /* Members appended after the plugin was built read as absent, not as whatever lies past its table. */
    CHECK(p.api.metrics == NULL && p.api.n_outputs == NULL && p.api.output == NULL);
    engine_ctx *ctx = NULL;
    engine_error ee = {0};
    CHECK(p.api.load && p.api.load(NULL, 0, &ctx, &ee) == 0 && ctx != NULL);
    CHECK(!strcmp(p.api.name, "fixture"));
    mlk_plugin_deinit(&p);
    CHECK(p.dl == NULL);
    mlk_plugin_deinit(&p); /* twice is fine */
    mlk_plugin_deinit(NULL);

    fixture("plugin_fixture_hole.so", path, sizeof path);
    CHECK(mlk_plugin_init(&p, path, &err) == MLK_E_ENGINE);
    CHECK(strstr(err.msg, "plugin_fixture_hole.so") && strstr(err.msg, "infer"));
    CHECK(p.dl == NULL);

    fixture("plugin_fixture_abi.so", path, sizeof path);
    CHECK(mlk_plugin_init(&p, path, &err) == MLK_E_ENGINE);
    CHECK(strstr(err.msg, "ABI version 2"));

    fixture("no_such_plugin.so", path, sizeof path);
    CHECK(mlk_plugin_init(&p, path, &err) == MLK_E_ENGINE && strstr(err.msg, "no_such_plugin.so"));

    /* A shared library that is not a plugin at all. */
    CHECK(mlk_plugin_init(&p, "libm.so.6", &err) == MLK_E_ENGINE && strstr(err.msg, "engine_get_api"));
    return check_summary();
}
