/* mmref.h — test-only reference: a small Matrix Market reader of our own
 * (coordinate real/integer/pattern; general, symmetric, skew-symmetric),
 * expanded to full CSR with sorted columns, and a serial asymmetry measure.
 * Independent of HDF5, scipy and pl_h5matrix.c, so the import can be
 * compared with it.  Whole matrix in one process: tests only. */
#ifndef MMREF_H
#define MMREF_H
#include <stdint.h>

typedef struct mm_csr {
    int64_t n, nnz;
    int symmetric; /* banner says symmetric */
    int64_t *rp, *col;
    double *val;
} mm_csr;

/* 0 on success; prints a message and returns -1 on failure. */
int mm_read(const char *path, mm_csr *a);
void mm_free(mm_csr *a);
/* max |a_ij - a_ji| / max |a| and the pair (i < j, smallest on ties). */
void mm_asymmetry(const mm_csr *a, double *rel, int64_t *i, int64_t *j);
/* A deterministic 64-bit digest of rows [r0, r1) given by (rp, col, val),
 * rows numbered from r0; combined by addition, so ranks can sum theirs. */
uint64_t mm_rows_digest(int64_t r0, int64_t nrows, const int64_t *rp, const int64_t *col, const double *val);
#endif
