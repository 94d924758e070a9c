/* text.h: text from outside the harness (model, node and op names, engine messages, scenario values, db rows) made
 * safe to show on a terminal and valid in Markdown, HTML and XML: every control character (C0, DEL, C1) as a visible
 * escape, every byte that is not part of UTF-8 as U+FFFD. The one place that decides it: every output point calls it.
 * It must never let a control character through, never cut a character in two, and never allocate. */
#ifndef MLK_TEXT_H
#define MLK_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Keep '\n' (and '\t') as they are: for whole messages and TSV lines, whose line breaks are the harness's own. */
#define MLK_TEXT_KEEP_NL 1
#define MLK_TEXT_KEEP_TAB 2

/* s's safe form into out (len bytes, at least 1; always NUL-terminated; a character that does not fit is left out,
 * never cut): ESC as "\e", BEL "\a", BS "\b", CR "\r", LF "\n", TAB "\t" (unless flags keep them), other C0
 * controls and DEL as "\xHH", C1 controls (U+0080..U+009F) as "\u0080".."\u009f", invalid UTF-8 (a stray byte,
 * overlong forms, surrogates, past U+10FFFF) as U+FFFD. NULL s gives "". Returns out. */
const char *mlk_text_safe(const char *s, char *out, size_t len, int flags);

/* The safe form of the one character at s (s[0] != 0) into rep (NUL-terminated, at most 8 bytes): for writers that
 * escape further (XML, Markdown, TSV). *used: how many bytes of s it stands for (1..4). Returns rep's length. */
size_t mlk_text_char(const char *s, int flags, char rep[9], size_t *used);

/* True when s needs no change (no control character, valid UTF-8); NULL is safe. */
bool mlk_text_is_safe(const char *s, int flags);

/* Write s's safe form to f (no length limit); returns fputs's result (EOF on error). */
int mlk_fputs_safe(const char *s, FILE *f, int flags);

/* fprintf, then the whole text made safe, its line breaks kept (MLK_TEXT_KEEP_NL): for messages that carry outside
 * text (an error naming a node). At most 8 KiB of formatted text; the rest is cut at a character. */
int mlk_fprintf_safe(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
