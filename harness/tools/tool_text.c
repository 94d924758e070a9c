/* tool_text.c: a tool's stack frames as one line of text, for the final table and the HTML report.
 * It must never print past the buffer it is given: every piece is cut to fit. */
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "tool.h"

void mlk_tool_frame_str(const mlk_frame *f, char *out, size_t len)
{
    const char *fn = f->fn ? f->fn : "???";
    if (f->file && f->line > 0)
        snprintf(out, len, "%s (%s:%d)", fn, mlk_base_name(f->file), f->line);
    else if (f->file)
        snprintf(out, len, "%s (%s)", fn, mlk_base_name(f->file));
    else if (f->obj)
        snprintf(out, len, "%s (in %s)", fn, mlk_base_name(f->obj));
    else
        snprintf(out, len, "%s", fn);
}

/* The stack without its allocator frames, "a (x.c:1) < b (y.c:2) ...", at most max frames. */
void mlk_tool_stack_str(const mlk_frame *f, int n, int max, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    int shown = 0, k = 0;
    while (k < n - 1 && mlk_frame_is_allocator(&f[k]))
        k++;
    const char *obj = NULL;
    for (; k < n && shown < max && used < len; k++, shown++) {
        char one[512];
        mlk_tool_frame_str(&f[k], one, sizeof one);
        if (!obj && f[k].obj)
            obj = f[k].obj;
        used += (size_t)snprintf(out + used, len - used, "%s%s", shown ? " < " : "", one);
    }
    if (k < n && used < len)
        used += (size_t)snprintf(out + used, len - used, " < ...");
    if (obj && used < len)
        snprintf(out + used, len - used, " [%s]", mlk_base_name(obj));
}

