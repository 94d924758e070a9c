/* ort_library.h: the ONNX Runtime library an engine_ort.so context runs on: which release, dlopened from where, and
 * the table of the C API it serves; and which OrtApi member came with which C API version.
 * It must never be included outside engines/ort, nor let a member past the library's api_version be read. */
#ifndef ORT_LIBRARY_H
#define ORT_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

#include <onnxruntime_c_api.h>

#include "ort_internal.h"

/* ORT_SINCE(m) is the C API version that added OrtApi member m (ort_internal.h's ORT_API_OF over its index);
 * ORT_HAS(lib, m) says whether the loaded library's table holds it. ort_library.c checks the header's boundaries. */
#define ORT_IDX(m) (offsetof(OrtApi, m) / sizeof(void *))
#define ORT_SINCE(m) ORT_API_OF(ORT_IDX(m))
#define ORT_HAS(lib, m) ((lib)->api_version >= ORT_SINCE(m))

typedef struct ort_library {
    void *handle;           /* dlopen handle of libonnxruntime */
    const OrtApi *api;      /* the table of C API api_version: never read a member newer than that */
    int api_version;        /* the highest API the library serves, capped at the header's ORT_API_VERSION */
    char release[32];       /* the library's GetVersionString(), "1.23.2" */
    int64_t release_code;   /* 1023002 for 1.23.2 (metric ort_release); 0 when the string is not 1.N.P */
} ort_library;

/* Open the release o asks for (option version, else $MLK_ORT_VERSION; $MLK_ORT_LIBRARY overrides the path; else the
 * release this plugin was built with), check it is that release, take its C API table and check o's options against
 * it. On failure *lib may hold a handle: ort_library_close it either way. ORT_E_LOAD, ORT_E_RELEASE, ... */
int ort_library_open(const ort_opts *o, ort_library *lib, engine_error *err);
void ort_library_close(ort_library *lib);

/* The file ort_library_open would load for release want (NULL: the default): $MLK_ORT_LIBRARY when set, else the
 * release's copy in fetch.sh's cache (ORT_E_RELEASE naming the fetch command when it is not there). */
int ort_library_path(const char *want, char *path, size_t len, engine_error *err);

#endif
