/* cli_util.c: /proc/self/status parsing, the monotonic clock, deterministic inputs and quantiles.
 * It must never allocate through the engine's hook: these are the measuring instruments. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"

int ref_cli_proc_mem(ref_proc_mem *out)
{
    int64_t *fields[] = {&out->vm_peak_kib, &out->vm_size_kib, &out->vm_hwm_kib, &out->vm_rss_kib,
                         &out->rss_anon_kib, &out->rss_file_kib, &out->rss_shmem_kib, &out->threads};
    static const char *const names[] = {"VmPeak:", "VmSize:", "VmHWM:", "VmRSS:",
                                        "RssAnon:", "RssFile:", "RssShmem:", "Threads:"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -errno;
    char line[256];
    while (fgets(line, sizeof line, f))
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            if (!strncmp(line, names[i], strlen(names[i])))
                *fields[i] = strtoll(line + strlen(names[i]), NULL, 10);
    fclose(f);
    return 0;
}

int ref_cli_reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, "5", 1);
    int e = errno;
    close(fd);
    return w == 1 ? 0 : -e;
}

int64_t ref_cli_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ref_cli_fill(ref_tensor *t, uint64_t seed)
{
    int64_t n = ref_tensor_numel(t);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&s);
        double u = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (t->dtype) {
        case REF_DT_FLOAT: ((float *)t->data)[i] = (float)u; break;
        case REF_DT_DOUBLE: ((double *)t->data)[i] = u; break;
        case REF_DT_INT64: ((int64_t *)t->data)[i] = (int64_t)(r & 3); break;
        case REF_DT_INT32: ((int32_t *)t->data)[i] = (int32_t)(r & 3); break;
        case REF_DT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(i & 1); break;
        default: memset((char *)t->data + (size_t)i * ref_dtype_size(t->dtype), 0, ref_dtype_size(t->dtype));
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ref_cli_quantile(double *v, int n, double q)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int lo = (int)pos;
    double frac = pos - lo;
    return lo + 1 < n ? v[lo] * (1 - frac) + v[lo + 1] * frac : v[lo];
}

int ref_cli_exit_status(int rc)
{
    switch (rc) {
    case REF_E_INVALID:
    case REF_E_PARSE:
    case REF_E_UNSUPPORTED:
    case REF_E_SHAPE:
    case REF_E_DYNAMIC:
    case REF_E_IO:
    case REF_E_NOTFOUND:
    case REF_E_RANGE:
        return 2;
    default:
        return 1;
    }
}
