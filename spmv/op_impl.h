/* op_impl.h — the distributed operator's state and what its parts share:
 * op.c (lifetime, info, counters, global reductions), op_build.c (creation:
 * permutation, pJDS blocks, halo plan, upload), op_apply.c (y = A x and the
 * halo exchange modes), op_refill.c (value refill for sweeps), op_kron.c
 * (creation of a matrix-free operator).  Private to spmv/. */
#ifndef PL_OP_IMPL_H
#define PL_OP_IMPL_H

#include <mpi.h>

#include "spmv.h"
#include "spmv_impl.h"

#define PL_HALO_TAG 7401

/* op_repro.c: out[q] = the exact global sum over rows i of x[i s] y[i s]
 * of pair q, rounded once (the same bits on any ranks and threads).
 * Collective. */
typedef struct pl_repro_pair {
    const double *x, *y;
} pl_repro_pair;
int pl_op_repro_sums(pl_op *op, int np, const pl_repro_pair *pr, size_t stride, double *out);
/* The exact sums of the column pairs (V_r, W_c), r < k, c < m, into
 * C[c k + r]; sym (W = V, k = m): the pairs r <= c only, mirrored. */
int pl_op_repro_block(pl_op *op, int k, int m, const double *V, size_t ld, const double *W, size_t ldw, double *C,
                      int sym);

struct pl_op {
    MPI_Comm user_comm; /* as given (returned by pl_op_comm) */
    MPI_Comm comm;      /* private duplicate for the halo messages */
    int rank, size;
    pl_backend *be;
    int exchange;       /* mode in use */
    int detailed;       /* sync between phases for the timing split */
    int64_t n_global, row0;
    int32_t n, n_halo;
    int64_t nnz;
    int64_t *gidx;      /* permuted local row -> global original row */
    pjds loc, rem;      /* host matrices (the backend may reference them) */
    /* local format (op_format.c): PL_FORMAT_COMPRESSED keeps the local part
     * in cloc (rows in their original order; loc is then empty) */
    int fmt;
    pl_cpjds cloc;
    int64_t cmp_nval, cmp_noff;    /* counted (max over ranks), -1: not counted */
    char fmt_note[160];
    void *d_loc, *d_rem;
    void *d_kron;       /* PL_FORMAT_MATRIX_FREE (op_kron.c): the backend's */
                        /* Kronecker operator (d_loc, d_rem NULL)         */
    void *d_krem;       /* several ranks: the backend's remote part       */
    pl_op_shell_fn shell; /* op_shell.c: the product is this function      */
    void *shell_arg;
    void *kdist;        /* several ranks: the split (op_kron_dist.c)      */
    int repro;          /* pl_op_options.reproducible: exact reductions   */
                        /* (op_repro.c), row sums in the global order     */
    double *d_xext;     /* repro, matrix-free on several ranks: [halo; x]; */
                        /* unified: [x; halo]                            */
    int unified;        /* repro, stored, several ranks (op_build.c): loc */
                        /* holds every entry of a row in CSR order, its   */
                        /* remote columns n + halo index; rem is empty    */
    double norm_est;
    size_t dev_bytes;
    /* halo plan */
    int n_rnb, n_snb;              /* receive / send neighbours */
    int *rnb, *rcnt, *roff;        /* rank, count, offset into the halo */
    int *snb, *scnt, *soff;        /* rank, count, offset into the send list */
    int32_t n_send;
    int32_t *d_send_idx;           /* backend memory */
    double *d_sendbuf, *d_halo;    /* backend memory */
    double *h_sendbuf, *h_halo;    /* host staging (== d_ on the cpu backend) */
    int host_shared;               /* cpu: staging buffers are the backend's */
    int host_pinned;               /* staging from be->host_alloc */
    MPI_Request *req;              /* n_rnb + n_snb */
    /* device backend, several ranks: its halo transport (be->halo) */
    pl_halo_xfer *hx;
    int nccl;                      /* transport = nccl in use */
    int ipc;                       /* transport = ipc in use */
    int stream_fill;               /* entries go to be->mat_create_fill */
    /* counters */
    int64_t n_apply;
    double t_total, t_local, t_remote, t_comm, bytes_sent;
    double *t_apply;               /* wall time of each apply since the reset */
    int64_t n_samples, cap_apply;  /* (samples stop if memory runs out)   */
    int64_t n_queued;              /* applies by pl_op_apply_queued       */
    int64_t sort_window;           /* in use (auto resolved)              */
    /* value terms (op_refill.c): nterms arrays in backend memory in the
     * layout of the local and of the remote values; per-row absolute sums */
    int nterms;
    double **d_term_loc, **d_term_rem; /* nterms each                    */
    double *term_rowsum;           /* host nterms x n                    */
    /* block halo (op_block.c): buffers for blk_R vectors, made by the first
     * pl_op_apply_block that needs them (grown for a larger R) */
    int blk_R;
    double *d_sendbuf_b, *d_halo_b;  /* backend memory, n_send / n_halo x R */
    double *h_sendbuf_b, *h_halo_b;  /* host staging (== d_ on the cpu)     */
    int blk_pinned;
    int *rcnt_b, *roff_b, *scnt_b, *soff_b; /* the halo plan in values x R */
};
/* op.c: a new operator shell (zeroed; user_comm, a private duplicate comm,
 * rank, size, be set), for pl_op_create and pl_op_create_kron. */
int pl_op_new(MPI_Comm comm, pl_backend *be, pl_op **op);
/* op_build.c: the options every operator checks (transport against the
 * backend, exchange, chunk height): PL_ERR_INPUT naming the option. */
int pl_op_check_options(const pl_op_options *cfg, const pl_backend *be);
/* op_format.c: decide the local format from cfg->format, the backend and
 * the tables the local parts would need (collective; sets op->fmt,
 * cmp_nval, cmp_noff, fmt_note), and build the compressed local part. */
int pl_op_format_decide(pl_op *op, const pl_csr *A, const pl_op_options *cfg);
int pl_op_format_build(pl_op *op, const pl_csr *A, int C);
/* op_kron_dist.c: a matrix-free operator on several ranks (the LEFT split,
 * spmv.h): the rank's block, local tables, remote part and halo plan, for
 * op_kron.c's build and update; free (pl_op_destroy) accepts an operator
 * without them and can't fail. */
int pl_op_kron_dist_build(pl_op *op, const pl_kron *k, const pl_op_options *opt);
/* op_kron.c: the non-zeros of the matrix of k (exact for Holstein-Hubbard
 * tables, else an upper bound).  PL_ERR_MEM. */
int pl_op_kron_nnz(const pl_kron *k, int64_t *nnz);
int pl_op_kron_dist_update(pl_op *op, const pl_kron *k);
void pl_op_kron_dist_free(pl_op *op);
/* op_build.c: the halo buffers of the plan in op (send index list of
 * op->n_send entries, send buffer, halo, host staging; counted in
 * dev_bytes), and the steps after the upload on several ranks (device halo
 * transport, the exchange mode's fallback, the first exchange);
 * collective. */
int pl_op_halo_alloc(pl_op *op, const int32_t *send_idx);
int pl_op_halo_finish(pl_op *op, const pl_op_options *cfg, double *tp);
/* op_block.c: free the block halo buffers (pl_op_destroy).  Can't fail. */
void pl_op_block_free(pl_op *op);

/* Temporaries of the local build. */
typedef struct build_tmp {
    int32_t *len_loc, *len_rem, *perm, *iperm;
    int64_t *rem_blk;  /* first remote entry of rows 0, B, 2B.. (halo_build) */
    int32_t *rem_h;    /* halo index of each remote entry, in row order   */
    uint64_t *key, *key_tmp, *pay, *pay_tmp; /* halo sort (halo_build)    */
    int64_t *hist;     /* radix sort counters                             */
    uint64_t **seg;    /* remote columns of each part (scan_rows)         */
    int64_t *seg_len;
    int n_seg;
    int64_t *halo_g;   /* sorted unique remote columns                    */
    int32_t *rr_row, *rr_len, *rr_perm;
    int64_t *bounds, *req_g;
    int *rcount, *scount, *rdispl, *sdispl;
    int32_t *send_idx;
} build_tmp;

#define PL_REM_BLK_LOG 5 /* rem_blk: one remote offset per PL_REM_BLK rows */
#define PL_REM_BLK (1 << PL_REM_BLK_LOG)

/* Start of part q of [0, m) cut into nb parts: floor(m q / nb) without
 * overflow. */
static inline int64_t pl_op_part(int64_t m, int q, int nb) { return m / nb * q + m % nb * q / nb; }

/* op_halo.c: the halo columns and each remote entry's halo index from rows
 * [lo, hi) of the scan (step 2), and the halo plan (step 4, collective). */
int pl_op_halo_build(pl_op *op, build_tmp *t, int64_t lo, int64_t hi);
int pl_op_plan_halo(pl_op *op, build_tmp *t);

/* Collective agreement on failure: every rank learns the largest error code;
 * a rank that did not fail itself reports "failed on another rank". */
int pl_op_agree(MPI_Comm comm, int rc, const char *phase);
/* Device-to-device halo exchange (op_apply.c), also used by the warm-up of
 * op_build.c. */
int pl_op_d2d_start(pl_op *op, int side);
int pl_op_d2d_finish(pl_op *op, int side);

#endif
