/* test_tool_massif.c: massif's output into the heap peak: a captured compile-step peak (its figures, its sites
 * sorted with the engine's frames, and the tree adding up), frames without names or with objects only, a file
 * without a peak, and files that are not massif's. It must never need valgrind. */
#include "mlk_check.h"
#include "tool.h"
#include "tool_test.h"

static void captured(void)
{
    char path[1200];
    tool_fixture("massif_compile.out", path, sizeof path);
    mlk_heap_peak p;
    mlk_error err = {0};
    CHECK_OK(mlk_massif_parse(path, &p, &err), &err);
    CHECK(p.found && p.snapshot == 26 && p.n_snapshots == 90 && str_eq(p.time_unit, "i"));
    CHECK(p.heap_bytes == 27600363 && p.extra_bytes == 20389 && p.stacks_bytes == 0);
    CHECK(p.n_sites >= 3);
    /* every byte of the peak is in a site or in massif's below-threshold lump */
    int64_t sum = p.below_threshold_bytes;
    for (int i = 0; i < p.n_sites; i++) {
        sum += p.sites[i].bytes;
        CHECK(i == 0 || p.sites[i].bytes <= p.sites[i - 1].bytes);
        CHECK(p.sites[i].n_frames > 0);
    }
    CHECK(sum == p.heap_bytes);
    if (p.n_sites >= 2) {
        /* the packed weights of compile, then the model's initializers from read_model */
        const mlk_peak_site *s = &p.sites[0];
        CHECK(s->bytes == 11665728 && str_eq(s->frames[0].fn, "alloc_with") && s->frames[0].line == 63);
        CHECK(s->n_frames > 7 && str_eq(s->frames[1].fn, "ref_gemm_state_pack") && str_eq(s->frames[7].fn, "compile"));
        CHECK(str_eq(s->frames[7].file, "engine_ref.c"));
        CHECK(p.sites[1].bytes == 11653800 && str_eq(p.sites[1].frames[1].fn, "ref_model_heap_alloc"));
    }
    mlk_heap_peak_free(&p);
    CHECK(p.sites == NULL && p.n_sites == 0);
}

static int parse(const char *text, mlk_heap_peak *p, mlk_error *err)
{
    return mlk_massif_parse_buf(text, strlen(text), "massif.out", p, err);
}

static void small(void)
{
    const char *text = "desc: (none)\ncmd: ./a\ntime_unit: ms\n#-----------\nsnapshot=0\n#-----------\ntime=0\n"
                       "mem_heap_B=0\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\n#-----------\n"
                       "snapshot=1\n#-----------\ntime=12\nmem_heap_B=3000\nmem_heap_extra_B=40\nmem_stacks_B=0\n"
                       "heap_tree=peak\n"
                       "n3: 3000 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
                       " n2: 2000 0x4001: ???\n"
                       "  n0: 1500 0x4002: make_cache (in /opt/lib/libx.so)\n"
                       "  n0: 500 0x4003: std::vector<int>::push_back(int const&) (vector.h:11)\n"
                       " n0: 900 0x4004: ??? (in /opt/lib/liby.so)\n"
                       " n0: 100 in 3 places, all below massif's threshold (1.00%)\n"
                       "#-----------\nsnapshot=2\n#-----------\ntime=20\nmem_heap_B=10\nmem_heap_extra_B=6\n"
                       "mem_stacks_B=0\nheap_tree=detailed\nn0: 10 (heap allocation functions) malloc/new/new[], "
                       "--alloc-fns, etc.\n";
    mlk_heap_peak p;
    mlk_error err = {0};
    CHECK_OK(parse(text, &p, &err), &err);
    CHECK(p.found && p.snapshot == 1 && p.n_snapshots == 3 && p.time == 12 && str_eq(p.time_unit, "ms"));
    CHECK(p.heap_bytes == 3000 && p.extra_bytes == 40 && p.below_threshold_bytes == 100);
    CHECK(p.n_sites == 3);
    if (p.n_sites == 3) {
        CHECK(p.sites[0].bytes == 1500 && p.sites[0].n_frames == 2);
        CHECK(!p.sites[0].frames[0].fn && str_eq(p.sites[0].frames[1].fn, "make_cache"));
        CHECK(str_eq(p.sites[0].frames[1].obj, "/opt/lib/libx.so") && !p.sites[0].frames[1].file);
        CHECK(p.sites[1].bytes == 900 && !p.sites[1].frames[0].fn && str_eq(p.sites[1].frames[0].obj, "/opt/lib/liby.so"));
        CHECK(p.sites[2].bytes == 500 && str_eq(p.sites[2].frames[1].fn, "std::vector<int>::push_back(int const&)"));
        CHECK(str_eq(p.sites[2].frames[1].file, "vector.h") && p.sites[2].frames[1].line == 11);
    }
    mlk_heap_peak_free(&p);

    CHECK_OK(parse("desc: x\ncmd: y\ntime_unit: i\n#-----------\nsnapshot=0\n#-----------\ntime=0\nmem_heap_B=0\n"
                   "mem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\n", &p, &err), &err);
    CHECK(!p.found && p.n_snapshots == 1 && p.n_sites == 0);
    mlk_heap_peak_free(&p);
}

static void refused(void)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "massif.out:1: expected massif's output"},
        {"<valgrindoutput>", "massif.out:1: expected massif's output"},
        {"desc: x\nsnapshot=0\nheap_tree=peak\n", "massif.out:3: the peak snapshot has no mem_heap_B"},
        {"desc: x\nsnapshot=0\nmem_heap_B=1\nmem_heap_extra_B=0\nheap_tree=peak\nn1: x (heap allocation)\n",
         "massif.out:6: expected a peak tree node"},
        {"desc: x\nsnapshot=0\nmem_heap_B=1\nmem_heap_extra_B=0\nheap_tree=peak\nn1: 1 (heap)\n n0: 1 garbage\n",
         "massif.out:7: expected '0xADDR: FUNCTION (FILE:LINE)'"},
        {"desc: x\nsnapshot=0\nmem_heap_B=1\nmem_heap_extra_B=0\nheap_tree=peak\nsnapshot=1\nmem_heap_B=1\n"
         "mem_heap_extra_B=0\nheap_tree=peak\n", "massif.out:9: a second heap_tree=peak"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mlk_heap_peak p;
        mlk_error err = {0};
        CHECK(parse(cases[i].text, &p, &err) == MLK_E_PARSE);
        if (!strstr(err.msg, cases[i].msg))
            fprintf(stderr, "case %zu: message '%s', expected '%s'\n", i, err.msg, cases[i].msg);
        CHECK(strstr(err.msg, cases[i].msg) != NULL);
        mlk_heap_peak_free(&p);
    }
    mlk_heap_peak p;
    mlk_error err = {0};
    CHECK(mlk_massif_parse("/nonexistent/massif.out", &p, &err) == MLK_E_IO);
    mlk_heap_peak_free(&p);
}

int main(void)
{
    captured();
    small();
    refused();
    return check_summary();
}
