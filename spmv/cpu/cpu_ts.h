/* cpu_ts.h — the CPU backend's kernels outside backend_cpu.c, private to
 * spmv/cpu: the tall-skinny ones (cpu_ts.c; V is n x k column-major, ld >=
 * n, k small), SpMMV, compressed pJDS and the matrix-free operator.
 * Semantics as the slots of struct pl_backend in spmv.h. */
#pragma once

#include <stddef.h>

#include "spmv.h"

/* Pick the AVX-512, AVX2 or default tile kernels (isa: 0 default, 1 avx2,
 * 2 avx512, as detect_isa in backend_cpu.c).  Call once before the others;
 * idempotent.  Can't fail. */
void cpu_ts_select(int isa);
int cpu_gram(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *G);
int cpu_gemv_t(pl_backend *be, size_t n, int k, const double *V, size_t ld, const double *w, double *h);
int cpu_gemv_n(pl_backend *be, size_t n, int k, double alpha, const double *V, size_t ld, const double *h, double beta,
               double *w);
/* C = V^T W (k x m, ld k): spmv.h gemm_t. */
int cpu_gemm_t(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *W, size_t ldw,
               double *C);
int cpu_gemm(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *Y, int ldy, double *W,
             size_t ldw);
int cpu_cgs_step(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *w, const double *h_in,
                 double *h_out);
/* be->sel_gram, be->sel_update, be->lz_step (spmv.h) */
int cpu_sel_gram(pl_backend *be, size_t n, int ka, const double *A, const double *B, size_t ld, double *h);
int cpu_lz_step(pl_backend *be, size_t n, int ka, const double *A, const double *x, size_t ld, double beta,
                const double *d_dots, double *y, double *out);
int cpu_sel_update(pl_backend *be, size_t n, int ka, const double *A, const double *ca, const double *B,
                   const double *cb, size_t ld, double s, double *x);
int cpu_basis_update(pl_backend *be, size_t n, int k, int m, double *V, size_t ld, const double *Y, int ldy);
int cpu_restart_step(pl_backend *be, size_t n, int off, int sz, int kk, double *V, size_t ld, const double *Y,
                     int ldy, const double *h_in, double *h_out);
/* cpu_spmm.c: SpMMV of one pJDS matrix over its thread partition, the block
 * gather and the block dot product (spmv.h be->spmm, gather_block, bdot) */
int cpu_spmm_mat(pl_backend *be, const pjds *p, int nparts, const int32_t *part, int R, const double *X, double *Y);
int cpu_gather_block(pl_backend *be, size_t n, int R, const int32_t *idx, const double *X, double *buf);
int cpu_bdot(pl_backend *be, size_t n, int R, const double *X, const double *Y, double *h);
int cpu_spmm_aug_mat(pl_backend *be, const pjds *p, int R, double alpha, double gamma, double beta, const double *X,
                     double *Y, double *h_dots);
/* cpu_cpjds.c: the compressed pJDS over a thread partition of its chunks:
 * y = A x with the kernels of instruction set isa (cpu_isa.h; rows = 1: row
 * by row without gathers, PJDS_CPU_CPJDS=rows), and Y = A X for R
 * row-major vectors. */
int cpu_cpjds_spmv(int isa, int rows, const pl_cpjds *p, int nparts, const int32_t *part, const double *x, double *y);
int cpu_cpjds_spmm(const pl_cpjds *p, int nparts, const int32_t *part, int R, const double *X, double *Y);
/* cpu_kron.c: the matrix-free operator of a Kronecker sum (spmv.h
 * be->kron_create, kron_apply, kron_destroy). */
int cpu_kron_create(pl_backend *be, const pl_kron *k, void **mat);
int cpu_kron_apply(pl_backend *be, const void *mat, const double *x, double *y);
/* be->kron_lz: y = H x - beta z, the sums fused into the product's tasks */
int cpu_kron_lz(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                double *d_dots);
/* kron_spmm_aug of one vector (cpu_kron_block.c): y = ((alpha H x) + (gamma
 * x)) + (beta y) of each value, h_dots[0] = x.x, h_dots[1] = y.x, the
 * one-vector kernel's product fused with the step */
int cpu_kron_aug(pl_backend *be, const void *mat, double alpha, double gamma, double beta, const double *x, double *y,
                 double *h_dots);
void cpu_kron_destroy(pl_backend *be, void *mat);
/* cpu_kron_remote.c: the remote part of a matrix-free operator on several
 * ranks (be->kron_rem_create, kron_rem_apply, kron_rem_spmm,
 * kron_rem_destroy). */
int cpu_kron_rem_create(pl_backend *be, const pl_kron_remote *r, void **mat);
int cpu_kron_rem_apply(pl_backend *be, const void *mat, const double *x_halo, double *y);
int cpu_kron_rem_spmm(pl_backend *be, const void *mat, int R, const double *X_halo, double *Y);
void cpu_kron_rem_destroy(pl_backend *be, void *mat);
