/* procid.c: process identity from /proc (stat's start time, the boot id, the pid namespace) and a liveness check
 * that a reused pid cannot fool. It must never signal the process it looks at: kill(pid, 0) says nothing of reuse. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procid.h"

/* State and start time (field 22) of /proc/PID/stat; the comm field may hold spaces and ')', so fields are counted
 * from its last ')'. 0, or -errno (-ENOENT: no such process). */
static int read_stat(int64_t pid, char *state, int64_t *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return -EINVAL;
    p++;
    long long v = -1;
    char st = '?';
    /* After ")": state is field 3; starttime is field 22, so 19 more fields lie between. */
    if (sscanf(p, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lld", &st, &v) != 2)
        return -EINVAL;
    *state = st;
    *start = v;
    return 0;
}

static void read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "re");
    out[0] = '\0';
    if (f) {
        if (fgets(out, (int)len, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
}

int mlk_proc_self(mlk_proc_id *out)
{
    memset(out, 0, sizeof *out);
    out->pid = getpid();
    out->start_ticks = -1;
    char boot[48];
    read_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    struct stat ns;
    unsigned long long ino = stat("/proc/self/ns/pid", &ns) == 0 ? (unsigned long long)ns.st_ino : 0;
    snprintf(out->boot, sizeof out->boot, "%s/%llu", boot[0] ? boot : "?", ino);
    if (gethostname(out->host, sizeof out->host) != 0)
        out->host[0] = '\0';
    out->host[sizeof out->host - 1] = '\0';
    char state;
    return read_stat(out->pid, &state, &out->start_ticks);
}

mlk_proc_state mlk_proc_alive(const mlk_proc_id *id)
{
    mlk_proc_id me;
    mlk_proc_self(&me);
    if (strcmp(id->boot, me.boot)) {
        /* Another boot id on this host: it booted since, and every process of then is gone. Another pid namespace
         * (same boot) or another host: its pids are not ours to read. */
        const char *slash = strchr(me.boot, '/');
        size_t boot_len = slash ? (size_t)(slash - me.boot) : strlen(me.boot);
        bool same_boot = !strncmp(id->boot, me.boot, boot_len) && id->boot[boot_len] == '/';
        return !same_boot && !strcmp(id->host, me.host) ? MLK_PROC_GONE : MLK_PROC_UNKNOWN;
    }
    char state;
    int64_t start;
    if (read_stat(id->pid, &state, &start) != 0)
        return MLK_PROC_GONE;
    if (start != id->start_ticks || state == 'Z' || state == 'X')
        return MLK_PROC_GONE; /* a new process on the old pid, or the owner dead and not yet reaped */
    return MLK_PROC_ALIVE;
}
