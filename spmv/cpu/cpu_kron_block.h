/* cpu_kron_block.h — the CPU backend's matrix-free operator with its block
 * products (cpu_kron_block.c), private to spmv/cpu.  Semantics as the
 * slots of struct pl_backend in spmv.h (kron_create, kron_apply,
 * kron_destroy, kron_spmm, kron_spmm_aug). */
#pragma once

#include "spmv.h"

/* be->kron_create, kron_apply, kron_destroy: cpu_kron.c's operator (its
 * kron_apply for one vector) with the plain tables the block products
 * read. */
int cpu_kronb_create(pl_backend *be, const pl_kron *k, void **mat);
int cpu_kronb_apply(pl_backend *be, const void *mat, const double *x, double *y);
/* be->kron_lz (spmv.h) through the single product (cpu_kron.c) */
int cpu_kronb_lz(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                 double *d_dots);
void cpu_kronb_destroy(pl_backend *be, void *mat);
/* be->kron_spmm, kron_spmm_aug on an operator of cpu_kronb_create. */
int cpu_kron_spmm(pl_backend *be, const void *mat, int R, const double *X, double *Y);
int cpu_kron_spmm_aug(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                      const double *X, double *Y, double *h_dots);
