/* hh.c — the 1D Holstein-Hubbard Hamiltonian as a row generator.
 *
 * Method: the basis is the product (up configuration) x (down configuration)
 * x (phonon state), electron-major (hh.h).  A row is generated from a small
 * per-thread workspace (ScaMaC's generate_row with workspace, GHOST's row
 * function): everything that depends only on the electron configuration --
 * the hopping targets with their fermion signs, the double occupancy, the
 * phonon couplings of the modes -- is computed once per electron block and
 * reused for the n_phonon_states consecutive rows of that block.  Inside a
 * block only the phonon part changes; with the lexicographic phonon ranking
 * (hh_impl.h) the entries of a row come out in ascending column order:
 *   up hops below, down hops below | phonon lowerings, diagonal, phonon
 *   raisings | down hops above, up hops above.
 * Small phonon spaces (n_ph * modes <= 2^21) use precomputed neighbour
 * tables; larger ones rank the neighbours per row (O(modes) each).  No hash
 * lookups anywhere.
 *
 * Signs: fermion operators ordered all up before all down, each by site.  A
 * hop between sites i < j (any bond of the lattice) passes the operators of
 * its spin on the sites strictly between i and j: (-1)^(their number).  On
 * the chain that is +1 between neighbours i, i+1 and (-1)^(N_s - 1) across
 * the periodic bond L-1 <-> 0 (the N_s - 1 others all lie between).  A down
 * hop passes all up operators twice (+1).
 *
 * Normal phonon basis (hh_lattice_modes): on the chain u_k(i) =
 * sqrt(2/L) cos(2 pi q i / L), sqrt(2/L) sin(2 pi q i / L) for 0 < q < L/2
 * (mode order: cos q=1, sin q=1, cos q=2, ...), and (-1)^i / sqrt(L) for
 * q = L/2 (L even, last); other lattices: lattice.h.  The uniform mode
 * couples to the conserved N_e only: shifting it away gives the constant
 * -g^2 N_e^2 / (L w0), added last to the diagonal so that cancellations
 * U d + w0 n_ph + shift = 0 are exact when the numbers are.
 *
 * References: the seed paper's HMEp matrix (L = 6, 3 up 3 down, M = 15,
 * N = 6,201,600); docs/models.md "Holstein-Hubbard". */
#define _DEFAULT_SOURCE
#include "hh_impl.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gen_util.h"
#include "pl_error.h"

#define ROW_CHUNK 8192 /* rows per OpenMP work item */
#define HH_ROW_BUF (4 * HH_MAX_HOPS + 2 * HH_MAX_MODES + 1) /* >= max_row_len */

/* ---- ranking ------------------------------------------------------------ */

static inline int64_t ph_T(const hh_model *m, int k, int K) { return m->ph_count[(int64_t)k * (m->M + 1) + K]; }

uint64_t hh_el_unrank(const hh_model *m, int64_t r, int nbits)
{
    uint64_t mask = 0;
    int p = m->L - 1;
    for (int j = nbits; j >= 1; j--) {
        while (m->binom[p][j] > r) p--;
        mask |= UINT64_C(1) << p;
        r -= m->binom[p][j];
        p--;
    }
    return mask;
}

int64_t hh_el_rank(const hh_model *m, uint64_t mask)
{
    int64_t r = 0;
    int j = 1;
    while (mask) {
        int p = __builtin_ctzll(mask);
        r += m->binom[p][j++];
        mask &= mask - 1;
    }
    return r;
}

void hh_ph_unrank(const hh_model *m, int64_t r, int32_t *occ)
{
    int K = m->M;
    for (int j = 0; j < m->nmodes; j++) {
        int rj = m->nmodes - 1 - j, v = 0;
        for (;;) {
            int64_t c = ph_T(m, rj, K - v);
            if (r < c) break;
            r -= c;
            v++;
        }
        occ[j] = v;
        K -= v;
    }
}

int64_t hh_ph_rank(const hh_model *m, const int32_t *occ)
{
    int64_t r = 0;
    int K = m->M;
    for (int j = 0; j < m->nmodes; j++) {
        int n = occ[j];
        if (n) {
            int rj = m->nmodes - 1 - j;
            r += ph_T(m, rj + 1, K) - ph_T(m, rj + 1, K - n);
            K -= n;
        }
    }
    return r;
}

/* ---- workspace: everything of one electron block ------------------------ */

typedef struct hh_ws {
    int64_t e;                    /* electron index (iu * n_dn + id), -1 none */
    int64_t base;                 /* e * n_ph                                 */
    int nlo, nhi;                 /* hops to blocks below / above             */
    int64_t lo_off[2 * HH_MAX_HOPS], hi_off[2 * HH_MAX_HOPS]; /* block offsets */
    double lo_val[2 * HH_MAX_HOPS], hi_val[2 * HH_MAX_HOPS];
    double diag_el;               /* U * double occupancy                     */
    double docc;                  /* double occupancy (H_U's diagonal)        */
    int nact;                     /* phonon modes with a non-zero coupling    */
    int act[HH_MAX_MODES];        /* ascending                                */
    double cpl[HH_MAX_MODES];     /* -g rho_k of act[a]                       */
    double cpl_u[HH_MAX_MODES];   /* -rho_k (H_g's coupling), terms mode      */
    /* per-row phonon data when there are no tables */
    int32_t occ[HH_MAX_MODES];
    int64_t up[HH_MAX_MODES], dn[HH_MAX_MODES];
} hh_ws;

/* Hops of one spin species: targets (ranks) and amplitudes, ascending,
 * duplicates summed, exact zeros dropped.  Returns the count. */
static int spin_hops(const hh_model *m, uint64_t mask, int nspin, int64_t *tgt, double *amp)
{
    const double t = m->terms ? 1.0 : m->par.hopping; /* terms: the pattern and unit values of H_hop */
    int n = 0;
    (void)nspin;
    if (t == 0.0) return 0;
    for (int b = 0; b < m->nbonds; b++) {
        uint64_t bits = m->bond_bits[b];
        uint64_t occ = mask & bits;
        if (occ == 0 || occ == bits) continue;
        int64_t r = hh_el_rank(m, mask ^ bits);
        const double tf = t * m->lat.bond[b].factor; /* t exactly where the factor is 1 */
        double v = (__builtin_popcountll(mask & m->bond_between[b]) & 1) ? tf : -tf;
        /* insertion into the sorted list, summing a duplicate */
        int i = n;
        while (i > 0 && tgt[i - 1] > r) i--;
        if (i > 0 && tgt[i - 1] == r) {
            amp[i - 1] += v;
            continue;
        }
        memmove(tgt + i + 1, tgt + i, (size_t)(n - i) * sizeof *tgt);
        memmove(amp + i + 1, amp + i, (size_t)(n - i) * sizeof *amp);
        tgt[i] = r;
        amp[i] = v;
        n++;
    }
    int k = 0; /* drop exact zeros from cancelled duplicates */
    for (int i = 0; i < n; i++)
        if (amp[i] != 0.0) {
            tgt[k] = tgt[i];
            amp[k] = amp[i];
            k++;
        }
    return k;
}

static void ws_set_electrons(const hh_model *m, hh_ws *w, int64_t e)
{
    const int64_t ndn = m->n_dn_states, nph = m->n_ph;
    const int64_t iu = e / ndn, id = e % ndn;
    const uint64_t mu = hh_el_unrank(m, iu, m->par.n_up);
    const uint64_t md = hh_el_unrank(m, id, m->par.n_down);
    int64_t tu[HH_MAX_HOPS], td[HH_MAX_HOPS];
    double au[HH_MAX_HOPS], ad[HH_MAX_HOPS];
    int nu = spin_hops(m, mu, m->par.n_up, tu, au);
    int nd = spin_hops(m, md, m->par.n_down, td, ad);
    w->e = e;
    w->base = e * nph;
    w->nlo = w->nhi = 0;
    /* ascending: up below < down below < self < down above < up above */
    for (int i = 0; i < nu; i++)
        if (tu[i] < iu) {
            w->lo_off[w->nlo] = (tu[i] * ndn + id) * nph;
            w->lo_val[w->nlo++] = au[i];
        }
    for (int i = 0; i < nd; i++)
        if (td[i] < id) {
            w->lo_off[w->nlo] = (iu * ndn + td[i]) * nph;
            w->lo_val[w->nlo++] = ad[i];
        }
    for (int i = 0; i < nd; i++)
        if (td[i] > id) {
            w->hi_off[w->nhi] = (iu * ndn + td[i]) * nph;
            w->hi_val[w->nhi++] = ad[i];
        }
    for (int i = 0; i < nu; i++)
        if (tu[i] > iu) {
            w->hi_off[w->nhi] = (tu[i] * ndn + id) * nph;
            w->hi_val[w->nhi++] = au[i];
        }
    w->docc = (double)__builtin_popcountll(mu & md);
    w->diag_el = m->par.hubbard_u * w->docc;
    /* couplings (terms mode: also at g = 0, the pattern of H_g) */
    const double g = m->par.coupling;
    w->nact = 0;
    if (g == 0.0 && !m->terms) return;
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
        if (rho == 0.0) continue;
        w->act[w->nact] = k;
        w->cpl_u[w->nact] = -rho;
        w->cpl[w->nact++] = -g * rho;
    }
}

/* Phonon data of state iph: occupations, total, neighbour ranks (valid for
 * the active modes). */
static inline void ws_phonon(const hh_model *m, hh_ws *w, int64_t iph, const int32_t **occ, int *tot,
                             const int64_t **up, const int64_t **dn)
{
    const int nm = m->nmodes;
    if (m->ph_occ) {
        *occ = m->ph_occ + iph * nm;
        *tot = m->ph_tot[iph];
        *up = m->ph_up + iph * nm;
        *dn = m->ph_dn + iph * nm;
        return;
    }
    hh_ph_unrank(m, iph, w->occ);
    int s = 0;
    for (int k = 0; k < nm; k++) s += w->occ[k];
    for (int a = 0; a < w->nact; a++) {
        int k = w->act[a];
        w->up[k] = w->dn[k] = -1;
        if (s < m->M) {
            w->occ[k]++;
            w->up[k] = hh_ph_rank(m, w->occ);
            w->occ[k]--;
        }
        if (w->occ[k] > 0) {
            w->occ[k]--;
            w->dn[k] = hh_ph_rank(m, w->occ);
            w->occ[k]++;
        }
    }
    *occ = w->occ;
    *tot = s;
    *up = w->up;
    *dn = w->dn;
}

static inline double row_diag(const hh_model *m, const hh_ws *w, int tot)
{
    double d = w->diag_el + m->par.phonon_frequency * (double)tot;
    return d + m->shift; /* last, so exact cancellations stay exact */
}

/* Whether the row stores its diagonal: a non-zero value, or (terms mode)
 * any term non-zero there. */
static inline int has_diag(const hh_model *m, const hh_ws *w, int tot)
{
    if (m->terms) return w->docc != 0.0 || tot != 0 || m->shift_unit != 0.0;
    return row_diag(m, w, tot) != 0.0;
}

/* Terms mode: the unit values of entry n of a row, term k at tv[k * HH_ROW_BUF + n]. */
static inline void put_terms(double *tv, int n, double hop, double u, double ph, double g, double sh)
{
    tv[HH_TERM_HOPPING * HH_ROW_BUF + n] = hop;
    tv[HH_TERM_U * HH_ROW_BUF + n] = u;
    tv[HH_TERM_PHONON * HH_ROW_BUF + n] = ph;
    tv[HH_TERM_COUPLING * HH_ROW_BUF + n] = g;
    tv[HH_TERM_SHIFT * HH_ROW_BUF + n] = sh;
}

/* Fill one row of the current electron block; returns its length.  tv
 * (terms mode only, else NULL): the terms' unit values of each entry.  In
 * terms mode the hops in lo_val/hi_val are H_hop's unit values and the
 * value is t times them (the same number as -t times the sign). */
static inline int row_fill(const hh_model *m, hh_ws *w, int64_t iph, int64_t *col, double *val, double *tv)
{
    const int32_t *occ;
    const int64_t *up, *dn;
    int tot, n = 0;
    const double th = m->terms ? m->par.hopping : 1.0;
    ws_phonon(m, w, iph, &occ, &tot, &up, &dn);
    for (int j = 0; j < w->nlo; j++) {
        col[n] = w->lo_off[j] + iph;
        if (tv) put_terms(tv, n, w->lo_val[j], 0, 0, 0, 0);
        val[n++] = th * w->lo_val[j];
    }
    for (int a = 0; a < w->nact; a++) {
        int k = w->act[a];
        if (occ[k] > 0) {
            col[n] = w->base + dn[k];
            if (tv) put_terms(tv, n, 0, 0, 0, w->cpl_u[a] * m->sqrt_n[occ[k]], 0);
            val[n++] = w->cpl[a] * m->sqrt_n[occ[k]];
        }
    }
    if (has_diag(m, w, tot)) {
        col[n] = w->base + iph;
        if (tv) put_terms(tv, n, 0, w->docc, (double)tot, 0, m->shift_unit);
        val[n++] = row_diag(m, w, tot);
    }
    if (tot < m->M)
        for (int a = w->nact - 1; a >= 0; a--) {
            int k = w->act[a];
            col[n] = w->base + up[k];
            if (tv) put_terms(tv, n, 0, 0, 0, w->cpl_u[a] * m->sqrt_n[occ[k] + 1], 0);
            val[n++] = w->cpl[a] * m->sqrt_n[occ[k] + 1];
        }
    for (int j = 0; j < w->nhi; j++) {
        col[n] = w->hi_off[j] + iph;
        if (tv) put_terms(tv, n, w->hi_val[j], 0, 0, 0, 0);
        val[n++] = th * w->hi_val[j];
    }
    return n;
}

/* Length of one row of the current electron block (no neighbour ranks). */
static inline int row_len(const hh_model *m, const hh_ws *w, int64_t iph)
{
    int32_t buf[HH_MAX_MODES];
    const int32_t *occ;
    int tot, n = w->nlo + w->nhi;
    if (m->ph_occ) {
        occ = m->ph_occ + iph * m->nmodes;
        tot = m->ph_tot[iph];
    } else {
        hh_ph_unrank(m, iph, buf);
        occ = buf;
        tot = 0;
        for (int k = 0; k < m->nmodes; k++) tot += buf[k];
    }
    for (int a = 0; a < w->nact; a++) n += occ[w->act[a]] > 0;
    if (tot < m->M) n += w->nact;
    if (has_diag(m, w, tot)) n++;
    return n;
}

/* ---- model -------------------------------------------------------------- */

static int hh_check(const hh_params *p)
{
    if (p->lattice)
        PL_CHECK(p->lattice->sites == p->sites, PL_ERR_INPUT, "sites: %d, but the lattice has %d sites", p->sites,
                 p->lattice->sites);
    PL_CHECK(p->sites >= 2 && p->sites <= HH_MAX_SITES, PL_ERR_INPUT, "sites: %d: need 2 .. %d", p->sites,
             HH_MAX_SITES);
    PL_CHECK(p->n_up >= 0 && p->n_up <= p->sites, PL_ERR_INPUT, "n_up: %d: need 0 .. sites = %d", p->n_up,
             p->sites);
    PL_CHECK(p->n_down >= 0 && p->n_down <= p->sites, PL_ERR_INPUT, "n_down: %d: need 0 .. sites = %d",
             p->n_down, p->sites);
    PL_CHECK(p->max_phonons >= 0, PL_ERR_INPUT, "max_phonons: must be >= 0 (got %d)", p->max_phonons);
    PL_CHECK(isfinite(p->phonon_frequency) && p->phonon_frequency > 0, PL_ERR_INPUT,
             "phonon_frequency: must be a finite number > 0 (got %g)", p->phonon_frequency);
    PL_CHECK(isfinite(p->hopping), PL_ERR_INPUT, "hopping: must be finite (got %g)", p->hopping);
    PL_CHECK(isfinite(p->hubbard_u), PL_ERR_INPUT, "hubbard_u: must be finite (got %g)", p->hubbard_u);
    PL_CHECK(isfinite(p->coupling), PL_ERR_INPUT, "coupling: must be finite (got %g)", p->coupling);
    PL_CHECK(p->phonon_basis == PL_PHONON_SITE || p->phonon_basis == PL_PHONON_NORMAL, PL_ERR_INPUT,
             "phonon_basis: must be site or normal");
    PL_CHECK(p->lattice || p->boundary == PL_BOUNDARY_PERIODIC || p->boundary == PL_BOUNDARY_OPEN, PL_ERR_INPUT,
             "boundary: must be periodic or open");
    return PL_OK;
}

static int build_ph_tables(hh_model *m)
{
    const int nm = m->nmodes;
    const int64_t n = m->n_ph * nm;
    PL_MALLOC(m->ph_occ, n);
    PL_MALLOC(m->ph_tot, m->n_ph);
    PL_MALLOC(m->ph_up, n);
    PL_MALLOC(m->ph_dn, n);
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < m->n_ph; s++) {
        int32_t *occ = m->ph_occ + s * nm;
        hh_ph_unrank(m, s, occ);
        int tot = 0;
        for (int k = 0; k < nm; k++) tot += occ[k];
        m->ph_tot[s] = tot;
        for (int k = 0; k < nm; k++) {
            int64_t up = -1, dn = -1;
            if (tot < m->M) {
                occ[k]++;
                up = hh_ph_rank(m, occ);
                occ[k]--;
            }
            if (occ[k] > 0) {
                occ[k]--;
                dn = hh_ph_rank(m, occ);
                occ[k]++;
            }
            m->ph_up[s * nm + k] = up;
            m->ph_dn[s * nm + k] = dn;
        }
    }
    return PL_OK;
}

static int model_init(hh_model *m, const hh_params *par, int use_tables)
{
    PL_CALL(hh_check(par));
    m->par = *par;
    const int L = par->sites;
    m->L = L;
    m->M = par->max_phonons;
    m->nmodes = par->phonon_basis == PL_PHONON_SITE ? L : L - 1;
    /* the lattice: bonds and the bits that decide their signs */
    if (par->lattice) m->lat = *par->lattice;
    else PL_CALL(hh_lattice_chain(L, par->boundary, &m->lat));
    m->par.lattice = NULL; /* the model's copy is m->lat */
    m->nbonds = m->lat.nbonds;
    for (int b = 0; b < m->nbonds; b++) {
        const int i = m->lat.bond[b].a, j = m->lat.bond[b].b, lo = i < j ? i : j, hi = i < j ? j : i;
        PL_CHECK(i >= 0 && j >= 0 && i < L && j < L && i != j, PL_ERR_INPUT, "bonds: %d-%d: not two sites of 0..%d", i,
                 j, L - 1);
        m->bond_bits[b] = (UINT64_C(1) << i) | (UINT64_C(1) << j);
        m->bond_between[b] = ((UINT64_C(1) << hi) - 1) & ~((UINT64_C(2) << lo) - 1);
    }
    /* binomials C(n, k), n <= 62: all fit in int64 */
    for (int n = 0; n <= HH_MAX_SITES; n++) {
        m->binom[n][0] = 1;
        for (int k = 1; k <= HH_MAX_SITES + 1; k++)
            m->binom[n][k] = (n == 0 || k > n) ? 0 : m->binom[n - 1][k - 1] + m->binom[n - 1][k];
    }
    m->n_up_states = m->binom[L][par->n_up];
    m->n_dn_states = m->binom[L][par->n_down];
    /* phonon counting table T(k, K) = C(K + k, k) */
    const int M = m->M, nm = m->nmodes;
    int64_t tsize = 0;
    if (pl_mul_i64((int64_t)nm + 1, (int64_t)M + 1, &tsize) || tsize > HH_PH_COUNT_LIMIT)
        return PL_ERROR(PL_ERR_INPUT, "max_phonons: %d is too large for %d phonon modes (at most %lld)", M,
                        nm, (long long)(HH_PH_COUNT_LIMIT / (nm + 1) - 1));
    PL_MALLOC(m->ph_count, tsize);
    int overflow = 0;
    for (int k = 0; k <= nm; k++)
        for (int K = 0; K <= M; K++) {
            int64_t v;
            if (k == 0 || K == 0) v = 1;
            else if (__builtin_add_overflow(m->ph_count[(int64_t)k * (M + 1) + K - 1],
                                            m->ph_count[(int64_t)(k - 1) * (M + 1) + K], &v)) {
                overflow = 1;
                v = INT64_MAX;
            }
            m->ph_count[(int64_t)k * (M + 1) + K] = v;
        }
    int64_t nel = 0;
    m->n_ph = ph_T(m, nm, M);
    if (overflow || pl_mul_i64(m->n_up_states, m->n_dn_states, &nel) || pl_mul_i64(nel, m->n_ph, &m->N))
        return PL_ERROR(PL_ERR_INPUT,
                        "basis of C(%d,%d) x C(%d,%d) electron x C(%d+%d,%d) phonon states too large to "
                        "index in 64 bits: reduce max_phonons (%d) or sites (%d)",
                        L, par->n_up, L, par->n_down, M, nm, nm, M, L);
    /* sqrt table */
    PL_MALLOC(m->sqrt_n, (int64_t)M + 2);
    for (int n = 0; n <= M + 1; n++) m->sqrt_n[n] = sqrt((double)n);
    /* normal modes and the constant of the removed uniform mode */
    m->shift = 0.0;
    if (par->phonon_basis == PL_PHONON_NORMAL) {
        PL_MALLOC(m->umode, (int64_t)nm * L);
        hh_lattice_modes(&m->lat, m->umode);
        const double g = par->coupling, ne = (double)(par->n_up + par->n_down);
        m->shift = -(g * g * (ne * ne)) / ((double)L * par->phonon_frequency);
        if (m->shift == 0.0) m->shift = 0.0; /* no -0.0 */
        m->shift_unit = -(ne * ne) / (double)L;
        if (m->shift_unit == 0.0) m->shift_unit = 0.0;
    }
    /* per-spin hops: at most one per bond (a pair joined twice: two bonds, one target) */
    m->max_row_len = 2 * m->nbonds + 2 * nm + 1;
    if (use_tables && (int64_t)nm * m->n_ph <= HH_PH_TABLE_LIMIT) PL_CALL(build_ph_tables(m));
    return PL_OK;
}

int hh_model_create_opts(const hh_params *par, int use_tables, hh_model **model)
{
    PL_CHECK(par && model, PL_ERR_ARG, "hh_model_create: NULL argument");
    *model = NULL;
    hh_model *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory for the model");
    int r = model_init(m, par, use_tables);
    if (r != PL_OK) {
        hh_model_destroy(&m);
        return pl_error_trace(r, __FILE__, __LINE__, __func__, "model_init(m, par, use_tables)");
    }
    *model = m;
    return PL_OK;
}

int hh_model_create(const hh_params *par, hh_model **model)
{
    PL_CALL(hh_model_create_opts(par, 1, model));
    return PL_OK;
}

void hh_model_destroy(hh_model **model)
{
    if (!model || !*model) return;
    hh_model *m = *model;
    free(m->ph_count);
    free(m->umode);
    free(m->sqrt_n);
    free(m->ph_occ);
    free(m->ph_tot);
    free(m->ph_up);
    free(m->ph_dn);
    free(m);
    *model = NULL;
}

int64_t hh_model_rows(const hh_model *model) { return model->N; }

int hh_model_max_row_len(const hh_model *model) { return model->max_row_len; }

void hh_model_dims(const hh_model *model, int64_t *n_up_states, int64_t *n_down_states, int64_t *n_phonon_states)
{
    if (n_up_states) *n_up_states = model->n_up_states;
    if (n_down_states) *n_down_states = model->n_dn_states;
    if (n_phonon_states) *n_phonon_states = model->n_ph;
}

/* ---- rows --------------------------------------------------------------- */

int hh_row(const hh_model *model, int64_t row, int *len, int64_t *col, double *val)
{
    PL_CHECK(model && len && col && val, PL_ERR_ARG, "hh_row: NULL argument");
    PL_CHECK(row >= 0 && row < model->N, PL_ERR_ARG, "hh_row: row %lld outside [0, %lld)", (long long)row,
             (long long)model->N);
    hh_ws w;
    ws_set_electrons(model, &w, row / model->n_ph);
    *len = row_fill(model, &w, row % model->n_ph, col, val, NULL);
    return PL_OK;
}

static int check_range(const hh_model *model, int64_t r0, int64_t r1)
{
    PL_CHECK(model, PL_ERR_ARG, "NULL model");
    PL_CHECK(r0 >= 0 && r0 <= r1 && r1 <= model->N, PL_ERR_ARG, "row range [%lld, %lld) outside [0, %lld)",
             (long long)r0, (long long)r1, (long long)model->N);
    return PL_OK;
}

static int lengths_impl(const hh_model *model, int64_t r0, int64_t r1, int32_t *len, gen_progress *pg)
{
    const int64_t nrows = r1 - r0, nph = model->n_ph;
    const int64_t nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
#pragma omp parallel
    {
        hh_ws w;
        w.e = -1;
#pragma omp for schedule(dynamic, 1)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t a = r0 + c * ROW_CHUNK, b = a + ROW_CHUNK < r1 ? a + ROW_CHUNK : r1;
            int64_t e = a / nph, iph = a % nph;
            for (int64_t r = a; r < b; r++) {
                if (w.e != e) ws_set_electrons(model, &w, e);
                len[r - r0] = row_len(model, &w, iph);
                if (++iph == nph) {
                    iph = 0;
                    e++;
                }
            }
            gen_progress_tick(pg, b - a);
        }
    }
    return PL_OK;
}

int hh_row_lengths(const hh_model *model, int64_t r0, int64_t r1, int32_t *len)
{
    PL_CALL(check_range(model, r0, r1));
    PL_CHECK(len || r0 == r1, PL_ERR_ARG, "hh_row_lengths: NULL len");
    gen_progress pg = {pl_wtime(), pl_wtime(), 0, r1 - r0, "Hamiltonian", "row lengths"};
    PL_CALL(lengths_impl(model, r0, r1, len, &pg));
    return PL_OK;
}

/* CSR rows [r0, r1) of model; terms mode (model->terms): also
 * out->terms = [the fixed part sum_{k not in swept} c_k H_k, then H_k for
 * each k in swept, ascending]. */
static int rows_impl(const hh_model *model, int64_t r0, int64_t r1, unsigned swept, pl_csr *out)
{
    PL_CALL(check_range(model, r0, r1));
    PL_CHECK(out, PL_ERR_ARG, "hh_rows_csr: NULL output");
    memset(out, 0, sizeof *out);
    const int64_t nrows = r1 - r0, nph = model->n_ph;
    const int64_t nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
    const double t0 = pl_wtime();
    int32_t *len = NULL;
    PL_MALLOC(len, nrows);
    /* pass 1: lengths */
    gen_progress pg = {t0, t0, 0, nrows, "Hamiltonian", "row lengths"};
    int r = lengths_impl(model, r0, r1, len, &pg);
    pg.done = 0;
    pg.what = "rows";
    PL_CALL(gen_csr_from_lengths(r, model->N, r0, nrows, len, out));
    const int64_t nnz = pl_csr_nnz(out);
    double coef[HH_NTERMS];
    int K = 0, which[HH_NTERMS + 1]; /* output term q >= 1 is H_{which[q]}: 1 + HH_NTERMS at most */
    hh_term_coefs(&model->par, coef);
    if (model->terms) {
        K = 1;
        for (int k = 0; k < HH_NTERMS; k++)
            if (swept >> k & 1u) which[K++] = k;
        out->terms = malloc(((size_t)K * (size_t)nnz + 1) * sizeof *out->terms);
        if (!out->terms) {
            pl_csr_destroy(out);
            return PL_ERROR(PL_ERR_MEM, "out of host memory for %d x %lld value terms", K, (long long)nnz);
        }
        out->nterms = K;
        gen_advise_huge_pages(out->terms, (size_t)K * (size_t)nnz * sizeof *out->terms);
    }
    /* pass 2: fill (the same chunks, so first touch matches the use) */
    int64_t bad_row = -1;
#pragma omp parallel
    {
        hh_ws w;
        w.e = -1;
        int64_t bc[HH_ROW_BUF];
        double bv[HH_ROW_BUF], bt[HH_NTERMS * HH_ROW_BUF];
        double *tv = model->terms ? bt : NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t a = r0 + c * ROW_CHUNK, b = a + ROW_CHUNK < r1 ? a + ROW_CHUNK : r1;
            int64_t e = a / nph, iph = a % nph;
            for (int64_t rr = a; rr < b; rr++) {
                if (w.e != e) ws_set_electrons(model, &w, e);
                int64_t p = out->row_ptr[rr - r0];
                int n = row_fill(model, &w, iph, bc, bv, tv);
                if (n != out->row_ptr[rr - r0 + 1] - p) {
#pragma omp critical(hh_bad_row)
                    bad_row = rr;
                    n = (int)(out->row_ptr[rr - r0 + 1] - p);
                }
                memcpy(out->col + p, bc, (size_t)n * sizeof *bc);
                memcpy(out->val + p, bv, (size_t)n * sizeof *bv);
                if (tv) {
                    double *fx = out->terms + p; /* the fixed part */
                    for (int i = 0; i < n; i++) {
                        double f = 0.0;
                        for (int k = 0; k < HH_NTERMS; k++)
                            if (!(swept >> k & 1u)) f += coef[k] * bt[k * HH_ROW_BUF + i];
                        fx[i] = f;
                    }
                    for (int q = 1; q < K; q++)
                        memcpy(out->terms + (size_t)q * nnz + p, bt + which[q] * HH_ROW_BUF, (size_t)n * sizeof *bt);
                }
                if (++iph == nph) {
                    iph = 0;
                    e++;
                }
            }
            gen_progress_tick(&pg, b - a);
        }
    }
    return gen_csr_finish("Hamiltonian", bad_row, r0, r1, t0, out);
}

int hh_rows_csr(const hh_model *model, int64_t r0, int64_t r1, pl_csr *out)
{
    PL_CHECK(model, PL_ERR_ARG, "NULL model");
    PL_CHECK(!model->terms, PL_ERR_ARG, "hh_rows_csr: a terms-mode model copy");
    return rows_impl(model, r0, r1, 0u, out);
}

int hh_rows_csr_terms(const hh_model *model, int64_t r0, int64_t r1, unsigned swept, pl_csr *out)
{
    PL_CHECK(model, PL_ERR_ARG, "NULL model");
    PL_CHECK(swept < (1u << HH_NTERMS), PL_ERR_ARG, "hh_rows_csr_terms: swept = %#x names no term", swept);
    hh_model tm = *model; /* shares the tables, read only */
    tm.terms = 1;
    return rows_impl(&tm, r0, r1, swept, out);
}

int hh_row_lengths_terms(const hh_model *model, int64_t r0, int64_t r1, int32_t *len)
{
    PL_CHECK(model, PL_ERR_ARG, "NULL model");
    hh_model tm = *model;
    tm.terms = 1;
    return hh_row_lengths(&tm, r0, r1, len);
}

void hh_term_coefs(const hh_params *par, double c[HH_NTERMS])
{
    c[HH_TERM_HOPPING] = par->hopping;
    c[HH_TERM_U] = par->hubbard_u;
    c[HH_TERM_PHONON] = par->phonon_frequency;
    c[HH_TERM_COUPLING] = par->coupling;
    c[HH_TERM_SHIFT] = par->coupling * par->coupling / par->phonon_frequency;
}
