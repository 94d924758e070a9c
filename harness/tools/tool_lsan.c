/* tool_lsan.c: LeakSanitizer's text report into leak records: "Direct leak of N byte(s) in M object(s) allocated
 * from:" (definitely lost) and "Indirect leak ..." blocks with their frames, checked against the SUMMARY line.
 * It must never read past a line or mistake an AddressSanitizer error's stack for a leak's. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_internal.h"

typedef struct {
    const char *name;
    int line_no;
    mlk_leak_report *out;
    mlk_leak *cur;       /* the block whose frames come next, NULL outside one */
    bool too_many;       /* LSan printed only part of its leaks: the SUMMARY cannot be checked */
    int64_t sum_bytes, sum_objects;
    mlk_error *err;
} ctx;

/* Digits at *p into *v (at most 18), advancing *p; false when there are none. */
static bool number(const char **p, int64_t *v)
{
    int n = 0;
    *v = 0;
    while (**p >= '0' && **p <= '9' && n < 18)
        *v = *v * 10 + (*(*p)++ - '0'), n++;
    return n > 0 && !(**p >= '0' && **p <= '9');
}

/* "N<mid>M<tail>" ("12 byte(s) in 3 object(s) allocated from:"): the two figures; false when the text does not
 * read so. */
static bool two_figures(const char *p, const char *mid, const char *tail, int64_t *a, int64_t *b)
{
    if (!number(&p, a) || strncmp(p, mid, strlen(mid)))
        return false;
    p += strlen(mid);
    return number(&p, b) && !strncmp(p, tail, strlen(tail));
}

static char *field(const char *s, size_t n, int *nomem)
{
    if (n == 6 && !strncmp(s, "<null>", 6))
        return NULL;
    return mlk_tool_strndup(s, n, nomem);
}

/* MLK_LSAN_FRAME_FORMAT: "#N|PC|MODULE|OFFSET|FILE|LINE|FUNCTION". */
static int pipe_frame(const char *s, mlk_frame *f, int *nomem)
{
    const char *cut[6];
    const char *p = s;
    for (int i = 0; i < 6; i++) {
        if (!(p = strchr(p, '|')))
            return -1;
        cut[i] = p++;
    }
    f->obj = field(cut[1] + 1, (size_t)(cut[2] - cut[1] - 1), nomem);
    f->file = field(cut[3] + 1, (size_t)(cut[4] - cut[3] - 1), nomem);
    long line = strtol(cut[4] + 1, NULL, 10);
    f->line = line > 0 && line < 1 << 30 ? (int)line : 0;
    f->fn = field(cut[5] + 1, strlen(cut[5] + 1), nomem);
    return 0;
}

/* The default format: "#N 0xPC in FUNCTION LOCATION", LOCATION "FILE:LINE[:COL]" or "(MODULE+0xOFF)", or
 * "#N 0xPC  (MODULE+0xOFF)" without a function. */
static int default_frame(const char *s, mlk_frame *f, int *nomem)
{
    const char *p = strchr(s, ' ');
    if (!p)
        return -1;
    while (*p == ' ')
        p++;
    if (strncmp(p, "0x", 2))
        return -1;
    while (*p && *p != ' ')
        p++;
    while (*p == ' ')
        p++;
    const char *fn = NULL, *loc = p;
    if (!strncmp(p, "in ", 3)) {
        fn = p + 3;
        const char *last = strrchr(fn, ' ');
        loc = last ? last + 1 : fn + strlen(fn);
        f->fn = mlk_tool_strndup(fn, (size_t)(loc - fn), nomem);
    }
    size_t n = strlen(loc);
    if (n >= 2 && loc[0] == '(' && loc[n - 1] == ')') {
        const char *plus = strstr(loc, "+0x");
        size_t m = plus ? (size_t)(plus - loc - 1) : n - 2;
        if (strncmp(loc, "(<unknown module>)", 18))
            f->obj = mlk_tool_strndup(loc + 1, m, nomem);
    } else if (n && !mlk_tool_file_line(loc, n, f, nomem) && fn) {
        free(f->fn); /* no location after all: the last word belongs to the function */
        f->fn = mlk_tool_strndup(fn, strlen(fn), nomem);
    }
    return 0;
}

static int frame_line(ctx *x, const char *s)
{
    mlk_frame *f = mlk_tool_frame_add(&x->cur->frames, &x->cur->n_frames);
    if (!f)
        return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name);
    int nomem = 0;
    int rc = strchr(s, '|') ? pipe_frame(s, f, &nomem) : default_frame(s, f, &nomem);
    if (nomem)
        return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name);
    if (rc)
        return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: expected a stack frame, got '%.120s'", x->name, x->line_no, s);
    return MLK_OK;
}

static int leak_header(ctx *x, const char *s, mlk_leak_kind kind)
{
    int64_t bytes, objects;
    if (!two_figures(s, " byte(s) in ", " object(s) allocated from", &bytes, &objects))
        return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: expected 'N byte(s) in M object(s) allocated from:', got '%.120s'",
                        x->name, x->line_no, s);
    if (!(x->cur = mlk_tool_leak_add(x->out)))
        return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name);
    x->cur->kind = kind;
    x->cur->bytes = x->cur->total_bytes = bytes;
    x->cur->blocks = objects;
    x->sum_bytes += bytes;
    x->sum_objects += objects;
    return MLK_OK;
}

static int summary(ctx *x, const char *s)
{
    int64_t bytes, allocs;
    if (!two_figures(s, " byte(s) leaked in ", " allocation(s)", &bytes, &allocs))
        return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: expected 'N byte(s) leaked in M allocation(s).', got '%.120s'",
                        x->name, x->line_no, s);
    if (!x->too_many && (bytes != x->sum_bytes || allocs != x->sum_objects))
        return mlk_fail(x->err, MLK_E_PARSE,
                        "%s:%d: the SUMMARY says %lld byte(s) in %lld allocation(s), the leaks above add up to "
                        "%lld in %lld", x->name, x->line_no, (long long)bytes, (long long)allocs,
                        (long long)x->sum_bytes, (long long)x->sum_objects);
    x->out->summary_bytes = (x->out->summary_bytes < 0 ? 0 : x->out->summary_bytes) + bytes;
    x->out->summary_allocs = (x->out->summary_allocs < 0 ? 0 : x->out->summary_allocs) + allocs;
    x->sum_bytes = x->sum_objects = 0;
    return MLK_OK;
}

static void other_error(ctx *x, const char *s)
{
    if (!x->out->n_other_errors++)
        snprintf(x->out->first_error, sizeof x->out->first_error, "%s", s);
}

static int one_line(ctx *x, const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    const char *err = strstr(s, "ERROR: ");
    if (!*s)
        x->cur = NULL;
    else if (x->cur && s[0] == '#')
        return frame_line(x, s);
    else if (!strncmp(s, "Direct leak of ", 15))
        return leak_header(x, s + 15, MLK_LEAK_DEFINITELY);
    else if (!strncmp(s, "Indirect leak of ", 17))
        return leak_header(x, s + 17, MLK_LEAK_INDIRECTLY);
    else if (!strncmp(s, "SUMMARY: LeakSanitizer: ", 24) && strstr(s, " leaked in "))
        return summary(x, s + 24);
    else if (!strncmp(s, "SUMMARY: AddressSanitizer: ", 27) && strstr(s, " leaked in "))
        return summary(x, s + 27);
    else if (strstr(s, "Too many leaks!"))
        x->too_many = true;
    else if (err && strcmp(err + 7, "LeakSanitizer: detected memory leaks"))
        other_error(x, err + 7);
    return MLK_OK;
}

/* Append the leaks of one report to out. complete: every leak block has its SUMMARY line after it. */
static int parse_text(const char *text, size_t len, const char *name, mlk_leak_report *out, mlk_error *err)
{
    ctx x = {.name = name, .out = out, .err = err};
    int rc = MLK_OK;
    char line[4096];
    for (size_t i = 0; i < len && !rc;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1; /* a longer line is cut, never overrun */
        memcpy(line, text + i, n);
        line[n] = '\0';
        for (size_t k = 0; k < n; k++)
            if (line[k] == '\0' || line[k] == '\r')
                line[k] = ' ';
        x.line_no++;
        rc = one_line(&x, line);
        i = j + 1;
    }
    if (x.sum_objects || x.sum_bytes)
        out->complete = false; /* leaks with no SUMMARY after them: the process died while printing */
    return rc;
}

static void report_init(mlk_leak_report *out)
{
    memset(out, 0, sizeof *out);
    out->summary_bytes = out->summary_allocs = -1;
    out->complete = true;
}

int mlk_lsan_parse_buf(const char *text, size_t len, const char *name, mlk_leak_report *out, mlk_error *err)
{
    report_init(out);
    return parse_text(text, len, name, out, err);
}

int mlk_lsan_parse_logs(const char *dir, const char *prefix, mlk_leak_report *out, mlk_error *err)
{
    report_init(out);
    DIR *d = opendir(dir);
    if (!d)
        return mlk_fail(err, MLK_E_IO, "%s: cannot open the LeakSanitizer log folder", dir);
    size_t n = strlen(prefix);
    int rc = MLK_OK;
    bool complete = true; /* LSan writes nothing when it finds nothing: no file is a clean report */
    for (struct dirent *e; !rc && (e = readdir(d));) {
        char path[PATH_MAX];
        if (strncmp(e->d_name, prefix, n) || e->d_name[n] != '.' ||
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        char *buf = NULL;
        size_t len = 0;
        out->complete = true;
        if (!(rc = mlk_tool_read_file(path, &buf, &len, err)))
            rc = parse_text(buf, len, path, out, err);
        free(buf);
        complete &= out->complete;
    }
    closedir(d);
    out->complete = complete;
    return rc;
}
