/* hh_mf.h — the Holstein-Hubbard Hamiltonian of hh.h as small tables,
 * applied without a stored matrix (issue 26).
 *
 * In the electron-major basis of hh.h (row = e n_ph + p, e = up_index *
 * n_down_states + down_index, p = phonon index) H is a short sum of
 * Kronecker products:
 *   H = T_el (x) 1_ph + diag(d_el (+) d_ph + shift) + sum_m C_m (x) X_m
 * - T_el: the electron hopping, sparse n_el x n_el (n_el = n_up_states *
 *   n_down_states), with the fermion signs of hh.c (any lattice);
 * - d_el[e] = U (double occupancy of e), d_ph[p] = w0 (total phonons of p),
 *   shift = the normal basis' constant -g^2 N_e^2 / (L w0) (0 for site):
 *   the diagonal is (d_el[e] + d_ph[p]) + shift, the same bits as hh.c's;
 * - C_m = diag(-g rho_m(e)): rho_m = n_m (site basis) or sum_i u_m(i) n_i
 *   (normal basis, zero below 1e-12 as in hh.c);
 * - X_m = b_m + b_m^+ on the phonon states of total <= M.
 * The tables (struct below) are a few MB at most; hh_mf_kron describes
 * them as a pl_kron (core/pl_kron.h), which the spmv layer applies
 * (pl_op_create_kron; the kernels are the backends').  Knows no GPU, MPI
 * or files. */
#ifndef HH_MF_H
#define HH_MF_H

#include <stddef.h>
#include <stdint.h>

#include "hh.h"
#include "pl_kron.h"

/* The tables.  Read-only for callers; made by hh_mf_create. */
typedef struct hh_mf {
    int64_t n_el, n_ph, N; /* N = n_el * n_ph rows                                  */
    int nmodes;            /* phonon modes: L (site) or L - 1 (normal)              */
    /* T_el as CSR over electron configurations, columns ascending, no zeros */
    int64_t *t_ptr;        /* n_el + 1                                              */
    int32_t *t_col;        /* t_ptr[n_el] electron configurations                   */
    double *t_val;         /* t_ptr[n_el] amplitudes (-t f_ij times the fermion sign) */
    double *d_el;          /* n_el: U * double occupancy                            */
    double *c_el;          /* n_el x nmodes at [e * nmodes + m]: -g rho_m(e), or 0  */
    double *d_ph;          /* n_ph: w0 * total phonons                              */
    double shift;          /* the normal basis' constant (0 in the site basis)      */
    int32_t *ph_up;        /* n_ph x nmodes: index of p + e_m, -1 if total = M      */
    int32_t *ph_dn;        /* n_ph x nmodes: index of p - e_m, -1 if n_m = 0        */
    double *amp_up;        /* n_ph x nmodes: sqrt(n_m + 1) (0 where ph_up is -1)    */
    double *amp_dn;        /* n_ph x nmodes: sqrt(n_m)                              */
} hh_mf;

/* Build the tables of model m (OpenMP-parallel).  PL_ERR_ARG for NULL
 * arguments, PL_ERR_INPUT when n_el or n_ph exceed 32-bit indices,
 * PL_ERR_MEM.  On failure *out = NULL.  Not collective. */
int hh_mf_create(const hh_model *m, hh_mf **out);
/* Free; accepts NULL and *mf == NULL, sets *mf = NULL.  Can't fail. */
void hh_mf_destroy(hh_mf **mf);
/* k = H as a Kronecker sum (pl_kron.h): A = T_el, dl = d_el, dr = d_ph,
 * shift, c = C, lo = the lowerings (ph_dn, amp_dn), hi = the raisings
 * (ph_up, amp_up), nterms = nmodes.  k points into mf's tables (valid while
 * mf lives); pl_kron's order of evaluation gives hh.c's matrix entries bit
 * for bit.  Can't fail (mf, k non-NULL). */
void hh_mf_kron(const hh_mf *mf, pl_kron *k);
/* Bytes of the tables (0 for NULL).  Can't fail. */
size_t hh_mf_bytes(const hh_mf *mf);

#endif
