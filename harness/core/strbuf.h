/* strbuf.h: a growable string for building JSON, keys and tables.
 * It must never lose an allocation failure: once one happens the buffer stays failed and says so. */
#ifndef MLK_STRBUF_H
#define MLK_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mlk_buf {
    char *s;     /* NUL-terminated; NULL until something is appended */
    size_t len, cap;
    bool failed; /* an allocation failed: s is incomplete */
} mlk_buf;

void mlk_buf_printf(mlk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included: valid JSON in UTF-8 whatever s holds (control characters, C1
 * included, as \u00XX; bytes that are not UTF-8 as \ufffd). */
void mlk_buf_json(mlk_buf *b, const char *s);
/* Hand the string over (caller frees); NULL when empty or failed (the buffer is released then). */
char *mlk_buf_take(mlk_buf *b);
void mlk_buf_free(mlk_buf *b);

#endif
