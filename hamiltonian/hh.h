/* hh.h — the Holstein-Hubbard Hamiltonian on a chain or any lattice
 * (lattice.h) as a row generator.
 *
 * H = -t sum_{bonds (i,j), s} f_ij (c+_{i s} c_{j s} + h.c.) + U sum_i n_iup n_idn
 *     + w0 sum_i b+_i b_i - g sum_i n_i (b+_i + b_i)
 * Conventions (docs/models.md, "Holstein-Hubbard", "Lattices"): fermion
 * order all up before all down, each by site; a hop between sites i < j
 * carries (-1)^(the electrons of its spin on the sites strictly between i
 * and j) (on the chain: +1 between neighbours, (-1)^(N_s - 1) across the
 * periodic boundary); phonons truncated by total number <= M; basis electron-
 * major: row = (up_index * n_down_states + down_index) * n_phonon_states +
 * phonon_index.  Phonon basis `site` (L Einstein modes) or `normal` (the
 * L-1 non-uniform modes of hh_lattice_modes; the uniform mode is removed
 * exactly and gives the constant -g^2 N_e^2 / (L w0)).  Only true non-zeros
 * are stored; columns of a row ascending, duplicates summed.
 *
 * Knows no GPU, MPI or files. */
#ifndef HH_H
#define HH_H

#include <stddef.h>
#include <stdint.h>

#include "pl_exsum.h"
#include "lattice.h"
#include "pl_csr.h"

enum hh_phonon_basis { PL_PHONON_SITE = 0, PL_PHONON_NORMAL = 1 };
enum hh_boundary { PL_BOUNDARY_PERIODIC = 0, PL_BOUNDARY_OPEN = 1 };

/* The parameters of the Holstein-Hubbard model (docs/design.md "Models"). */
typedef struct hh_params {
    int sites;               /* L >= 2 (= lattice->sites when a lattice is given) */
    int n_up, n_down;        /* electrons of each spin, 0..L                    */
    double hopping;          /* t                                               */
    double hubbard_u;        /* U                                               */
    double phonon_frequency; /* omega0 > 0                                      */
    double coupling;         /* g                                               */
    int max_phonons;         /* M >= 0: total phonon number cut-off             */
    int phonon_basis;        /* enum hh_phonon_basis                            */
    int boundary;            /* enum hh_boundary (the chain's)                  */
    const hh_lattice *lattice; /* NULL: the chain of sites and boundary; else   */
                             /* the lattice (copied by hh_model_create)         */
} hh_params;

typedef struct hh_model hh_model; /* opaque */

/* Build the model (basis tables, ranking tables).  PL_ERR_INPUT if the
 * parameters are invalid or the basis is too large to index in 64 bits (the
 * message names the parameter).  Not collective. */
int hh_model_create(const hh_params *par, hh_model **model);
/* Free; accepts NULL, sets *model = NULL.  Can't fail. */
void hh_model_destroy(hh_model **model);
/* N, the number of basis states (rows). */
int64_t hh_model_rows(const hh_model *model);
/* An upper bound of the entries in any row (for per-thread buffers). */
int hh_model_max_row_len(const hh_model *model);
/* Sizes of the factors: n_up_states * n_down_states * n_phonon_states = N. */
void hh_model_dims(const hh_model *model, int64_t *n_up_states, int64_t *n_down_states, int64_t *n_phonon_states);

/* One row: writes its length into *len and the sorted columns/values into
 * col/val (room for hh_model_max_row_len entries).  Thread-safe. */
int hh_row(const hh_model *model, int64_t row, int *len, int64_t *col, double *val);

/* CSR rows [r0, r1) into a freshly allocated block *out (OpenMP-parallel,
 * two passes: lengths, then fill).  The caller owns *out (pl_csr_destroy).
 * Builds that take longer than ~2 s report progress on stderr (pl_info, at
 * most once per second).  PL_ERR_ARG for a bad range, PL_ERR_MEM; on
 * failure *out is left empty.  Not collective. */
int hh_rows_csr(const hh_model *model, int64_t r0, int64_t r1, pl_csr *out);

/* Row lengths of rows [r0, r1) without the values (OpenMP-parallel), into
 * len[r1 - r0]; used to balance row blocks by non-zeros. */
int hh_row_lengths(const hh_model *model, int64_t r0, int64_t r1, int32_t *len);

/* ---- value terms (sweeps that refill only values, docs/operations.md "Sweeps") ----
 * H is linear in its parameters: H = sum_k c_k H_k with c = hh_term_coefs:
 * t H_hop + U H_U + w0 H_ph + g H_g + (g^2 / w0) H_shift, where H_shift is
 * the normal-mode basis' constant -(N_e^2 / L) I (zero for the site
 * basis). */
enum { HH_TERM_HOPPING = 0, HH_TERM_U = 1, HH_TERM_PHONON = 2, HH_TERM_COUPLING = 3, HH_TERM_SHIFT = 4, HH_NTERMS = 5 };
/* The coefficients c_k at the parameters par.  Can't fail. */
void hh_term_coefs(const hh_params *par, double c[HH_NTERMS]);
/* As hh_rows_csr, but for sweeps: the pattern is the union of the terms'
 * non-zeros, independent of the parameter values (an entry is stored when
 * any term is non-zero there: the couplings at g = 0, the hops at t = 0, a
 * diagonal where U d + w0 n + shift cancels); out->val = the values at the
 * model's parameters (the numbers hh_rows_csr gives where both store an
 * entry, 0 elsewhere).  The terms: swept is a bit mask of the terms k whose
 * coefficient will change (bit k = 1 << HH_TERM_...); out->nterms = 1 +
 * popcount(swept), out->terms[0] = the fixed part sum_{k not swept} c_k H_k
 * at the model's parameters, then H_k at unit coefficient for each swept k
 * in ascending k, so val = terms_0 + sum_s c_s terms_s up to rounding.
 * Same errors as hh_rows_csr.  Not collective. */
int hh_rows_csr_terms(const hh_model *model, int64_t r0, int64_t r1, unsigned swept, pl_csr *out);
/* Row lengths of that pattern (for balancing row blocks). */
int hh_row_lengths_terms(const hh_model *model, int64_t r0, int64_t r1, int32_t *len);

/* ---- observables of eigenvectors (hh_obs.c; docs/models.md "Observables") ----
 * The caller holds rows [r0, r1) of nvec vectors (original basis, vector v
 * at psi + v ld) and the halo: rows [r1, hh_obs_halo_end) (the rest of the
 * last electron slice, owned by the next ranks; vector v at halo + v ldh).
 * hh_obs_accumulate adds this block's sums to acc (nvec x
 * hh_obs_acc_size, zeroed by the caller; OpenMP-parallel); the caller sums
 * acc over the ranks and calls hh_obs_finish with <psi|H|psi> per vector
 * (the kinetic energy is that minus the other terms). */
size_t hh_obs_acc_size(const hh_model *m);
int64_t hh_obs_halo_end(const hh_model *m, int64_t r0, int64_t r1);
int hh_obs_accumulate(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *psi, size_t ld,
                      const double *halo, size_t ldh, double *acc);
/* The same with exact sums ([solver] reproducible): each electron
 * configuration's terms (summed over its phonon rows in their order) are
 * added to ex (nvec x hh_obs_acc_size accumulators, zeroed by the caller)
 * without rounding, so a block cut at configuration boundaries adds the
 * same to the total on any split and thread count. */
int hh_obs_accumulate_exact(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *psi, size_t ld,
                            const double *halo, size_t ldh, pl_exsum *ex);
typedef struct hh_obs {
    int nvec, L, M, periodic;            /* periodic: the lattice has translations (the *_r) */
    int lattice, lx, ly;                 /* enum hh_lattice_kind and its lx x ly (bonds: 0)   */
    double *energy_kinetic, *energy_hubbard, *energy_phonon, *energy_coupling, *energy_total; /* nvec each */
    double *double_occupancy;            /* <sum_i n_iup n_idn> / L                          */
    double *phonon_number;               /* <sum b+b>, incl. the removed uniform mode         */
    double *norm;                        /* <psi|psi> (a check: 1)                            */
    double *phonon_distribution;         /* nvec x (M + 1): P(total phonons of the basis = n) */
    double *density_correlation;         /* nvec x L x L: <n_i n_j>                           */
    double *spin_correlation;            /* nvec x L x L: <S^z_i S^z_j>                       */
    double *electron_phonon_correlation; /* nvec x L x L: <n_i x_j>, x = b + b+               */
    double *density_r, *spin_r, *electron_phonon_r; /* nvec x L: (1/L) sum_i C(i, i + r), r = rx + lx ry */
                                                    /* (a chain, or periodic; else zero)          */
    double *momentum_distribution;       /* nvec x 2 x L: n_s(k) (hh_obs_nk.c); NULL: not computed */
    double *buf;
} hh_obs;
int hh_obs_finish(const hh_model *m, int nvec, const double *acc, const double *expect_h, hh_obs *o);
void hh_obs_free(hh_obs *o);

/* ---- operators of `spectral` (hh_ops.c; docs/models.md "Spectral functions") ----
 * kind = HH_OP_* (the order of [spectral] operator), q = 2 pi momentum / L
 * (a lattice: hh_lattice_phase; momentum != 0 without translations: PL_ERR_INPUT).
 * A q-resolved operator is C + i S (cos and sin parts, part 0 and 1);
 * hh_op_parts says how many parts are non-zero (1 for momentum 0 and L/2
 * and for the current, else 2).  hh_op_check: PL_ERR_INPUT with a [spectral]
 * message for a momentum out of range or phonon_displacement at q = 0 in
 * the normal basis.  hh_op_rows_csr: rows [r0, r1) (original basis, global
 * columns, ascending; OpenMP-parallel) of part 0 in val and, when there are
 * two parts, both as value terms (nterms = 2: the pattern is their union),
 * so one operator serves both parts through pl_op_refill. */
enum { HH_OP_PHONON = 0, HH_OP_DENSITY = 1, HH_OP_CURRENT = 2 };
int hh_op_parts(const hh_model *m, int kind, int momentum);
int hh_op_check(const hh_model *m, int kind, int momentum);
int hh_op_rows_csr(const hh_model *m, int kind, int momentum, int64_t r0, int64_t r1, pl_csr *out);
/* The operators that keep the electrons where they are (phonon_displacement,
 * density: their rows reach only the electron slice of the row) applied on
 * the host: y[r - r0] = (O_part x)(r) for rows [r0, r1), where x holds rows
 * [xa, xb) of hh_op_local_range (the slices that [r0, r1) touches, whole).
 * OpenMP-parallel.  PL_ERR_ARG for the current. */
void hh_op_local_range(const hh_model *m, int64_t r0, int64_t r1, int64_t *xa, int64_t *xb);
int hh_op_apply_local(const hh_model *m, int kind, int momentum, int part, int64_t r0, int64_t r1, const double *x,
                      int64_t xa, double *y);

/* ---- electron operators of the single-particle spectral function
 * (hh_elop.c; docs/models.md "Single-particle spectral function") ----
 * c_{j s} (HH_EL_REMOVE) or c+_{j s} (HH_EL_ADD), spin s = 0 up, 1 down,
 * from the basis of src (the N sector) into that of dst (the sector of
 * hh_el_sector: N_s - 1 or + 1; same lattice, phonons and basis).
 * hh_el_sector: PL_ERR_INPUT for removal from an empty band or addition
 * into a full one.  hh_el_coefs: the real parts of c_k = L^-1/2 sum_j
 * e^{-i q.r_j} c_j = C - i S (part 0: cos, 1: sin; q.r_j = hh_lattice_phase
 * of momentum index m), or site >= 0: the local c_site (one part); returns
 * the number of parts (1 where q = -q).  hh_el_partner: the index of -q.
 * hh_el_source_range: the src rows [*xa, *xb) that dst rows [r0, r1) read.
 * hh_el_apply: y[r - r0] = (sum_j coef[j] O_j x)(r) for dst rows [r0, r1),
 * x holding src rows [xa, xb) (original order; OpenMP-parallel).
 * PL_ERR_ARG when x misses a row it needs.
 * hh_el_table: the same operator as a sparse matrix on electron
 * configurations (the phonons are the identity): for every target
 * configuration e < dst->N / n_ph, entries [ptr[e], ptr[e+1]) give the
 * source configuration hrow and the value sign * coef[j], in site order j
 * (hh_el_apply's order of the sum), so that
 *   y[e n_ph + p] = sum_k val[k] x[hrow[k] n_ph + p]
 * started from 0 is hh_el_apply's y bit for bit.  ptr holds
 * dst->N / n_ph + 1 entries, hrow and val L times that many at most;
 * returns the number of entries.  Can't fail. */
enum { HH_EL_REMOVE = 0, HH_EL_ADD = 1 };
int hh_el_sector(const hh_params *p, int kind, int spin, hh_params *out);
int hh_el_coefs(const hh_model *m, int momentum, int site, double coef[2][HH_LATTICE_MAX_SITES]);
int hh_el_partner(const hh_model *m, int momentum);
void hh_el_source_range(const hh_model *src, const hh_model *dst, int kind, int spin, int64_t r0, int64_t r1,
                        int64_t *xa, int64_t *xb);
int hh_el_apply(const hh_model *src, const hh_model *dst, int kind, int spin, const double *coef, int64_t r0,
                int64_t r1, const double *x, int64_t xa, int64_t xb, double *y);
int64_t hh_el_table(const hh_model *src, const hh_model *dst, int kind, int spin, const double *coef, int64_t *ptr,
                    int32_t *hrow, double *val);

/* ---- momentum distribution (hh_obs_nk.c; docs/models.md "Observables") ----
 * The one-body density matrix G_s(i, j) = <c+_{i s} c_{j s}> of nvec
 * vectors: hh_obs_onebody sums rows [r0, r1) into acc (nvec x
 * hh_obs_onebody_size: [v][s][i][j], zeroed here), x holding rows [xa, xb)
 * of hh_obs_hop_range (every slice one hop away; vector v at x + v ldx).
 * The caller sums acc over the ranks; hh_obs_momentum_distribution turns it
 * into n_s(k) = (1/L) sum_ij cos(q.(r_i - r_j)) G_s(i, j), nvec x 2 x L
 * (k the momentum index; meaningful where the lattice has translations). */
void hh_obs_hop_range(const hh_model *m, int64_t r0, int64_t r1, int64_t *xa, int64_t *xb);
size_t hh_obs_onebody_size(const hh_model *m);
int hh_obs_onebody(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *x, size_t ldx, int64_t xa,
                   double *acc);
/* The same into exact accumulators ex (nvec x hh_obs_onebody_size, zeroed
 * by the caller; as hh_obs_accumulate_exact, per configuration). */
int hh_obs_onebody_exact(const hh_model *m, int64_t r0, int64_t r1, int nvec, const double *x, size_t ldx,
                         int64_t xa, pl_exsum *ex);
void hh_obs_momentum_distribution(const hh_model *m, int nvec, const double *g, double *nk);

#endif
