/* tool_internal.h: what the tool parsers (tool_memcheck.c, tool_lsan.c, tool_massif.c) share: growing leak and
 * frame arrays, and reading a whole output file. It must never be included outside harness/tool*.c. */
#ifndef MLK_TOOL_INTERNAL_H
#define MLK_TOOL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "tool.h"

/* Outputs bigger than this are refused: a valgrind XML of a few thousand loss records stays far below. */
#define MLK_TOOL_MAX_FILE ((size_t)256 << 20)

/* Append a zeroed record; NULL when out of memory. */
mlk_leak *mlk_tool_leak_add(mlk_leak_report *r);
/* Append a zeroed frame to *frames (*n of them); NULL when out of memory. */
mlk_frame *mlk_tool_frame_add(mlk_frame **frames, int *n);
void mlk_tool_frames_free(mlk_frame *f, int n);
/* A NUL-terminated copy of s[0..n) with surrounding blanks removed; NULL for an empty result or no memory
 * (*nomem tells them apart). */
char *mlk_tool_strndup(const char *s, size_t n, int *nomem);

/* "FILE:LINE" or "FILE:LINE:COL" (loc[0..n)) into f->file and f->line; false when loc does not end in a line
 * number. *nomem is set when the copy fails. */
bool mlk_tool_file_line(const char *loc, size_t n, mlk_frame *f, int *nomem);

/* The whole file (NUL-terminated, malloc'd) into *out, *len. MLK_E_IO names path; over MLK_TOOL_MAX_FILE too. */
int mlk_tool_read_file(const char *path, char **out, size_t *len, mlk_error *err);

#endif
