/* inject.h: the engine's documented fault-injection hooks (leak, retention, crash, thread leak), fired
 * at the start of each API step. It must never fire unless an inject_* option asks for it. */
#ifndef REF_INJECT_H
#define REF_INJECT_H

#include "refengine.h"

/* Count one call of step s (process-wide) and apply every inject_* option of o that targets s:
 * leak inject_leak_bytes (touched, never freed), grow the retention cache toward its cap, abort()
 * on the inject_crash_at-th call, or start a thread that is never joined. o NULL does nothing.
 * Returns REF_E_NOMEM (with a message) only when an injected allocation or thread itself fails. */
int ref_inject_step(const ref_options *o, ref_step s, ref_error *err);

/* Bytes the retention cache holds now (for tests and reports). */
int64_t ref_inject_retained_bytes(void);

#endif
