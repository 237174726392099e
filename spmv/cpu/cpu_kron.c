/* cpu_kron.c — the CPU backend's matrix-free operator: a Kronecker sum
 * (pl_kron.h) applied from its tables with OpenMP (be->kron_create,
 * kron_apply, kron_destroy; moved here from hamiltonian/hh_mf.c's
 * hh_mf_apply, issue 26).
 *
 * x and y are viewed as n_left x n_right arrays (row l r = l n_right + r).
 * For a left row l and a block of right rows [r0, r1):
 *   y[l,r] = ((dl[l] + dr[r]) + shift) x[l,r]
 *          + sum_{m: c[l,m] != 0} (c[l,m] lo_val[r,m]) x[l, lo[r,m]]  (lo >= 0)
 *                                + (c[l,m] hi_val[r,m]) x[l, hi[r,m]]  (hi >= 0)
 *          + sum_j a_val[j] x[a_col[j], r],
 * summed in exactly this order (pl_kron.h), one rounding per product and
 * per addition (ISO C: no contraction into FMA), so the result is the same
 * bits on any thread count and equals the CUDA kernel's (kron.cu).  The
 * couplings c[l,m] != 0 come as a per-row list (pl_kron_active), made once
 * at kron_create.
 *
 * Cost (Holstein-Hubbard: A the electron hopping, the B_m the phonon
 * ladders).  Work per apply: one multiply-add per matrix entry it stands
 * for.  Traffic: y written once; x[l,:] read once for the diagonal and
 * coupling terms (their gathers stay inside the slice of n_right doubles, in
 * cache), and x[l',block] once per entry of A: about two vector passes
 * when the slices an entry of A reaches are still in cache (small n_right,
 * or a last-level cache that holds the span of x), at most 1 + nnz(A) /
 * n_left passes of x otherwise.  Work items are (left row, block of
 * KRON_RB right rows) in left-major order, static among the threads, so a
 * thread keeps x[l,:] in cache while it does the blocks of l, and an
 * operator with few left rows still spreads over the threads.  Measured
 * (as hh_mf_apply, the same loop): hh_184800 on one core of the dev VM
 * 0.73 ms against 1.17 ms for a CSR SpMV of the stored matrix. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "cpu_ts.h"

#define KRON_RB 4096 /* right rows per work item (32 KB of y) */

/* The copy of the tables (pl_kron's names), all in one allocation mem;
 * the couplings as per-row lists act_ptr / act_m / act_c instead of c. */
typedef struct cpu_kron {
    int64_t n_left, n_right;
    int nterms;
    double shift;
    int64_t *a_ptr;
    int32_t *a_col;
    double *a_val, *dl, *dr;
    int32_t *lo, *hi;
    double *lo_val, *hi_val;
    int64_t *act_ptr; /* n_left + 1 */
    int32_t *act_m;
    double *act_c;
    void *mem;
} cpu_kron;

/* Carve n bytes (64-byte aligned) at *off of base (NULL base: count only). */
static void *carve(char *base, size_t *off, size_t n)
{
    void *p = base ? base + *off : NULL;
    *off += (n + 63) / 64 * 64;
    return p;
}

/* Lay the tables out in base (NULL: sizes only); returns the bytes. */
static size_t layout(cpu_kron *m, const pl_kron *k, int64_t nact, char *base)
{
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = (size_t)k->a_ptr[k->n_left], na = (size_t)nact;
    size_t off = 0;
    m->a_ptr = carve(base, &off, (nl + 1) * sizeof(int64_t));
    m->a_col = carve(base, &off, nnz * sizeof(int32_t));
    m->a_val = carve(base, &off, nnz * sizeof(double));
    m->dl = carve(base, &off, nl * sizeof(double));
    m->dr = carve(base, &off, nr * sizeof(double));
    m->lo = carve(base, &off, nr * nt * sizeof(int32_t));
    m->hi = carve(base, &off, nr * nt * sizeof(int32_t));
    m->lo_val = carve(base, &off, nr * nt * sizeof(double));
    m->hi_val = carve(base, &off, nr * nt * sizeof(double));
    m->act_ptr = carve(base, &off, (nl + 1) * sizeof(int64_t));
    m->act_m = carve(base, &off, na * sizeof(int32_t));
    m->act_c = carve(base, &off, na * sizeof(double));
    return off;
}

int cpu_kron_create(pl_backend *be, const pl_kron *k, void **mat)
{
    (void)be;
    PL_CHECK(k && mat, PL_ERR_ARG, "kron_create: NULL argument");
    *mat = NULL;
    cpu_kron *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory for the matrix-free operator");
    const int64_t nact = pl_kron_nactive(k);
    const size_t bytes = layout(m, k, nact, NULL);
    m->mem = aligned_alloc(64, bytes ? bytes : 64);
    if (!m->mem) {
        free(m);
        return PL_ERROR(PL_ERR_MEM, "out of host memory for %zu bytes of matrix-free tables", bytes);
    }
    layout(m, k, nact, m->mem);
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = (size_t)k->a_ptr[k->n_left];
    m->n_left = k->n_left;
    m->n_right = k->n_right;
    m->nterms = k->nterms;
    m->shift = k->shift;
    memcpy(m->a_ptr, k->a_ptr, (nl + 1) * sizeof(int64_t));
    if (nnz) memcpy(m->a_col, k->a_col, nnz * sizeof(int32_t));
    if (nnz) memcpy(m->a_val, k->a_val, nnz * sizeof(double));
    memcpy(m->dl, k->dl, nl * sizeof(double));
    memcpy(m->dr, k->dr, nr * sizeof(double));
    if (nt) {
        memcpy(m->lo, k->lo, nr * nt * sizeof(int32_t));
        memcpy(m->hi, k->hi, nr * nt * sizeof(int32_t));
        memcpy(m->lo_val, k->lo_val, nr * nt * sizeof(double));
        memcpy(m->hi_val, k->hi_val, nr * nt * sizeof(double));
    }
    if (nt) pl_kron_active(k, m->act_ptr, m->act_m, m->act_c);
    else memset(m->act_ptr, 0, (nl + 1) * sizeof(int64_t));
    *mat = m;
    return PL_OK;
}

void cpu_kron_destroy(pl_backend *be, void *mat)
{
    (void)be;
    cpu_kron *m = mat;
    if (!m) return;
    free(m->mem);
    free(m);
}

/* y[l, r0:r1) of the whole product. */
static inline void kron_block(const cpu_kron *m, int64_t l, int64_t r0, int64_t r1, const double *x, double *y)
{
    const int64_t nr = m->n_right, nt = m->nterms, a0 = m->act_ptr[l], a1 = m->act_ptr[l + 1];
    const double *xl = x + l * nr;
    double *yl = y + l * nr;
    const double dl = m->dl[l], sh = m->shift;
    for (int64_t r = r0; r < r1; r++) {
        double s = ((dl + m->dr[r]) + sh) * xl[r];
        const int32_t *lo = m->lo + r * nt, *hi = m->hi + r * nt;
        const double *lv = m->lo_val + r * nt, *hv = m->hi_val + r * nt;
        for (int64_t a = a0; a < a1; a++) {
            const int32_t j = m->act_m[a];
            const double c = m->act_c[a];
            if (lo[j] >= 0) s += (c * lv[j]) * xl[lo[j]];
            if (hi[j] >= 0) s += (c * hv[j]) * xl[hi[j]];
        }
        yl[r] = s;
    }
    for (int64_t j = m->a_ptr[l]; j < m->a_ptr[l + 1]; j++) {
        const double v = m->a_val[j];
        const double *xj = x + (int64_t)m->a_col[j] * nr;
#pragma omp simd
        for (int64_t r = r0; r < r1; r++) yl[r] += v * xj[r];
    }
}

int cpu_kron_apply(pl_backend *be, const void *mat, const double *x, double *y)
{
    (void)be;
    const cpu_kron *m = mat;
    PL_CHECK(m && x && y, PL_ERR_ARG, "kron_apply: NULL argument");
    const int64_t nr = m->n_right, nblk = (nr + KRON_RB - 1) / KRON_RB, ntask = m->n_left * nblk;
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, nb = (uintptr_t)(m->n_left * nr) * sizeof *x;
    PL_CHECK(xa + nb <= ya || ya + nb <= xa, PL_ERR_ARG, "kron_apply: x and y overlap");
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < ntask; t++) {
        const int64_t l = t / nblk, r0 = (t % nblk) * KRON_RB;
        kron_block(m, l, r0, r0 + KRON_RB < nr ? r0 + KRON_RB : nr, x, y);
    }
    return PL_OK;
}
