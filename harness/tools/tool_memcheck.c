/* tool_memcheck.c: valgrind memcheck's XML (--xml=yes, protocol 4) into leak records, with expat. A definitely
 * lost record's <leakedbytes> includes the blocks it owns indirectly ("24 (16 direct, 8 indirect) bytes in 1
 * blocks are definitely lost"): both figures are kept, so per-kind sums of the direct bytes match the text LEAK
 * SUMMARY that XML mode leaves out. It must never trust the document: every figure is checked, every string
 * bounded, and a malformed file is an error naming file:line. */
#include <errno.h>
#include <expat.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_internal.h"

/* The elements that matter; everything else is walked through. */
typedef enum { E_OTHER = 0, E_ROOT, E_TOOL, E_ERROR, E_KIND, E_WHAT, E_XWHAT, E_TEXT, E_BYTES, E_BLOCKS, E_STACK,
               E_FRAME, E_OBJ, E_FN, E_DIR, E_FILE, E_LINE } elem;

static const char *const elem_names[] = {"", "valgrindoutput", "protocoltool", "error", "kind", "what", "xwhat",
                                         "text", "leakedbytes", "leakedblocks", "stack", "frame", "obj", "fn",
                                         "dir", "file", "line"};

#define MAX_DEPTH 64
/* Function names of C++ templates run long; longer text is cut, never overrun. */
#define MAX_TEXT 8192

typedef struct {
    XML_Parser xp;
    const char *name;
    mlk_leak_report *out;
    mlk_error *err;
    int rc;
    elem stack[MAX_DEPTH];
    int depth;
    char text[MAX_TEXT];
    size_t text_len;
    bool seen_root, seen_tool;
    /* the <error> being read */
    bool in_error;
    int n_stacks;        /* stacks seen in this error: only the first is the allocation stack */
    char kind[64], what[200], xtext[256];
    int64_t bytes, blocks;
    mlk_frame *frames;
    int n_frames;
    char dir[1024];      /* the current frame's <dir>, joined with its <file> */
} ctx;

static elem elem_of(const char *name)
{
    for (size_t i = 1; i < sizeof elem_names / sizeof *elem_names; i++)
        if (!strcmp(name, elem_names[i]))
            return (elem)i;
    return E_OTHER;
}

static elem parent(const ctx *x, int up)
{
    int i = x->depth - 1 - up;
    return i >= 0 && i < MAX_DEPTH ? x->stack[i] : E_OTHER;
}

static void stop(ctx *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void stop(ctx *x, int code, const char *fmt, ...)
{
    if (x->rc)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    x->rc = mlk_fail(x->err, code, "%s:%lu: %s", x->name, (unsigned long)XML_GetCurrentLineNumber(x->xp), msg);
    XML_StopParser(x->xp, XML_FALSE);
}

static void reset_error(ctx *x)
{
    mlk_tool_frames_free(x->frames, x->n_frames);
    x->frames = NULL;
    x->n_frames = 0;
    x->n_stacks = 0;
    x->kind[0] = x->what[0] = x->xtext[0] = '\0';
    x->bytes = x->blocks = -1;
}

static void XMLCALL on_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    ctx *x = arg;
    elem e = elem_of(name);
    if (x->depth == 0 && e != E_ROOT)
        stop(x, MLK_E_PARSE, "expected valgrind's <valgrindoutput>, got <%.64s>", name);
    if (x->depth < MAX_DEPTH)
        x->stack[x->depth] = e;
    x->depth++;
    x->text_len = 0;
    if (e == E_ROOT)
        x->seen_root = true;
    else if (e == E_ERROR && x->depth == 2) {
        reset_error(x);
        x->in_error = true;
    } else if (e == E_STACK && x->in_error)
        x->n_stacks++;
    else if (e == E_FRAME && x->in_error && x->n_stacks == 1 && parent(x, 1) == E_STACK) {
        if (!mlk_tool_frame_add(&x->frames, &x->n_frames))
            stop(x, MLK_E_NOMEM, "out of memory");
        x->dir[0] = '\0';
    }
}

static void XMLCALL on_text(void *arg, const XML_Char *s, int len)
{
    ctx *x = arg;
    size_t n = (size_t)len;
    if (x->text_len + n >= MAX_TEXT)
        n = MAX_TEXT - 1 - x->text_len;
    memcpy(x->text + x->text_len, s, n);
    x->text_len += n;
}

/* A decimal figure of the document: digits only (no sign), at most 18 of them. */
static int64_t figure(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    int64_t v = 0;
    int n = 0;
    for (; *s >= '0' && *s <= '9'; s++, n++) {
        if (n == 18)
            return -1;
        v = v * 10 + (*s - '0');
    }
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    return n && !*s ? v : -1;
}

/* Copy src into dst (cap bytes), cut to fit. */
static void keep(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Text of a frame's child element into the frame being read. */
static void frame_text(ctx *x, elem e, const char *t)
{
    mlk_frame *f = &x->frames[x->n_frames - 1];
    int nomem = 0;
    char **slot = e == E_OBJ ? &f->obj : e == E_FN ? &f->fn : e == E_FILE ? &f->file : NULL;
    if (e == E_LINE) {
        int64_t v = figure(t);
        f->line = v > 0 && v < INT32_MAX ? (int)v : 0;
    } else if (e == E_DIR) {
        keep(x->dir, sizeof x->dir, t);
    } else if (slot && !*slot) {
        char joined[2048];
        if (e == E_FILE && x->dir[0])
            snprintf(joined, sizeof joined, "%s/%s", x->dir, t);
        else
            snprintf(joined, sizeof joined, "%s", t);
        *slot = mlk_tool_strndup(joined, strlen(joined), &nomem);
    }
    if (nomem)
        stop(x, MLK_E_NOMEM, "out of memory");
}

static int leak_kind(const char *kind)
{
    static const char *const kinds[MLK_LEAK_KIND_COUNT] = {"Leak_DefinitelyLost", "Leak_IndirectlyLost",
                                                           "Leak_PossiblyLost", "Leak_StillReachable"};
    for (int k = 0; k < MLK_LEAK_KIND_COUNT; k++)
        if (!strcmp(kind, kinds[k]))
            return k;
    return -1;
}

/* "56 (16 direct, 40 indirect) bytes in ...": the indirect part, 0 when the text has none. Digits may carry
 * thousands separators. -1 when the parenthesis is there but does not read. */
static int64_t indirect_of(const char *text)
{
    const char *p = strstr(text, " direct, ");
    if (!p)
        return 0;
    p += 9;
    int64_t v = 0;
    int n = 0;
    for (; (*p >= '0' && *p <= '9') || *p == ','; p++)
        if (*p != ',') {
            if (++n > 18)
                return -1;
            v = v * 10 + (*p - '0');
        }
    return n && !strncmp(p, " indirect)", 10) ? v : -1;
}

static void end_error(ctx *x)
{
    x->in_error = false;
    int kind = leak_kind(x->kind);
    if (!x->kind[0]) {
        stop(x, MLK_E_PARSE, "an <error> without its <kind>");
        return;
    }
    if (kind < 0) {
        if (!x->out->n_other_errors++)
            snprintf(x->out->first_error, sizeof x->out->first_error, "%.60s: %.190s", x->kind, x->what);
        return;
    }
    int64_t indirect = indirect_of(x->xtext);
    if (x->bytes < 0 || x->blocks < 0 || indirect < 0 || indirect > x->bytes) {
        stop(x, MLK_E_PARSE, "%s: expected <leakedbytes> and <leakedblocks> figures and a readable <text>, got "
             "'%.200s'", x->kind, x->xtext);
        return;
    }
    mlk_leak *l = mlk_tool_leak_add(x->out);
    if (!l) {
        stop(x, MLK_E_NOMEM, "out of memory");
        return;
    }
    l->kind = (mlk_leak_kind)kind;
    l->total_bytes = x->bytes;
    l->bytes = x->bytes - indirect;
    l->blocks = x->blocks;
    l->frames = x->frames;
    l->n_frames = x->n_frames;
    x->frames = NULL;
    x->n_frames = 0;
}

static void XMLCALL on_end(void *arg, const XML_Char *name)
{
    ctx *x = arg;
    (void)name;
    elem e = parent(x, 0), up = parent(x, 1);
    x->text[x->text_len] = '\0';
    const char *t = x->text;
    if (e == E_TOOL && x->depth == 2) {
        x->seen_tool = true;
        if (strcmp(t, "memcheck"))
            stop(x, MLK_E_PARSE, "expected memcheck's output, got the tool '%.64s'", t);
    } else if (x->in_error && x->depth == 3 && e == E_KIND) {
        keep(x->kind, sizeof x->kind, t);
    } else if (x->in_error && x->depth == 3 && e == E_WHAT) {
        keep(x->what, sizeof x->what, t);
    } else if (x->in_error && x->depth == 4 && up == E_XWHAT) {
        if (e == E_TEXT)
            keep(x->xtext, sizeof x->xtext, t);
        else if (e == E_BYTES)
            x->bytes = figure(t);
        else if (e == E_BLOCKS)
            x->blocks = figure(t);
    } else if (x->in_error && up == E_FRAME && parent(x, 2) == E_STACK && x->n_stacks == 1 && x->n_frames &&
               x->depth == 5) {
        frame_text(x, e, t);
    } else if (e == E_ERROR && x->depth == 2) {
        end_error(x);
    } else if (e == E_ROOT && x->depth == 1) {
        x->out->complete = true;
    }
    x->depth--;
    x->text_len = 0;
}

int mlk_memcheck_parse_buf(const char *xml, size_t len, const char *name, mlk_leak_report *out, mlk_error *err)
{
    memset(out, 0, sizeof *out);
    out->summary_bytes = out->summary_allocs = -1;
    if (len > MLK_TOOL_MAX_FILE)
        return mlk_fail(err, MLK_E_PARSE, "%s: larger than %zu MiB", name, MLK_TOOL_MAX_FILE >> 20);
    ctx x = {.name = name, .out = out, .err = err, .bytes = -1, .blocks = -1};
    if (!(x.xp = XML_ParserCreate(NULL)))
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    XML_SetUserData(x.xp, &x);
    XML_SetElementHandler(x.xp, on_start, on_end);
    XML_SetCharacterDataHandler(x.xp, on_text);
    /* Not final: a document cut short by a killed worker reads up to where it stops, and is incomplete. */
    if (XML_Parse(x.xp, xml, (int)len, 0) == XML_STATUS_ERROR && !x.rc)
        x.rc = mlk_fail(err, MLK_E_PARSE, "%s:%lu: not valgrind's XML: %s", name,
                        (unsigned long)XML_GetCurrentLineNumber(x.xp), XML_ErrorString(XML_GetErrorCode(x.xp)));
    if (!x.rc && out->complete && XML_Parse(x.xp, NULL, 0, 1) == XML_STATUS_ERROR)
        x.rc = mlk_fail(err, MLK_E_PARSE, "%s:%lu: %s after </valgrindoutput>", name,
                        (unsigned long)XML_GetCurrentLineNumber(x.xp), XML_ErrorString(XML_GetErrorCode(x.xp)));
    if (!x.rc && !x.seen_root)
        x.rc = mlk_fail(err, MLK_E_PARSE, "%s: empty: no <valgrindoutput> (valgrind did not start?)", name);
    if (!x.rc && out->complete && !x.seen_tool)
        x.rc = mlk_fail(err, MLK_E_PARSE, "%s: no <protocoltool>: not valgrind's XML", name);
    mlk_tool_frames_free(x.frames, x.n_frames);
    XML_ParserFree(x.xp);
    return x.rc;
}

int mlk_memcheck_parse(const char *path, mlk_leak_report *out, mlk_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = mlk_tool_read_file(path, &buf, &len, err);
    if (!rc)
        rc = mlk_memcheck_parse_buf(buf, len, path, out, err);
    free(buf);
    return rc;
}
