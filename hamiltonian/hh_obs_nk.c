/* hh_obs_nk.c — the one-body density matrix G_s(i, j) = <c+_{i s} c_{j s}>
 * of eigenvectors and the momentum distribution n_s(k) from it (hh.h
 * "momentum distribution"; docs/models.md "Observables").
 *
 * c+_i c_j moves one electron of spin s from j to i and keeps the phonons:
 * G_s(i, j) = sum_{e, p} sign psi(e', p) psi(e, p), e' = e with j -> i, the
 * sign (-1)^(electrons of spin s strictly between i and j) (the other spin's
 * strings cancel).  Each pair of configurations is a dot product of two
 * phonon slices.  A rank sums over its own rows; the slices e' it reads may
 * lie anywhere (hh_obs_hop_range: the caller fetches them).  Reproducible
 * as hh_obs.c: fixed blocks of configurations, summed in block order. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "hh_impl.h"
#include "pl_error.h"

#define NK_BLOCKS 256

/* the spin-s masks of configuration e; the other spin's too */
static void masks(const hh_model *m, int64_t e, uint64_t *mu, uint64_t *md)
{
    *mu = hh_el_unrank(m, e / m->n_dn_states, m->par.n_up);
    *md = hh_el_unrank(m, e % m->n_dn_states, m->par.n_down);
}

void hh_obs_hop_range(const hh_model *m, int64_t r0, int64_t r1, int64_t *xa, int64_t *xb)
{
    if (r1 <= r0) {
        *xa = *xb = r0;
        return;
    }
    const int64_t nph = m->n_ph, e0 = r0 / nph, e1 = (r1 - 1) / nph;
    int64_t lo = e0, hi = e1;
    for (int64_t e = e0; e <= e1; e++) {
        uint64_t mu, md;
        masks(m, e, &mu, &md);
        for (int s = 0; s < 2; s++) {
            const uint64_t ms = s == 0 ? mu : md, full = (UINT64_C(1) << m->L) - 1;
            for (uint64_t occ = ms; occ; occ &= occ - 1)
                for (uint64_t emp = ~ms & full; emp; emp &= emp - 1) {
                    const uint64_t t = ms ^ (occ & -occ) ^ (emp & -emp);
                    const int64_t r = hh_el_rank(m, t);
                    const int64_t e2 = s == 0 ? r * m->n_dn_states + e % m->n_dn_states
                                              : (e / m->n_dn_states) * m->n_dn_states + r;
                    if (e2 < lo) lo = e2;
                    if (e2 > hi) hi = e2;
                }
        }
    }
    *xa = lo * nph;
    *xb = (hi + 1) * nph;
}

size_t hh_obs_onebody_size(const hh_model *m) { return 2 * (size_t)m->L * (size_t)m->L; }

/* one configuration's sums into g (2 x L x L of one vector) */
static void onebody_config(const hh_model *m, int64_t e, int64_t p0, int64_t p1, const double *x, int64_t xa,
                           double *g)
{
    const int L = m->L;
    const int64_t nph = m->n_ph;
    const double *xe = x + (e * nph - xa);
    uint64_t mu, md;
    masks(m, e, &mu, &md);
    double w = 0.0;
    for (int64_t p = p0; p < p1; p++) w += xe[p] * xe[p];
    const uint64_t full = (UINT64_C(1) << L) - 1;
    for (int s = 0; s < 2; s++) {
        const uint64_t ms = s == 0 ? mu : md;
        double *gs = g + (size_t)s * L * L;
        for (uint64_t occ = ms; occ; occ &= occ - 1) {
            const int j = __builtin_ctzll(occ);
            gs[j * L + j] += w;
            for (uint64_t emp = ~ms & full; emp; emp &= emp - 1) {
                const int i = __builtin_ctzll(emp);
                const uint64_t t = ms ^ (UINT64_C(1) << j) ^ (UINT64_C(1) << i);
                const uint64_t lo = i < j ? i : j, hi = i < j ? j : i;
                const uint64_t between = ((UINT64_C(1) << hi) - 1) & ~((UINT64_C(1) << (lo + 1)) - 1);
                const double sign = (__builtin_popcountll(ms & between) & 1) ? -1.0 : 1.0;
                const int64_t r = hh_el_rank(m, t);
                const int64_t e2 = s == 0 ? r * m->n_dn_states + e % m->n_dn_states
                                          : (e / m->n_dn_states) * m->n_dn_states + r;
                const double *x2 = x + (e2 * nph - xa);
                double d = 0.0;
                for (int64_t p = p0; p < p1; p++) d += x2[p] * xe[p];
                gs[i * L + j] += sign * d; /* <c+_i c_j>: e' = e with j -> i */
            }
        }
    }
}

int hh_obs_onebody(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *x, size_t ldx, int64_t xa,
                   double *acc)
{
    PL_CHECK(m && r0 >= 0 && r1 >= r0 && r1 <= m->N && nvec >= 1 && acc && (x || r1 == r0), PL_ERR_ARG,
             "hh_obs_onebody: bad arguments");
    const size_t S = hh_obs_onebody_size(m);
    memset(acc, 0, (size_t)nvec * S * sizeof *acc);
    if (r1 == r0) return PL_OK;
    const int64_t nph = m->n_ph, e0 = r0 / nph, e1 = (r1 - 1) / nph, ne = e1 - e0 + 1;
    const int nb = ne < NK_BLOCKS ? (int)ne : NK_BLOCKS;
    double *part = calloc((size_t)nb * (size_t)nvec * S + 1, sizeof *part);
    PL_CHECK(part, PL_ERR_MEM, "out of host memory for the one-body density matrix");
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < nb; b++) {
        const int64_t ea = e0 + ne * b / nb, eb = e0 + ne * (b + 1) / nb;
        for (int64_t e = ea; e < eb; e++) {
            const int64_t p0 = e == e0 ? r0 - e * nph : 0, p1 = e == e1 ? r1 - e * nph : nph;
            for (int v = 0; v < nvec; v++)
                onebody_config(m, e, p0, p1, x + (size_t)v * ldx, xa, part + ((size_t)b * nvec + v) * S);
        }
    }
    for (int b = 0; b < nb; b++)
        for (size_t i = 0; i < (size_t)nvec * S; i++) acc[i] += part[(size_t)b * nvec * S + i];
    free(part);
    return PL_OK;
}

int hh_obs_onebody_exact(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *x, size_t ldx,
                         int64_t xa, pl_exsum *ex)
{
    PL_CHECK(m && r0 >= 0 && r1 >= r0 && r1 <= m->N && nvec >= 1 && ex && (x || r1 == r0), PL_ERR_ARG,
             "hh_obs_onebody_exact: bad arguments");
    const size_t S = hh_obs_onebody_size(m), nv = (size_t)nvec * S;
    if (r1 == r0) return PL_OK;
    const int64_t nph = m->n_ph, e0 = r0 / nph, e1 = (r1 - 1) / nph;
    const int nth = omp_get_max_threads();
    double *part = calloc((size_t)nth * nv + 1, sizeof *part);
    pl_exsum *tex = calloc((size_t)nth * nv + 1, sizeof *tex);
    if (!part || !tex) {
        free(part);
        free(tex);
        return PL_ERROR(PL_ERR_MEM, "out of host memory for the one-body density matrix");
    }
#pragma omp parallel for schedule(dynamic, 4) num_threads(nth)
    for (int64_t e = e0; e <= e1; e++) { /* one configuration's terms, then exactly into the thread's sums */
        const int th = omp_get_thread_num();
        double *pt = part + (size_t)th * nv;
        memset(pt, 0, nv * sizeof *pt);
        const int64_t p0 = e == e0 ? r0 - e * nph : 0, p1 = e == e1 ? r1 - e * nph : nph;
        for (int v = 0; v < nvec; v++) onebody_config(m, e, p0, p1, x + (size_t)v * ldx, xa, pt + (size_t)v * S);
        for (size_t i = 0; i < nv; i++) pl_exsum_add(tex + (size_t)th * nv + i, pt[i]);
    }
    for (int t = 0; t < nth; t++)
        for (size_t i = 0; i < nv; i++) pl_exsum_merge(ex + i, tex + (size_t)t * nv + i);
    free(part);
    free(tex);
    return PL_OK;
}

void hh_obs_momentum_distribution(const hh_model *m, int nvec, const double *g, double *nk)
{
    const int L = m->L;
    for (int v = 0; v < nvec; v++)
        for (int s = 0; s < 2; s++) {
            const double *gs = g + ((size_t)v * 2 + s) * L * L;
            for (int k = 0; k < L; k++) {
                /* n_s(k) = (1/L) sum_ij e^{i k (r_i - r_j)} G(i, j); G real symmetric: the cos part */
                double sum = 0.0;
                for (int i = 0; i < L; i++)
                    for (int j = 0; j < L; j++)
                        sum += cos(hh_lattice_phase(&m->lat, k, i) - hh_lattice_phase(&m->lat, k, j)) * gs[i * L + j];
                nk[((size_t)v * 2 + s) * L + k] = sum / L;
            }
        }
}
