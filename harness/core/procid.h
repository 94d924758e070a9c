/* procid.h: a process's identity that outlives its pid: pid, start time in clock ticks since boot (/proc/PID/stat
 * field 22), boot id, pid namespace and host, and whether the process it names is still alive. It must never treat a
 * reused pid as the process it once named, nor claim to know about a process it cannot see. */
#ifndef MLK_PROCID_H
#define MLK_PROCID_H

#include <stdint.h>

typedef struct mlk_proc_id {
    int64_t pid;
    int64_t start_ticks; /* the process's start, after boot (a new process on a reused pid has a later one) */
    char boot[96];       /* "<boot_id>/<pid namespace inode>": where pid and start_ticks mean something */
    char host[64];
} mlk_proc_id;

/* This process's identity. 0, or -errno when /proc cannot be read (start_ticks -1 then: never matched). */
int mlk_proc_self(mlk_proc_id *out);

typedef enum { MLK_PROC_GONE = 0, MLK_PROC_ALIVE = 1, MLK_PROC_UNKNOWN = 2 } mlk_proc_state;

/* Whether the process id names is still running: ALIVE when a process with its pid and start time runs in this
 * boot and pid namespace (a zombie is GONE); GONE when none does, or the same host has booted since; UNKNOWN when
 * it ran on another host or in another pid namespace, where this process cannot look. */
mlk_proc_state mlk_proc_alive(const mlk_proc_id *id);

#endif
