/* pjds_block.h — blocked pJDS (pJDS-b): pJDS over runs of b consecutive
 * columns, for matrices made of dense b x b blocks (CFD Jacobians, the
 * block-stencil model).
 *
 * One column index per run of b entries instead of one per entry: a stored
 * entry costs 8 + 4/b bytes instead of 12 (8.8 B for b = 5, 8.67 for b = 6),
 * so the memory floor of y = A x drops by up to 12 / (8 + 4/b).
 *
 * Layout (chunk height C, chunk c = r / C, lane = r % C, as pJDS):
 *   - a row's columns are covered by row_runs[r] runs; run j of row r starts
 *     at column rcol[run_off[c] + j * C + lane] and covers the b columns
 *     start .. start + b - 1 (start + b <= ncols);
 *   - element k of run j of row r has the value
 *         val[chunk_start[c] + (j * b + k) * C + lane],  chunk_start[c] = b * run_off[c];
 *   - chunk c is padded to chunk_width[c] runs; padding runs (and columns of
 *     a run that hold no entry, the "fill") have value 0 and valid columns.
 * Rows are permuted symmetrically (P A P^T) by block rows: block row q (rows
 * q b .. q b + b - 1 of the input) moves as a unit, so the b columns of an
 * input block stay consecutive in the permuted basis; block rows are sorted
 * by descending run count inside windows of ceil(sigma / b) block rows
 * (pjds_sort_perm), sigma <= 0: all rows (pJDS), sigma = 1: no sort.
 */
#ifndef PL_PJDS_BLOCK_H
#define PL_PJDS_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "pl_build.h"
#include "spmv.h"

#define PJDS_BLOCK_MAX_B 8

typedef struct pjds_block {
    int32_t nrows, ncols;  /* square: ncols == nrows                          */
    int32_t b;             /* run length, 1..PJDS_BLOCK_MAX_B                  */
    int32_t C;             /* chunk height                                     */
    int32_t nchunks;       /* ceil(nrows / C)                                  */
    int64_t sort_window;   /* sigma actually used, in rows (>= 1)              */
    int64_t nnz;           /* true entries of the input                        */
    int64_t nruns;         /* stored runs incl. padding runs = run_off[nchunks] */
    int64_t nruns_true;    /* runs of the rows (no padding runs)               */
    int64_t *run_off;      /* nchunks + 1 offsets into rcol                    */
    int64_t *chunk_start;  /* nchunks + 1 offsets into val (= b * run_off)     */
    int32_t *chunk_width;  /* nchunks: most runs of a row of the chunk         */
    int32_t *row_runs;     /* nchunks * C: runs of each permuted row (pad 0)   */
    int32_t *rcol;         /* nruns run start columns (permuted basis)         */
    double *val;           /* nruns * b values                                 */
    int32_t *perm;         /* nrows: perm[new] = old row                       */
} pjds_block;

/* Runs of b consecutive aligned columns [q b, q b + b) needed to cover the
 * rows of a CSR (columns int32, any order, duplicates allowed): *nruns =
 * sum over rows of the distinct q = col / b.  Fill ratio of b =
 * (b nruns - nnz) / nnz.  b in 1..PJDS_BLOCK_MAX_B.  Can fail only for bad
 * arguments or out of memory. */
int pjds_block_count_runs(int32_t n, const int64_t *row_ptr, const int32_t *col, int b, int64_t *nruns);

/* Detection: the run length b in 2..PJDS_BLOCK_MAX_B (b <= ncols) whose fill
 * ratio is at most max_fill (e.g. 0.05) and whose traffic per true entry
 * (1 + fill)(8 + 4 / b) is smallest (for fill 0 that is the largest such b);
 * *b = 1 and *fill = 0 when no b fits (or nnz = 0): use plain pJDS then.
 * fill_of_b (optional, PJDS_BLOCK_MAX_B + 1 entries): the fill ratio of
 * every b (index b; -1 where b > ncols; [0] and [1] are 0).  Not collective. */
int pjds_block_detect(int32_t n, int32_t ncols, const int64_t *row_ptr, const int32_t *col, double max_fill, int *b,
                      double *fill, double *fill_of_b);

/* Build pJDS-b from a square local CSR (n rows, columns in [0, n), original
 * order, int32; any column order inside a row; duplicates are summed) with
 * run length b (1..PJDS_BLOCK_MAX_B, b <= n unless n = 0), chunk height C,
 * sort window sigma (rows).  Allocates; free with pjds_block_destroy.
 * PL_ERR_ARG for bad arguments or a column out of range, PL_ERR_MEM. */
int pjds_block_create(int32_t n, const int64_t *row_ptr, const int32_t *col, const double *val, int b, int C,
                      int64_t sigma, pjds_block *out);
/* Frees the arrays and zeroes *p; accepts NULL and zeroed structs. */
void pjds_block_destroy(pjds_block *p);
/* y = A x in the permuted basis (x, y: nrows entries; x[i] is input row
 * perm[i]); OpenMP over chunks; per row the sum runs over j, then k, in
 * order (as the CUDA kernel).  Can't fail. */
void pjds_block_spmv(const pjds_block *p, const double *x, double *y);
/* Host bytes of the format's arrays (rcol, val, run_off, chunk_width,
 * row_runs; chunk_start and perm, which a device copy does not hold, are
 * not counted).  Can't fail. */
size_t pjds_block_bytes(const pjds_block *p);

#if PJDS_HAVE_CUDA
/* ---- CUDA (spmv/cuda/pjds_block_kernels.cu) --------------------------- */
/* A pJDS-b matrix in device memory.  `be` must come from
 * pl_backend_cuda_create (PL_ERR_ARG otherwise).  Not collective. */
typedef struct pl_cuda_pjds_block pl_cuda_pjds_block;
/* Copies the host arrays to the device (synchronous). */
int pl_cuda_pjds_block_upload(pl_backend *be, const pjds_block *h, pl_cuda_pjds_block **d);
/* Kernel variants: runs in flight per thread (1, 2, 4) x matrix-load hint
 * (ld.global.nc, L2 evict_first).  Names "u2-ef" etc.  Can't fail (NULL
 * out of range). */
int pl_cuda_pjds_block_nvariants(void);
const char *pl_cuda_pjds_block_variant_name(int v);
/* y = A x on the backend's stream (asynchronous), x and y device vectors of
 * nrows entries, permuted basis.  One thread per row. */
int pl_cuda_pjds_block_spmv(pl_backend *be, const pl_cuda_pjds_block *d, int variant, const double *d_x, double *d_y);
/* Device bytes.  Can't fail. */
size_t pl_cuda_pjds_block_bytes(const pl_cuda_pjds_block *d);
/* Frees, sets *d = NULL; accepts NULL.  Can't fail. */
void pl_cuda_pjds_block_free(pl_backend *be, pl_cuda_pjds_block **d);
/* A pJDS-b view of a pJDS matrix already on the device (host layout h, device
 * chunk_start, row_len, col, val): if every row's stored entries come in runs
 * of b consecutive columns (a block-structured matrix whose blocks the
 * length-sorted permutation kept together, as a stable sort does with equal
 * rows), *out = a pJDS-b matrix that shares d_val and adds one column per run
 * (4/b bytes per entry); else *out = NULL (not an error).  The view does not
 * own d_val (pl_cuda_pjds_block_free leaves it).  Synchronises the stream. */
int pl_cuda_pjds_block_view(pl_backend *be, const pjds *h, const int64_t *d_chunk_start, const int32_t *d_row_len,
                            const int32_t *d_col, double *d_val, int b, pl_cuda_pjds_block **out);
/* Variant index of a name ("u2-ef"), -1 if none. */
int pl_cuda_pjds_block_variant_by_name(const char *name);
#endif

#endif
