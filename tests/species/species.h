/* species.h: the acts of engine_species.so that must stay out of the compiler's reach (lost blocks, mapped files,
 * churn) and the C++ one. It must never be compiled into anything but the test plugin. */
#ifndef SPECIES_H
#define SPECIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Write every byte of p through a volatile pointer, then forget p: a definitely lost block the compiler keeps. */
void species_lose(void *p, size_t n);
/* Let p escape (an opaque call the compiler cannot see into) without touching its memory: a malloc/free pair
 * around it is not optimized away. */
void species_keep_untouched(void *p);
/* operator new[] of n bytes, touched and forgotten. */
void species_cxx_lose(size_t n);
/* Map the file at path read-only and read one byte per page; never unmapped. */
void species_map_file(const char *path);
/* Blocks of sizes varying with k, allocated and freed in a scrambled order: the heap fragments, nothing stays. */
void species_churn(int64_t k);
/* A pool of 512 blocks of 1 B to 64 KiB (sizes from a fixed-seed generator), 64 of them replaced per call: live bytes
 * stay around 16 MiB, while the allocator's pages fragment for hundreds of calls (issue 23). */
void species_churn_pool(int64_t k);
/* n blocks of `bytes`, each allocated and freed (untouched) at the end of a call chain SPECIES_PATH_DEPTH calls deep
 * whose shape (which of two functions each level calls) is the bits of first + i: every call takes stacks no earlier
 * call took, while nothing stays allocated. */
#define SPECIES_PATH_DEPTH 20
void species_paths(uint64_t first, int n, size_t bytes);
/* One page of anonymous memory from the kernel directly (no mmap the heap shim follows), touched, never unmapped:
 * growth only RssAnon and VmSize see. */
void species_lose_page(void);
/* Keep this plugin mapped after the host's dlclose (RTLD_NODELETE). */
void species_pin(void);
/* The folder holding this plugin. */
bool species_self_dir(char *out, size_t len);

#endif
