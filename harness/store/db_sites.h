/* db_sites.h: where a cell's memory grew (issue 9): the worker's site report (how sites were recorded, the growing
 * sites and their stacks) into the db's site_reports, growth_sites and growth_site_frames, and back out for the
 * final table and the HTML report. It must never store a figure that was not measured as anything but NULL. */
#ifndef MLK_DB_SITES_H
#define MLK_DB_SITES_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"
#include "store.h"

typedef struct db_site_frame {
    char *fn, *file, *obj; /* NULL when unknown */
    int line;              /* 0 when unknown */
    int64_t offset;        /* -1 when unknown */
} db_site_frame;

typedef struct db_growth_site {
    char kind[8];          /* heap, mmap, maps */
    double bytes_per_iter;
    double blocks_per_iter; /* NaN when not measured */
    int64_t growth_bytes, live_bytes;
    int64_t live_blocks;   /* -1 when not measured */
    char *path;            /* NULL when none */
    db_site_frame *frames; /* innermost first: frames[0] is the site's caller */
    int n_frames, cap_frames;
} db_growth_site;

typedef struct db_site_report {
    bool have;             /* an info line arrived */
    char mode[8];          /* sample, exact, maps */
    int64_t sample_bytes;  /* -1 unless sample */
    int n_checkpoints, first_iteration, last_iteration;
    int64_t n_sites, stacks, dropped_sites, dropped_blocks, dropped_mappings; /* -1 when not measured */
    double unwind_ns, symbolize_ms; /* NaN when not measured */
    int window_iterations;  /* issue 23: the window of exact stacks (0: none ran; heap sites are then sampled) */
    double window_ms;
    int64_t window_stacks;  /* -1 when not measured */
    db_growth_site *sites; /* by seq, fastest growing first */
    int n, cap;
} db_site_report;

/* Replace cell_id's site report with r (nothing when !r->have), in one transaction. MLK_E_DB. */
int db_sites_store(db_store *db, int64_t cell_id, const db_site_report *r, mlk_error *err);
/* cell_id's site report, with up to max_sites sites and their frames, into *out (zeroed first; out->have false when
 * there is none, or the db predates the tables). MLK_E_DB, MLK_E_NOMEM. */
int db_sites_load(db_store *db, int64_t cell_id, int max_sites, db_site_report *out, mlk_error *err);
void db_site_report_free(db_site_report *r);

/* The frame that names a site in one line: the first outside the runtime libraries (C, C++, libgcc, libm, the
 * loader), whose frames inside a site's stack are the C++ library's own code for the caller (std::vector's growth,
 * std::string's); the first frame when all are. NULL when the site has no frames. */
const db_site_frame *db_site_frame_pick(const db_growth_site *s);
/* One line for a site: "+4.0 KiB/iter  fn (file:line)  obj" or "+1.2 MiB/iter  /path  [maps]"; cut to fit len. */
void db_site_describe(const db_growth_site *s, char *out, size_t len);

#endif
