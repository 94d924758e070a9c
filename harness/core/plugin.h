/* plugin.h: the one loader of engine plugins (engines/engine.h): dlopen, the entry point, the ABI checks, and a copy
 * of the plugin's table in which every member the plugin was built without is NULL. It must never call a member
 * past the plugin's struct_size: a plugin built against an older, shorter engine.h keeps loading. */
#ifndef MLK_PLUGIN_H
#define MLK_PLUGIN_H

#include <stddef.h>

#include "engine.h"
#include "status.h"

/* The members every plugin has had since ABI 1 (load .. release_request): a table shorter than this, or with one of
 * them NULL, is refused. Members after it are optional and appended over time. */
#define MLK_PLUGIN_MIN_SIZE offsetof(engine_api, metrics)

/* A loaded plugin, on storage the caller owns (the worker opens one inside a measured step, so no allocation of our
 * own happens here). api is a copy of the plugin's table widened to this harness's engine_api: members past the
 * plugin's struct_size are NULL. */
typedef struct mlk_plugin {
    void *dl;
    engine_api api;
} mlk_plugin;

/* dlopen path and check its table. On failure p is zeroed and err names the file and what was wrong: dlopen's
 * message, no engine_get_api, an ABI version other than ENGINE_ABI_VERSION, a table shorter than
 * MLK_PLUGIN_MIN_SIZE or a mandatory member missing (MLK_E_ENGINE). */
int mlk_plugin_init(mlk_plugin *p, const char *path, mlk_error *err);
/* dlclose; a zeroed or failed p is fine. */
void mlk_plugin_deinit(mlk_plugin *p);

#endif
