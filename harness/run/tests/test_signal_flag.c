/* test_signal_flag.c: the flag a SIGINT/SIGTERM handler sets for the runner is a volatile sig_atomic_t (the only
 * type a handler may write, C11 7.14.1.1), and a real signal sets it through a handler. On x86-64 glibc sig_atomic_t
 * is int, so the type check below only bites where they differ; the declaration's text is checked as well.
 * It must never pass with the flag declared without sig_atomic_t. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlk_check.h"
#include "runner.h"

_Static_assert(_Generic(&mlk_run_interrupted, volatile sig_atomic_t *: 1, default: 0),
               "mlk_run_interrupted must be volatile sig_atomic_t");

static void on_signal(int sig)
{
    (void)sig;
    mlk_run_interrupted = 1;
}

/* runner.h, as written: the declaration names sig_atomic_t (the compiler cannot tell it from int here). */
static void check_declaration(void)
{
    const char *src = getenv("MLK_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/harness/run/runner.h", src && src[0] ? src : ".");
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[512];
    bool found = false;
    while (f && fgets(line, sizeof line, f))
        found = found || (strstr(line, "extern volatile sig_atomic_t mlk_run_interrupted;") == line);
    if (f)
        fclose(f);
    CHECK(found);
}

int main(void)
{
    check_declaration();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
    mlk_run_interrupted = 0;
    CHECK(raise(SIGTERM) == 0);
    CHECK(mlk_run_interrupted == 1);
    return check_summary();
}
