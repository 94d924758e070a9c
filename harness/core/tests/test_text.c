/* test_text.c: outside text made safe (text.h): every C0 and C1 control and DEL escaped, every kind of invalid UTF-8
 * replaced, valid UTF-8 kept, no character cut at the buffer's end. It must never print what it tests raw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlk_check.h"
#include "strbuf.h"
#include "text.h"

static void expect(const char *in, int flags, const char *want)
{
    char out[256];
    mlk_text_safe(in, out, sizeof out, flags);
    CHECK(!strcmp(out, want));
    if (strcmp(out, want))
        printf("  got '%s' want '%s'\n", mlk_text_safe(out, (char[512]){0}, 512, 0), want);
    CHECK(mlk_text_is_safe(out, flags));
    CHECK(mlk_text_is_safe(in, flags) == !strcmp(in, want));
}

int main(void)
{
    expect("plain ascii_1.2-3", 0, "plain ascii_1.2-3");
    expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); /* é € 😀 */
    expect("a\x1b[31mb\a\rc\b", 0, "a\\e[31mb\\a\\rc\\b");
    expect("l1\nl2\tx", 0, "l1\\nl2\\tx");
    expect("l1\nl2\tx", MLK_TEXT_KEEP_NL | MLK_TEXT_KEEP_TAB, "l1\nl2\tx");
    expect("\x01\x1f\x7f", 0, "\\x01\\x1f\\x7f");
    expect("\xc2\x9b" "31m\xc2\x80", 0, "\\u009b31m\\u0080"); /* C1 CSI, PAD */
    expect("x\xffy\xfe", 0, "x\xef\xbf\xbdy\xef\xbf\xbd");        /* stray bytes */
    expect("\xc0\xaf", 0, "\xef\xbf\xbd\xef\xbf\xbd");              /* overlong '/' */
    expect("\xe0\x80\xaf", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* overlong, 3 bytes */
    expect("\xed\xa0\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* a surrogate */
    expect("\xf4\x90\x80\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* past U+10FFFF */
    expect("\xe2\x82", 0, "\xef\xbf\xbd\xef\xbf\xbd"); /* cut short by the end */
    char small[6];
    CHECK(!strcmp(mlk_text_safe("ab\xe2\x82\xac", small, sizeof small, 0), "ab\xe2\x82\xac"));
    CHECK(!strcmp(mlk_text_safe("abc\xe2\x82\xac", small, sizeof small, 0), "abc")); /* € does not fit: left out */
    CHECK(!strcmp(mlk_text_safe("abcd\x1b", small, sizeof small, 0), "abcd"));
    CHECK(!strcmp(mlk_text_safe(NULL, small, sizeof small, 0), ""));
    /* fputs and fprintf write the same safe form */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (f) {
        mlk_fputs_safe("n\x1b]0;t\a", f, 0);
        mlk_fprintf_safe(f, "|%s|%d\n", "op\x9b\xc2\x9b", 7);
        fclose(f);
        CHECK(buf && !strcmp(buf, "n\\e]0;t\\a|op\xef\xbf\xbd\\u009b|7\n"));
    }
    free(buf);
    /* JSON strings: valid JSON in UTF-8 whatever the input */
    mlk_buf j = {0};
    mlk_buf_json(&j, "a\"\\\x1b\x7f\xc2\x9b\xff\xc3\xa9");
    CHECK(j.s && !strcmp(j.s, "\"a\\\"\\\\\\u001b\\u007f\\u009b\\ufffd\xc3\xa9\""));
    if (j.s && strcmp(j.s, "\"a\\\"\\\\\\u001b\\u007f\\u009b\\ufffd\xc3\xa9\""))
        printf("  got %s\n", j.s);
    mlk_buf_free(&j);
    return check_summary();
}
