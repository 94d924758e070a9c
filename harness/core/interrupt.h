/* interrupt.h: the interrupt flag (interrupt.c) and how long phases look at it: between chunks of work and while
 * waiting on a child, so that SIGINT or SIGTERM stop any phase within a second. It must never be set but by a handler. */
#ifndef MLK_INTERRUPT_H
#define MLK_INTERRUPT_H

#include <signal.h>

extern volatile sig_atomic_t mlk_run_interrupted;

#endif
