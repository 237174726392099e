/* kron_active.c — the non-zero couplings of a Kronecker-sum operator
 * (pl_kron.h) per left row, the table both backends apply the coupling
 * terms from (spmv_impl.h): the formula skips every m with c[l, m] == 0, so
 * the kernels loop over the list instead of testing all nterms. */
#include "pl_kron.h"
#include "spmv_impl.h"

int64_t pl_kron_nactive(const pl_kron *k)
{
    int64_t n = 0;
    const int64_t tot = k->n_left * (int64_t)k->nterms;
    for (int64_t i = 0; i < tot; i++) n += k->c[i] != 0.0;
    return n;
}

void pl_kron_active(const pl_kron *k, int64_t *ptr, int32_t *m, double *c)
{
    const int nt = k->nterms;
    int64_t n = 0;
    ptr[0] = 0;
    for (int64_t l = 0; l < k->n_left; l++) {
        for (int j = 0; j < nt; j++) {
            const double v = k->c[l * nt + j];
            if (v != 0.0) {
                m[n] = j;
                c[n++] = v;
            }
        }
        ptr[l + 1] = n;
    }
}
