/* ov_library.h: the OpenVINO C library an engine_openvino.so context runs on: which release, dlopened from where, and
 * the table of the C API functions the plugin calls, each typed by the header it was built against.
 * It must never be included outside engines/openvino, nor call into OpenVINO but through this table. */
#ifndef OV_LIBRARY_H
#define OV_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

#include <openvino/c/openvino.h>

#include "ov_internal.h"

/* Every C API function the plugin calls (all exported by 2024.3.0, 2024.6.0 and 2026.4.1 libopenvino_c), which
 * ov_library_open checks by name, so a release lacking one fails at load_engine naming it. */
#define OV_FUNCS(X)                                                                                                 \
    X(ov_get_openvino_version) X(ov_version_free) X(ov_get_last_err_msg) X(ov_get_error_info) X(ov_free)           \
    X(ov_core_create) X(ov_core_free) X(ov_core_set_property) X(ov_core_get_property) X(ov_core_read_model)          \
    X(ov_core_compile_model)                                                                                        \
    X(ov_model_free) X(ov_model_inputs_size) X(ov_model_const_input_by_index) X(ov_model_reshape_input_by_name)       \
    X(ov_port_get_any_name) X(ov_port_get_partial_shape) X(ov_port_get_element_type) X(ov_output_const_port_free)     \
    X(ov_partial_shape_create) X(ov_partial_shape_free)                                                              \
    X(ov_compiled_model_inputs_size) X(ov_compiled_model_input_by_index) X(ov_compiled_model_outputs_size)           \
    X(ov_compiled_model_output_by_index) X(ov_compiled_model_create_infer_request) X(ov_compiled_model_get_property) \
    X(ov_compiled_model_free) X(ov_infer_request_set_input_tensor_by_index) X(ov_infer_request_infer)               \
    X(ov_infer_request_get_output_tensor_by_index) X(ov_infer_request_free) X(ov_tensor_create_from_host_ptr)        \
    X(ov_tensor_get_shape) X(ov_tensor_get_element_type) X(ov_tensor_data) X(ov_tensor_free) X(ov_shape_create)       \
    X(ov_shape_free)

typedef struct ov_fns {
#define OV_FN_MEMBER(f) __typeof__(f) *f;
    OV_FUNCS(OV_FN_MEMBER)
#undef OV_FN_MEMBER
} ov_fns;

typedef struct ov_library {
    void *handle;          /* dlopen handle of libopenvino_c.so.<tag> */
    ov_fns fn;
    char path[1200];       /* the file loaded */
    char release[32];      /* "2026.4.1", from ov_get_openvino_version's build number */
    int64_t release_code;  /* 2026004001 (metric openvino_release) */
    int elem_shift;        /* the library's ov_element_type_e value minus the header's, for the same type */
} ov_library;

/* Open the release o asks for (option version, else $MLK_OPENVINO_VERSION, else the default this plugin was built
 * with) from fetch.sh's cache
 * ($MLK_OPENVINO_CACHE overrides it), take every function of OV_FUNCS and check the library is that release. On
 * failure *lib may hold a handle: ov_library_close it either way. OV_E_LOAD, OV_E_RELEASE. */
int ov_library_open(const ov_opts *o, ov_library *lib, engine_error *err);
void ov_library_close(ov_library *lib);

/* The library file ov_library_open would load for release want (NULL or "": $MLK_OPENVINO_VERSION, else the default);
 * OV_E_INVALID for a malformed $MLK_OPENVINO_VERSION, OV_E_RELEASE naming the fetch command when it is not fetched. */
int ov_library_path(const char *want, char *path, size_t len, engine_error *err);

/* ONNX dtype of a library element type, 0 when there is none; and back, -1 when there is none. */
int32_t ov_library_onnx_dtype(const ov_library *lib, int elem);
int ov_library_elem(const ov_library *lib, int32_t onnx_dtype);

#endif
