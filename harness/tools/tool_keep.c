/* tool_keep.c: libmemleak_keep.so, preloaded into the workers of valgrind cells (tool: memcheck | massif): dlclose
 * does nothing, so every module stays mapped until the worker exits. It must never do anything else: it is loaded
 * into the process under test.
 *
 * Why: valgrind reads a leak's or a peak site's stack at exit, after unload_engine. massif then names an unloaded
 * engine's frames "???" (--keep-debuginfo does not reach its heap tree), and memcheck calls memory that only an
 * unloaded module's globals pointed to "definitely lost", so planted retention (still reachable while the engine
 * is loaded) would read as a leak. The lsan worker gets the same effect from -Wl,--wrap=dlclose. */
int dlclose(void *handle);
__attribute__((visibility("default"))) int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
