/* plugin.c: dlopen an engine plugin and check its table against engines/engine.h's append-only rule.
 * It must never read past the plugin's struct_size, nor accept a table without the mandatory calls. */
#include <dlfcn.h>
#include <string.h>

#include "files.h"
#include "plugin.h"

/* The calls a pipeline cannot run without; every other member is optional (NULL = absent). */
static const struct {
    size_t off;
    const char *name;
} mandatory[] = {
#define M(f) {offsetof(engine_api, f), #f}
    M(option_keys), M(check_options), M(load), M(unload), M(read_model), M(release_model), M(compile),
    M(release_compiled), M(n_inputs), M(input_info), M(create_request), M(set_input), M(infer), M(release_request),
#undef M
};

static int refuse(mlk_plugin *p, mlk_error *err, const char *path, const char *why, const char *what)
{
    mlk_plugin_deinit(p);
    return mlk_fail(err, MLK_E_ENGINE, "%s: not a compatible engine plugin: %s%s", path, why, what);
}

int mlk_plugin_init(mlk_plugin *p, const char *path, mlk_error *err)
{
    memset(p, 0, sizeof *p);
    /* dlopen would block in open() on a FIFO, and read a device; a bare name is looked up by dlopen itself, and a
     * missing file is left to its message */
    int rc = strchr(path, '/') ? mlk_check_regular(path, "engine plugin", true, err) : MLK_OK;
    if (rc)
        return rc;
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *e = dlerror();
        return mlk_fail(err, MLK_E_ENGINE, "%s", e ? e : path);
    }
    engine_get_api_fn get = (engine_get_api_fn)dlsym(p->dl, ENGINE_ENTRY_SYMBOL);
    if (!get)
        return refuse(p, err, path, "no symbol ", ENGINE_ENTRY_SYMBOL);
    const engine_api *src = get();
    if (!src)
        return refuse(p, err, path, ENGINE_ENTRY_SYMBOL, " returned NULL");
    if (src->abi_version != ENGINE_ABI_VERSION) {
        unsigned version = src->abi_version; /* read before dlclose unmaps it */
        mlk_plugin_deinit(p);
        return mlk_fail(err, MLK_E_ENGINE, "%s: not a compatible engine plugin: ABI version %u, the harness speaks %u",
                        path, version, ENGINE_ABI_VERSION);
    }
    if (src->struct_size < MLK_PLUGIN_MIN_SIZE)
        return refuse(p, err, path, "its table is shorter than ABI 1's mandatory calls", "");
    /* Copy only what the plugin has; what it was built without stays NULL (engine.h: members are appended). */
    size_t n = src->struct_size < sizeof p->api ? src->struct_size : sizeof p->api;
    memcpy(&p->api, src, n);
    for (size_t i = 0; i < sizeof mandatory / sizeof *mandatory; i++) {
        void *fn;
        memcpy(&fn, (const char *)&p->api + mandatory[i].off, sizeof fn);
        if (!fn)
            return refuse(p, err, path, "a mandatory call is NULL: ", mandatory[i].name);
    }
    return MLK_OK;
}

void mlk_plugin_deinit(mlk_plugin *p)
{
    if (p && p->dl)
        dlclose(p->dl);
    if (p)
        memset(p, 0, sizeof *p);
}
