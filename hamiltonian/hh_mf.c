/* hh_mf.c — the tables of the Holstein-Hubbard Hamiltonian in Kronecker
 * form, no matrix stored (hh_mf.h; issue 26).
 *
 * What they describe: H of hh.h as
 *   H = T_el (x) 1_ph + diag(d_el (+) d_ph + shift) + sum_m C_m (x) X_m,
 * x and y viewed as n_el x n_ph arrays (electron-major rows, hh.h):
 *   y[e,p] = ((d_el[e] + d_ph[p]) + shift) x[e,p]
 *          + sum_{m: C_m[e] != 0} (C_m[e] sqrt(n_m)) x[e, p - e_m]
 *                                 + (C_m[e] sqrt(n_m + 1)) x[e, p + e_m]
 *          + sum_{e'} T[e,e'] x[e',p].
 * hh_mf_kron hands them to the spmv layer as a pl_kron (core/pl_kron.h,
 * the same formula in the same order), whose backends apply it
 * (spmv/cpu/cpu_kron.c, spmv/cuda/kron.cu).  The diagonal and each
 * product C_m[e] sqrt(n) are the same bits as hh.c's matrix entries; only
 * the order of the row's sum differs from a CSR product (a few units of
 * rounding).
 *
 * Conventions (as hh.c, docs/models.md "Holstein-Hubbard", "Lattices"):
 * fermion order all up before all down, each by site; a hop along bond
 * (i, j) has amplitude -t f_ij (-1)^(electrons of its spin strictly between
 * i and j) (the chain: -t between neighbours, -t (-1)^(N_s - 1) across the
 * periodic bond L-1 <-> 0); a down hop passes the up operators twice (+1).
 * Duplicates (a periodic direction of length 2: two bonds join the same
 * pair) are summed and exact zeros dropped.  Ranks and unranks are hh.c's (hh_impl.h); the normal modes
 * u_m(i), sqrt(n) and the shift are read from the model, so the couplings
 * rho_m(e) = sum_i u_m(i) n_i are summed in hh.c's order with its 1e-12
 * cut to zero.
 *
 * Cost.  Tables: T_el 8 (n_el + 1) + 12 nnz(T) bytes (nnz(T) <= 2 L n_el),
 * d_el and C 8 n_el (1 + modes), d_ph 8 n_ph, the ladders 24 n_ph modes
 * (HMEp: 400 electron x 15,504 phonon states, 5 modes: about 1.9 MB; the
 * matrix in CSR: 1,000 MB). */
#include "hh_mf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hh_impl.h"
#include "pl_error.h"

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
        for (int b = 0; b < m->nbonds; b++) {
            const uint64_t bits = m->bond_bits[b], occ = mask & bits;
            if (occ == 0 || occ == bits) continue;
            const int64_t r = hh_el_rank(m, mask ^ bits);
            const int32_t ep = (int32_t)(s ? iu * ndn + r : r * ndn + id);
            const double tf = t * m->lat.bond[b].factor; /* hh.c's spin_hops: the same bits */
            const double v = (__builtin_popcountll(mask & m->bond_between[b]) & 1) ? tf : -tf;
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

/* ---- the generic form ------------------------------------------------------ */

/* pl_kron.h's formula, term by term in the order of the former hh_mf_apply:
 * the diagonal ((d_el + d_ph) + shift) x, then for each mode with
 * C_m[e] != 0 the lowering (lo = ph_dn, C_m[e] sqrt(n_m)) before the
 * raising (hi = ph_up, C_m[e] sqrt(n_m + 1)), then the hops in t_ptr
 * order. */
void hh_mf_kron(const hh_mf *mf, pl_kron *k)
{
    *k = (pl_kron){.n_left = mf->n_el,
                   .n_right = mf->n_ph,
                   .nterms = mf->nmodes,
                   .a_ptr = mf->t_ptr,
                   .a_col = mf->t_col,
                   .a_val = mf->t_val,
                   .dl = mf->d_el,
                   .dr = mf->d_ph,
                   .shift = mf->shift,
                   .c = mf->c_el,
                   .lo = mf->ph_dn,
                   .hi = mf->ph_up,
                   .lo_val = mf->amp_dn,
                   .hi_val = mf->amp_up};
}
