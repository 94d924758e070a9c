/* keep.h: which samples of a long cell the store keeps: every sample of the first and last iterations, one
 * iteration in `stride` in between, stride doubling so that the store stays bounded. It must never drop a sample of
 * setup or teardown, nor one of the last `tail` iterations before the cell ends. */
#ifndef MLK_KEEP_H
#define MLK_KEEP_H

#include <stdint.h>

#include "sample.h"

/* Defaults: a cell of up to MLK_KEEP_HEAD + MLK_KEEP_MID + MLK_KEEP_TAIL iterations keeps every sample. */
#define MLK_KEEP_HEAD 1000
#define MLK_KEEP_TAIL 1000
#define MLK_KEEP_MID 2000

typedef struct mlk_keep mlk_keep;

/* head iterations kept whole at the start, tail at the end, at most mid in between (mid >= 2). NULL: no memory. */
mlk_keep *mlk_keep_new(int64_t head, int64_t tail, int mid);
void mlk_keep_free(mlk_keep *k);

/* The sample stored under seq (samples come in order). 0, or -1 when memory runs out. */
int mlk_keep_note(mlk_keep *k, const mlk_sample *s, int64_t seq);

/* The seq ranges to drop now (each [lo, hi], inclusive); *n of them, valid until the next call. */
const int64_t (*mlk_keep_drops(mlk_keep *k, int *n))[2];
/* The drops were done: forget them. */
void mlk_keep_drops_done(mlk_keep *k);

/* What was kept: true when any iteration was dropped, with the figures of sample_resolution (db/schema.sql). */
bool mlk_keep_summary(const mlk_keep *k, int64_t *head, int64_t *stride, int64_t *tail_from, int64_t *iterations);

#endif
