/* tool_massif.c: massif's output file (--massif-out-file) into the peak: the heap_tree=peak snapshot's
 * mem_heap_B, mem_heap_extra_B and mem_stacks_B, and its allocation sites (each leaf of the peak tree with the path
 * of callers leading to it). It must never read past a line, and never take a detailed snapshot for the peak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_internal.h"

/* massif's --depth is at most 200; deeper trees are refused rather than cut silently. */
#define MAX_DEPTH 256

typedef struct {
    const char *name;
    int line_no;
    mlk_heap_peak *out;
    mlk_error *err;
    int64_t time, heap, extra, stacks; /* of the snapshot being read */
    int snapshot;
    bool in_peak_tree;
    mlk_frame path[MAX_DEPTH];         /* the current node's callers: path[1] calls the allocation function */
    int cap_sites;
} ctx;

static bool int_after(const char *s, const char *key, int64_t *v)
{
    size_t n = strlen(key);
    if (strncmp(s, key, n))
        return false;
    char *end;
    long long x = strtoll(s + n, &end, 10);
    if (end == s + n || x < 0)
        return false;
    *v = x;
    return true;
}

static void frame_clear(mlk_frame *f)
{
    free(f->fn);
    free(f->file);
    free(f->obj);
    memset(f, 0, sizeof *f);
}

/* "0xADDR: FUNCTION (FILE:LINE)", "0xADDR: FUNCTION (in OBJECT)", "0xADDR: ???" into f. */
static int node_frame(const char *s, mlk_frame *f, int *nomem)
{
    const char *p = strstr(s, ": ");
    if (strncmp(s, "0x", 2) || !p)
        return -1;
    p += 2;
    size_t n = strlen(p);
    const char *open = n && p[n - 1] == ')' ? strrchr(p, '(') : NULL;
    size_t fn_len = open && open > p && open[-1] == ' ' ? (size_t)(open - 1 - p) : n;
    if (fn_len == n)
        open = NULL;
    if (!(fn_len == 3 && !strncmp(p, "???", 3)))
        f->fn = mlk_tool_strndup(p, fn_len, nomem);
    if (open) {
        const char *in = open + 1;
        size_t m = (size_t)(p + n - 1 - in);
        if (!strncmp(in, "in ", 3))
            f->obj = mlk_tool_strndup(in + 3, m - 3, nomem);
        else
            (void)mlk_tool_file_line(in, m, f, nomem);
    }
    return 0;
}

static int add_site(ctx *x, int64_t bytes, int depth)
{
    mlk_heap_peak *o = x->out;
    if (o->n_sites == x->cap_sites) {
        int cap = x->cap_sites ? x->cap_sites * 2 : 16;
        mlk_peak_site *v = realloc(o->sites, sizeof *v * (size_t)cap);
        if (!v)
            return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name);
        o->sites = v;
        x->cap_sites = cap;
    }
    mlk_peak_site *s = &o->sites[o->n_sites++];
    memset(s, 0, sizeof *s);
    s->bytes = bytes;
    int nomem = 0;
    for (int d = 1; d <= depth && !nomem; d++) {
        mlk_frame *f = mlk_tool_frame_add(&s->frames, &s->n_frames);
        if (!f)
            return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name);
        const mlk_frame *src = &x->path[d];
        f->line = src->line;
        if (src->fn && !(f->fn = strdup(src->fn)))
            nomem = 1;
        if (src->file && !(f->file = strdup(src->file)))
            nomem = 1;
        if (src->obj && !(f->obj = strdup(src->obj)))
            nomem = 1;
    }
    return nomem ? mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name) : MLK_OK;
}

/* " nK: BYTES TEXT" at depth = leading spaces. */
static int tree_line(ctx *x, const char *s)
{
    int depth = 0;
    while (s[depth] == ' ')
        depth++;
    const char *p = s + depth;
    char *end = NULL, *digits = NULL;
    long kids = p[0] == 'n' && p[1] >= '0' && p[1] <= '9' ? strtol(p + 1, &end, 10) : -1;
    long long bytes = -1;
    if (kids >= 0 && end[0] == ':' && end[1] == ' ' && end[2] >= '0' && end[2] <= '9')
        bytes = strtoll(digits = end + 2, &end, 10);
    if (kids < 0 || bytes < 0 || !digits || *end != ' ' || depth >= MAX_DEPTH)
        return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: expected a peak tree node 'nK: BYTES ...', got '%.120s'", x->name,
                        x->line_no, s);
    const char *text = end + 1;
    if (depth == 0)
        return MLK_OK; /* the root: "(heap allocation functions) malloc/new/new[], --alloc-fns, etc." */
    if (!strncmp(text, "in ", 3) && strstr(text, "below massif's threshold")) {
        x->out->below_threshold_bytes += bytes;
        return MLK_OK;
    }
    frame_clear(&x->path[depth]);
    int nomem = 0;
    if (node_frame(text, &x->path[depth], &nomem))
        return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: expected '0xADDR: FUNCTION (FILE:LINE)', got '%.120s'", x->name,
                        x->line_no, text);
    if (nomem)
        return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->name);
    return kids == 0 ? add_site(x, bytes, depth) : MLK_OK;
}

static int one_line(ctx *x, const char *s)
{
    int64_t v;
    mlk_heap_peak *o = x->out;
    if (x->in_peak_tree && (s[0] == 'n' || s[0] == ' '))
        return tree_line(x, s);
    x->in_peak_tree = false;
    if (int_after(s, "snapshot=", &v)) {
        x->snapshot = (int)v;
        o->n_snapshots++;
        x->time = x->heap = x->extra = x->stacks = -1;
    } else if (int_after(s, "time=", &v)) {
        x->time = v;
    } else if (int_after(s, "mem_heap_B=", &v)) {
        x->heap = v;
    } else if (int_after(s, "mem_heap_extra_B=", &v)) {
        x->extra = v;
    } else if (int_after(s, "mem_stacks_B=", &v)) {
        x->stacks = v;
    } else if (!strncmp(s, "time_unit: ", 11)) {
        snprintf(o->time_unit, sizeof o->time_unit, "%.7s", s + 11);
    } else if (!strcmp(s, "heap_tree=peak")) {
        if (o->found)
            return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: a second heap_tree=peak snapshot", x->name, x->line_no);
        if (x->heap < 0 || x->extra < 0)
            return mlk_fail(x->err, MLK_E_PARSE, "%s:%d: the peak snapshot has no mem_heap_B or mem_heap_extra_B",
                            x->name, x->line_no);
        o->found = true;
        o->snapshot = x->snapshot;
        o->time = x->time;
        o->heap_bytes = x->heap;
        o->extra_bytes = x->extra;
        o->stacks_bytes = x->stacks < 0 ? 0 : x->stacks;
        x->in_peak_tree = true;
    }
    return MLK_OK;
}

static int cmp_site(const void *a, const void *b)
{
    int64_t x = ((const mlk_peak_site *)a)->bytes, y = ((const mlk_peak_site *)b)->bytes;
    return x < y ? 1 : x > y ? -1 : 0;
}

int mlk_massif_parse_buf(const char *text, size_t len, const char *name, mlk_heap_peak *out, mlk_error *err)
{
    memset(out, 0, sizeof *out);
    ctx x = {.name = name, .out = out, .err = err, .time = -1, .heap = -1, .extra = -1, .stacks = -1};
    int rc = len >= 5 && !strncmp(text, "desc:", 5)
                 ? MLK_OK
                 : mlk_fail(err, MLK_E_PARSE, "%s:1: expected massif's output (starting with 'desc:')", name);
    char line[4096];
    for (size_t i = 0; i < len && !rc;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1; /* a longer line is cut, never overrun */
        memcpy(line, text + i, n);
        line[n] = '\0';
        x.line_no++;
        rc = one_line(&x, line);
        i = j + 1;
    }
    for (int d = 0; d < MAX_DEPTH; d++)
        frame_clear(&x.path[d]);
    if (!rc && out->n_sites > 1)
        qsort(out->sites, (size_t)out->n_sites, sizeof *out->sites, cmp_site);
    return rc;
}

int mlk_massif_parse(const char *path, mlk_heap_peak *out, mlk_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = mlk_tool_read_file(path, &buf, &len, err);
    if (!rc)
        rc = mlk_massif_parse_buf(buf, len, path, out, err);
    free(buf);
    return rc;
}

void mlk_heap_peak_free(mlk_heap_peak *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_sites; i++)
        mlk_tool_frames_free(p->sites[i].frames, p->sites[i].n_frames);
    free(p->sites);
    p->sites = NULL;
    p->n_sites = 0;
}
