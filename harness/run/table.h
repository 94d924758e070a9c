/* table.h: the final table memleak-run prints: per cell and step, the peak, growth per iteration and verdict.
 * It must never print a figure that was not measured: those show as "-". */
#ifndef MLK_TABLE_H
#define MLK_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "db_sites.h"
#include "plan.h"
#include "store.h"

typedef struct mlk_table_row {
    const mlk_cell *cell;
    bool ran;               /* false: finished in an earlier attempt (resume) or outside this shard */
    char status[32];
    char detail[600];
    bool heap;
    double slope;           /* growth per iteration of the series the verdict rests on (NaN when not judged) */
    bool slope_counts;      /* that series counts things (descriptors, threads), not bytes */
    char series_line[480];  /* "      leak: open file descriptors +1.00/iter (fds); live heap flat\n", or "" */
    db_step_stats steps[16];
    int n_steps;
    char tool[2048];        /* tool cells (issue 6): lines naming the largest leaks or peak sites; "" otherwise */
    char sites[2048];       /* plain cells (issue 9): lines naming the fastest growing sites; "" when none reported */
} mlk_table_row;

void mlk_table_print(FILE *f, const mlk_plan *p, const mlk_table_row *rows, int n);
/* The lines under a cell's steps naming its top growing sites (or why none is named) from the worker's report. */
void mlk_table_sites(mlk_table_row *row, const db_site_report *r);

#endif
