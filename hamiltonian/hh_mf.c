/* hh_mf.c — the Holstein-Hubbard Hamiltonian applied from small tables,
 * no matrix stored (hh_mf.h; issue 26).
 *
 * What it computes: y = H x with H of hh.h in its Kronecker form
 *   H = T_el (x) 1_ph + diag(d_el (+) d_ph + shift) + sum_m C_m (x) X_m,
 * x and y viewed as n_el x n_ph arrays (electron-major rows, hh.h).  For an
 * electron configuration e and a block of phonon states p:
 *   y[e,p] = ((d_el[e] + d_ph[p]) + shift) x[e,p]
 *          + sum_{m: C_m[e] != 0} (C_m[e] sqrt(n_m)) x[e, p - e_m]
 *                                 + (C_m[e] sqrt(n_m + 1)) x[e, p + e_m]
 *          + sum_{e'} T[e,e'] x[e',p].
 * The diagonal and each product C_m[e] sqrt(n) are the same bits as hh.c's
 * matrix entries; only the order of the row's sum differs from a CSR
 * product (a few units of rounding).
 *
 * Conventions (as hh.c, docs/models.md "Holstein-Hubbard"): fermion order
 * all up before all down, each by site; a hop between neighbours i, i+1 has
 * amplitude -t, a hop across the periodic bond L-1 <-> 0 -t (-1)^(N_s - 1);
 * a down hop passes the up operators twice (+1).  Duplicates (L = 2
 * periodic: two bonds join the same pair) are summed and exact zeros
 * dropped.  Ranks and unranks are hh.c's (hh_impl.h); the normal modes
 * u_m(i), sqrt(n) and the shift are read from the model, so the couplings
 * rho_m(e) = sum_i u_m(i) n_i are summed in hh.c's order with its 1e-12
 * cut to zero.
 *
 * Cost.  Tables: T_el 8 (n_el + 1) + 12 nnz(T) bytes (nnz(T) <= 2 L n_el),
 * d_el and C 8 n_el (1 + modes), d_ph 8 n_ph, the ladders 24 n_ph modes
 * (HMEp: 400 electron x 15,504 phonon states, 5 modes: about 1.9 MB; the
 * matrix in CSR: 1,000 MB).  Work per apply: one multiply-add per stored
 * matrix entry.  Traffic: y written once; x[e,:] read once for the diagonal
 * and phonon terms (its gathers stay inside the slice of n_ph doubles, in
 * cache), and x[e',block] once per hop: about two vector passes when the
 * slices a hop reaches are still in cache (small n_ph, or a last-level
 * cache that holds the hop span of x), at most 1 + nnz(T) / n_el passes of
 * x otherwise.  Work items are (electron configuration, block of HH_MF_PB
 * phonon states) in electron-major order, static among the threads, so a
 * thread keeps x[e,:] in cache while it does the blocks of e, and a
 * model with few electron configurations still spreads over the threads. */
#include "hh_mf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hh_impl.h"
#include "pl_error.h"

#define HH_MF_PB 4096                     /* phonon states per work item (32 KB of y) */
#define HH_MF_MAX_EHOPS (4 * HH_MAX_HOPS) /* hops of one electron configuration      */

/* ---- electron tables ------------------------------------------------------- */

/* Hops of electron configuration e: columns ascending with amplitudes,
 * duplicates summed, exact zeros dropped.  Returns the count. */
static int el_hops(const hh_model *m, int64_t e, int32_t *col, double *val)
{
    const int64_t ndn = m->n_dn_states, iu = e / ndn, id = e % ndn;
    const double t = m->par.hopping;
    int n = 0;
    if (t == 0.0) return 0;
    for (int s = 0; s < 2; s++) { /* 0: up, 1: down */
        const int ns = s ? m->par.n_down : m->par.n_up;
        const uint64_t mask = hh_el_unrank(m, s ? id : iu, ns);
        const double wrap_sign = ((ns - 1) & 1) ? -1.0 : 1.0;
        for (int b = 0; b < m->nbonds; b++) {
            const int a = m->bond_a[b], c = m->bond_b[b];
            const uint64_t bits = (UINT64_C(1) << a) | (UINT64_C(1) << c), occ = mask & bits;
            if (occ == 0 || occ == bits) continue;
            const int64_t r = hh_el_rank(m, mask ^ bits);
            const int32_t ep = (int32_t)(s ? iu * ndn + r : r * ndn + id);
            const double v = (c == 0 && a == m->L - 1) ? -t * wrap_sign : -t;
            int i = n; /* insertion, summing a duplicate (same spin and target only) */
            while (i > 0 && col[i - 1] > ep) i--;
            if (i > 0 && col[i - 1] == ep) {
                val[i - 1] += v;
                continue;
            }
            memmove(col + i + 1, col + i, (size_t)(n - i) * sizeof *col);
            memmove(val + i + 1, val + i, (size_t)(n - i) * sizeof *val);
            col[i] = ep;
            val[i] = v;
            n++;
        }
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (val[i] != 0.0) {
            col[k] = col[i];
            val[k++] = val[i];
        }
    return k;
}

/* d_el[e] and the couplings C_m[e] (hh.c's ws_set_electrons, the same
 * arithmetic in the same order). */
static void el_diag(const hh_model *m, int64_t e, double *d_el, double *c)
{
    const int64_t ndn = m->n_dn_states;
    const uint64_t mu = hh_el_unrank(m, e / ndn, m->par.n_up);
    const uint64_t md = hh_el_unrank(m, e % ndn, m->par.n_down);
    const double g = m->par.coupling;
    *d_el = m->par.hubbard_u * (double)__builtin_popcountll(mu & md);
    double dens[HH_MAX_SITES];
    for (int i = 0; i < m->L; i++) dens[i] = (double)(((mu >> i) & 1) + ((md >> i) & 1));
    for (int k = 0; k < m->nmodes; k++) {
        double rho;
        if (m->par.phonon_basis == PL_PHONON_SITE) {
            rho = dens[k];
        } else {
            const double *u = m->umode + (int64_t)k * m->L;
            rho = 0.0;
            for (int i = 0; i < m->L; i++) rho += u[i] * dens[i];
            if (fabs(rho) < 1e-12) rho = 0.0;
        }
        c[k] = (g == 0.0 || rho == 0.0) ? 0.0 : -g * rho;
    }
}

static int build_el(const hh_model *m, hh_mf *mf)
{
    const int64_t nel = mf->n_el;
    const int nm = mf->nmodes;
    PL_MALLOC(mf->t_ptr, nel + 1);
    PL_MALLOC(mf->d_el, nel);
    PL_MALLOC(mf->c_el, nel * nm);
    mf->t_ptr[0] = 0;
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < nel; e++) {
        int32_t col[HH_MF_MAX_EHOPS];
        double val[HH_MF_MAX_EHOPS];
        mf->t_ptr[e + 1] = el_hops(m, e, col, val);
        el_diag(m, e, mf->d_el + e, mf->c_el + e * nm);
    }
    for (int64_t e = 0; e < nel; e++) mf->t_ptr[e + 1] += mf->t_ptr[e];
    const int64_t nnz = mf->t_ptr[nel];
    PL_MALLOC(mf->t_col, nnz);
    PL_MALLOC(mf->t_val, nnz);
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < nel; e++) {
        int32_t col[HH_MF_MAX_EHOPS];
        double val[HH_MF_MAX_EHOPS];
        const int n = el_hops(m, e, col, val);
        memcpy(mf->t_col + mf->t_ptr[e], col, (size_t)n * sizeof *col);
        memcpy(mf->t_val + mf->t_ptr[e], val, (size_t)n * sizeof *val);
    }
    return PL_OK;
}

/* ---- phonon tables --------------------------------------------------------- */

static int build_ph(const hh_model *m, hh_mf *mf)
{
    const int64_t nph = mf->n_ph;
    const int nm = mf->nmodes, M = m->M;
    PL_MALLOC(mf->d_ph, nph);
    PL_MALLOC(mf->ph_up, nph * nm);
    PL_MALLOC(mf->ph_dn, nph * nm);
    PL_MALLOC(mf->amp_up, nph * nm);
    PL_MALLOC(mf->amp_dn, nph * nm);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < nph; p++) {
        int32_t occ[HH_MAX_MODES];
        hh_ph_unrank(m, p, occ);
        int tot = 0;
        for (int k = 0; k < nm; k++) tot += occ[k];
        mf->d_ph[p] = m->par.phonon_frequency * (double)tot;
        for (int k = 0; k < nm; k++) {
            const int64_t i = p * nm + k;
            mf->ph_up[i] = mf->ph_dn[i] = -1;
            mf->amp_up[i] = mf->amp_dn[i] = 0.0;
            if (tot < M) {
                occ[k]++;
                mf->ph_up[i] = (int32_t)hh_ph_rank(m, occ);
                occ[k]--;
                mf->amp_up[i] = m->sqrt_n[occ[k] + 1];
            }
            if (occ[k] > 0) {
                occ[k]--;
                mf->ph_dn[i] = (int32_t)hh_ph_rank(m, occ);
                occ[k]++;
                mf->amp_dn[i] = m->sqrt_n[occ[k]];
            }
        }
    }
    return PL_OK;
}

/* ---- create, destroy, bytes ------------------------------------------------ */

static int mf_init(const hh_model *m, hh_mf *mf)
{
    mf->n_el = m->n_up_states * m->n_dn_states; /* fits: the model checked n_el * n_ph */
    mf->n_ph = m->n_ph;
    mf->N = m->N;
    mf->nmodes = m->nmodes;
    mf->shift = m->shift;
    PL_CHECK(mf->n_el <= INT32_MAX && mf->n_ph <= INT32_MAX, PL_ERR_INPUT,
             "matrix-free operator: %lld electron x %lld phonon configurations exceed 32-bit indices",
             (long long)mf->n_el, (long long)mf->n_ph);
    PL_CALL(build_el(m, mf));
    PL_CALL(build_ph(m, mf));
    return PL_OK;
}

int hh_mf_create(const hh_model *m, hh_mf **out)
{
    PL_CHECK(out, PL_ERR_ARG, "hh_mf_create: NULL output");
    *out = NULL;
    PL_CHECK(m, PL_ERR_ARG, "hh_mf_create: NULL model");
    PL_CHECK(!m->terms, PL_ERR_ARG, "hh_mf_create: a terms-mode model copy");
    hh_mf *mf = calloc(1, sizeof *mf);
    PL_CHECK(mf, PL_ERR_MEM, "out of host memory for the matrix-free operator");
    int r = mf_init(m, mf);
    if (r != PL_OK) {
        hh_mf_destroy(&mf);
        return pl_error_trace(r, __FILE__, __LINE__, __func__, "mf_init(m, mf)");
    }
    *out = mf;
    return PL_OK;
}

void hh_mf_destroy(hh_mf **mf)
{
    if (!mf || !*mf) return;
    hh_mf *a = *mf;
    free(a->t_ptr);
    free(a->t_col);
    free(a->t_val);
    free(a->d_el);
    free(a->c_el);
    free(a->d_ph);
    free(a->ph_up);
    free(a->ph_dn);
    free(a->amp_up);
    free(a->amp_dn);
    free(a);
    *mf = NULL;
}

size_t hh_mf_bytes(const hh_mf *mf)
{
    if (!mf) return 0;
    const size_t nel = (size_t)mf->n_el, nph = (size_t)mf->n_ph, nm = (size_t)mf->nmodes;
    const size_t nnz = (size_t)mf->t_ptr[mf->n_el];
    return sizeof *mf + (nel + 1) * sizeof(int64_t) + nnz * (sizeof(int32_t) + sizeof(double)) +
           nel * (1 + nm) * sizeof(double) + nph * sizeof(double) +
           2 * nph * nm * (sizeof(int32_t) + sizeof(double));
}

/* ---- apply ----------------------------------------------------------------- */

/* y[e, p0:p1) of the whole product. */
static inline void apply_block(const hh_mf *mf, int64_t e, int64_t p0, int64_t p1, const double *x, double *y)
{
    const int64_t nph = mf->n_ph;
    const int nm = mf->nmodes;
    const double *xe = x + e * nph;
    double *ye = y + e * nph;
    int act[HH_MAX_MODES], na = 0; /* the modes with a coupling at e */
    double c[HH_MAX_MODES];
    for (int k = 0; k < nm; k++)
        if (mf->c_el[e * nm + k] != 0.0) {
            act[na] = k;
            c[na++] = mf->c_el[e * nm + k];
        }
    const double de = mf->d_el[e], sh = mf->shift;
    for (int64_t p = p0; p < p1; p++) {
        double s = ((de + mf->d_ph[p]) + sh) * xe[p];
        const int32_t *up = mf->ph_up + p * nm, *dn = mf->ph_dn + p * nm;
        const double *au = mf->amp_up + p * nm, *ad = mf->amp_dn + p * nm;
        for (int a = 0; a < na; a++) {
            const int k = act[a];
            if (dn[k] >= 0) s += (c[a] * ad[k]) * xe[dn[k]];
            if (up[k] >= 0) s += (c[a] * au[k]) * xe[up[k]];
        }
        ye[p] = s;
    }
    for (int64_t j = mf->t_ptr[e]; j < mf->t_ptr[e + 1]; j++) {
        const double v = mf->t_val[j];
        const double *xj = x + (int64_t)mf->t_col[j] * nph;
#pragma omp simd
        for (int64_t p = p0; p < p1; p++) ye[p] += v * xj[p];
    }
}

int hh_mf_apply(const hh_mf *mf, const double *x, double *y)
{
    PL_CHECK(mf && x && y, PL_ERR_ARG, "hh_mf_apply: NULL argument");
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, nb = (uintptr_t)mf->N * sizeof *x;
    PL_CHECK(xa + nb <= ya || ya + nb <= xa, PL_ERR_ARG, "hh_mf_apply: x and y overlap");
    const int64_t nph = mf->n_ph, nblk = (nph + HH_MF_PB - 1) / HH_MF_PB, ntask = mf->n_el * nblk;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < ntask; t++) {
        const int64_t e = t / nblk, p0 = (t % nblk) * HH_MF_PB;
        apply_block(mf, e, p0, p0 + HH_MF_PB < nph ? p0 + HH_MF_PB : nph, x, y);
    }
    return PL_OK;
}
