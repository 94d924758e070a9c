/* tool_lsan_worker.c: main of memleak-worker-lsan, the worker of `tool: lsan` cells: the worker sources built with
 * AddressSanitizer (tool.cmake), so LeakSanitizer checks the engine's heap when the worker exits. It must never do
 * anything but run one worker: memleak-run starts it exactly as it starts `memleak-run --worker`. */
#include <stdio.h>
#include <string.h>

#include "worker.h"

/* LeakSanitizer symbolizes its report at exit, after unload_engine has dlclosed the plugin: the engine's frames
 * would read "<unknown module>". Linked with -Wl,--wrap=dlclose, the worker's own dlclose keeps modules mapped. */
int __wrap_dlclose(void *handle);
int __wrap_dlclose(void *handle)
{
    (void)handle;
    return 0;
}

int main(int argc, char **argv)
{
    mlk_worker_args wa;
    if (argc < 2 || strcmp(argv[1], "--worker") || mlk_worker_parse(argc, argv, &wa)) {
        fprintf(stderr, "memleak-worker-lsan: started by memleak-run for tool: lsan cells (memleak-run --worker "
                        "arguments), not by hand\n");
        return MLK_WORKER_EXIT_USAGE;
    }
    return mlk_worker_run(&wa);
}
