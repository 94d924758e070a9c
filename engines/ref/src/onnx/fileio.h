/* fileio.h: the few file operations the ONNX reader and writer need: slurp, map, pread, folder of a path.
 * It must never parse anything, and never leave a descriptor open or a mapping unowned on failure. */
#ifndef REF_ONNX_FILEIO_H
#define REF_ONNX_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "../status.h"

/* Read a whole regular file into a ref_malloc buffer (*buf, free with ref_free; a unique pointer even
 * for an empty file). Fails with REF_E_IO naming the path, or REF_E_NOMEM. */
int ref_file_slurp(const char *path, uint8_t **buf, size_t *len, ref_error *err);

/* Map a whole regular file read-only and private. An empty file gives *addr NULL and *len 0; the
 * caller owns the mapping (munmap). Fails with REF_E_IO naming the path. */
int ref_file_map(const char *path, void **addr, size_t *len, ref_error *err);

/* Open a regular file read-only; *size is its length. The caller closes *fd. REF_E_IO naming the path. */
int ref_file_open(const char *path, int *fd, size_t *size, ref_error *err);

/* Read exactly n bytes at off from fd. 0, or -errno (-EIO for a file shorter than expected). */
int ref_fd_pread_all(int fd, void *dst, size_t n, uint64_t off);

/* The folder of path as a ref_malloc string ("." when path has no slash), or NULL when out of memory. */
char *ref_path_dir(const char *path);

#endif
