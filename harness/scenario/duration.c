/* duration.c: "8h", "90m", "1h30m", "45s", "2.5h" or a plain number of seconds into seconds, for `duration:` and
 * `--duration`. It must never accept a negative, zero, non-finite or absurd (over a year) length, nor one shorter
 * than the worker's clock counts (it is handed whole milliseconds: 0.0000001s would reach it as 0). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>

#include "scenario.h"

int mlk_parse_duration(const char *text, double *seconds)
{
    if (!text || !*text)
        return -1;
    double total = 0;
    const char *p = text;
    bool any_unit = false;
    while (*p) {
        if (!isdigit((unsigned char)*p) && *p != '.')
            return -1;
        char *end = NULL;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v) || v < 0)
            return -1;
        double unit = 1;
        switch (*end) {
        case 'd': unit = 86400; break;
        case 'h': unit = 3600; break;
        case 'm': unit = 60; break;
        case 's': unit = 1; break;
        case '\0':
            if (any_unit)
                return -1; /* "1h30" says minutes or seconds? refuse rather than guess */
            unit = 1;
            end--;
            break;
        default: return -1;
        }
        any_unit |= end[0] != '\0' && !isdigit((unsigned char)end[0]) && end[0] != '.';
        total += v * unit;
        p = end + 1;
    }
    if (!(total > 0) || total > 366.0 * 86400)
        return -1;
    if (total < MLK_DURATION_MIN_S)
        return -2;
    *seconds = total;
    return 0;
}
