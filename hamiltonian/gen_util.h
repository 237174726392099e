/* gen_util.h — what the row generators of hamiltonian/ share (private to
 * the folder): progress lines of a long build, transparent huge pages for a
 * fresh large array. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "pl_csr.h"

/* Progress of a long build: thread 0 reports at most once per second after
 * the first two seconds ("<model> <what>: X of Y rows (P %), T s"). */
typedef struct gen_progress {
    double t0, last;
    int64_t done, total;
    const char *model; /* "Hamiltonian", "block-stencil" */
    const char *what;  /* "rows", "row lengths" */
} gen_progress;

/* Count `rows` more rows done (any thread, atomic); thread 0 may print.
 * Can't fail. */
void gen_progress_tick(gen_progress *p, int64_t rows);

/* Ask for transparent huge pages on a large fresh array before its first
 * touch: the page faults of a GB-sized fill otherwise cost more than the
 * computation (Linux with THP "madvise"; advisory, failure is harmless). */
void gen_advise_huge_pages(void *p, size_t bytes);

/* Between the two passes of a row build: *out = a CSR block of rows
 * [r0, r0 + nrows) of N with row_ptr from the lengths len (freed here in all
 * cases), col/val allocated (huge pages advised, not touched).  rc = the
 * status of the length pass (passed on).  On failure *out is empty. */
int gen_csr_from_lengths(int rc, int64_t N, int64_t r0, int64_t nrows, int32_t *len, pl_csr *out);

/* After the fill pass: PL_ERR_INTERNAL (and *out emptied) if a row's fill
 * disagreed with its counted length (bad_row >= 0), else a timing line for
 * builds over 2 s ("<model> rows [r0, r1): nnz non-zeros in T s"). */
int gen_csr_finish(const char *model, int64_t bad_row, int64_t r0, int64_t r1, double t0, pl_csr *out);
