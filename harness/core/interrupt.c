/* interrupt.c: the one flag memleak-run's SIGINT/SIGTERM handler sets, read by every long phase (hashing, model
 * generation, cells). It must never be anything but a volatile sig_atomic_t: the only type a handler may write. */
#include "interrupt.h"

volatile sig_atomic_t mlk_run_interrupted;
