/* text.c: control characters escaped and invalid UTF-8 replaced, for every output (text.h). It must never allocate:
 * error messages go through it when memory is exhausted. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "text.h"

/* The length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there are not one; *cp its code point. */
static int utf8_len(const unsigned char *p, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    if (!n)
        return 0;
    uint32_t c = p[0] & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    /* U+FFFE and U+FFFF are not characters (XML refuses them) */
    if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
        return 0;
    *cp = c;
    return n;
}

/* The safe form of the character at p into rep (at most 8 bytes + NUL); *used its length in s. */
static size_t one(const unsigned char *p, int flags, char *rep, size_t *used)
{
    uint32_t c = 0;
    int n = utf8_len(p, &c);
    *used = n ? (size_t)n : 1;
    if (!n) {
        memcpy(rep, "\xef\xbf\xbd", 4); /* U+FFFD */
        return 3;
    }
    if ((c == '\n' && flags & MLK_TEXT_KEEP_NL) || (c == '\t' && flags & MLK_TEXT_KEEP_TAB) ||
        (c >= 0x20 && c != 0x7f && (c < 0x80 || c > 0x9f))) {
        memcpy(rep, p, (size_t)n);
        rep[n] = '\0';
        return (size_t)n;
    }
    static const char names[] = "\x1b" "e" "\a" "a" "\b" "b" "\r" "r" "\n" "n" "\t" "t";
    for (size_t i = 0; i + 1 < sizeof names; i += 2)
        if ((unsigned char)names[i] == c) {
            rep[0] = '\\';
            rep[1] = names[i + 1];
            rep[2] = '\0';
            return 2;
        }
    static const char hex[] = "0123456789abcdef";
    if (c < 0x80) { /* other C0, DEL */
        memcpy(rep, "\\x", 2);
        rep[2] = hex[c >> 4];
        rep[3] = hex[c & 15];
        rep[4] = '\0';
        return 4;
    }
    memcpy(rep, "\\u00", 4); /* C1: a terminal may read U+009B as CSI */
    rep[4] = hex[c >> 4];
    rep[5] = hex[c & 15];
    rep[6] = '\0';
    return 6;
}

size_t mlk_text_char(const char *s, int flags, char rep[9], size_t *used)
{
    return one((const unsigned char *)s, flags, rep, used);
}

const char *mlk_text_safe(const char *s, char *out, size_t len, int flags)
{
    size_t o = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        char rep[9];
        size_t used, n = one(p, flags, rep, &used);
        if (o + n >= len)
            break;
        memcpy(out + o, rep, n);
        o += n;
        p += used;
    }
    out[o] = '\0';
    return out;
}

bool mlk_text_is_safe(const char *s, int flags)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        char rep[9];
        size_t used, n = one(p, flags, rep, &used);
        if (n != used || memcmp(rep, p, n))
            return false;
        p += used;
    }
    return true;
}

int mlk_fputs_safe(const char *s, FILE *f, int flags)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        char rep[9];
        size_t used;
        one(p, flags, rep, &used);
        if (fputs(rep, f) == EOF)
            return EOF;
        p += used;
    }
    return 0;
}

int mlk_fprintf_safe(FILE *f, const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return n;
    if ((size_t)n >= sizeof text) { /* cut: never leave half a character at the end */
        size_t end = sizeof text - 1;
        while (end > 0 && ((unsigned char)text[end - 1] & 0xc0) == 0x80)
            end--;
        if (end > 0 && (unsigned char)text[end - 1] >= 0xc0)
            end--;
        text[end] = '\0';
    }
    return mlk_fputs_safe(text, f, MLK_TEXT_KEEP_NL);
}
