/* report_fmt.c: escaping for the report's XML, HTML, Markdown and TSV outputs, and readable units for figures.
 * It must never emit text that breaks its target format, whatever bytes a scenario, commit or error holds. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "report.h"

/* Length of the valid UTF-8 sequence XML allows at p (1..4), or 0 when it is not one. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0], cp;
    int n;
    if (c < 0x80)
        return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

void mlk_rep_xml(FILE *f, const char *s)
{
    if (!s)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (!n) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD for a byte XML cannot carry */
            p++;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fwrite(p, 1, (size_t)n, f);
        }
        p += n;
    }
}

void mlk_rep_md(FILE *f, const char *s)
{
    if (!s)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fputc(' ', f);
        else if (strchr("\\`*_[]<>|~#&!", *p))
            fprintf(f, "\\%c", *p);
        else
            fputc(*p, f);
    }
}

void mlk_rep_tsv_field(char *out, size_t len, const char *s)
{
    if (!len)
        return;
    if (!s || !*s)
        s = "-"; /* gnuplot would read an empty field as missing */
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = c < 0x20 || c == 0x7f ? ' ' : c == '"' ? '\'' : (char)c;
    }
    out[i] = '\0';
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

void mlk_rep_fmt_metric(char *out, size_t len, const char *metric, double v)
{
    if (isnan(v) || !metric)
        snprintf(out, len, isnan(v) ? "-" : "%g", v);
    else if (ends_with(metric, "_kib"))
        mlk_fmt_bytes(out, len, v * 1024, false);
    else if (ends_with(metric, "_bytes"))
        mlk_fmt_bytes(out, len, v, false);
    else if (ends_with(metric, "_ms"))
        snprintf(out, len, "%.3g ms", v);
    else if (!strcmp(metric, "growth")) {
        mlk_fmt_bytes(out, len > 5 ? len - 5 : len, v, true);
        strncat(out, "/iter", len - strlen(out) - 1);
    } else
        snprintf(out, len, "%g", v);
}

bool mlk_rep_status_fails(const char *status)
{
    static const char *bad[] = {"leak", "crashed", "timeout", "hung", "oom", "error"};
    for (size_t i = 0; status && i < sizeof bad / sizeof *bad; i++)
        if (!strcmp(status, bad[i]))
            return true;
    return false;
}

bool mlk_rep_cell_fails(const mlk_rep_cell *c)
{
    return mlk_rep_status_fails(c->status) && !c->expected;
}

int mlk_rep_close(FILE *f, const char *path, mlk_error *err)
{
    int bad = ferror(f), e = errno;
    if (fclose(f) && !bad)
        bad = 1, e = errno;
    if (bad)
        return mlk_fail(err, MLK_E_IO, "report: cannot write %s: %s", path, strerror(e ? e : EIO));
    return MLK_OK;
}
