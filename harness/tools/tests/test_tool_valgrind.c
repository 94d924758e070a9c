/* test_tool_valgrind.c: runs valgrind memcheck twice on tool_leaky (every leak kind at known sizes), once with
 * --xml=yes and once with its text output, and checks that the per-kind sums of the parsed XML are the text LEAK
 * SUMMARY that XML mode drops, and the sizes leaky.c plants. It must never pass without valgrind: it skips (77). */
#include <inttypes.h>
#include <unistd.h>

#include "mlk_check.h"
#include "spawn.h"
#include "tool.h"
#include "tool_test.h"

static int64_t figure(const char *s)
{
    int64_t v = 0;
    for (; *s; s++)
        if (*s != ',')
            v = v * 10 + (*s - '0');
    return v;
}

/* "==123==    definitely lost: 1,234 bytes in 5 blocks" -> 1234, 5. */
static bool summary_line(const char *text, const char *what, int64_t *bytes, int64_t *blocks)
{
    const char *p = strstr(text, what);
    char a[32], b[32];
    if (!p || sscanf(p + strlen(what), " %31[0-9,] bytes in %31[0-9,] blocks", a, b) != 2)
        return false;
    *bytes = figure(a);
    *blocks = figure(b);
    return true;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

int main(void)
{
    mlk_error err = {0};
    int code = -1;
    const char *probe[] = {"valgrind", "--version", NULL};
    char version[128];
    if (mlk_spawn(probe, version, sizeof version, 1, &code, &err) || code) {
        printf("SKIP: valgrind is not installed (Debian package valgrind)\n");
        return 77;
    }
    const char *bin = getenv("MLK_BIN_DIR");
    char prog[1200], dir[] = "/tmp/mlk-test-valgrind-XXXXXX", xml[128], txt[128], xml_arg[160], txt_arg[160];
    snprintf(prog, sizeof prog, "%s/../tests/tool_leaky", bin ? bin : ".");
    if (!bin || access(prog, X_OK)) {
        printf("SKIP: tool_leaky not built (%s)\n", prog);
        return 77;
    }
    CHECK(mkdtemp(dir) != NULL);
    snprintf(xml, sizeof xml, "%s/out.xml", dir);
    snprintf(txt, sizeof txt, "%s/out.txt", dir);
    snprintf(xml_arg, sizeof xml_arg, "--xml-file=%s", xml);
    snprintf(txt_arg, sizeof txt_arg, "--log-file=%s", txt);
    const char *run_xml[] = {"valgrind", "--leak-check=full", "--show-leak-kinds=all", "--xml=yes", xml_arg, prog,
                             NULL};
    const char *run_txt[] = {"valgrind", "--leak-check=full", "--show-leak-kinds=all", txt_arg, prog, NULL};
    CHECK_OK(mlk_spawn(run_xml, NULL, 0, 1, &code, &err), &err);
    CHECK(code == 0);
    CHECK_OK(mlk_spawn(run_txt, NULL, 0, 1, &code, &err), &err);
    CHECK(code == 0);

    mlk_leak_report r;
    CHECK_OK(mlk_memcheck_parse(xml, &r, &err), &err);
    CHECK(r.complete && r.n_other_errors == 0);
    int64_t bytes[MLK_LEAK_KIND_COUNT], blocks[MLK_LEAK_KIND_COUNT], engine = 0;
    const char *harness[] = {"memleak-run", NULL};
    mlk_leaks_attribute(&r, harness);
    mlk_leaks_sum(&r, bytes, blocks, &engine);

    const char *text = slurp(txt);
    static const char *const names[MLK_LEAK_KIND_COUNT] = {"definitely lost:", "indirectly lost:", "possibly lost:",
                                                           "still reachable:"};
    /* leaky.c: 3 x 100 dropped and a 32-byte list head (definitely), owning two 32-byte nodes (indirectly), a block
     * known only by an interior pointer (possibly), one a global points at (reachable) */
    static const int64_t want_bytes[MLK_LEAK_KIND_COUNT] = {332, 64, 64, 77};
    static const int64_t want_blocks[MLK_LEAK_KIND_COUNT] = {4, 2, 1, 1};
    for (int k = 0; k < MLK_LEAK_KIND_COUNT; k++) {
        int64_t tb = -1, tk = -1;
        CHECK(text && summary_line(text, names[k], &tb, &tk));
        if (tb != bytes[k] || tk != blocks[k])
            fprintf(stderr, "%s text %" PRId64 " B in %" PRId64 " blocks, xml %" PRId64 " in %" PRId64 "\n", names[k],
                    tb, tk, bytes[k], blocks[k]);
        CHECK(tb == bytes[k] && tk == blocks[k]);
        CHECK(bytes[k] == want_bytes[k] && blocks[k] == want_blocks[k]);
    }
    /* the list head's record as XML gives it: with the nodes it owns */
    bool head = false;
    for (int i = 0; i < r.n; i++)
        head |= r.leaks[i].kind == MLK_LEAK_DEFINITELY && r.leaks[i].bytes == 32 && r.leaks[i].total_bytes == 96;
    CHECK(head);
    CHECK(engine == 332); /* every frame is tool_leaky's own: not the harness, so "the engine" */
    mlk_leak_report_free(&r);
    unlink(xml), unlink(txt), rmdir(dir);
    return check_summary();
}
