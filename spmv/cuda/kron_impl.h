/* kron_impl.h — internals of the CUDA matrix-free operator shared by
 * kron.cu (tables, upload, variant choice, variant 1), kron_kernels.cu
 * (variants 2-4), kron_hop.cu (5), kron_row.cu (6) and kron_block.cu.
 * CUDA only; included from those files. */
#ifndef PL_KRON_IMPL_H
#define PL_KRON_IMPL_H

#include <stdint.h>

#include "cuda_impl.h"
#include "kron_variant.h"

#define KR_PK_NONE 0xFFFFFFu /* packed column word: no entry (24 bits)       */
#define KR_PK_DICT 256       /* packed tables: distinct values at most       */

/* The tables in device memory (pl_kron's names; couplings as lists). */
typedef struct pl_cuda_kron {
    int64_t n_left, n_right;
    int nterms;
    double shift;
    int64_t *a_ptr;
    int32_t *a_col;
    double *a_val, *dl, *dr;
    int32_t *lo, *hi;
    double *lo_val, *hi_val;
    int64_t *act_ptr;
    int32_t *act_m;
    double *act_c;
    double *c;         /* variant 2: the dense couplings, n_left x nterms          */
    uint32_t *pk_lo;   /* variant 4: [m n_right + r] column | dictionary index << 24 */
    uint32_t *pk_hi;
    double *pk_dict;   /* variants 4, 6: the values, pk_ndict <= KR_PK_DICT (4),    */
                       /* PL_KRON_P16_DICT (6)                                      */
    uint32_t *rp_col;  /* variant 6: pl_kron_pack16's col, [m n_right + r]         */
    uint16_t *rp_val;  /* variant 6: its val (indices into pk_dict)                 */
    int pk_ndict;
    int hb;            /* variant 5's block product (kron_hop_block.cu): -1 the  */
                       /* width by R (R <= 8), 2 or 4 that width for any R it    */
                       /* divides, 0 kron_block.cu's kernels                       */
    int variant;       /* the kernel apply runs (after fall-backs)                  */
    int requested;     /* PJDS_KRON_KERNEL, or the default                          */
    int chunk;         /* variant 2: left rows per block; 5: right rows per tile    */
    int rmajor;        /* variant 2: blocks in r-tile-major order (PJDS_KRON_ORDER)  */
    int split;         /* variants 3, 4: blocks per left row; 6: blocks per SM      */
    int pr_strided;    /* variant 6: 1 block b takes the whole left rows b, b + G,  */
                       /* ... (PJDS_KRON_ROWS = 2), 0 a contiguous range (1), -1    */
                       /* strided where n_left >= 4 G (unset; kron_row.cu)          */
    size_t smem;       /* variants 3-6: dynamic shared memory per block             */
    size_t bytes;
} pl_cuda_kron;

/* Kernel arguments (device pointers of m, x, y). */
typedef struct kr_args {
    int64_t n_left, n_right, ntiles, tiles_per_l;
    int nterms;
    double shift;
    const int64_t *__restrict__ a_ptr;
    const int32_t *__restrict__ a_col;
    const double *__restrict__ a_val, *__restrict__ dl, *__restrict__ dr;
    const int32_t *__restrict__ lo, *__restrict__ hi;
    const double *__restrict__ lo_val, *__restrict__ hi_val;
    const int64_t *__restrict__ act_ptr;
    const int32_t *__restrict__ act_m;
    const double *__restrict__ act_c;
    const double *__restrict__ x;
    double *__restrict__ y;
    /* the aug step of variant 5 (pl_kr_launch_hop_aug): y = ((alpha s) +
     * (gamma x)) + (beta y), the per-tile dots x.x, y.x into part */
    double alpha, gamma, beta;
    double *part;
    /* the Lanczos step of variant 5 (pl_kr_launch_hop_lz): y = s - beta z */
    const double *__restrict__ z;
    /* the measured next lever (pl_kr_launch_hop_lzin, kron_timing only): x
     * made on the fly from the last product's unnormalised output w_in and
     * z, x = (w_in - alpha z) / b with alpha and b from its sums dd_in and
     * beta_in (lz_coef.h), written to x_out; y = H x - b z */
    const double *__restrict__ w_in;
    double *x_out;
    const double *dd_in;
    double beta_in;
} kr_args;

/* kron.cu: the kernel arguments of m for x, y (aug fields zero). */
void pl_kr_args_of(const pl_cuda_kron *m, const double *x, double *y, kr_args *a);

/* kron_kernels.cu */
/* Variant 2: left rows per block for m (chunk request c, 0: default). */
int pl_kr_rs_chunk(const pl_cuda_kron *m, int nsm, int c);
/* Variant 2: block order, 1 l-chunk-major, 2 r-tile-major (PJDS_KRON_ORDER).
 * One H100, 2026-11-25, tests/gpu/kron_timing, chunk 8: HMEp 0.176 ms
 * (order 1) against 0.161 ms (order 2), but hh9's size (15,876 x 12,870,
 * 8 modes) 13.2 ms against 15.2 ms: order 1 stays the default. */
#define KR_RS_ORDER_DEFAULT 1
/* Variants 3, 4: the dynamic shared memory a block needs, and whether it
 * fits the device (sets the kernel's limit); *fits = 0: use variant 1. */
int pl_kr_row_setup(const pl_cuda_ctx *cx, pl_cuda_kron *m, int packed, int *fits);
/* Variants 3, 4: blocks per left row (split request s, 0: by the tail). */
int pl_kr_row_split(const pl_cuda_kron *m, int nsm, int s);
/* Variant 4: the packed tables of k on the host (pk_lo, pk_hi of n_right x
 * nterms words, dict of KR_PK_DICT), *ok = 0 where they do not fit. */
void pl_kr_pack(const pl_kron *k, uint32_t *pk_lo, uint32_t *pk_hi, double *dict, int *ndict, int *ok);
/* kron_hop.cu: variant 5, tile width want (8, 16, 32; else 32) or the
 * largest below it whose x[:, tile] of every left row fits a block's shared
 * memory (m->chunk, m->smem; sets the kernel's limit); *fits = 0: none. */
int pl_kr_hop_setup(const pl_cuda_ctx *cx, pl_cuda_kron *m, int want, int *fits);
int pl_kr_launch_hop(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a);
/* Variant 5 with kron_spmm_aug's step for one vector (a->alpha, gamma,
 * beta): y = ((alpha (H x)) + (gamma x)) + (beta y) of each value, and
 * d_out[0] = x.x, d_out[1] = y_new.x (the tiles' sums in a->part, 2 per
 * tile: pl_kr_hop_tiles(m) tiles).  Queued on cx->stream. */
int64_t pl_kr_hop_tiles(const pl_cuda_kron *m);
int pl_kr_launch_hop_aug(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, double *d_out);
/* Variant 5 with the Lanczos step's product (kron_lz): y = (H x) -
 * (beta z) of each value, and d_out[0:5] = x.x, y.x, y.y, z.y, z.x (5 per
 * tile in a->part).  Queued on cx->stream. */
int pl_kr_launch_hop_lz(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, double *d_out);
/* Variant 5, the product with the update of its input fused (kr_args
 * w_in, x_out, dd_in, beta_in; kron_timing's measurement of the next
 * lever, not used by the solver): the 5 sums of the lz mode into d_out. */
int pl_kr_launch_hop_lzin(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, double *d_out);
/* kron_hop_block.cu: variant 5 for blocks of vectors (kron_block.cu's
 * kron_spmm and kron_spmm_aug for even R).  Setup at kron_create: want -1
 * (the width by R), 2 or 4 (PJDS_KRON_BLOCK), 0 (off); sets m->hb where
 * the tiles fit a block's shared memory, else m->hb = 0 (no kernel loaded).
 * pl_kr_hb_width: the column group width RB for R vectors X, Y, 0 where the
 * kernel does not apply (kron_block.cu's kernels then).  pl_kr_launch_hb:
 * a->x, a->y the R-column blocks; aug: alpha, gamma, beta and a->part of
 * pl_kr_hb_tiles(m, rb) x 2R sums (x.x of column c at [t 2R + c], y.x at
 * [t 2R + R + c]).  Queued on cx->stream. */
int pl_kr_hb_setup(const pl_cuda_ctx *cx, pl_cuda_kron *m, int want);
int pl_kr_hb_width(const pl_cuda_kron *m, int R, const double *X, const double *Y);
int64_t pl_kr_hb_tiles(const pl_cuda_kron *m, int rb);
int pl_kr_launch_hb(pl_cuda_ctx *cx, const pl_cuda_kron *m, int R, int rb, const kr_args *a, int aug);
/* kron_row.cu: variant 6, x[l, :] of one left row in shared memory with
 * the packed tables (pl_kron_pack16, uploaded here into m->rp_col,
 * rp_val, pk_dict).  *fits = 0 where the row and dictionary do not fit a
 * block's shared memory or the values do not pack (nothing uploaded);
 * else m->smem set (and the kernel's limit), m->split = split blocks per
 * multiprocessor, or (split <= 0) as many as fit one. */
int pl_kr_prow_setup(pl_cuda_ctx *cx, const pl_kron *k, pl_cuda_kron *m, int split, int *fits);
int pl_kr_launch_prow(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a);
/* Launch variant 2, 3 or 4 on cx->stream. */
int pl_kr_launch_rs(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a);
int pl_kr_launch_row(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a);

/* Variant 5's kernels take the term count as a template argument (their
 * coupling tables per tile, up to 8): f.template go<NT>() for NT = nterms
 * in 0..8, f.template go<-1>() above (the tables from memory, or refused).
 * One switch for kron_hop.cu and kron_hop_block.cu. */
template <class F>
static inline int pl_kr_nt_dispatch(int nterms, const F &f)
{
    switch (nterms) {
    case 0: return f.template go<0>();
    case 1: return f.template go<1>();
    case 2: return f.template go<2>();
    case 3: return f.template go<3>();
    case 4: return f.template go<4>();
    case 5: return f.template go<5>();
    case 6: return f.template go<6>();
    case 7: return f.template go<7>();
    case 8: return f.template go<8>();
    default: return f.template go<-1>();
    }
}

#endif
