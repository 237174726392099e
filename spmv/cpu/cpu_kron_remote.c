/* cpu_kron_remote.c — the CPU backend's remote part of a matrix-free
 * operator on several ranks (be->kron_rem_create, kron_rem_apply,
 * kron_rem_spmm, kron_rem_destroy; spmv.h pl_kron_remote, op_kron_dist.c):
 *   y[row[i] n_right + r] += sum_{j in [ptr[i], ptr[i+1])} val[j] x_halo[hrow[j] n_right + r].
 * kron_rem_spmm: the same for R row-major vectors (op_block.c), which is
 * the single product with n_right R values per left row, so each column
 * gets kron_rem_apply's bits.
 * Work items: (remote row i, block of KREM_RB right rows), static among
 * the threads.  Per item the block's partial sums start from y and take the
 * entries j in order, one rounding per product and per addition (C17: no
 * contraction), so y is the same bits on any thread count and equals the
 * CUDA kernel's (kron_remote.cu).  Each entry streams one block of a halo
 * row (contiguous), y's block stays in L1.
 *
 * The RIGHT split (pl_kron_remote.split, op_kron_right.c): for every left
 * row l and remote right row i,
 *   y[l w + row[i]] += sum_j (c[l nterms + term[j]] * val[j]) x_halo[hrow[j] n_left + l]
 * (terms with c = 0 skipped, as kron_apply does), w the rank's right rows;
 * R vectors: each value R wide, (l w + r) R + v and (h n_left + l) R + v.
 * Work items: blocks of KREM_LB left rows, static; per (l, i) the sum
 * starts from y and takes j in order, rounded as above. */
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "cpu_ts.h"

#define KREM_RB 512 /* right rows per work item (4 KB of y) */

#define KREM_LB 16 /* left rows per work item of the RIGHT split */

typedef struct cpu_krem {
    int64_t n_right;
    int32_t n_rows;
    int32_t *row, *hrow;
    int64_t *ptr;
    double *val;
    int split;       /* RIGHT: the fields below */
    int64_t n_left;
    int nterms;
    int32_t *term;
    double *c;
} cpu_krem;

void cpu_kron_rem_destroy(pl_backend *be, void *mat)
{
    (void)be;
    cpu_krem *m = mat;
    if (!m) return;
    free(m->row);
    free(m->hrow);
    free(m->ptr);
    free(m->val);
    free(m->term);
    free(m->c);
    free(m);
}

int cpu_kron_rem_create(pl_backend *be, const pl_kron_remote *r, void **mat)
{
    PL_CHECK(r && mat && r->n_rows >= 0 && r->n_right >= 1, PL_ERR_ARG, "kron_rem_create: bad argument");
    *mat = NULL;
    cpu_krem *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    const size_t n = (size_t)r->n_rows, e = (size_t)r->ptr[n];
    m->n_right = r->n_right;
    m->n_rows = r->n_rows;
    m->row = malloc((n ? n : 1) * sizeof *m->row);
    m->ptr = malloc((n + 1) * sizeof *m->ptr);
    m->hrow = malloc((e ? e : 1) * sizeof *m->hrow);
    m->val = malloc((e ? e : 1) * sizeof *m->val);
    if (!m->row || !m->ptr || !m->hrow || !m->val) {
        cpu_kron_rem_destroy(be, m);
        return PL_ERROR(PL_ERR_MEM, "out of host memory for the remote part (%zu entries)", e);
    }
    memcpy(m->row, r->row, n * sizeof *m->row);
    memcpy(m->ptr, r->ptr, (n + 1) * sizeof *m->ptr);
    memcpy(m->hrow, r->hrow, e * sizeof *m->hrow);
    memcpy(m->val, r->val, e * sizeof *m->val);
    if (r->split == PL_KRON_SPLIT_RIGHT) {
        const size_t nc = (size_t)(r->n_left * r->nterms);
        m->split = r->split;
        m->n_left = r->n_left;
        m->nterms = r->nterms;
        m->term = malloc((e ? e : 1) * sizeof *m->term);
        m->c = malloc((nc ? nc : 1) * sizeof *m->c);
        if (!m->term || !m->c || r->n_left < 1 || r->nterms < 1) {
            cpu_kron_rem_destroy(be, m);
            return PL_ERROR(!r->term || !r->c || r->n_left < 1 || r->nterms < 1 ? PL_ERR_ARG : PL_ERR_MEM,
                            "kron_rem_create: the RIGHT split's remote part (%zu entries)", e);
        }
        memcpy(m->term, r->term, e * sizeof *m->term);
        memcpy(m->c, r->c, nc * sizeof *m->c);
    }
    *mat = m;
    return PL_OK;
}

/* y[row[i] w + v] += sum_j val[j] xh[hrow[j] w + v], v < w: w = n_right
 * for one vector, n_right R for a row-major block (a row's R values
 * together: the block's value (l, r, c) sits at (l n_right + r) R + c, so
 * a left row is w contiguous values in both). */
static void krem_rows(const cpu_krem *m, int64_t w, const double *x_halo, double *y)
{
    const int64_t nb = (w + KREM_RB - 1) / KREM_RB, items = (int64_t)m->n_rows * nb;
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++) {
        const int64_t i = it / nb, r0 = (it % nb) * KREM_RB, r1 = r0 + KREM_RB < w ? r0 + KREM_RB : w;
        double *yl = y + (int64_t)m->row[i] * w;
        for (int64_t j = m->ptr[i]; j < m->ptr[i + 1]; j++) {
            const double v = m->val[j], *xh = x_halo + (int64_t)m->hrow[j] * w;
            for (int64_t r = r0; r < r1; r++) yl[r] = yl[r] + v * xh[r];
        }
    }
}

/* The RIGHT split's remote part for R vectors (R = 1: kron_rem_apply). */
static void krem_right(const cpu_krem *m, int64_t R, const double *x_halo, double *y)
{
    const int64_t nl = m->n_left, w = m->n_right, nt = m->nterms, items = (nl + KREM_LB - 1) / KREM_LB;
#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++) {
        const int64_t l1 = (it + 1) * KREM_LB < nl ? (it + 1) * KREM_LB : nl;
        for (int64_t l = it * KREM_LB; l < l1; l++) {
            const double *cl = m->c + l * nt;
            for (int32_t i = 0; i < m->n_rows; i++) {
                double *yr = y + (l * w + m->row[i]) * R;
                for (int64_t j = m->ptr[i]; j < m->ptr[i + 1]; j++) {
                    const double c = cl[m->term[j]];
                    if (c == 0.0) continue;
                    const double a = c * m->val[j], *xh = x_halo + ((int64_t)m->hrow[j] * nl + l) * R;
                    for (int64_t v = 0; v < R; v++) yr[v] = yr[v] + a * xh[v];
                }
            }
        }
    }
}

int cpu_kron_rem_apply(pl_backend *be, const void *mat, const double *x_halo, double *y)
{
    (void)be;
    const cpu_krem *m = mat;
    PL_CHECK(m && x_halo && y, PL_ERR_ARG, "kron_rem_apply: NULL argument");
    if (m->split == PL_KRON_SPLIT_RIGHT) {
        krem_right(m, 1, x_halo, y);
        return PL_OK;
    }
    krem_rows(m, m->n_right, x_halo, y);
    return PL_OK;
}

int cpu_kron_rem_spmm(pl_backend *be, const void *mat, int R, const double *X_halo, double *Y)
{
    (void)be;
    const cpu_krem *m = mat;
    PL_CHECK(m && X_halo && Y, PL_ERR_ARG, "kron_rem_spmm: NULL argument");
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "kron_rem_spmm: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    if (m->split == PL_KRON_SPLIT_RIGHT) krem_right(m, R, X_halo, Y);
    else krem_rows(m, m->n_right * R, X_halo, Y);
    return PL_OK;
}
