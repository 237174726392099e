/* test_chain_bits.c — the chain's output is bitwise what it was before the
 * lattices (issue 30): FNV-1a fingerprints of every array the generator
 * gives for a set of chains (CSR rows, value terms, the matrix-free tables,
 * the operators of `spectral`, the observables of a fixed vector), recorded
 * with the ring-only generator (commit 32a84df) and compared here.  With
 * `--print` it prints the fingerprints instead (how they were recorded). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "testutil.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

static uint64_t csr_hash(uint64_t h, const pl_csr *a)
{
    const int64_t nnz = pl_csr_nnz(a);
    h = fnv(h, &a->nrows, sizeof a->nrows);
    h = fnv(h, a->row_ptr, (size_t)(a->nrows + 1) * sizeof *a->row_ptr);
    h = fnv(h, a->col, (size_t)nnz * sizeof *a->col);
    h = fnv(h, a->val, (size_t)nnz * sizeof *a->val);
    if (a->terms) h = fnv(h, a->terms, (size_t)a->nterms * (size_t)nnz * sizeof *a->terms);
    return h;
}

/* the fingerprint of everything model p gives */
static uint64_t model_hash(const hh_params *p)
{
    uint64_t h = UINT64_C(14695981039346656037);
    hh_model *m = NULL;
    TU_OK(hh_model_create(p, &m));
    const int64_t N = hh_model_rows(m);
    pl_csr a;
    TU_OK(hh_rows_csr(m, 0, N, &a));
    h = csr_hash(h, &a);
    pl_csr_destroy(&a);
    TU_OK(hh_rows_csr_terms(m, 0, N, 0x1fu, &a));
    h = csr_hash(h, &a);
    pl_csr_destroy(&a);
    hh_mf *mf = NULL;
    TU_OK(hh_mf_create(m, &mf));
    h = fnv(h, mf->t_ptr, (size_t)(mf->n_el + 1) * sizeof *mf->t_ptr);
    h = fnv(h, mf->t_col, (size_t)mf->t_ptr[mf->n_el] * sizeof *mf->t_col);
    h = fnv(h, mf->t_val, (size_t)mf->t_ptr[mf->n_el] * sizeof *mf->t_val);
    h = fnv(h, mf->d_el, (size_t)mf->n_el * sizeof *mf->d_el);
    h = fnv(h, mf->c_el, (size_t)mf->n_el * (size_t)mf->nmodes * sizeof *mf->c_el);
    h = fnv(h, mf->d_ph, (size_t)mf->n_ph * sizeof *mf->d_ph);
    h = fnv(h, &mf->shift, sizeof mf->shift);
    hh_mf_destroy(&mf);
    for (int kind = HH_OP_PHONON; kind <= HH_OP_CURRENT; kind++)
        for (int q = 0; q < p->sites; q++) {
            if (hh_op_check(m, kind, q) != PL_OK) {
                pl_error_clear();
                continue;
            }
            TU_OK(hh_op_rows_csr(m, kind, q, 0, N, &a));
            h = csr_hash(h, &a);
            pl_csr_destroy(&a);
            if (kind == HH_OP_CURRENT) break;
        }
    /* observables of two fixed vectors */
    double *x = malloc((size_t)(2 * N) * sizeof *x);
    TU_CHECK(x != NULL);
    for (int64_t i = 0; i < 2 * N; i++) x[i] = cos(0.37 * (double)i + 0.1) / sqrt((double)N);
    const size_t S = hh_obs_acc_size(m);
    double *acc = calloc(2 * S, sizeof *acc), eh[2] = {-1.5, 0.25};
    TU_CHECK(acc != NULL);
    TU_OK(hh_obs_accumulate(m, 0, N, 2, x, (size_t)N, NULL, 0, acc));
    hh_obs o;
    TU_OK(hh_obs_finish(m, 2, acc, eh, &o));
    const size_t LL = (size_t)p->sites * (size_t)p->sites;
    h = fnv(h, o.energy_kinetic, 2 * sizeof(double));
    h = fnv(h, o.energy_coupling, 2 * sizeof(double));
    h = fnv(h, o.double_occupancy, 2 * sizeof(double));
    h = fnv(h, o.phonon_number, 2 * sizeof(double));
    h = fnv(h, o.phonon_distribution, 2 * (size_t)(p->max_phonons + 1) * sizeof(double));
    h = fnv(h, o.density_correlation, 2 * LL * sizeof(double));
    h = fnv(h, o.spin_correlation, 2 * LL * sizeof(double));
    h = fnv(h, o.electron_phonon_correlation, 2 * LL * sizeof(double));
    h = fnv(h, o.density_r, 2 * (size_t)p->sites * sizeof(double));
    h = fnv(h, o.spin_r, 2 * (size_t)p->sites * sizeof(double));
    h = fnv(h, o.electron_phonon_r, 2 * (size_t)p->sites * sizeof(double));
    h = fnv(h, &o.periodic, sizeof o.periodic);
    hh_obs_free(&o);
    free(acc);
    free(x);
    hh_model_destroy(&m);
    return h;
}

typedef struct chain_case {
    int L, nu, nd, M, basis, bc;
    double t, U, w0, g;
    uint64_t hash; /* recorded with the ring-only generator */
} chain_case;

#define S PL_PHONON_SITE
#define NRM PL_PHONON_NORMAL
#define PER PL_BOUNDARY_PERIODIC
#define OPN PL_BOUNDARY_OPEN
static chain_case cases[] = {
    {6, 3, 3, 3, NRM, PER, 1.0, 4.0, 1.0, 1.0, UINT64_C(0xf94ea71c4a2d8ba4)},
    {6, 3, 2, 2, S, PER, 0.7, 2.5, 0.8, 0.6, UINT64_C(0x5c47ff37ad801f8e)},
    {5, 2, 1, 4, S, OPN, 1.0, 3.0, 1.2, 0.9, UINT64_C(0x9dd260ba9c62352a)},
    {5, 2, 2, 3, NRM, PER, 1.0, 2.0, 1.3, 0.6, UINT64_C(0x83cc308c99aa639f)},
    {4, 2, 2, 3, NRM, OPN, 1.0, 4.0, 1.0, 1.0, UINT64_C(0xdc1590f25b88714a)},
    {2, 1, 1, 5, S, PER, 1.0, 1.0, 1.0, 0.4, UINT64_C(0x63123f04432d0b65)},
    {7, 3, 2, 2, NRM, PER, 1.0, 3.0, 0.5, 0.8, UINT64_C(0x0d02d69c49057656)},
    {4, 2, 0, 4, NRM, PER, 0.5, 0.0, 1.0, 0.7, UINT64_C(0xa186df73ca3ede41)},
    {3, 1, 1, 4, S, OPN, 0.0, 2.0, 1.0, 0.5, UINT64_C(0x0b9222a0781dbeac)},
};
#undef S

int main(int argc, char **argv)
{
    const int print = argc > 1 && !strcmp(argv[1], "--print");
    int fails = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const chain_case *k = &cases[c];
        hh_params p = {.sites = k->L, .n_up = k->nu, .n_down = k->nd, .hopping = k->t, .hubbard_u = k->U,
                       .phonon_frequency = k->w0, .coupling = k->g, .max_phonons = k->M, .phonon_basis = k->basis,
                       .boundary = k->bc};
        const uint64_t h = model_hash(&p);
        if (print) {
            printf("UINT64_C(0x%016llx)\n", (unsigned long long)h);
            continue;
        }
        if (h != k->hash) {
            fprintf(stderr, "FAIL: chain case %zu (L=%d up=%d dn=%d M=%d): fingerprint %016llx, recorded %016llx\n", c,
                    k->L, k->nu, k->nd, k->M, (unsigned long long)h, (unsigned long long)k->hash);
            fails++;
        }
    }
    if (!print) printf("%zu chains: %s\n", sizeof cases / sizeof cases[0], fails ? "FAIL" : "bitwise as recorded");
    return fails ? 1 : 0;
}
