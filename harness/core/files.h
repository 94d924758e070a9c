/* files.h: opening input files that must be regular files (a model, a scenario, an input tensor) without ever blocking
 * on a FIFO or reading a device forever, and making folders with mkdir(2). It must never start a process. */
#ifndef MLK_FILES_H
#define MLK_FILES_H

#include <stdint.h>

#include "status.h"

/* Open path for reading: *fd (O_CLOEXEC, blocking reads) and its size. A FIFO never blocks the open (O_NONBLOCK),
 * and anything but a regular file (folder, FIFO, device, socket) is refused: MLK_E_PARSE "WHAT PATH is a folder,
 * not a regular file". Missing: MLK_E_NOTFOUND; not readable by the user (permissions, a loop of links): MLK_E_PARSE;
 * anything else: MLK_E_IO. what names the file for people ("model"). */
int mlk_open_regular(const char *path, const char *what, int *fd, int64_t *size, mlk_error *err);

/* Make path and its missing parents (mode 0755), like mkdir -p; an existing folder is fine. MLK_E_IO names the part
 * that could not be made. */
int mlk_mkdirs(const char *path, mlk_error *err);

#endif
