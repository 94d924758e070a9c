/* layout_copy.c: the copy, gather and fill kernels behind every data-movement operator.
 * It must never allocate or read outside the views it is given; all work splits over independent outputs. */
#include <string.h>

#include "layout_copy.h"

#define COPY_CHUNK_BYTES ((int64_t)64 * 1024)
#define ROW_GRAIN_ELEMS 32768 /* below about this many elements a loop runs on one thread */
#define TILE 32               /* transpose tile edge: 32x32 elements of 8 bytes stay within L1 */

/* ---------------------------------------------------------------------------------------------
 * Plain copies and fills
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    char *dst;
    const char *src;
    size_t n;
} copy_job;

static void copy_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const copy_job *j = arg;
    size_t from = (size_t)(begin * COPY_CHUNK_BYTES);
    size_t to = (size_t)(end * COPY_CHUNK_BYTES);
    if (to > j->n)
        to = j->n;
    memcpy(j->dst + from, j->src + from, to - from);
}

void ref_layout_copy(ref_pool *pool, void *dst, const void *src, size_t n)
{
    if (!n)
        return;
    copy_job j = {dst, src, n};
    int64_t chunks = ((int64_t)n + COPY_CHUNK_BYTES - 1) / COPY_CHUNK_BYTES;
    ref_parallel_for(pool, chunks, 2, copy_task, &j);
}

void ref_layout_fill(void *dst, const void *elem, size_t esize, int64_t n)
{
    char *d = dst;
    if (n <= 0)
        return;
    /* memset when every byte of the element is equal (zero, all-true bool, -1 ints) */
    const unsigned char *e = elem;
    size_t k = 1;
    while (k < esize && e[k] == e[0])
        k++;
    if (k == esize) {
        memset(d, e[0], (size_t)n * esize);
        return;
    }
    switch (esize) {
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + i * 2, elem, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + i * 4, elem, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + i * 8, elem, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * esize, elem, esize); break;
    }
}

void ref_layout_copy_strided(char *dst, const char *src, int64_t n, int64_t stride, size_t esize)
{
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    if (stride == 0) {
        ref_layout_fill(dst, src, esize, n);
        return;
    }
    /* constant-size memcpy compiles to one load and store, and sidesteps strict aliasing */
    switch (esize) {
    case 1: for (int64_t i = 0; i < n; i++) dst[i] = src[i * stride]; break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(dst + i * 2, src + i * stride * 2, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(dst + i * 4, src + i * stride * 4, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(dst + i * 8, src + i * stride * 8, 8); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + (size_t)i * esize, src + (size_t)(i * stride) * esize, esize);
        break;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Strided gather
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    char *dst;
    const char *src;
    size_t esize;
    int rank;
    int64_t dims[REF_LAYOUT_MAX_RANK];
    int64_t strides[REF_LAYOUT_MAX_RANK];
} gather_job;

/* Source offset (elements) of the outer index `o` over dims[0..n_outer), plus its digits in idx. */
static int64_t outer_offset(const gather_job *j, int n_outer, int64_t o, int64_t *idx)
{
    int64_t off = 0;
    for (int d = n_outer - 1; d >= 0; d--) {
        idx[d] = o % j->dims[d];
        o /= j->dims[d];
        off += idx[d] * j->strides[d];
    }
    return off;
}

/* Rows are the last dim; every other dim is walked like an odometer from the range start. */
static void gather_rows_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gather_job *j = arg;
    int n_outer = j->rank - 1;
    int64_t len = j->dims[n_outer], stride = j->strides[n_outer];
    size_t row_bytes = (size_t)len * j->esize;
    int64_t idx[REF_LAYOUT_MAX_RANK];
    int64_t off = outer_offset(j, n_outer, begin, idx);
    for (int64_t r = begin; r < end; r++) {
        ref_layout_copy_strided(j->dst + (size_t)r * row_bytes, j->src + (size_t)off * j->esize, len, stride,
                                j->esize);
        for (int d = n_outer - 1; d >= 0; d--) {
            off += j->strides[d];
            if (++idx[d] < j->dims[d])
                break;
            off -= j->strides[d] * j->dims[d];
            idx[d] = 0;
        }
    }
}

/* Units are (outer block, tile of TILE output rows). Within a block, dst[a][b] = src[base + a + b*s]:
 * the output's row index is contiguous in src, its column index strided, hence the tiles. */
static void gather_transpose_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gather_job *j = arg;
    int n_outer = j->rank - 2;
    int64_t A = j->dims[n_outer], B = j->dims[n_outer + 1], s = j->strides[n_outer + 1];
    int64_t tiles_a = (A + TILE - 1) / TILE;
    size_t es = j->esize;
    int64_t idx[REF_LAYOUT_MAX_RANK];
    for (int64_t u = begin; u < end; u++) {
        int64_t o = u / tiles_a, a0 = (u % tiles_a) * TILE;
        int64_t a1 = a0 + TILE < A ? a0 + TILE : A;
        const char *base = j->src + (size_t)outer_offset(j, n_outer, o, idx) * es;
        char *out = j->dst + (size_t)(o * A * B) * es;
        for (int64_t b0 = 0; b0 < B; b0 += TILE) {
            int64_t b1 = b0 + TILE < B ? b0 + TILE : B;
            for (int64_t a = a0; a < a1; a++)
                ref_layout_copy_strided(out + (size_t)(a * B + b0) * es, base + (size_t)(a + b0 * s) * es,
                                        b1 - b0, s, es);
        }
    }
}

/* Drop size-1 dims and merge neighbours that are contiguous with each other in src.
 * Returns the new rank (>= 1), or 0 when the view is empty. */
static int coalesce(gather_job *j, int rank, const int64_t *dims, const int64_t *strides)
{
    int n = 0;
    for (int d = 0; d < rank; d++) {
        if (dims[d] == 0)
            return 0;
        if (dims[d] == 1)
            continue;
        if (n > 0 && j->strides[n - 1] == strides[d] * dims[d]) {
            j->dims[n - 1] *= dims[d];
            j->strides[n - 1] = strides[d];
            continue;
        }
        j->dims[n] = dims[d];
        j->strides[n] = strides[d];
        n++;
    }
    if (n == 0) {
        j->dims[0] = 1;
        j->strides[0] = 1;
        n = 1;
    }
    return n;
}

void ref_layout_gather(ref_pool *pool, void *dst, const void *src, size_t esize, int rank, const int64_t *dims,
                       const int64_t *strides)
{
    gather_job j = {.dst = dst, .src = src, .esize = esize};
    j.rank = coalesce(&j, rank, dims, strides);
    if (j.rank == 0)
        return;
    int r = j.rank;
    if (r == 1 && j.strides[0] == 1) {
        ref_layout_copy(pool, dst, src, (size_t)j.dims[0] * esize);
        return;
    }
    if (r >= 2 && j.strides[r - 2] == 1 && j.strides[r - 1] > 1) {
        int64_t A = j.dims[r - 2], B = j.dims[r - 1];
        int64_t units = ref_dims_prod(j.dims, 0, r - 2) * ((A + TILE - 1) / TILE);
        int64_t per_unit = (A < TILE ? A : TILE) * B;
        ref_parallel_for(pool, units, ROW_GRAIN_ELEMS / per_unit + 1, gather_transpose_task, &j);
        return;
    }
    int64_t rows = ref_dims_prod(j.dims, 0, r - 1);
    ref_parallel_for(pool, rows, ROW_GRAIN_ELEMS / j.dims[r - 1] + 1, gather_rows_task, &j);
}

int ref_layout_want_sized(ref_op_ctx *c, int i, const char *op)
{
    const ref_tensor *t = ref_layout_in(c, i);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "%s: input %d is required", op, i);
    if (ref_dtype_size(t->dtype) == 0)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input %d has unsupported type %s", op, i,
                        ref_dtype_name(t->dtype));
    return REF_OK;
}
