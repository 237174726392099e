/* pl_h5matrix.h — sparse matrices in HDF5 files (schema version 1):
 * validated distributed import by row blocks, symmetry check, export.
 *
 * Schema (docs/formats.md, "HDF5 matrix schema" has the full text), in a group G ("/" or a
 * path such as "/lund_a", so several matrices can share one file):
 *   attributes of G: pjds_matrix_schema = 1 (integer), rows, cols, nnz
 *                    (integer, nnz = entries stored), symmetric (integer 0|1),
 *                    storage = "full" | "lower" (string; optional, default
 *                    "full"; "lower" needs symmetric = 1), name, source
 *                    (strings, optional)
 *   datasets in G:   row_ptr (integer, rows + 1), col_idx (integer, nnz),
 *                    values (floating point, nnz); CSR, 0-based indices.
 * Lower storage keeps the entries with col <= row only; the reader expands it
 * to the full matrix.  Columns need not be sorted in the file; rows are
 * returned sorted.  Duplicate (row, col) entries are refused.
 *
 * Errors: a bad file (missing or mistyped object, inconsistent CSR, index
 * out of range, NaN/Inf, duplicate, not square, not HDF5, empty, truncated)
 * gives PL_ERR_INPUT with one line "matrix file 'F' group 'G': ...".  HDF5's
 * automatic error printing is off inside these functions.
 *
 * Collective functions agree on failure: if any rank fails, every rank
 * returns the error code of the lowest failing rank and records its message
 * (so rank 0 can report it). */
#ifndef PL_H5MATRIX_H
#define PL_H5MATRIX_H

#include <mpi.h>
#include <stdint.h>

#include "pl_csr.h"

#define PL_H5M_SCHEMA 1

/* Layouts a group can hold (docs/formats.md, "Other HDF5 layouts"); the
 * order is that of the config words of [matrix] layout. */
enum {
    PL_H5M_LAYOUT_AUTO = 0, /* detected from the names and attributes */
    PL_H5M_LAYOUT_PJDS,     /* this project's schema 1 */
    PL_H5M_LAYOUT_PETSC,    /* jc/ir/data + MATLAB_sparse, compressed column (as MATLAB) */
    PL_H5M_LAYOUT_MATLAB,   /* the same, MATLAB v7.3 */
    PL_H5M_LAYOUT_CSR,      /* SciPy/anndata/h5sparse: data, indices, indptr, shape */
    PL_H5M_LAYOUT_CSC,      /* the same, compressed column */
    PL_H5M_LAYOUT_COO,      /* row, col, val (or data) */
    PL_H5M_LAYOUT_COUNT
};
/* "auto", "pjds", ... for a layout value */
const char *pl_h5m_layout_name(int layout);

/* What the caller asks of a file: a layout (PL_H5M_LAYOUT_AUTO = detect)
 * and, for COO, the index base (-1 = from the file's attribute index_base,
 * else detected from the index range). */
typedef struct pl_h5m_opts {
    int layout;
    int index_base;
} pl_h5m_opts;

typedef struct pl_h5m_info {
    int64_t rows, cols;   /* matrix size (rows == cols, checked)                  */
    int64_t nnz_stored;   /* entries stored in the file (lower part only if lower) */
    int symmetric;        /* 1: the file asserts A == A^T                         */
    int lower;            /* 1: storage "lower", expanded on read                 */
    int col_bytes;        /* element size of col_idx in the file (4 or 8)         */
    char name[256];       /* attribute name, "" if absent (truncated if longer)   */
    char source[256];     /* attribute source, "" if absent                       */
    int layout;           /* PL_H5M_LAYOUT_* found (never AUTO)                   */
    int index_base;       /* COO: 0 or 1 (else 0)                                 */
} pl_h5m_info;

/* Open file/group and validate the metadata: schema version, attributes,
 * the three datasets (class, rank 1, lengths rows + 1 and nnz), row_ptr[0] == 0
 * and row_ptr[rows] == nnz, rows == cols.  group NULL or "" means "/".
 * Reads no index or value data.  Not collective (call it on every rank, or on
 * one and broadcast).  PL_ERR_INPUT on a bad file. */
int pl_h5m_open_info(const char *file, const char *group, pl_h5m_info *info);
/* The same, collective: every rank validates, and all return the error and
 * message of the lowest failing rank (use this one in the app). */
int pl_h5m_open_info_all(const char *file, const char *group, pl_h5m_info *info, MPI_Comm comm);

/* len[r - r0] = length of row r of the EXPANDED matrix, for r in [r0, r1).
 * Collective over comm; each rank passes its own range.  The ranges of the
 * ranks with r0 < r1 must not overlap.  Full storage reads only row_ptr[r0..r1].
 * Lower storage needs the column counts of the strictly lower part: each rank
 * scans a share of the stored rows in bounded blocks and routes the counts to
 * the owning ranks (MPI_Alltoallv); if the ranges cover [0, rows) each rank
 * scans its own range.  Validates what it reads (row_ptr, and for lower
 * storage col_idx).  len is owned by the caller (r1 - r0 entries).
 * PL_ERR_OVERFLOW if a row is longer than INT32_MAX. */
int pl_h5m_row_lengths(const char *file, const char *group, int64_t r0, int64_t r1, int32_t *len,
                       MPI_Comm comm);

/* Callback with the shape of pl_row_lengths_fn (spmv.h) for
 * pl_partition_by_nnz: arg points to a pl_h5m_source. */
typedef struct pl_h5m_source {
    const char *file;
    const char *group;
    MPI_Comm comm;
    const pl_h5m_opts *opts; /* NULL: detect the layout */
} pl_h5m_source;
int pl_h5m_row_lengths_fn(void *arg, int64_t r0, int64_t r1, int32_t *len);

/* Read rows [r0, r1) of the (expanded) matrix into out (allocated here; the
 * caller frees it with pl_csr_destroy; zeroed on failure).  Collective; the
 * non-empty ranges of the ranks must not overlap.  Each rank reads its rows by
 * hyperslab; lower storage is expanded by routing the transposed entries
 * (j, i) of each stored (i, j), j < i, to the owner of row j with
 * MPI_Alltoallv, in rounds of bounded size.  Validates row_ptr, col_idx
 * (range, and col <= row for lower storage), values (finite), duplicates.
 * Columns of each row come out sorted ascending. */
int pl_h5m_read_rows(const char *file, const char *group, int64_t r0, int64_t r1, MPI_Comm comm,
                     pl_csr *out);

/* The same three with the layout options (opts NULL = detect): the
 * functions above pass NULL.  Row-oriented layouts (pjds full, CSR) read
 * each rank's rows by hyperslab; lower, compressed-column and COO layouts
 * are scanned in bounded blocks, each rank a share, and the entries routed
 * to the owners of their rows (docs/formats.md gives the cost). */
int pl_h5m_open_info_ex(const char *file, const char *group, const pl_h5m_opts *opts, pl_h5m_info *info);
int pl_h5m_row_lengths_ex(const char *file, const char *group, const pl_h5m_opts *opts, int64_t r0, int64_t r1,
                          int32_t *len, MPI_Comm comm);
int pl_h5m_read_rows_ex(const char *file, const char *group, const pl_h5m_opts *opts, int64_t r0, int64_t r1,
                        MPI_Comm comm, pl_csr *out);

/* Largest asymmetry of the distributed matrix whose row blocks are `rows`
 * (disjoint, together covering all rows): *max_rel = max |a_ij - a_ji| /
 * max |a| (0 for a zero or symmetric matrix), at (*i, *j) with i < j (the
 * smallest such pair on ties; -1, -1 if symmetric).  Collective; the
 * transposed entries are routed to the owners of their rows with
 * MPI_Alltoallv in rounds of bounded size; no rank holds more than its block
 * plus one round.  PL_ERR_ARG if the blocks do not tile [0, N). */
int pl_h5m_asymmetry(const pl_csr *rows, MPI_Comm comm, double *max_rel, int64_t *i, int64_t *j);

/* Write the distributed matrix (row blocks in rank order, together covering
 * [0, N)) to file/group in schema 1, storage "full", attribute symmetric as
 * given (0|1), name/source optional (NULL = absent).  Collective.  Rank 0
 * alone writes (serial HDF5): the other ranks send their blocks to it in
 * pieces of bounded size.  The file is written to "<file>.part-<pid>" and
 * moved into place when complete (pl_place_file); an existing file is
 * replaced only with overwrite (else PL_ERR_INPUT; when the file appeared
 * during the write, the complete matrix is kept under the temporary name,
 * which the message names).  The whole file is new: group only names where the
 * matrix sits in it (intermediate groups are created). */
int pl_h5m_write(const char *file, const char *group, const pl_csr *rows, int symmetric,
                 const char *name, const char *source, MPI_Comm comm, int overwrite);

/* pl_h5m_write with PETSc's and MATLAB's names in the group as well
 * (view): PL_H5M_VIEW_NONE: none (pl_h5m_write); PL_H5M_VIEW_LINKS: hard
 * links jc -> row_ptr, ir -> col_idx, data -> values (no copy: right only
 * when A == A^T exactly, which the caller guarantees); PL_H5M_VIEW_CSC: jc,
 * ir, data hold the compressed columns (a copy, built by
 * pl_h5m_transpose).  Both add the attribute MATLAB_sparse = N.  MATLAB's
 * and PETSc's PETSC_VIEWER_HDF5_MAT reading take jc, ir, data as compressed
 * columns: they read A in both cases. */
enum { PL_H5M_VIEW_NONE = 0, PL_H5M_VIEW_LINKS, PL_H5M_VIEW_CSC };
int pl_h5m_write_ex(const char *file, const char *group, const pl_csr *rows, int symmetric, const char *name,
                    const char *source, MPI_Comm comm, int overwrite, int view);

/* The rows of A^T of this rank's range (the row blocks of a tile [0, N)):
 * entries routed to the owners of their columns with MPI_Alltoallv in
 * rounds of bounded size.  Collective.  at is allocated here. */
int pl_h5m_transpose(const pl_csr *a, MPI_Comm comm, pl_csr *at);

/* Write the distributed matrix in PETSc's binary format (big-endian: int32
 * class id 1211216, rows, cols, nnz, the row lengths (int32), the column
 * indices (int32), the values (float64)), which PETSc's MatLoad reads.
 * Rank 0 writes; the other ranks send their blocks in pieces of bounded
 * size.  Temporary name and placement as pl_h5m_write.  PL_ERR_INPUT when N
 * or nnz do not fit PETSc's 32-bit integers.  Collective. */
int pl_petsc_write(const char *file, const pl_csr *rows, MPI_Comm comm, int overwrite);

/* Test hook: entries per round of the streamed scans and exchanges
 * (default 1 << 20; n < 1 restores the default).  Not thread-safe. */
void pl_h5m_set_block_entries(int64_t n);

#endif
