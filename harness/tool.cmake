# harness/tool.cmake: tool cells (`tool: memcheck | massif | lsan`): expat for memcheck's XML, the AddressSanitizer
# worker and engine plugin that lsan cells run, the unsanitized leaky program the valgrind tests run, and the
# suppressions file. Included at the end of harness/CMakeLists.txt.
pkg_check_modules(EXPAT REQUIRED IMPORTED_TARGET expat)
target_link_libraries(mlk_core PUBLIC PkgConfig::EXPAT)
install(FILES ${CMAKE_SOURCE_DIR}/ci/valgrind.supp DESTINATION ${CMAKE_INSTALL_DATADIR}/memleak)

# libmemleak_keep.so: dlclose does nothing in the workers of valgrind cells (see tool_keep.c). Preloaded into the
# process under test, so never sanitized, like the heap shim.
add_library(memleak_keep SHARED ${CMAKE_CURRENT_SOURCE_DIR}/tool_keep.c)
target_compile_options(memleak_keep PRIVATE -fno-sanitize=all)
target_link_options(memleak_keep PRIVATE -fno-sanitize=all)
install(TARGETS memleak_keep LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# memleak-worker-lsan and engine_ref_lsan.so: the worker's own sources and the whole reference engine compiled
# again with -fsanitize=address, in this tree, so `tool: lsan` needs no second build. On by default wherever the
# compiler links ASan; it roughly doubles the engine's build time.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=address)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=address)
check_c_source_compiles("int main(void) { return 0; }" MLK_HAVE_ASAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
option(MLK_LSAN_WORKER "Build memleak-worker-lsan and engine_ref_lsan.so (AddressSanitizer) for tool: lsan cells"
       ${MLK_HAVE_ASAN})
if(MLK_LSAN_WORKER)
  set(MLK_LSAN_FLAGS -fsanitize=address -fno-omit-frame-pointer)
  set(H ${CMAKE_CURRENT_SOURCE_DIR})
  add_executable(memleak-worker-lsan ${H}/tool_lsan_worker.c ${H}/worker.c ${H}/worker_args.c ${H}/probe.c
                                     ${H}/sample.c ${H}/inputs.c ${H}/allocators.c)
  target_compile_options(memleak-worker-lsan PRIVATE ${MLK_LSAN_FLAGS})
  # --wrap=dlclose: see tool_lsan_worker.c (LSan names the engine's frames at exit).
  target_link_options(memleak-worker-lsan PRIVATE -fsanitize=address -Wl,--wrap=dlclose)
  target_link_libraries(memleak-worker-lsan PRIVATE mlk_core)
  install(TARGETS memleak-worker-lsan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

  set(REF ${CMAKE_SOURCE_DIR}/engines/ref)
  file(GLOB_RECURSE MLK_REF_LSAN_SOURCES CONFIGURE_DEPENDS ${REF}/src/*.c)
  file(GLOB_RECURSE MLK_REF_LSAN_AVX2 CONFIGURE_DEPENDS ${REF}/src/*_avx2.c)
  # Source properties are per directory: engines/ref's AVX2 flags do not reach targets defined here.
  set_source_files_properties(${MLK_REF_LSAN_AVX2} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
  add_library(engine_ref_lsan MODULE ${REF}/plugin/engine_ref.c ${MLK_REF_LSAN_SOURCES})
  target_include_directories(engine_ref_lsan PRIVATE ${CMAKE_SOURCE_DIR}/engines ${REF}/include ${REF}/src)
  target_compile_options(engine_ref_lsan PRIVATE ${MLK_LSAN_FLAGS})
  target_link_options(engine_ref_lsan PRIVATE -fsanitize=address -Wl,--version-script=${REF}/plugin/engine_ref.map
                      -Wl,-Bsymbolic)
  target_link_libraries(engine_ref_lsan PRIVATE Threads::Threads m)
  set_target_properties(engine_ref_lsan PROPERTIES PREFIX "" LINK_DEPENDS ${REF}/plugin/engine_ref.map)
  install(TARGETS engine_ref_lsan LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/memleak)
endif()

# tool_leaky: a program with every leak kind at known sizes, run under valgrind by test_tool_valgrind (XML sums
# against the text LEAK SUMMARY). Never sanitized: valgrind cannot run an ASan binary.
add_executable(tool_leaky ${CMAKE_CURRENT_SOURCE_DIR}/tests/tool_fixtures/leaky.c)
target_compile_options(tool_leaky PRIVATE -fno-sanitize=all -O0 -g)
target_link_options(tool_leaky PRIVATE -fno-sanitize=all)
set_target_properties(tool_leaky PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
