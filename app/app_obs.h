/* app_obs.h — observables and spectral functions of `solve` and
 * `spectral` (observables.c, cmd_spectral.c).  Private to app/. */
#ifndef PL_APP_OBS_H
#define PL_APP_OBS_H

#include "app.h"
#include "hh.h"
#include "solve_impl.h"

struct pl_spectrum;

/* Host memory for whole vectors: 2 MiB aligned and advised to use huge
 * pages (first touch of 4 KiB pages is what a 50 MB download into fresh
 * memory spends its time on); free() releases it.  NULL when out of memory. */
double *app_host_big(size_t n);
/* Whether [output] observables asks for them (auto: a holstein-hubbard
 * model; the config check refused true on any other). */
int app_obs_wanted(const pl_config *cfg);
/* Rows [a, b) of nvec vectors distributed in contiguous row blocks (this
 * rank: rows [row0, row0 + n), vector v at x + v ldx, original order) into
 * out (vector v at out + v ldo).  Collective (every rank calls, [a, b) may
 * be empty). */
int app_fetch_rows(MPI_Comm comm, int64_t row0, int64_t n, int nvec, const double *x, size_t ldx, int64_t a,
                   int64_t b, double *out, size_t ldo);
/* Download nvec backend vectors V (op's permuted basis, column v at V + v
 * ld) into out (host, original order of this rank's contiguous block of
 * pl_op_orig_block, n rows x nvec, column v at out + v n): n_local rows of
 * the rank's own block, or for a matrix-free operator split by phonon
 * configurations the electron split's block (moved between the ranks:
 * collective then). */
int app_vectors_original(pl_op *op, int nvec, const double *V, size_t ld, double *out);
/* Observables of nvec eigenvectors (backend, op's basis).  Collective;
 * *seconds = the max over ranks. */
int app_observables(app_ctx *ctx, pl_op *op, int nvec, const double *V, size_t ld, hh_obs *obs, double *seconds);
/* What `solve` writes: the observables and their time. */
typedef struct app_obs_out {
    hh_obs obs;     /* obs.buf NULL: none */
    double seconds;
} app_obs_out;
/* solve_attr_fn writing /observables and the attribute observables_seconds
 * of arg (an app_obs_out; nothing when it holds none). */
int app_obs_write(void *arg, struct pl_spectrum *sp);
/* `spectral` with operator = electron_removal | electron_addition
 * (cmd_spectral_el.c): from the N sector's ground state (res, op, model m),
 * H' of the N -/+ 1 sector, the recursions, the result file and the
 * summary.  Collective. */
int spectral_electron(app_ctx *ctx, pl_op *op, const hh_model *m, const lz_result *res, solve_facts *f,
                      app_obs_out *ao);
/* phi = sum_j coef[j] c_{j s} psi0 (or c+) on the backend, one rank
 * (spectral_el_dev.c): el_dev_usable says whether it applies (one rank, a
 * backend with kron_rem_* and gather); el_dev_create keeps psi0 (op's
 * basis, backend memory, alive until el_dev_destroy) and the copies the
 * operators' row orders need; el_dev_phi writes phi in op2's basis
 * (backend memory), hh_el_apply's bits.  Local. */
typedef struct el_dev el_dev;
int el_dev_usable(const pl_op *op, const pl_op *op2);
int el_dev_create(pl_op *op, pl_op *op2, const hh_model *m, const hh_model *m2, int kind, int spin, const double *psi0,
                  el_dev **d);
int el_dev_phi(el_dev *d, const double *coef, double *phi);
void el_dev_destroy(el_dev **d);

#endif
