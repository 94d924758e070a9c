/* tool.h: what memory tools report about a cell (`tool: memcheck | massif | lsan`): their output parsed into leak
 * records with stacks and the heap peak. It must never judge a tool cell by RSS, and never run anything: it reads. */
#ifndef MLK_TOOL_H
#define MLK_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "status.h"


/* ---- parsed findings --------------------------------------------------------------------------------------- */

/* A stack frame as the tool printed it. Any string may be NULL (not known); line 0 is not known. */
typedef struct mlk_frame {
    char *fn, *file, *obj;
    int line;
} mlk_frame;

/* The leak kinds of valgrind's LEAK SUMMARY. LeakSanitizer's "Direct leak" is definitely lost, "Indirect leak"
 * indirectly lost. */
typedef enum { MLK_LEAK_DEFINITELY = 0, MLK_LEAK_INDIRECTLY, MLK_LEAK_POSSIBLY, MLK_LEAK_REACHABLE,
               MLK_LEAK_KIND_COUNT } mlk_leak_kind;

/* "definitely", "indirectly", "possibly", "reachable" (the db's names). */
const char *mlk_leak_kind_name(int kind);

/* One loss record (valgrind) or leak block (LSan): the blocks allocated from one stack. */
typedef struct mlk_leak {
    mlk_leak_kind kind;
    int64_t bytes;        /* its own blocks: what valgrind's text LEAK SUMMARY adds up per kind */
    int64_t total_bytes;  /* with the blocks it owns indirectly (memcheck's leakedbytes); == bytes for LSan */
    int64_t blocks;       /* its own blocks */
    bool in_engine;       /* a frame lies outside the harness and the system libraries (mlk_leaks_attribute) */
    mlk_frame *frames;    /* innermost first: the allocator function, then its callers */
    int n_frames;
} mlk_leak;

typedef struct mlk_leak_report {
    mlk_leak *leaks;
    int n, cap;
    int64_t n_other_errors;   /* memcheck: errors that are not leaks (invalid read, ...); LSan: AddressSanitizer errors */
    char first_error[256];    /* the first of those, as the tool described it; "" when none */
    bool complete;            /* the tool finished its report (closing </valgrindoutput>, LSan's SUMMARY or none
                                 needed); false when the worker was killed before */
    int64_t summary_bytes;    /* LSan's SUMMARY line: bytes and allocations; -1 when absent */
    int64_t summary_allocs;
} mlk_leak_report;

void mlk_leak_report_free(mlk_leak_report *r);

/* Per kind, the sum of bytes (direct), of total_bytes and of blocks; engine_definite gets the definitely lost
 * bytes of records with in_engine set. Any out pointer may be NULL. */
void mlk_leaks_sum(const mlk_leak_report *r, int64_t bytes[MLK_LEAK_KIND_COUNT], int64_t blocks[MLK_LEAK_KIND_COUNT],
                   int64_t *engine_definite);

/* Set in_engine on every record: true when one of its frames is in an object that is neither one of the harness
 * executables named in harness (basenames or paths, NULL-terminated) nor a system library (the loader, libc and
 * its siblings, libstdc++, libgcc_s, valgrind's preloads, the sanitizer runtimes, the heap shim). A frame whose
 * object is unknown counts as the engine's: an unexplained leak is reported, never hidden. */
void mlk_leaks_attribute(mlk_leak_report *r, const char *const *harness);

/* True for the allocator entry point a stack starts with (malloc, operator new, __interceptor_calloc, ...). */
bool mlk_frame_is_allocator(const mlk_frame *f);

/* memcheck: valgrind's XML (protocol 4, --xml=yes) into *out (zeroed first; freed with mlk_leak_report_free,
 * also on failure). Leak errors become records; other errors are counted. MLK_E_PARSE names the file, line and
 * what was wrong (not XML, not valgrind's, a leak error without its kind or figures); MLK_E_IO; MLK_E_NOMEM. A
 * document that stops early (the worker was killed) is not an error: complete stays false. */
int mlk_memcheck_parse(const char *path, mlk_leak_report *out, mlk_error *err);
int mlk_memcheck_parse_buf(const char *xml, size_t len, const char *name, mlk_leak_report *out, mlk_error *err);

/* lsan: LeakSanitizer's text report ("Direct leak of N byte(s) in M object(s) allocated from:" blocks, each
 * with its "#K ..." frames, and the SUMMARY line), in the default frame format or in MLK_LSAN_FRAME_FORMAT.
 * Other text (the banner, AddressSanitizer errors, which are counted) is skipped. Same ownership and errors
 * as mlk_memcheck_parse_buf; a report whose figures disagree with its SUMMARY line is MLK_E_PARSE. */
int mlk_lsan_parse_buf(const char *text, size_t len, const char *name, mlk_leak_report *out, mlk_error *err);
/* Every file of dir whose name starts with prefix + "." (log_path writes PREFIX.PID), appended into *out. */
int mlk_lsan_parse_logs(const char *dir, const char *prefix, mlk_leak_report *out, mlk_error *err);

/* The frame format lsan cells ask for (ASAN_OPTIONS stack_trace_format): fields split by '|', the function
 * last (C++ names hold spaces), unknown fields printed as "<null>". */
#define MLK_LSAN_FRAME_FORMAT "#%n|%p|%m|%o|%s|%l|%f"

/* massif: one allocation site of the peak snapshot: a path of the peak tree from the allocation function's caller
 * to a leaf, with the bytes live through it at the peak. */
typedef struct mlk_peak_site {
    int64_t bytes;
    mlk_frame *frames;   /* innermost first */
    int n_frames;
} mlk_peak_site;

typedef struct mlk_heap_peak {
    bool found;          /* a heap_tree=peak snapshot was there */
    int snapshot;        /* its number */
    int n_snapshots;
    int64_t time;        /* its time, in time_unit */
    char time_unit[8];   /* "i" (instructions), "ms" or "B" */
    int64_t heap_bytes, extra_bytes, stacks_bytes; /* mem_heap_B, mem_heap_extra_B, mem_stacks_B */
    mlk_peak_site *sites; /* largest first */
    int n_sites;
    int64_t below_threshold_bytes; /* what massif lumped into "N places, all below massif's threshold" */
} mlk_heap_peak;

/* massif's output file (--massif-out-file) into *out (zeroed first; freed with mlk_heap_peak_free, also on
 * failure). A file without a peak snapshot leaves found false. MLK_E_PARSE names file:line; MLK_E_IO; NOMEM. */
int mlk_massif_parse(const char *path, mlk_heap_peak *out, mlk_error *err);
int mlk_massif_parse_buf(const char *text, size_t len, const char *name, mlk_heap_peak *out, mlk_error *err);
void mlk_heap_peak_free(mlk_heap_peak *p);

/* ---- tool_text.c ---- */
/* "fn (file.c:12)", "fn (in libx.so)" or "??? (in libx.so)": file and object by their base names. */
void mlk_tool_frame_str(const mlk_frame *f, char *out, size_t len);
/* The stack without its allocator frames, "a (x.c:1) < b (y.c:2) ...", at most max frames, then " [object]". */
void mlk_tool_stack_str(const mlk_frame *f, int n, int max, char *out, size_t len);

#endif
