/* probe.c: reads /proc/self/status with one pread into a stack buffer, resets VmHWM through clear_refs, and
 * adds rusage faults, clocks and the heap shim's counters. It must never allocate while sampling. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "allocators.h"
#include "probe.h"

struct mlk_probe {
    int status_fd;
    int fd_dir;        /* /proc/self/fd, read with getdents64 into a stack buffer; -1 when it cannot be opened */
    mlk_alloc_kind alloc; /* who serves malloc: without the shim, its own count is the heap figure */
    int clear_refs_fd; /* -1 when the kernel refuses it: peaks are then lifetime peaks */
    mlk_heap_get_stats_fn heap_stats;
    mlk_heap_reset_peak_fn heap_reset;
};

int mlk_probe_open(mlk_probe **out, mlk_error *err)
{
    mlk_probe *p = calloc(1, sizeof *p);
    if (!p)
        return mlk_fail(err, MLK_E_NOMEM, "probe: out of memory");
    p->status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (p->status_fd < 0) {
        int e = errno;
        free(p);
        return mlk_fail(err, MLK_E_IO, "probe: cannot open /proc/self/status: %s", strerror(e));
    }
    p->clear_refs_fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    p->fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char lib[512];
    mlk_allocator_detect(&p->alloc, lib, sizeof lib);
    p->heap_stats = (mlk_heap_get_stats_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_STATS_SYMBOL);
    p->heap_reset = (mlk_heap_reset_peak_fn)dlsym(RTLD_DEFAULT, MLK_HEAP_RESET_PEAK_SYMBOL);
    *out = p;
    return MLK_OK;
}

void mlk_probe_free(mlk_probe *p)
{
    if (!p)
        return;
    close(p->status_fd);
    if (p->clear_refs_fd >= 0)
        close(p->clear_refs_fd);
    if (p->fd_dir >= 0)
        close(p->fd_dir);
    free(p);
}

bool mlk_probe_has_heap(const mlk_probe *p) { return p->heap_stats != NULL; }

void mlk_probe_reset_peak(mlk_probe *p)
{
    if (p->clear_refs_fd >= 0 && pwrite(p->clear_refs_fd, "5", 1, 0) != 1) {
        close(p->clear_refs_fd); /* refused once, refused always: stop paying for the syscall */
        p->clear_refs_fd = -1;
    }
    if (p->heap_reset)
        p->heap_reset();
}

/* The value of one "Name:   123 kB" line. */
static int64_t number_after(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (*s++ - '0');
    return v;
}

/* One pass over the status text, filling the fields it knows (a table walk per line, no strstr per field). */
static void parse_status(const char *buf, mlk_mem *m)
{
    static const struct {
        const char *name;
        size_t len;
        size_t off;
    } fields[] = {
        {"VmPeak:", 7, offsetof(mlk_mem, vm_peak_kib)},   {"VmSize:", 7, offsetof(mlk_mem, vm_size_kib)},
        {"VmHWM:", 6, offsetof(mlk_mem, vm_hwm_kib)},     {"VmRSS:", 6, offsetof(mlk_mem, vm_rss_kib)},
        {"RssAnon:", 8, offsetof(mlk_mem, rss_anon_kib)}, {"RssFile:", 8, offsetof(mlk_mem, rss_file_kib)},
        {"RssShmem:", 9, offsetof(mlk_mem, rss_shmem_kib)}, {"Threads:", 8, offsetof(mlk_mem, threads)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *(int64_t *)((char *)m + fields[i].off) = -1;
    for (const char *line = buf; *line;) {
        if (line[0] == 'V' || line[0] == 'R' || line[0] == 'T')
            for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
                if (!strncmp(line, fields[i].name, fields[i].len)) {
                    *(int64_t *)((char *)m + fields[i].off) = number_after(line + fields[i].len);
                    break;
                }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
}

/* Open descriptors: entries of /proc/self/fd, less ".", ".." and the probe's own handle on the folder. getdents64
 * into a stack buffer: no DIR (readdir would allocate), a few microseconds for the tens of descriptors an engine
 * holds. -1 when the folder cannot be read. */
static int64_t count_fds(int dir)
{
    if (dir < 0 || lseek(dir, 0, SEEK_SET) < 0)
        return -1;
    char buf[4096];
    int64_t n = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, dir, buf, sizeof buf);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        for (long off = 0; off < got;) {
            const struct dirent64 *d = (const struct dirent64 *)(buf + off);
            if (d->d_name[0] != '.')
                n++;
            off += d->d_reclen;
        }
        /* The kernel fills the buffer while entries fit: room for another whole entry left over means the folder
         * is done, and the call that would return 0 is a syscall saved on every sample. */
        if ((size_t)got + sizeof(struct dirent64) <= sizeof buf)
            break;
    }
    return n > 0 ? n - 1 : 0;
}

static int64_t ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec; }

void mlk_probe_mark(mlk_probe *p, mlk_mem *m)
{
    (void)p;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    m->minflt = ru.ru_minflt;
    m->majflt = ru.ru_majflt;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    m->wall_ns = ns(&t);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    m->cpu_ns = ns(&t);
}

/* Tests only: reads left before mlk_probe_read fails (-1: never). */
static int64_t fail_after = -1;

void mlk_probe_fail_after(int64_t n) { fail_after = n; }

int mlk_probe_read(mlk_probe *p, mlk_mem *m)
{
    if (fail_after >= 0 && fail_after-- == 0)
        return -EIO;
    char buf[4096];
    ssize_t n = pread(p->status_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return n < 0 ? -errno : -EIO;
    buf[n] = '\0';
    parse_status(buf, m);
    m->fds = count_fds(p->fd_dir);
    mlk_probe_mark(p, m);
    m->have_heap = p->heap_stats != NULL;
    m->heap.shim_bytes = -1; /* a shim older than the member leaves it: not measured */
    if (m->have_heap)
        p->heap_stats(&m->heap);
    mlk_allocator_figures(p->alloc, !m->have_heap, &m->alloc_bytes, &m->alloc_held);
    return 0;
}
