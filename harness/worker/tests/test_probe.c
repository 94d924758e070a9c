/* test_probe.c: the probe reads every /proc figure, sees memory it touches, and a reset makes VmHWM the step's
 * own peak. It must never depend on timing. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mlk_check.h"
#include "probe.h"

int main(void)
{
    mlk_probe *p = NULL;
    mlk_error err = {0};
    CHECK_OK(mlk_probe_open(&p, &err), &err);
    mlk_mem a, b, c;
    CHECK(mlk_probe_read(p, &a) == 0);
    CHECK(a.vm_rss_kib > 0 && a.vm_hwm_kib >= a.vm_rss_kib && a.vm_size_kib >= a.vm_rss_kib);
    CHECK(a.rss_anon_kib > 0 && a.rss_file_kib >= 0 && a.threads >= 1 && a.wall_ns > 0);
    /* Touch 64 MiB, unmap it: the peak stays until a reset brings it back to the current RSS. (mmap, not
     * malloc: an allocator, or ASan's quarantine, may keep freed memory resident.) */
    size_t big = 64u << 20;
    char *x = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(x != MAP_FAILED);
    memset(x, 1, big);
    CHECK(mlk_probe_read(p, &b) == 0);
    CHECK(b.rss_anon_kib - a.rss_anon_kib >= 60 * 1024);
    CHECK(b.minflt - a.minflt >= 60 * 256); /* at least one fault per 4 KiB page */
    munmap(x, big);
    mlk_probe_reset_peak(p);
    CHECK(mlk_probe_read(p, &c) == 0);
    CHECK(c.vm_hwm_kib < b.vm_hwm_kib - 32 * 1024);
    CHECK(c.cpu_ns > a.cpu_ns && c.wall_ns >= b.wall_ns);
    mlk_probe_free(p);
    mlk_probe_free(NULL);
    return check_summary();
}
