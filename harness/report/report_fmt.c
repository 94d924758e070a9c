/* report_fmt.c: escaping for the report's XML, HTML, Markdown and TSV outputs, and readable units for figures.
 * It must never emit text that breaks its target format, whatever bytes a scenario, commit or error holds. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "report.h"
#include "text.h"

void mlk_rep_xml(FILE *f, const char *s)
{
    if (!s)
        return;
    for (const char *p = s; *p;) {
        char rep[9];
        size_t used;
        mlk_text_char(p, MLK_TEXT_KEEP_NL | MLK_TEXT_KEEP_TAB, rep, &used); /* no control character XML refuses */
        for (const char *r = rep; *r; r++)
            switch (*r) {
            case '&': fputs("&amp;", f); break;
            case '<': fputs("&lt;", f); break;
            case '>': fputs("&gt;", f); break;
            case '"': fputs("&quot;", f); break;
            case '\'': fputs("&#39;", f); break;
            default: fputc(*r, f);
            }
        p += used;
    }
}

void mlk_rep_md(FILE *f, const char *s)
{
    if (!s)
        return;
    for (const char *p = s; *p;) {
        char rep[9];
        size_t used;
        if (*p == '\n' || *p == '\t') /* layout, not content */
            rep[0] = ' ', rep[1] = '\0', used = 1;
        else
            mlk_text_char(p, 0, rep, &used);
        for (const char *r = rep; *r; r++)
            if (strchr("\\`*_[]<>|~#&!", *r))
                fprintf(f, "\\%c", *r);
            else
                fputc(*r, f);
        p += used;
    }
}

void mlk_rep_tsv_field(char *out, size_t len, const char *s)
{
    if (!len)
        return;
    if (!s || !*s)
        s = "-"; /* gnuplot would read an empty field as missing */
    size_t o = 0;
    for (const char *p = s; *p;) {
        char rep[9];
        size_t used, n = mlk_text_char(p, 0, rep, &used);
        if (o + n >= len)
            break;
        for (size_t i = 0; i < n; i++)
            out[o++] = rep[i] == '"' ? '\'' : rep[i];
        p += used;
    }
    out[o] = '\0';
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
    static const char *bad[] = {"leak", "inconclusive", "crashed", "timeout", "hung", "oom", "error"};
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
