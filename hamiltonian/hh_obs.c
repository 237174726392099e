/* hh_obs.c — ground-state observables of Holstein-Hubbard eigenvectors
 * (hh.h "observables"; formulas in docs/models.md "Observables").
 *
 * The rows of a rank are grouped by electron configuration e (rows
 * e n_ph + p, p = phonon state).  Everything but the kinetic energy is
 * diagonal in e, so one pass over the rows gives, per e and vector,
 *   W_e   = sum_p psi(e,p)^2,
 *   Z_k(e) = sum_p psi(e,p) (x_k psi)(e,p) = 2 sum_p psi(e,p) psi(e,p+1_k) sqrt(n_k + 1),
 * (x_k = b_k + b_k^+ of the basis' mode k; raising a mode raises the phonon
 * rank, so only the rows above p in the same slice are read: the halo is
 * the rest of the last slice, owned by the next ranks) plus the phonon
 * number and its distribution; the electron-side sums (n_i n_j, S^z S^z,
 * n_i x_j, the coupling energy) then cost O(L^2) per configuration.
 * Knows no MPI: the caller sums the accumulators over the ranks.
 * Reproducible: the electron configurations are cut into at most
 * HH_OBS_BLOCKS fixed blocks (independent of the thread count), threads take
 * blocks dynamically (load balance: a static share made the observables of
 * HMEp 2.4x slower on 16 threads), each block sums its configurations in
 * order, and the block sums are added in block order, so the same rows give
 * the same bits every run and with any thread count (a checkpointed and
 * resumed solve included). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "hh_impl.h"
#include "pl_error.h"

/* accumulator layout of one vector */
enum { ACC_W = 0, ACC_DOCC = 1, ACC_NPH = 2, ACC_HG = 3, ACC_HEAD = 4 };
static size_t off_pdist(const hh_model *m) { (void)m; return ACC_HEAD; }
static size_t off_nn(const hh_model *m) { return ACC_HEAD + (size_t)m->M + 1; }
static size_t off_ss(const hh_model *m) { return off_nn(m) + (size_t)m->L * m->L; }
static size_t off_nx(const hh_model *m) { return off_ss(m) + (size_t)m->L * m->L; }
static size_t off_n(const hh_model *m) { return off_nx(m) + (size_t)m->L * m->L; }

size_t hh_obs_acc_size(const hh_model *m) { return off_n(m) + (size_t)m->L; }

int64_t hh_obs_halo_end(const hh_model *m, int64_t r0, int64_t r1)
{
    if (r1 <= r0) return r1;
    int64_t e_last = (r1 - 1) / m->n_ph;
    int64_t end = (e_last + 1) * m->n_ph;
    return end > r1 ? end : r1;
}

/* phonon data of state p: occupations, total, raised ranks (-1: none) */
static void ph_state(const hh_model *m, int64_t p, int32_t *occ_buf, int64_t *up_buf, const int32_t **occ, int *tot,
                     const int64_t **up)
{
    const int nm = m->nmodes;
    if (m->ph_occ) {
        *occ = m->ph_occ + p * nm;
        *tot = m->ph_tot[p];
        *up = m->ph_up + p * nm;
        return;
    }
    hh_ph_unrank(m, p, occ_buf);
    int s = 0;
    for (int k = 0; k < nm; k++) s += occ_buf[k];
    for (int k = 0; k < nm; k++) {
        up_buf[k] = -1;
        if (s < m->M) {
            occ_buf[k]++;
            up_buf[k] = hh_ph_rank(m, occ_buf);
            occ_buf[k]--;
        }
    }
    *occ = occ_buf;
    *tot = s;
    *up = up_buf;
}

/* fixed blocks of electron configurations (see the top of the file) */
#define HH_OBS_BLOCKS 256

/* One electron configuration e's terms of every observable into loc (nvec
 * blocks of S), from its phonon sums z (nvec x nmodes) and pd (nvec x
 * (M + 1)); the order of the sums is the loop's before it moved here. */
static void obs_electron(const hh_model *m, int64_t e, int64_t ndn, int nvec, const double *z, const double *pd,
                         double *loc, size_t S)
{
    const int L = m->L, nm = m->nmodes, M = m->M;
    const uint64_t mu = hh_el_unrank(m, e / ndn, m->par.n_up), md = hh_el_unrank(m, e % ndn, m->par.n_down);
    double n[HH_MAX_SITES], sz[HH_MAX_SITES], rho[HH_MAX_MODES];
    for (int i = 0; i < L; i++) {
        double nu = (double)((mu >> i) & 1), nd = (double)((md >> i) & 1);
        n[i] = nu + nd;
        sz[i] = 0.5 * (nu - nd);
    }
    for (int k = 0; k < nm; k++) {
        if (m->par.phonon_basis == PL_PHONON_SITE) {
            rho[k] = n[k];
        } else {
            const double *u = m->umode + (int64_t)k * L;
            double r = 0.0;
            for (int i = 0; i < L; i++) r += u[i] * n[i];
            rho[k] = r;
        }
    }
    const double docc = (double)__builtin_popcountll(mu & md);
    for (int v = 0; v < nvec; v++) {
        double *A = loc + (size_t)v * S;
        const double *zv = z + (size_t)v * nm, *pv = pd + (size_t)v * (M + 1);
        double W = 0.0, nphv = 0.0;
        for (int t = 0; t <= M; t++) {
            W += pv[t];
            nphv += (double)t * pv[t];
            A[off_pdist(m) + t] += pv[t];
        }
        A[ACC_W] += W;
        A[ACC_DOCC] += W * docc;
        A[ACC_NPH] += nphv;
        double hg = 0.0;
        for (int k = 0; k < nm; k++) hg -= rho[k] * zv[k];
        A[ACC_HG] += hg;
        /* x_j of the basis' modes: sum_k u_k(j) Z_k */
        double xj[HH_MAX_SITES];
        for (int j = 0; j < L; j++) {
            if (m->par.phonon_basis == PL_PHONON_SITE) {
                xj[j] = zv[j];
            } else {
                double s = 0.0;
                for (int k = 0; k < nm; k++) s += m->umode[(int64_t)k * L + j] * zv[k];
                xj[j] = s;
            }
        }
        for (int i = 0; i < L; i++) {
            A[off_n(m) + i] += W * n[i];
            if (n[i] == 0.0 && sz[i] == 0.0) continue;
            for (int j = 0; j < L; j++) {
                A[off_nn(m) + (size_t)i * L + j] += W * n[i] * n[j];
                A[off_ss(m) + (size_t)i * L + j] += W * sz[i] * sz[j];
                A[off_nx(m) + (size_t)i * L + j] += n[i] * xj[j];
            }
        }
    }
}

/* hh_obs_accumulate (ex NULL) and hh_obs_accumulate_exact (acc NULL). */
static int obs_accumulate(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *psi, size_t ld,
                          const double *halo, size_t ldh, double *acc, pl_exsum *ex)
{
    PL_CHECK(m && r0 >= 0 && r1 >= r0 && r1 <= m->N && nvec >= 0 && (psi || r1 == r0) && (acc || ex), PL_ERR_ARG,
             "hh_obs_accumulate: bad arguments");
    const size_t S = hh_obs_acc_size(m);
    const int nm = m->nmodes, M = m->M;
    const int64_t nph = m->n_ph, ndn = m->n_dn_states;
    const int64_t h1 = hh_obs_halo_end(m, r0, r1);
    PL_CHECK(h1 == r1 || halo, PL_ERR_ARG, "hh_obs_accumulate: the halo rows [%lld, %lld) are missing", (long long)r1,
             (long long)h1);
    const int64_t e0 = r1 > r0 ? r0 / nph : 0, e1 = r1 > r0 ? (r1 - 1) / nph + 1 : 0;
    int err = 0;
    const int64_t ne = e1 - e0, nb = ne < HH_OBS_BLOCKS ? ne : HH_OBS_BLOCKS;
    const size_t bsz = (size_t)(nvec > 0 ? nvec : 1) * S;
    /* exact: one configuration's terms at a time (loc, zeroed), then into the thread's accumulators */
    const int nth = ex ? omp_get_max_threads() : 1;
    double *bsum = calloc((size_t)(ex ? nth : nb > 0 ? nb : 1) * bsz, sizeof *bsum); /* one sum per block */
    pl_exsum *tex = ex ? calloc((size_t)nth * bsz, sizeof *tex) : NULL;
    if (!bsum || (ex && !tex)) {
        free(bsum);
        free(tex);
        return PL_ERROR(PL_ERR_MEM, "out of host memory for the observables");
    }
#pragma omp parallel num_threads(nth > 1 ? nth : omp_get_max_threads())
    {
        double *z = malloc(((size_t)nvec * (size_t)nm + 1) * sizeof *z);
        double *pd = malloc(((size_t)nvec * (size_t)(M + 1) + 1) * sizeof *pd);
        int32_t occ_buf[HH_MAX_MODES];
        int64_t up_buf[HH_MAX_MODES];
        const int th = omp_get_thread_num();
        if (!z || !pd) {
#pragma omp atomic write
            err = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t blk = 0; blk < nb; blk++)
        for (int64_t e = e0 + ne * blk / nb; e < e0 + ne * (blk + 1) / nb; e++) {
            double *loc = ex ? bsum + (size_t)th * bsz : bsum + (size_t)blk * bsz;
            if (!z || !pd) continue;
            if (ex) memset(loc, 0, bsz * sizeof *loc);
            const int64_t base = e * nph;
            const int64_t pa = (r0 > base ? r0 : base) - base, pb = (r1 < base + nph ? r1 : base + nph) - base;
            memset(z, 0, (size_t)nvec * (size_t)nm * sizeof *z);
            memset(pd, 0, (size_t)nvec * (size_t)(M + 1) * sizeof *pd);
            for (int64_t p = pa; p < pb; p++) {
                const int32_t *occ;
                const int64_t *up;
                int tot;
                ph_state(m, p, occ_buf, up_buf, &occ, &tot, &up);
                for (int v = 0; v < nvec; v++) {
                    const double *x = psi + (size_t)v * ld;
                    const double a = x[base + p - r0];
                    pd[(size_t)v * (M + 1) + tot] += a * a;
                    if (a == 0.0) continue;
                    for (int k = 0; k < nm; k++) {
                        const int64_t q = up[k];
                        if (q < 0) continue;
                        const int64_t row = base + q;
                        const double b = row < r1 ? x[row - r0] : halo[(size_t)v * ldh + (size_t)(row - r1)];
                        z[(size_t)v * nm + k] += 2.0 * a * b * m->sqrt_n[occ[k] + 1];
                    }
                }
            }
            obs_electron(m, e, ndn, nvec, z, pd, loc, S); /* the electron side */
            if (ex) /* each entry got one term (0 + t = t): exactly */
                for (size_t i = 0; i < bsz; i++) pl_exsum_add(tex + (size_t)th * bsz + i, loc[i]);
        }
        free(z);
        free(pd);
    }
    if (ex)
        for (int t = 0; t < nth; t++)
            for (size_t i = 0; i < (size_t)nvec * S; i++) pl_exsum_merge(ex + i, tex + (size_t)t * bsz + i);
    else
        for (int64_t blk = 0; blk < nb; blk++) /* in block order: the same sums every run */
            for (size_t i = 0; i < (size_t)nvec * S; i++) acc[i] += bsum[(size_t)blk * bsz + i];
    free(bsum);
    free(tex);
    PL_CHECK(!err, PL_ERR_MEM, "out of host memory for the observables");
    return PL_OK;
}

int hh_obs_accumulate(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *psi, size_t ld,
                      const double *halo, size_t ldh, double *acc)
{
    return obs_accumulate(m, r0, r1, nvec, psi, ld, halo, ldh, acc, NULL);
}

int hh_obs_accumulate_exact(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *psi, size_t ld,
                            const double *halo, size_t ldh, pl_exsum *ex)
{
    return obs_accumulate(m, r0, r1, nvec, psi, ld, halo, ldh, NULL, ex);
}

void hh_obs_free(hh_obs *o)
{
    if (!o) return;
    free(o->buf);
    free(o->momentum_distribution);
    memset(o, 0, sizeof *o);
}

int hh_obs_finish(const hh_model *m, int nvec, const double *acc, const double *expect_h, hh_obs *o)
{
    PL_CHECK(m && nvec >= 0 && acc && expect_h && o, PL_ERR_ARG, "hh_obs_finish: bad arguments");
    memset(o, 0, sizeof *o);
    const int L = m->L, M = m->M;
    const size_t S = hh_obs_acc_size(m), LL = (size_t)L * L, nv = (size_t)nvec;
    const size_t total = nv * (8 + (size_t)M + 1 + 3 * LL + 3 * (size_t)L);
    PL_MALLOC(o->buf, total + 1);
    memset(o->buf, 0, (total + 1) * sizeof *o->buf);
    double *p = o->buf;
    o->nvec = nvec;
    o->L = L;
    o->M = M;
    o->periodic = m->lat.translation;
    o->lattice = m->lat.kind;
    o->lx = m->lat.lx;
    o->ly = m->lat.ly;
    o->energy_kinetic = p, p += nv;
    o->energy_hubbard = p, p += nv;
    o->energy_phonon = p, p += nv;
    o->energy_coupling = p, p += nv;
    o->energy_total = p, p += nv;
    o->double_occupancy = p, p += nv;
    o->phonon_number = p, p += nv;
    o->norm = p, p += nv;
    o->phonon_distribution = p, p += nv * (size_t)(M + 1);
    o->density_correlation = p, p += nv * LL;
    o->spin_correlation = p, p += nv * LL;
    o->electron_phonon_correlation = p, p += nv * LL;
    o->density_r = p, p += nv * (size_t)L;
    o->spin_r = p, p += nv * (size_t)L;
    o->electron_phonon_r = p, p += nv * (size_t)L;
    const double t = m->par.hopping, U = m->par.hubbard_u, w0 = m->par.phonon_frequency, g = m->par.coupling;
    const double ne = (double)(m->par.n_up + m->par.n_down);
    /* the removed uniform mode (normal basis): a coherent state of amplitude
     * beta0 = g N_e / (sqrt(L) w0), so <b0+ b0> = beta0^2, <x0> = 2 beta0 */
    const double beta0 = m->par.phonon_basis == PL_PHONON_NORMAL ? g * ne / (sqrt((double)L) * w0) : 0.0;
    (void)t;
    for (int v = 0; v < nvec; v++) {
        const double *A = acc + (size_t)v * S;
        o->norm[v] = A[ACC_W];
        o->energy_total[v] = expect_h[v];
        o->energy_hubbard[v] = U * A[ACC_DOCC];
        o->phonon_number[v] = A[ACC_NPH] + beta0 * beta0;
        o->energy_phonon[v] = w0 * o->phonon_number[v];
        o->energy_coupling[v] = g * A[ACC_HG] - 2.0 * w0 * beta0 * beta0;
        o->energy_kinetic[v] = expect_h[v] - o->energy_hubbard[v] - o->energy_phonon[v] - o->energy_coupling[v];
        o->double_occupancy[v] = A[ACC_DOCC] / (double)L;
        for (int k = 0; k <= M; k++) o->phonon_distribution[(size_t)v * (M + 1) + k] = A[off_pdist(m) + k];
        double *nn = o->density_correlation + (size_t)v * LL, *ss = o->spin_correlation + (size_t)v * LL,
               *nx = o->electron_phonon_correlation + (size_t)v * LL;
        for (int i = 0; i < L; i++)
            for (int j = 0; j < L; j++) {
                nn[(size_t)i * L + j] = A[off_nn(m) + (size_t)i * L + j];
                ss[(size_t)i * L + j] = A[off_ss(m) + (size_t)i * L + j];
                /* + the uniform mode: u_0(j) <n_i> <x0> */
                nx[(size_t)i * L + j] = A[off_nx(m) + (size_t)i * L + j] + 2.0 * beta0 / sqrt((double)L) * A[off_n(m) + i];
            }
        /* averages over the translations (the chain: also open, as before the lattices) */
        for (int r = 0; r < L && (m->lat.translation || m->lat.kind == HH_LATTICE_CHAIN); r++) {
            double a = 0.0, b = 0.0, c = 0.0;
            for (int i = 0; i < L; i++) {
                const int j = hh_lattice_translate(&m->lat, i, r); /* the chain: (i + r) mod L */
                a += nn[(size_t)i * L + j];
                b += ss[(size_t)i * L + j];
                c += nx[(size_t)i * L + j];
            }
            o->density_r[(size_t)v * L + r] = a / L;
            o->spin_r[(size_t)v * L + r] = b / L;
            o->electron_phonon_r[(size_t)v * L + r] = c / L;
        }
    }
    return PL_OK;
}
