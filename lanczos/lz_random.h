/* lz_random.h — reproducible random vectors and row-major blocks of them
 * in backend memory (lz_random.c), for the KPM start blocks and ChebFD's
 * random columns.  Internal to lanczos/. */
#pragma once /* no conditional compilation in lanczos/ (lanczos.no_ifdef) */

#include <stddef.h>
#include <stdint.h>

#include "spmv.h"

/* The local rows whose random values are drawn: their global original
 * indices (host) and how the backend is told them. */
typedef struct lz_rand_rows {
    pl_backend *be;
    int64_t n;          /* local rows                                          */
    const int64_t *gi;  /* their global original indices (host, n)             */
    int consec;         /* gi[i] = gi[0] + i (a matrix-free operator's rows)   */
    int32_t *idx;       /* gi in backend memory (idx_create), else NULL        */
    double *h;          /* host staging where the backend draws none; hcap     */
    size_t hcap;
} lz_rand_rows;

/* r for the n rows of global indices gi (not copied: kept alive by the
 * caller).  O(n): the consecutive test and, where the backend draws blocks
 * and the rows are not consecutive, their indices copied to it once. */
int lz_rand_rows_init(lz_rand_rows *r, pl_backend *be, int64_t n, const int64_t *gi);
/* V[i R + c] = lz_random_element(seeds[c], gi[i]), i < n, c < R (1 <= R <=
 * PL_SPMM_RMAX; R = 1: one vector), in backend memory: drawn by the
 * backend (rand_block) where it can, else on the host and uploaded. */
int lz_rand_block(lz_rand_rows *r, int R, const uint64_t *seeds, double *V);
void lz_rand_rows_free(lz_rand_rows *r);
