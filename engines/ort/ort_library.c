/* ort_library.c: loading the ONNX Runtime library for engine_ort.so: which file, which release, which C API table;
 * and, checked at compile time against the header, which OrtApi member each C API version brought.
 * It must never read an OrtApi member newer than ORT_API_MIN before the library's api_version is known. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ort_library.h"

#ifndef MLK_ORT_LIBRARY
#error "MLK_ORT_LIBRARY (absolute path of libonnxruntime.so.1) must be defined by engines/ort/CMakeLists.txt"
#endif
#ifndef MLK_ORT_DEFAULT_VERSION
#error "MLK_ORT_DEFAULT_VERSION (the release of MLK_ORT_LIBRARY, from fetch.sh's STAMP) must be defined by CMake"
#endif

/* ---- Which OrtApi member came with which C API version ----
 * ORT_SINCE(m) is the C API version that added member m (ort_internal.h's ORT_API_OF over its index). The header
 * in the cache is API 29; a library older than that has a shorter table, so a member newer than the library's API
 * must never be read. The members called on every load (ORT_ALWAYS) are at most ORT_API_MIN (5); the others are
 * gated where they are called:
 *   CreateAndRegisterAllocator 5, ReleaseArenaCfg 6, CreateArenaCfgV2 8, UnregisterAllocator 9: arena_extend_strategy
 *   AddRunConfigEntry 8: arena_shrinkage
 *   AddExternalInitializersFromFilesInMemory 18: mmap=off on a model with external data
 *   CreateAllocator 5, ReleaseAllocator 5, GetKeyValuePairs 22, ReleaseKeyValuePairs 22, AllocatorGetStats 23: metrics
 * (GetKeyValuePairs and ReleaseKeyValuePairs carry "since 1.22" in the header, AllocatorGetStats "since 1.23",
 * AddExternalInitializersFromFilesInMemory "since 1.18"; the header names no version for members up to API 10.) */

/* The header agrees with upstream's version boundaries (the last member of each C API version), so ORT_API_OF reads
 * the header right: a member at a boundary belongs to that version, the next one to the next. */
#define ORT_BOUNDARY(m, v, next) \
    _Static_assert(ORT_SINCE(m) == (v) && ORT_API_OF(ORT_IDX(m) + 1) == (next), #m " ends C API " #v);
ORT_BOUNDARY(ReleaseCustomOpDomain, 1, 2)
ORT_BOUNDARY(ReleaseModelMetadata, 2, 3)
ORT_BOUNDARY(AddFreeDimensionOverrideByName, 3, 4)
ORT_BOUNDARY(ReleaseAvailableProviders, 4, 5)
ORT_BOUNDARY(SetGlobalSpinControl, 5, 6)
ORT_BOUNDARY(ReleaseArenaCfg, 6, 7)
ORT_BOUNDARY(GetCurrentGpuDeviceId, 7, 8)
ORT_BOUNDARY(CreateSessionFromArrayWithPrepackedWeightsContainer, 8, 9)
ORT_BOUNDARY(GetSparseTensorIndices, 9, 10)
ORT_BOUNDARY(SynchronizeBoundOutputs, 10, 11)
ORT_BOUNDARY(SessionOptionsAppendExecutionProvider_MIGraphX, 11, 12)
ORT_BOUNDARY(ReleaseKernelInfo, 12, 13)
ORT_BOUNDARY(ReleaseCANNProviderOptions, 13, 14)
ORT_BOUNDARY(GetSessionConfigEntry, 14, 15)
ORT_BOUNDARY(GetBuildInfoString, 15, 16)
ORT_BOUNDARY(KernelContext_GetResource, 16, 17)
ORT_BOUNDARY(SessionOptionsAppendExecutionProvider_OpenVINO_V2, 17, 18)
ORT_BOUNDARY(AddExternalInitializersFromFilesInMemory, 18, 20)
ORT_BOUNDARY(SetEpDynamicOptions, 20, 22)
ORT_BOUNDARY(GetEpApi, 22, 23)
ORT_BOUNDARY(CreateExternalInitializerInfo, 23, 0)

/* Every member called whatever the options: none may be newer than ORT_API_MIN. */
#define ORT_ALWAYS(X)                                                                                              \
    X(GetErrorCode) X(GetErrorMessage) X(ReleaseStatus) X(CreateEnv) X(ReleaseEnv) X(EnableTelemetryEvents)         \
    X(DisableTelemetryEvents) X(CreateCpuMemoryInfo) X(ReleaseMemoryInfo) X(CreateSessionOptions)                   \
    X(ReleaseSessionOptions) X(SetIntraOpNumThreads) X(SetInterOpNumThreads) X(SetSessionExecutionMode)             \
    X(EnableCpuMemArena) X(DisableCpuMemArena) X(EnableMemPattern) X(DisableMemPattern)                             \
    X(SetSessionGraphOptimizationLevel) X(AddSessionConfigEntry) X(AddFreeDimensionOverrideByName) X(CreateSession) \
    X(CreateSessionFromArray) X(ReleaseSession) X(GetAllocatorWithDefaultOptions) X(AllocatorFree)                  \
    X(SessionGetInputCount) X(SessionGetOutputCount) X(SessionGetInputName) X(SessionGetOutputName)                 \
    X(SessionGetInputTypeInfo) X(CastTypeInfoToTensorInfo) X(GetTensorElementType) X(GetDimensionsCount)            \
    X(GetDimensions) X(GetSymbolicDimensions) X(ReleaseTypeInfo) X(CreateTensorWithDataAsOrtValue) X(ReleaseValue)  \
    X(CreateIoBinding) X(ReleaseIoBinding) X(BindInput) X(BindOutputToDevice) X(RunWithBinding)                     \
    X(GetBoundOutputValues) X(CreateRunOptions) X(ReleaseRunOptions) X(GetTensorTypeAndShape)                       \
    X(GetTensorMutableData) X(ReleaseTensorTypeAndShapeInfo)
#define ORT_ASSERT_ALWAYS(m) \
    _Static_assert(ORT_SINCE(m) >= 1 && ORT_SINCE(m) <= ORT_API_MIN, #m " is past ORT_API_MIN");
ORT_ALWAYS(ORT_ASSERT_ALWAYS)

/* The options' needs (ort_release.c's table) match the members they call. */
_Static_assert(ORT_SINCE(UnregisterAllocator) == 9 && ORT_SINCE(CreateArenaCfgV2) <= 9 &&
               ORT_SINCE(CreateAndRegisterAllocator) <= 9 && ORT_SINCE(ReleaseArenaCfg) <= 9,
               "arena_extend_strategy needs C API 9 (ort_release.c)");
_Static_assert(ORT_SINCE(AddRunConfigEntry) == 8, "arena_shrinkage needs C API 8 (ort_release.c)");
_Static_assert(ORT_SINCE(AddExternalInitializersFromFilesInMemory) == 18, "mmap=off with external data: C API 18");
_Static_assert(ORT_SINCE(AllocatorGetStats) == 23 && ORT_SINCE(GetKeyValuePairs) <= 23 &&
               ORT_SINCE(ReleaseKeyValuePairs) <= 23 && ORT_SINCE(CreateAllocator) <= 23 &&
               ORT_SINCE(ReleaseAllocator) <= 23, "the arena metrics need C API 23");

/* Prefix an error message already in err with what ("load_engine: "). */
static int prefixed(engine_error *err, const char *what, int rc)
{
    if (err && rc) {
        size_t p = strlen(what), m = strnlen(err->msg, sizeof err->msg - 1);
        if (p + m >= sizeof err->msg)
            m = sizeof err->msg - 1 - p; /* the message's tail goes */
        memmove(err->msg + p, err->msg, m);
        memcpy(err->msg, what, p);
        err->msg[p + m] = '\0';
    }
    return rc;
}

/* The table of the highest C API the library serves, capped at the header's: from the release's own number when
 * its version string is 1.N.P (GetApi prints a line on stderr for every version it refuses, so it is asked once),
 * else from the header's version down. NULL when it serves none from ORT_API_MIN on. */
static const OrtApi *negotiate(const OrtApiBase *base, const char *release, int *api_version)
{
    int own = 0;
    if (!ort_release_parse(release, "", &own, NULL, NULL)) {
        int v = own < ORT_API_VERSION ? own : ORT_API_VERSION;
        const OrtApi *a = base->GetApi((uint32_t)v);
        if (a) {
            *api_version = v;
            return a;
        }
    }
    for (int v = ORT_API_VERSION; v >= ORT_API_MIN; v--) {
        const OrtApi *a = base->GetApi((uint32_t)v);
        if (a) {
            *api_version = v;
            return a;
        }
    }
    return NULL;
}

int ort_library_path(const char *want, char *path, size_t len, engine_error *err)
{
    const char *over = getenv("MLK_ORT_LIBRARY");
    if (over && *over) {
        snprintf(path, len, "%s", over);
        return 0;
    }
    if (want)
        return ort_release_library(want, MLK_ORT_LIBRARY, MLK_ORT_DEFAULT_VERSION, path, len, err);
    snprintf(path, len, "%s", MLK_ORT_LIBRARY);
    return 0;
}

int ort_library_open(const ort_opts *o, ort_library *c, engine_error *err)
{
    memset(c, 0, sizeof *c);
    int rc = ort_telemetry_env(o->telemetry, err);
    if (rc)
        return rc;
    const char *env = getenv("MLK_ORT_VERSION");
    const char *want = o->version[0] ? o->version : env && *env ? env : NULL;
    const char *asked_by = o->version[0] ? "option version" : "MLK_ORT_VERSION";
    char path[1200];
    if ((want && (rc = ort_release_parse(want, asked_by, NULL, NULL, err))) ||
        (rc = ort_library_path(want, path, sizeof path, err)))
        return prefixed(err, "load_engine: ", rc);
    c->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!c->handle)
        return ort_fail(err, ORT_E_LOAD, "load_engine: cannot load ONNX Runtime: %s; fetch it with "
                        "engines/ort/fetch.sh and rebuild", dlerror());
    const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(c->handle, "OrtGetApiBase");
    const OrtApiBase *base = get_base ? get_base() : NULL;
    if (!base)
        return ort_fail(err, ORT_E_LOAD, "load_engine: %s has no OrtGetApiBase: not ONNX Runtime", path);
    snprintf(c->release, sizeof c->release, "%s", base->GetVersionString());
    if (want && strcmp(want, c->release))
        return ort_fail(err, ORT_E_RELEASE, "load_engine: %s %s asked for, but %s is ONNX Runtime %s%s", asked_by,
                        want, path, c->release,
                        getenv("MLK_ORT_LIBRARY") && *getenv("MLK_ORT_LIBRARY")
                            ? " (MLK_ORT_LIBRARY overrides the release: unset it, or ask for its release)"
                            : "; fetch it again with engines/ort/fetch.sh");
    c->api = negotiate(base, c->release, &c->api_version);
    if (!c->api)
        return ort_fail(err, ORT_E_LOAD, "load_engine: %s (ONNX Runtime %s) serves no C API from %d to %d; the ORT "
                        "plugin needs ONNX Runtime 1.%d or later", path, c->release, ORT_API_MIN, ORT_API_VERSION,
                        ORT_API_MIN);
    if (ort_release_parse(c->release, "", NULL, &c->release_code, NULL))
        c->release_code = 0;
    return prefixed(err, "load_engine: ", ort_opts_check_api(o, c->api_version, c->release, err));
}

void ort_library_close(ort_library *lib)
{
    if (lib && lib->handle)
        dlclose(lib->handle);
    if (lib)
        lib->handle = NULL;
}
