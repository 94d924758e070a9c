/* probe.c: reads /proc/self/status with one pread into a stack buffer, resets VmHWM through clear_refs, and
 * adds rusage faults, clocks and the heap shim's counters. It must never allocate while sampling. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

struct mlk_probe {
    int status_fd;
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

/* Value after "Name:" on the line starting at s, in kB. */
static int64_t field(const char *buf, const char *name)
{
    const char *s = strstr(buf, name);
    if (!s)
        return -1;
    s += strlen(name);
    while (*s == ' ' || *s == '\t')
        s++;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (*s++ - '0');
    return v;
}

static int64_t ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec; }

int mlk_probe_read(mlk_probe *p, mlk_mem *m)
{
    char buf[4096];
    ssize_t n = pread(p->status_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return n < 0 ? -errno : -EIO;
    buf[n] = '\0';
    m->vm_peak_kib = field(buf, "\nVmPeak:");
    m->vm_size_kib = field(buf, "\nVmSize:");
    m->vm_hwm_kib = field(buf, "\nVmHWM:");
    m->vm_rss_kib = field(buf, "\nVmRSS:");
    m->rss_anon_kib = field(buf, "\nRssAnon:");
    m->rss_file_kib = field(buf, "\nRssFile:");
    m->rss_shmem_kib = field(buf, "\nRssShmem:");
    m->threads = field(buf, "\nThreads:");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    m->minflt = ru.ru_minflt;
    m->majflt = ru.ru_majflt;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    m->wall_ns = ns(&t);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    m->cpu_ns = ns(&t);
    m->have_heap = p->heap_stats != NULL;
    if (m->have_heap)
        p->heap_stats(&m->heap);
    return 0;
}
