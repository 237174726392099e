/* spectral_el_dev.c — phi = c_k psi0 (or c+_k psi0) on the backend, for
 * `spectral` with operator = electron_removal | electron_addition on one
 * rank (cmd_spectral_el.c; app_obs.h el_dev_*).
 *
 * c_{j s} keeps the phonons, so sum_j coef[j] c_{j s} is a small sparse
 * matrix on electron configurations times the dense block of phonon rows:
 *   phi[e' n_ph + p] = sum_k val[k] psi0[hrow[k] n_ph + p]
 * (hamiltonian/hh_elop.c hh_el_table: per target configuration e' the
 * source configurations and sign * coef[j], in site order).  That is the
 * form of the matrix-free operator's remote part (spmv.h pl_kron_remote,
 * left split: whole phonon rows of "halo" electron rows), so the backend's
 * kron_rem_apply runs it: OpenMP on the CPU backend, one CUDA kernel on the
 * GPU, each sum started from 0 and taken in entry order with one rounding
 * per product and per addition: hh_el_apply's bits on the host, on every
 * backend.  psi0 stays on the backend: where H's operator permutes its rows
 * (pjds, compressed), psi0 is gathered once into the original order; where
 * H''s does, phi is computed in the original order and gathered into the
 * permuted one (be->gather).  Matrix-free operators keep the original order
 * and need neither copy.  Nothing crosses the host/device link but the
 * table (a few KB per part). */
#include <stdlib.h>
#include <string.h>

#include "app_obs.h"
#include "pl_error.h"

struct el_dev {
    pl_backend *be;
    const hh_model *m, *m2;
    int kind, spin;
    int64_t n_src, n_dst, ne_dst;
    const double *x;  /* psi0 in the original order (backend): psi0 itself or xo */
    double *xo, *yo;  /* backend: psi0, phi in the original order where H, H' permute (else NULL) */
    int32_t *d_perm2; /* backend: H''s global index where it permutes (else NULL) */
    int64_t *ptr;     /* host table of one part (hh_el_table) */
    int32_t *row, *hrow;
    double *val;
};

static int is_identity(const int64_t *gi, int64_t n, int64_t row0)
{
    for (int64_t p = 0; p < n; p++)
        if (gi[p] != row0 + p) return 0;
    return 1;
}

/* an int32 copy of gi (inverse = 1: its inverse) on the backend */
static int perm_upload(pl_backend *be, const int64_t *gi, int64_t n, int inverse, int32_t **d)
{
    int32_t *h = malloc(((size_t)n + 1) * sizeof *h);
    PL_CHECK(h, PL_ERR_MEM, "out of host memory for a permutation of %lld rows", (long long)n);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) {
        if (inverse) h[gi[p]] = (int32_t)p;
        else h[p] = (int32_t)gi[p];
    }
    const int rc = be->idx_create(be, h, (size_t)n, d);
    free(h);
    return rc;
}

int el_dev_usable(const pl_op *op, const pl_op *op2)
{
    pl_backend *be = pl_op_backend(op);
    pl_op_info a, b;
    pl_op_get_info(op, &a);
    pl_op_get_info(op2, &b);
    return a.n_local == a.n_global && b.n_local == b.n_global && be->kron_rem_create && be->kron_rem_apply &&
           be->kron_rem_destroy && be->gather && be->idx_create && be->idx_destroy &&
           pl_op_kron_split(op) != PL_KRON_SPLIT_RIGHT && pl_op_kron_split(op2) != PL_KRON_SPLIT_RIGHT &&
           a.n_global < INT32_MAX && b.n_global < INT32_MAX;
}

/* the backend copies (xo, yo, d_perm2) the operators' orders ask for */
static int el_dev_orders(el_dev *d, pl_op *op, pl_op *op2, const double *psi0)
{
    pl_backend *be = d->be;
    const int64_t *g1 = pl_op_global_index(op), *g2 = pl_op_global_index(op2);
    pl_op_info i1, i2;
    pl_op_get_info(op, &i1);
    pl_op_get_info(op2, &i2);
    /* a matrix-free operator on one rank keeps the original order */
    const int p1 = i1.format != PL_FORMAT_MATRIX_FREE && !is_identity(g1, d->n_src, 0),
              p2 = i2.format != PL_FORMAT_MATRIX_FREE && !is_identity(g2, d->n_dst, 0);
    const double need = (p1 ? 12.0 * (double)d->n_src : 0.0) + (p2 ? 12.0 * (double)d->n_dst : 0.0);
    PL_CALL(pl_backend_mem_check(be, need + (64 << 20)));
    d->x = psi0;
    if (p1) {
        int32_t *inv = NULL;
        PL_CALL(be->vec_alloc(be, (size_t)d->n_src + 1, &d->xo));
        PL_CALL(perm_upload(be, g1, d->n_src, 1, &inv));
        const int rc = be->gather(be, (size_t)d->n_src, inv, psi0, d->xo); /* xo[g] = psi0[p], g = gi[p] */
        if (rc == PL_OK) PL_CALL(be->sync(be));
        be->idx_destroy(be, inv);
        PL_CALL(rc);
        d->x = d->xo;
    }
    if (p2) {
        PL_CALL(be->vec_alloc(be, (size_t)d->n_dst + 1, &d->yo));
        PL_CALL(perm_upload(be, g2, d->n_dst, 0, &d->d_perm2));
    }
    return PL_OK;
}

int el_dev_create(pl_op *op, pl_op *op2, const hh_model *m, const hh_model *m2, int kind, int spin, const double *psi0,
                  el_dev **out)
{
    *out = NULL;
    PL_CHECK(el_dev_usable(op, op2), PL_ERR_NOTSUP, "el_dev_create: one rank and a backend with kron_rem and gather");
    el_dev *d = calloc(1, sizeof *d);
    PL_CHECK(d, PL_ERR_MEM, "out of host memory");
    d->be = pl_op_backend(op);
    d->m = m;
    d->m2 = m2;
    d->kind = kind;
    d->spin = spin;
    d->n_src = hh_model_rows(m);
    d->n_dst = hh_model_rows(m2);
    int64_t nu = 0, nd = 0, nph = 0;
    hh_model_dims(m2, &nu, &nd, &nph);
    d->ne_dst = nu * nd;
    const size_t ne = (size_t)d->ne_dst, ent = ne * (size_t)HH_LATTICE_MAX_SITES;
    d->ptr = malloc((ne + 1) * sizeof *d->ptr);
    d->row = malloc((ne + 1) * sizeof *d->row);
    d->hrow = malloc((ent + 1) * sizeof *d->hrow);
    d->val = malloc((ent + 1) * sizeof *d->val);
    int rc = PL_OK;
    PL_CHECK_GOTO(d->ptr && d->row && d->hrow && d->val, PL_ERR_MEM, fail, rc, "out of host memory for the table");
    for (size_t e = 0; e < ne; e++) d->row[e] = (int32_t)e;
    PL_CALL_GOTO(el_dev_orders(d, op, op2, psi0), fail, rc);
    *out = d;
    return PL_OK;
fail:
    el_dev_destroy(&d);
    return rc;
}

int el_dev_phi(el_dev *d, const double *coef, double *phi)
{
    pl_backend *be = d->be;
    int64_t nu = 0, nd = 0, nph = 0;
    hh_model_dims(d->m2, &nu, &nd, &nph);
    const int64_t nent = hh_el_table(d->m, d->m2, d->kind, d->spin, coef, d->ptr, d->hrow, d->val);
    (void)nent;
    pl_kron_remote r;
    memset(&r, 0, sizeof r);
    r.n_right = nph;
    r.n_rows = (int32_t)d->ne_dst;
    r.row = d->row;
    r.ptr = d->ptr;
    r.hrow = d->hrow;
    r.val = d->val;
    r.split = PL_KRON_SPLIT_LEFT;
    void *t = NULL;
    PL_CALL(be->kron_rem_create(be, &r, &t));
    double *y = d->yo ? d->yo : phi;
    int rc = be->set(be, (size_t)d->n_dst, 0.0, y);
    if (rc == PL_OK) rc = be->kron_rem_apply(be, t, d->x, y);
    if (rc == PL_OK && d->yo) rc = be->gather(be, (size_t)d->n_dst, d->d_perm2, d->yo, phi); /* phi[p] = y[gi[p]] */
    if (rc == PL_OK) rc = be->sync(be);
    be->kron_rem_destroy(be, t);
    return rc;
}

void el_dev_destroy(el_dev **pd)
{
    el_dev *d = pd ? *pd : NULL;
    if (!d) return;
    if (d->xo) d->be->vec_free(d->be, d->xo);
    if (d->yo) d->be->vec_free(d->be, d->yo);
    if (d->d_perm2) d->be->idx_destroy(d->be, d->d_perm2);
    free(d->ptr);
    free(d->row);
    free(d->hrow);
    free(d->val);
    free(d);
    *pd = NULL;
}
