/* sample.c: the worker→parent line format of samples: tab-separated integers, "-" for not measured.
 * It must never accept a malformed line as a sample: decode checks every field. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

/* Fields after "S": phase iteration step wall cpu minflt majflt, the 8 /proc figures, heap x4 or "-", then the open
 * descriptors, the shim's mapped bytes and mappings, the allocator's own bytes in use and bytes held, and the most
 * mapped within the step, each a number or "-", the iteration's input shape ("-" without a shape schedule), and the
 * shim's own resident bytes. */
#define N_FIELDS 27

int mlk_sample_encode(const mlk_sample *s, char *buf, size_t len)
{
    const mlk_mem *m = &s->m;
    int n = snprintf(buf, len,
                     "S\t%d\t%d\t%d\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld",
                     s->phase, s->iteration, s->step, (long long)s->wall_ns, (long long)s->cpu_ns,
                     (long long)s->minflt, (long long)s->majflt, (long long)m->vm_rss_kib, (long long)m->vm_hwm_kib,
                     (long long)m->vm_size_kib, (long long)m->vm_peak_kib, (long long)m->rss_anon_kib,
                     (long long)m->rss_file_kib, (long long)m->rss_shmem_kib, (long long)m->threads);
    if (n < 0 || (size_t)n >= len)
        return -1;
    int k;
    if (m->have_heap)
        k = snprintf(buf + n, len - (size_t)n, "\t%lld\t%lld\t%lld\t%lld", (long long)m->heap.live_bytes,
                     (long long)m->heap.peak_bytes, (long long)m->heap.n_allocs, (long long)m->heap.n_frees);
    else
        k = snprintf(buf + n, len - (size_t)n, "\t-\t-\t-\t-");
    if (k < 0 || (size_t)(n + k) >= len)
        return -1;
    n += k;
    /* Figures that may be missing each on their own: "-" keeps "not measured" apart from 0. */
    const int64_t opt[] = {m->fds, m->have_heap ? m->heap.mapped_bytes : -1, m->have_heap ? m->heap.n_mappings : -1,
                           m->alloc_bytes, m->alloc_held, m->have_heap ? m->heap.mapped_peak_bytes : -1,
                           s->shape > 0 ? s->shape : -1, m->have_heap ? m->heap.shim_bytes : -1};
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++) {
        k = opt[i] >= 0 ? snprintf(buf + n, len - (size_t)n, "\t%lld", (long long)opt[i])
                        : snprintf(buf + n, len - (size_t)n, "\t-");
        if (k < 0 || (size_t)(n + k) >= len)
            return -1;
        n += k;
    }
    if ((size_t)n + 1 >= len)
        return -1;
    buf[n++] = '\n';
    buf[n] = '\0';
    return n;
}

int mlk_sample_decode(const char *line, mlk_sample *s)
{
    if (line[0] != 'S' || line[1] != '\t')
        return -1;
    long long v[N_FIELDS];
    bool present[N_FIELDS];
    const char *p = line + 2;
    for (int i = 0; i < N_FIELDS; i++) {
        char *end;
        if (*p == '-' && (p[1] == '\t' || p[1] == '\n' || p[1] == '\0')) {
            present[i] = false;
            v[i] = 0;
            end = (char *)p + 1;
        } else {
            v[i] = strtoll(p, &end, 10);
            if (end == p)
                return -1;
            present[i] = true;
        }
        if (i < N_FIELDS - 1 && *end != '\t')
            return -1;
        if (i == N_FIELDS - 1 && *end != '\n' && *end != '\0')
            return -1;
        p = end + 1;
    }
    for (int i = 0; i < 15; i++)
        if (!present[i])
            return -1;
    if (v[0] < 0 || v[0] >= MLK_PHASE_COUNT || v[2] < 0 || v[2] >= MLK_STEP_ANY_COUNT)
        return -1;
    memset(s, 0, sizeof *s);
    s->phase = (int)v[0];
    s->iteration = (int)v[1];
    s->step = (int)v[2];
    s->wall_ns = v[3];
    s->cpu_ns = v[4];
    s->minflt = v[5];
    s->majflt = v[6];
    mlk_mem *m = &s->m;
    m->vm_rss_kib = v[7];
    m->vm_hwm_kib = v[8];
    m->vm_size_kib = v[9];
    m->vm_peak_kib = v[10];
    m->rss_anon_kib = v[11];
    m->rss_file_kib = v[12];
    m->rss_shmem_kib = v[13];
    m->threads = v[14];
    m->have_heap = present[15] && present[16] && present[17] && present[18];
    if (m->have_heap) {
        m->heap.live_bytes = v[15];
        m->heap.peak_bytes = v[16];
        m->heap.n_allocs = v[17];
        m->heap.n_frees = v[18];
    }
    m->fds = present[19] ? v[19] : -1;
    m->heap.mapped_bytes = present[20] ? v[20] : -1;
    m->heap.n_mappings = present[21] ? v[21] : -1;
    m->alloc_bytes = present[22] ? v[22] : -1;
    m->alloc_held = present[23] ? v[23] : -1;
    m->heap.mapped_peak_bytes = present[24] ? v[24] : -1;
    if (present[25] && (v[25] < 1 || v[25] > INT32_MAX))
        return -1;
    s->shape = present[25] ? (int)v[25] : 0;
    m->heap.shim_bytes = present[26] ? v[26] : -1;
    return 0;
}
