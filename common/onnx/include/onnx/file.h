/* file.h: the file operations reading ONNX needs: open a regular file, read it whole, map it, pread exactly.
 * It must never parse anything, read past the size fstat gave, nor leave a descriptor or mapping unowned. */
#ifndef ONNX_FILE_H
#define ONNX_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "onnx/base.h"

/* Open path read-only and check it is a regular file (a directory, FIFO or device is refused without
 * blocking); *size is its length at open. The caller closes *fd.
 * Fails with -errno (open, fstat) or ONNX_E_IO ("not a regular file", too large), message naming path. */
int onnx_file_open(const char *path, int *fd, size_t *size, onnx_error *err);

/* Read a whole regular file into a buffer from alloc (NULL: libc), released with the same table's
 * free_fn; a unique pointer even for an empty file. Reads exactly the size fstat gave: a file that
 * shrinks meanwhile fails, one that grows is cut there. Fails like onnx_file_open, or with ONNX_E_NOMEM,
 * or ONNX_E_IO for a failed read; *buf and *len are untouched on failure. */
int onnx_file_read(const char *path, const onnx_alloc *alloc, uint8_t **buf, size_t *len, onnx_error *err);

/* Map a whole regular file read-only and private. An empty file gives *addr NULL and *len 0; the caller
 * owns the mapping (munmap). Fails like onnx_file_open, or with -errno from mmap. */
int onnx_file_map(const char *path, void **addr, size_t *len, onnx_error *err);

/* Read exactly n bytes at off from fd. 0, or -errno (-EIO for a file shorter than that). */
int onnx_file_pread(int fd, void *dst, size_t n, uint64_t off);

#endif
