/* hh_impl.h — internals of the Holstein-Hubbard row generator (hh.c).
 * Only hamiltonian/ and its own tests (tests/hamiltonian/) include this.
 *
 * Ranking:
 *  - electron configurations of one spin are bitmasks with n bits among L,
 *    ranked by the combinatorial number system (colex order, which equals
 *    ascending mask value): rank = sum_j C(p_j, j + 1) over the set bits
 *    p_0 < p_1 < ...;
 *  - phonon states are occupation vectors (n_0 .. n_{m-1}) with total <= M,
 *    ranked lexicographically; the number of vectors of k modes with total
 *    <= K is T(k, K) = C(K + k, k) (table ph_count), so
 *    rank = sum_j [T(m-j, K_j) - T(m-j, K_j - n_j)], K_j = M - sum_{i<j} n_i.
 *    Raising mode k increases the rank, lowering decreases it, and for a
 *    fixed state the neighbours are ordered
 *    lower(0) < ... < lower(m-1) < self < raise(m-1) < ... < raise(0),
 *    so a row comes out sorted without a sort. */
#ifndef HH_IMPL_H
#define HH_IMPL_H

#include <stdint.h>

#include "hh.h"

#define HH_MAX_SITES 62
#define HH_MAX_MODES 62
/* hops of one spin: at most one per bond */
#define HH_MAX_HOPS HH_LATTICE_MAX_BONDS
/* phonon neighbour tables are built when n_phonon_states * modes <= this (40 MB at most) */
#define HH_PH_TABLE_LIMIT (INT64_C(1) << 21)
/* ph_count table (modes + 1) x (M + 1) entries at most */
#define HH_PH_COUNT_LIMIT (INT64_C(1) << 26)

struct hh_model {
    hh_params par;
    int L, nmodes, nbonds;
    hh_lattice lat;                                        /* the chain's or par.lattice's copy    */
    uint64_t bond_bits[HH_LATTICE_MAX_BONDS];              /* bits of the bond's two sites         */
    uint64_t bond_between[HH_LATTICE_MAX_BONDS];           /* bits strictly between them: the sign */
    int64_t binom[HH_MAX_SITES + 1][HH_MAX_SITES + 2];     /* C(n, k), 0 for k > n */
    int64_t n_up_states, n_dn_states, n_ph, N;
    int M;
    int64_t *ph_count;  /* T(k, K) at [k * (M + 1) + K], k = 0..nmodes  */
    double *umode;      /* normal modes u_k(i) at [k * L + i]           */
    double *sqrt_n;     /* sqrt(n), n = 0 .. M + 1                       */
    double shift;       /* -g^2 N_e^2 / (L w0) for the normal basis, else 0 */
    double shift_unit;  /* -N_e^2 / L for the normal basis, else 0: H_shift */
    int terms;          /* pattern of every value term (hh_rows_csr_terms): */
                        /* set on a copy of the model, never on the original */
    /* phonon tables (NULL when too large: computed per row instead) */
    int32_t *ph_occ;    /* n_ph x nmodes occupations                     */
    int32_t *ph_tot;    /* n_ph totals                                   */
    int64_t *ph_up;     /* n_ph x nmodes rank of state + e_k, -1 if none */
    int64_t *ph_dn;     /* n_ph x nmodes rank of state - e_k, -1 if none */
    int max_row_len;
};

/* Same as hh_model_create; use_tables = 0 forces the per-row phonon
 * ranking path (for tests: both paths must give the same rows). */
int hh_model_create_opts(const hh_params *par, int use_tables, hh_model **model);

/* Ranking helpers (exposed for the tests). */
uint64_t hh_el_unrank(const hh_model *m, int64_t r, int nbits);
int64_t hh_el_rank(const hh_model *m, uint64_t mask);
void hh_ph_unrank(const hh_model *m, int64_t r, int32_t *occ);
int64_t hh_ph_rank(const hh_model *m, const int32_t *occ);

#endif
