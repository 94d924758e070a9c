/* alloc.h: the one allocation hook every engine allocation goes through, with byte accounting
 * and the N-th-allocation fault injector. It must never abort: a failed allocation returns NULL. */
#ifndef REF_ALLOC_H
#define REF_ALLOC_H

#include <stddef.h>

/* All return NULL on failure (real or injected). Zero-byte requests return a unique pointer.
 * Every pointer from any of them is released with ref_free, which accepts NULL. */
void *ref_malloc(size_t n);
void *ref_calloc(size_t count, size_t size); /* zeroed; NULL on count*size overflow */
void *ref_realloc(void *p, size_t n);        /* like realloc; on failure p stays valid */
void *ref_aligned_alloc(size_t n);           /* 64-byte aligned, for tensors and packed weights */
void ref_free(void *p);

/* Copy of s[0..n) plus a NUL, from ref_malloc. */
char *ref_strndup(const char *s, size_t n);

#define REF_ALIGN 64
static inline size_t ref_align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

#endif
