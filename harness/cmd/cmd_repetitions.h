/* cmd_repetitions.h: memleak-run --repetitions N: the runs' figures aggregated per cell, as Google Benchmark
 * aggregates its repetitions (mean, median, stddev, cv), printed and optionally as JSON members.
 * It must never aggregate figures of different configs, nor count a figure that was not measured. */
#ifndef MLK_CMD_REPETITIONS_H
#define MLK_CMD_REPETITIONS_H

#include <stdint.h>
#include <stdio.h>

#include "status.h"
#include "store.h"
#include "strbuf.h"

/* Print, for every config of the runs run_ids[0..n) and its whole iteration, the mean, median, stddev and cv of
 * peak_kib, final_rss_kib, final_heap_bytes, growth and wall_ms over the runs that measured it; json (may be NULL)
 * gets the same as a "repetitions" array member (a leading comma included). MLK_E_DB, MLK_E_NOMEM. */
int mlk_reps_report(db_store *db, const int64_t *run_ids, int n, FILE *out, mlk_buf *json, mlk_error *err);

#endif
