/* fmt.h: figures as people read them, shared by the final table, the reports and messages.
 * It must never print past the buffer it is given, and never print a figure that was not measured as 0. */
#ifndef MLK_FMT_H
#define MLK_FMT_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes as "512 B", "12.3 KiB", "4.5 MiB", "1.25 GiB", with a sign when signed_ is set; NaN (not measured) as "-". */
void mlk_fmt_bytes(char *out, size_t len, double bytes, bool signed_);

/* The last component of path (path itself when it has no '/'; NULL for NULL). */
const char *mlk_base_name(const char *path);

#endif
