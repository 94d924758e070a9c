/* strbuf.c: growable strings with printf and JSON escaping.
 * It must never write past cap: every append measures first. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "text.h"

static bool reserve(mlk_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->s = p;
    b->cap = cap;
    return true;
}

void mlk_buf_printf(mlk_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void mlk_buf_json(mlk_buf *b, const char *s)
{
    mlk_buf_printf(b, "\"");
    for (const char *p = s; *p;) {
        unsigned char c = (unsigned char)*p;
        char rep[9];
        size_t used, n = mlk_text_char(p, 0, rep, &used); /* text.h: what is a character, and which are controls */
        if (c == '"' || c == '\\')
            mlk_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            mlk_buf_printf(b, "\\u%04x", c);
        else if (n == used && !memcmp(rep, p, n))
            mlk_buf_printf(b, "%.*s", (int)n, p);
        else /* a C1 control is already its JSON escape ("\u009b"); bytes that are not UTF-8 are U+FFFD */
            mlk_buf_printf(b, "%s", rep[0] == '\\' ? rep : "\\ufffd");
        p += used;
    }
    mlk_buf_printf(b, "\"");
}

char *mlk_buf_take(mlk_buf *b)
{
    if (b->failed || !b->s) {
        mlk_buf_free(b);
        return NULL;
    }
    char *s = b->s;
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void mlk_buf_free(mlk_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
