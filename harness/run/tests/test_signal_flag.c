/* test_signal_flag.c: the flag a SIGINT/SIGTERM handler sets for the runner is a volatile sig_atomic_t (the only
 * type a handler may write, C11 7.14.1.1), checked at compile time, and a real signal sets it through a handler.
 * It must never pass with the flag declared as a plain or volatile int. */
#include <signal.h>
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

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
    mlk_run_interrupted = 0;
    CHECK(raise(SIGTERM) == 0);
    CHECK(mlk_run_interrupted == 1);
    return check_summary();
}
