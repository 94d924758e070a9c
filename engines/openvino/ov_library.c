/* ov_library.c: loading OpenVINO's C library for engine_openvino.so: which file, which release, which functions; and
 * the element types of each release (the C API's enum lost a member in 2026.0). It must never call a function it did
 * not find in the library, nor trust an element type number without the release's shift. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ov_library.h"

#ifndef MLK_OV_CACHE_DIR
#error "MLK_OV_CACHE_DIR (fetch.sh's cache folder) must be defined by engines/openvino/CMakeLists.txt"
#endif
#ifndef MLK_OV_DEFAULT_VERSION
#error "MLK_OV_DEFAULT_VERSION (the release whose headers the plugin is built with) must be defined by CMake"
#endif

/* The header's element types and the ONNX dtype of each (TensorProto.DataType), one line per type. Releases before
 * 2026.0 number the enum from UNDEFINED = 0, so each of their values is one more than 2026's (DYNAMIC = 0). */
#define OV_ELEMS(X)                                                                                            \
    X(F32, 1) X(U8, 2) X(I8, 3) X(U16, 4) X(I16, 5) X(I32, 6) X(I64, 7) X(BOOLEAN, 9) X(F16, 10) X(F64, 11)     \
    X(U32, 12) X(U64, 13) X(BF16, 16)

/* 1 when the header numbers the enum from UNDEFINED (a pre-2026 header), so DYNAMIC is 1. */
#define OV_HEADER_HAS_UNDEFINED ((int)DYNAMIC == 1)
_Static_assert((int)DYNAMIC == 0 || (int)DYNAMIC == 1, "ov_element_type_e: DYNAMIC is neither 0 nor 1");

int32_t ov_library_onnx_dtype(const ov_library *lib, int elem)
{
    int e = elem - lib->elem_shift;
#define CASE_(t, onnx) if (e == (int)(t)) return onnx;
    OV_ELEMS(CASE_)
#undef CASE_
    return 0;
}

int ov_library_elem(const ov_library *lib, int32_t onnx_dtype)
{
#define CASE_(t, onnx) if (onnx_dtype == (onnx)) return (int)(t) + lib->elem_shift;
    OV_ELEMS(CASE_)
#undef CASE_
    return -1;
}

/* The release to load: option version, else $MLK_OPENVINO_VERSION (which keeps the release out of the cells' config
 * keys, so runs of several releases line up in memleak-run history as commits), else the default. */
static int wanted(const char *version, const char **out, engine_error *err)
{
    const char *env = getenv("MLK_OPENVINO_VERSION");
    if (version && *version) {
        *out = version;
        return 0;
    }
    if (!env || !*env) {
        *out = MLK_OV_DEFAULT_VERSION;
        return 0;
    }
    int rc = ov_release_parse(env, "MLK_OPENVINO_VERSION", NULL, err);
    if (!rc)
        *out = env;
    return rc;
}

int ov_library_path(const char *want, char *path, size_t len, engine_error *err)
{
    const char *v = NULL;
    int rc = wanted(want, &v, err);
    return rc ? rc : ov_release_library(v, MLK_OV_CACHE_DIR, path, len, err);
}

void ov_library_close(ov_library *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    lib->handle = NULL;
}

/* The release from the build number, "2026.4.1-22982-..." -> "2026.4.1". */
static int read_release(ov_library *lib, engine_error *err)
{
    ov_version_t v = {0};
    ov_status_e st = lib->fn.ov_get_openvino_version(&v);
    if (st != OK)
        return ov_fail(err, OV_E_LOAD, "load_engine: ov_get_openvino_version failed (status %d) in %s", (int)st,
                       lib->path);
    const char *b = v.buildNumber ? v.buildNumber : "";
    size_t n = strcspn(b, "-");
    snprintf(lib->release, sizeof lib->release, "%.*s", (int)(n < sizeof lib->release ? n : sizeof lib->release - 1),
             b);
    int rc = ov_release_parse(lib->release, "load_engine: the library's build number", &lib->release_code, err);
    if (rc)
        snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg), " (%s, in %s)", b, lib->path);
    lib->fn.ov_version_free(&v);
    return rc;
}

int ov_library_open(const ov_opts *o, ov_library *lib, engine_error *err)
{
    memset(lib, 0, sizeof *lib);
    const char *want = NULL;
    int rc = wanted(o->version, &want, err);
    if (rc || (rc = ov_release_library(want, MLK_OV_CACHE_DIR, lib->path, sizeof lib->path, err)))
        return rc;
    /* RTLD_LOCAL: OpenVINO's symbols stay out of the global scope; its own libraries find each other by $ORIGIN. */
    lib->handle = dlopen(lib->path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle)
        return ov_fail(err, OV_E_LOAD, "load_engine: cannot load %s: %s", lib->path, dlerror());
#define SYM_(f)                                                                                                      \
    if (!(*(void **)&lib->fn.f = dlsym(lib->handle, #f)))                                                            \
        return ov_fail(err, OV_E_LOAD, "load_engine: %s has no %s (OpenVINO %s): the plugin needs it", lib->path, #f, \
                       want);
    OV_FUNCS(SYM_)
#undef SYM_
    if ((rc = read_release(lib, err)))
        return rc;
    if (strcmp(lib->release, want))
        return ov_fail(err, OV_E_RELEASE, "load_engine: %s is OpenVINO %s, not %s as asked", lib->path, lib->release,
                       want);
    int lib_has_undefined = lib->release_code < 2026000000;
    lib->elem_shift = lib_has_undefined - OV_HEADER_HAS_UNDEFINED;
    return 0;
}
