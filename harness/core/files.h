/* files.h: files that must be regular files (a model, a scenario, a db, a plugin, a report's output) opened or checked
 * without ever blocking on a FIFO or reading a device forever, and folders made with mkdir(2). It must never start a
 * process. */
#ifndef MLK_FILES_H
#define MLK_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

/* Open path for reading: *fd (O_CLOEXEC, blocking reads) and its size. A FIFO never blocks the open (O_NONBLOCK),
 * and anything but a regular file (folder, FIFO, device, socket) is refused: MLK_E_PARSE "WHAT PATH is a folder,
 * not a regular file". Missing: MLK_E_NOTFOUND; not readable by the user (permissions, a loop of links): MLK_E_PARSE;
 * anything else: MLK_E_IO. what names the file for people ("model"). */
int mlk_open_regular(const char *path, const char *what, int *fd, int64_t *size, mlk_error *err);

/* The same check without keeping the file open, for a path another library opens (dlopen, SQLite, a preload):
 * those would block in open() on a FIFO. missing_ok: a path that does not exist yet passes (a db to be made);
 * a link to nothing never does. Codes as mlk_open_regular's. */
int mlk_check_regular(const char *path, const char *what, bool missing_ok, mlk_error *err);

/* Read a whole regular file of at most max_bytes (opened as mlk_open_regular does) into *text (NUL-terminated,
 * the caller frees it) and *len. Larger: MLK_E_PARSE naming the limit. */
int mlk_read_regular(const char *path, const char *what, size_t max_bytes, char **text, size_t *len, mlk_error *err);

/* Create or truncate an output file for writing without ever blocking: a FIFO, a device, a socket or a folder at
 * path, or a link to nothing, is refused (MLK_E_PARSE naming what is there). *out is a FILE the caller fcloses. */
int mlk_create_file(const char *path, const char *what, FILE **out, mlk_error *err);

/* Make path and its missing parents (mode 0755), like mkdir -p; an existing folder is fine. MLK_E_IO names the part
 * that could not be made. */
int mlk_mkdirs(const char *path, mlk_error *err);

#endif
