/* fmt.c: figures as people read them (bytes in B/KiB/MiB/GiB), for the final table, reports and messages.
 * It must never print past the buffer it is given, and never print a figure that was not measured as 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

void mlk_fmt_bytes(char *out, size_t len, double bytes, bool signed_)
{
    if (isnan(bytes)) {
        snprintf(out, len, "-");
        return;
    }
    double a = fabs(bytes);
    const char *sign = bytes < 0 ? "-" : signed_ ? "+" : "";
    if (a < 1024)
        snprintf(out, len, "%s%.0f B", sign, a);
    else if (a < 1024.0 * 1024)
        snprintf(out, len, "%s%.1f KiB", sign, a / 1024);
    else if (a < 1024.0 * 1024 * 1024)
        snprintf(out, len, "%s%.1f MiB", sign, a / (1024.0 * 1024));
    else
        snprintf(out, len, "%s%.2f GiB", sign, a / (1024.0 * 1024 * 1024));
}


const char *mlk_base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

