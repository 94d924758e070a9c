/* test_sample.c: the worker→parent line format: encode/decode round trips exactly, "-" means not measured,
 * and malformed lines are refused. It must never accept a line a worker could not have written. */
#include <stdio.h>
#include <string.h>

#include "mlk_check.h"
#include "sample.h"

static mlk_sample example(bool heap)
{
    mlk_sample s;
    memset(&s, 0, sizeof s);
    s.phase = MLK_PHASE_MEASURE;
    s.iteration = 41;
    s.step = MLK_STEP_INFER;
    s.wall_ns = 123456789;
    s.cpu_ns = 98765;
    s.minflt = 17;
    s.majflt = 0;
    mlk_mem *m = &s.m;
    m->vm_rss_kib = 51200;
    m->vm_hwm_kib = 52000;
    m->vm_size_kib = 900000;
    m->vm_peak_kib = 910000;
    m->rss_anon_kib = 40000;
    m->rss_file_kib = 11200;
    m->rss_shmem_kib = 0;
    m->threads = 3;
    m->fds = heap ? 12 : -1; /* measured or not, independently of the heap */
    m->alloc_bytes = heap ? -1 : 777216;
    m->alloc_held = heap ? 3000000 : -1;
    m->have_heap = heap;
    m->heap.live_bytes = heap ? 9007199254740993LL : 0; /* above 2^53: must survive as an integer */
    m->heap.peak_bytes = heap ? 9007199254741000LL : 0;
    m->heap.n_allocs = heap ? 1234567 : 0;
    m->heap.n_frees = heap ? 1234560 : 0;
    m->heap.mapped_bytes = heap ? 52428800 : -1;
    m->heap.n_mappings = heap ? 9 : -1;
    m->heap.mapped_peak_bytes = heap ? 589299712 : -1;
    m->heap.shim_bytes = heap ? 1982464 : -1;
    s.shape = heap ? 7 : 0; /* an iteration under a shape schedule, and none */
    return s;
}

static bool same(const mlk_sample *a, const mlk_sample *b)
{
    const mlk_mem *x = &a->m, *y = &b->m;
    return a->phase == b->phase && a->iteration == b->iteration && a->step == b->step && a->wall_ns == b->wall_ns &&
           a->cpu_ns == b->cpu_ns && a->shape == b->shape && a->minflt == b->minflt && a->majflt == b->majflt &&
           x->vm_rss_kib == y->vm_rss_kib && x->vm_hwm_kib == y->vm_hwm_kib && x->vm_size_kib == y->vm_size_kib &&
           x->vm_peak_kib == y->vm_peak_kib && x->rss_anon_kib == y->rss_anon_kib &&
           x->rss_file_kib == y->rss_file_kib && x->rss_shmem_kib == y->rss_shmem_kib && x->threads == y->threads &&
           x->fds == y->fds && x->alloc_bytes == y->alloc_bytes && x->alloc_held == y->alloc_held && x->have_heap == y->have_heap &&
           (!x->have_heap || (x->heap.mapped_bytes == y->heap.mapped_bytes && x->heap.n_mappings == y->heap.n_mappings &&
                              x->heap.mapped_peak_bytes == y->heap.mapped_peak_bytes &&
                              x->heap.shim_bytes == y->heap.shim_bytes)) &&
           (!x->have_heap || (x->heap.live_bytes == y->heap.live_bytes && x->heap.peak_bytes == y->heap.peak_bytes &&
                              x->heap.n_allocs == y->heap.n_allocs && x->heap.n_frees == y->heap.n_frees));
}

int main(void)
{
    char line[512];
    for (int heap = 0; heap <= 1; heap++) {
        mlk_sample s = example(heap), back;
        int n = mlk_sample_encode(&s, line, sizeof line);
        CHECK(n > 0 && line[n - 1] == '\n');
        CHECK(mlk_sample_decode(line, &back) == 0);
        CHECK(same(&s, &back));
        CHECK(heap || strstr(line, "\t-\t-\t-\t-\t-\t-\t-\t777216\t-\t-\t-\t-\n") != NULL);
        CHECK(!heap || strstr(line, "\t12\t52428800\t9\t-\t3000000\t589299712\t7\t1982464\n") != NULL);
    }
    mlk_sample s = example(true);
    CHECK(mlk_sample_encode(&s, line, 20) == -1); /* too small: refused, not cut */
    mlk_sample out;
    CHECK(mlk_sample_decode("S\t2\t41\n", &out) == -1);
    CHECK(mlk_sample_decode("X\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", &out) == -1);
    CHECK(mlk_sample_decode("S\t9\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", &out) == -1);
    CHECK(mlk_sample_decode("S\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\tx\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", &out) == -1);
    CHECK(mlk_sample_decode("S\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\textra\n", &out) == -1);
    CHECK(mlk_sample_decode("S\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", &out) == 0);
    CHECK(!out.m.have_heap && out.iteration == 41 && out.m.fds == -1 && out.m.heap.mapped_bytes == -1 &&
          out.m.heap.shim_bytes == -1);
    /* A line of 26 fields (a worker from before the shim's own bytes were sent) is refused, not misread. */
    CHECK(mlk_sample_decode("S\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", &out) == -1);
    /* Descriptors are measured without the heap shim too. */
    CHECK(mlk_sample_decode("S\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t7\t-\t-\t-\t-\t-\t-\t-\n", &out) == 0);
    CHECK(!out.m.have_heap && out.m.fds == 7 && out.shape == 0);
    /* A shape number is 1 or more: 0 is how a sample says it has none, and is never written. */
    CHECK(mlk_sample_decode("S\t2\t41\t4\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t0\t-\n", &out) == -1);
    for (int st = 0; st < MLK_STEP_ANY_COUNT; st++)
        CHECK(mlk_any_step_from_name(mlk_any_step_name(st)) == st);
    for (int ph = 0; ph < MLK_PHASE_COUNT; ph++)
        CHECK(mlk_phase_from_name(mlk_phase_name(ph)) == ph);
    return check_summary();
}
