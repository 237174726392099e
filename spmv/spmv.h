/* spmv.h — the pJDS format, the vector backends and the (distributed)
 * operator y = A x that lanczos/ sees.
 *
 * pJDS (Kreutzer et al., "Sparse matrix-vector multiplication on GPGPU
 * clusters: a new storage format and a scalable implementation", 2012):
 * rows of a rank sorted by length (descending, stable) inside windows of
 * `sort_window` rows (0 = all rows = pJDS; 1 = no sort = sliced ELLPACK),
 * chunks of C rows padded to the chunk's longest row, column-major inside a
 * chunk: entry j of row r (r in chunk c = r / C) sits at
 *     chunk_start[c] + j * C + r % C.
 * The permutation is applied symmetrically (P A P^T): each rank's rows and
 * its local columns are renumbered into its permuted basis; remote columns
 * go to a halo buffer.  Lanczos runs entirely in the permuted basis.
 *
 * Local indices are int32 (a rank holds < 2^31 rows), global ones int64.
 */
#ifndef PL_SPMV_H
#define PL_SPMV_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_csr.h"
#include "pl_error.h"
#include "pl_exsum.h"
#include "pl_kron.h"
#include "spmv_tuning.h"

/* ---- operator options ------------------------------------------------ */
/* Which backend runs the kernels (pl_backend_create). */
enum pl_backend_kind { PL_BACKEND_AUTO = 0, PL_BACKEND_CPU = 1, PL_BACKEND_CUDA = 2 };
/* How the halo exchange meets the local product: vector mode (exchange,
 * then multiply), overlap (local part while the halo travels), task (a
 * dedicated communication thread). */
enum pl_exchange { PL_EXCHANGE_VECTOR = 0, PL_EXCHANGE_OVERLAP = 1, PL_EXCHANGE_TASK = 2 };
/* The local matrix format: auto = compressed where its tables fit and it
 * pays (op_format.c), else pjds.  matrix_free: no stored matrix, a
 * Kronecker-sum operator applied from its tables (pl_op_create_kron; never
 * chosen by pl_op_create). */
enum pl_format { PL_FORMAT_AUTO = 0, PL_FORMAT_PJDS = 1, PL_FORMAT_COMPRESSED = 2, PL_FORMAT_MATRIX_FREE = 3 };
/* How halo values travel between ranks: host MPI, NCCL, CUDA IPC between
 * ranks sharing a GPU, or auto (nccl for the cuda backend when built with
 * NCCL, ipc where ranks share a device, else mpi). */
enum pl_transport { PL_TRANSPORT_MPI = 0, PL_TRANSPORT_NCCL = 1, PL_TRANSPORT_AUTO = 2, PL_TRANSPORT_IPC = 3 };
enum pl_precision { PL_PRECISION_DOUBLE = 0, PL_PRECISION_SINGLE = 1 };
#define PL_SORT_WINDOW_AUTO (-1) /* sort_window: the backend's window (pl_sort_window_resolve) */

/* What pl_op_create builds; pl_op_options_defaults gives the defaults. */
typedef struct pl_op_options {
    int chunk_height;        /* C, rows per pJDS chunk = 32                      */
    int64_t sort_window;     /* sigma: rows sorted together by length, 0 = all   */
                             /* rows (pJDS), PL_SORT_WINDOW_AUTO = per backend   */
    int exchange;            /* enum pl_exchange = vector                         */
    int transport;           /* enum pl_transport = auto                          */
    int precision;           /* enum pl_precision = double                        */
    int format;              /* enum pl_format = auto                             */
    int blocks;              /* 1: the operator serves block products (SpMMV);   */
                             /* format = auto then keeps pJDS, whose block       */
                             /* kernels are the faster ones = 0                  */
    int kron_split;          /* enum pl_kron_split: how pl_op_create_kron cuts  */
                             /* a matrix-free operator over several ranks =     */
                             /* LEFT (electron configurations)                  */
    int reproducible;        /* 1: results bitwise independent of the number   */
                             /* of ranks and threads (op_repro.c): every global */
                             /* reduction (pl_vec_*) exact and rounded once,   */
                             /* every row of y = A x summed in the one-rank     */
                             /* order: a matrix-free operator takes the LEFT    */
                             /* split and adds its hopping after the halo in    */
                             /* CSR order (op_kron_dist.c); a stored one keeps  */
                             /* whole rows in one pJDS part reading [x; halo]   */
                             /* (op_build.c; compressed: PL_ERR_INPUT on       */
                             /* several ranks).  Block products on several      */
                             /* ranks: PL_ERR_NOTSUP.  A host-memory backend    */
                             /* only (cpu; PL_ERR_INPUT otherwise) = 0          */
} pl_op_options;
void pl_op_options_defaults(pl_op_options *o);

/* ---- pJDS ------------------------------------------------------------ */
typedef struct pjds {
    int32_t nrows;         /* rows n (local)                                   */
    int32_t ncols;         /* columns the block reads (local + halo)           */
    int32_t C;             /* chunk height                                     */
    int32_t nchunks;       /* ceil(nrows / C)                                  */
    int64_t sort_window;   /* sigma actually used (>= 1)                       */
    int64_t nnz;           /* true non-zeros                                   */
    int64_t nent;          /* stored entries including padding                 */
    int64_t *chunk_start;  /* nchunks + 1 offsets into col/val                 */
    int32_t *chunk_width;  /* nchunks: longest row in the chunk                */
    int32_t *row_len;      /* nchunks * C: length of each permuted row (pad 0) */
    int32_t *col;          /* nent column indices (padding: a valid column)    */
    double *val;           /* nent values (padding: 0)                         */
    int32_t *row_map;      /* NULL: row i is y[i]; else row i adds into        */
                           /* y[row_map[i]] (remote part of a split matrix)    */
} pjds;

/* Sort permutation of n rows with lengths len[]: perm[new] = old, rows sorted
 * by descending length (stable) inside windows of sigma rows (sigma <= 0 or
 * >= n: one window).  Can't fail. */
void pjds_sort_perm(int32_t n, const int32_t *len, int64_t sigma, int32_t *perm);
/* Build pJDS of the rows of a local CSR with local int32 column indices
 * (lcol, in the permuted basis already), taking row perm[i] as row i.
 * row_ptr has n+1 entries.  Allocates; free with pjds_destroy. */
int pjds_create(int32_t n, int32_t ncols, const int64_t *row_ptr, const int32_t *lcol, const double *val,
                const int32_t *perm, int C, int64_t sigma, pjds *out);
void pjds_destroy(pjds *p);
/* Statistics of the format on the global matrix, for `info` and `bench`. */
typedef struct pjds_stats {
    int64_t rows, nnz, row_len_min, row_len_max;
    int64_t csr_bytes;         /* 8 nnz + 4 nnz + 8 (rows + 1)                */
    int64_t ellpack_entries;   /* rows padded to a multiple of C, times max len */
    int64_t pjds_entries;      /* sum over chunks of C * chunk width          */
    double pjds_reduction_vs_ellpack; /* 1 - pjds_entries / ellpack_entries   */
} pjds_stats;
/* Stats from the row lengths of the whole matrix (only lengths, any order).
 * Collective over comm when the lengths are distributed: each rank passes its
 * own rows' lengths (sorting is global in the paper's Table I, so this
 * gathers the length histogram, O(max length) memory, never all rows). */
int pjds_stats_from_lengths(int64_t n_local, const int32_t *len, int C, MPI_Comm comm, pjds_stats *st);

#include "cpjds.h" /* the compressed pJDS format */

/* ---- backends -------------------------------------------------------- */
/* A table of vector operations that run where the operator lives.  Pointers
 * to vectors are backend memory (host for cpu, device for cuda).  Results
 * of reductions are *local* partial sums delivered to host memory; the one
 * MPI_Allreduce is in pl_vec_* below.  Scalars and small matrices (h, Y)
 * live on the host.  Every function returns an error code. */
typedef struct pl_backend pl_backend;
/* Writes the entries of chunks [c0, c1) of a pJDS layout (mat_create_fill). */
typedef int (*pl_pjds_fill_fn)(void *arg, int64_t c0, int64_t c1, int32_t *col, double *val);
/* The remote part of a matrix-free operator split by left rows over several
 * ranks (op_kron_dist.c; be->kron_rem_create): for i < n_rows and
 * r < n_right,
 *   y[row[i] n_right + r] += sum_{j in [ptr[i], ptr[i+1])} val[j] x_halo[hrow[j] n_right + r]
 * (rows of A's remote entries; x_halo holds whole phonon rows x[l', :] of
 * the remote left rows l', in halo order). */
typedef struct pl_kron_remote {
    int64_t n_right;
    int32_t n_rows;       /* local left rows with remote entries (>= 1)  */
    const int32_t *row;   /* n_rows: the local left row                  */
    const int64_t *ptr;   /* n_rows + 1                                   */
    const int32_t *hrow;  /* ptr[n_rows]: the halo row                    */
    const double *val;    /* ptr[n_rows]                                  */
    /* split = PL_KRON_SPLIT_RIGHT (op_kron_right.c; 0 = LEFT, the above):
     * the remote part of a split by right rows.  n_right is then the
     * rank's right rows, row[i] a local right row, hrow[j] a halo column
     * (whole electron columns x[:, r'] in halo order, x_halo[h n_left + l]),
     * val[j] the right factor's value and term[j] its factor m: for every
     * l < n_left and i < n_rows,
     *   y[l n_right + row[i]] += sum_{j in [ptr[i], ptr[i+1]), c[l nterms + term[j]] != 0}
     *                              (c[l nterms + term[j]] * val[j]) x_halo[hrow[j] n_left + l]
     * (the product in pl_kron.h's order; entries of a row in m order, lo
     * before hi). */
    int split;
    int64_t n_left;
    int nterms;
    const int32_t *term;  /* ptr[n_rows]                                  */
    const double *c;      /* n_left x nterms, as pl_kron.c                */
} pl_kron_remote;
/* Writes the entry words of chunks [c0, c1) of a compressed layout
 * (cmat_create_fill), as pl_cpjds_fill_words: 32-bit words into w, or (w
 * NULL) the 16-bit and 8-bit planes into lo and hi. */
typedef int (*pl_cpjds_fill_fn)(void *arg, int64_t c0, int64_t c1, uint32_t *w, uint16_t *lo, uint8_t *hi);
struct pl_backend {
    const char *name;  /* "cpu" or "cuda": for messages only */
    void *ctx;         /* handles, streams; owned by the backend */
    /* capabilities, which the operator code reads instead of the name */
    int host_memory;          /* 1: backend memory is host memory (the halo
                               * buffers need no staging copies, matrices
                               * may reference the host arrays) */
    int64_t sort_window_auto; /* the window of [spmv] sort_window = auto */
    int compressed_auto;      /* 1: [spmv] format = auto may pick the
                               * compressed format (where its bytes say so:
                               * the GPU kernels are bandwidth-bound); 0:
                               * auto keeps pJDS (the CPU backend, whose
                               * compressed kernel decodes slower than pJDS
                               * streams: op_format.c) */
    /* device halo transport (spmv_impl.h: asynchronous staging, NCCL, CUDA
     * IPC); NULL: halos travel through host MPI only */
    const struct pl_halo_ops *halo;
    pl_spmv_tuning tune;      /* kernel-choice switches, read at creation */
    int (*vec_alloc)(pl_backend *be, size_t n, double **v);
    void (*vec_free)(pl_backend *be, double *v);
    int (*upload)(pl_backend *be, double *dst, const double *h_src, size_t n);    /* host -> backend */
    int (*download)(pl_backend *be, double *h_dst, const double *src, size_t n);  /* backend -> host */
    int (*copy)(pl_backend *be, size_t n, const double *x, double *y);            /* y = x */
    int (*set)(pl_backend *be, size_t n, double a, double *x);                   /* x = a */
    int (*scal)(pl_backend *be, size_t n, double a, double *x);                  /* x = a x */
    int (*axpy)(pl_backend *be, size_t n, double a, const double *x, double *y);  /* y += a x */
    int (*dot)(pl_backend *be, size_t n, const double *x, const double *y, double *h_r); /* local x.y */
    /* h[0:k] = V[:, 0:k]^T w (local partial sums), V column-major, ld >= n */
    int (*gemv_t)(pl_backend *be, size_t n, int k, const double *V, size_t ld, const double *w, double *h_h);
    /* w = beta w + alpha V[:, 0:k] h, h on host */
    int (*gemv_n)(pl_backend *be, size_t n, int k, double alpha, const double *V, size_t ld, const double *h_h,
                  double beta, double *w);
    /* W[:, 0:m] = V[:, 0:k] Y (Y k x m column-major on host, ldy >= k); W must not overlap V */
    int (*gemm)(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *h_Y, int ldy,
                double *W, size_t ldw);
    /* matrices: copy a host pJDS into backend memory (cpu may keep a reference;
     * the host pJDS outlives the backend matrix) */
    int (*mat_create)(pl_backend *be, const pjds *h_mat, void **mat);
    void (*mat_destroy)(pl_backend *be, void *mat);
    /* row_map == NULL: y = A x;  else y[row_map[i]] += (A x)[i] */
    int (*spmv)(pl_backend *be, const void *mat, const double *x, double *y);
    /* int32 index arrays in backend memory (halo packing) */
    int (*idx_create)(pl_backend *be, const int32_t *h_idx, size_t n, int32_t **idx);
    void (*idx_destroy)(pl_backend *be, int32_t *idx);
    /* buf[i] = x[idx[i]] for i < n */
    int (*gather)(pl_backend *be, size_t n, const int32_t *idx, const double *x, double *buf);
    /* rand_fill, optional (NULL: the caller fills a host vector and
     * uploads it): v[i] = lanczos.h's lz_random_element(seed, g0 + i) for
     * i < n, bit for bit (the splitmix64 hash in integers, one exact
     * conversion), in backend memory; asynchronous.  For rows whose global
     * original indices are consecutive (a matrix-free operator's). */
    int (*rand_fill)(pl_backend *be, size_t n, uint64_t seed, int64_t g0, double *v);
    /* rand_block, optional (NULL: as rand_fill): R random vectors in a
     * row-major block (spmm's layout, 1 <= R <= PL_SPMM_RMAX):
     * V[i R + c] = lz_random_element(seeds[c], g_i) for i < n, c < R, with
     * g_i = idx[i] (an index array of idx_create: the rows' global original
     * indices, a permuted or split operator's) or g0 + i where idx is NULL;
     * bit for bit the host's values (pl_random.h), in backend memory,
     * asynchronous.  The KPM start blocks (lanczos/lz_random.c). */
    int (*rand_block)(pl_backend *be, size_t n, int R, const uint64_t *seeds, int64_t g0, const int32_t *idx,
                      double *V);
    int (*sync)(pl_backend *be);
    void (*destroy)(pl_backend **be);
    /* counters, updated by the calls above */
    double bytes_h2d, bytes_d2h;
    /* mem_info: free and total bytes of the backend's device memory and
     * the device number; NULL for host backends (cpu). */
    int (*mem_info)(pl_backend *be, int *device, size_t *free_bytes, size_t *total_bytes);
    /* host_alloc/host_free, optional (NULL: op.c uses malloc/free): host
     * staging memory for halos, page-locked where the backend can
     * (cudaMallocHost), so that halo download/upload run at full speed. */
    int (*host_alloc)(pl_backend *be, size_t n, double **h);
    void (*host_free)(pl_backend *be, double *h);
    /* cgs_step and basis_update, optional (NULL: lanczos composes
     * the generic ops above; tested by a runtime pointer check):
     * cgs_step: one fused Gram-Schmidt pass, for any k >= 0 and n >= 0,
     *     w -= V[:, 0:k] h_in;  h_out[0:k] = V[:, 0:k]^T w;  h_out[k] = w.w
     * with the updated w (local partial sums, h_out on the host, k + 1
     * entries; h_in on the host, may change once the call returns).  w must
     * not overlap V[:, 0:k].  One pass over V instead of two. */
    int (*cgs_step)(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *w, const double *h_in,
                    double *h_out);
    /* basis_update: V[:, 0:m] = V[:, 0:k] Y in place (Y k x m column-major
     * on the host, ldy >= k, 0 <= m <= k); columns m..k-1 are left
     * undefined.  Any n, k, m. */
    int (*basis_update)(pl_backend *be, size_t n, int k, int m, double *V, size_t ld, const double *h_Y, int ldy);
    /* restart_step, optional (NULL: the caller composes basis_update, two
     * copies and cgs_step): a thick restart's
     * basis update and the next cycle's first Gram-Schmidt pass in one pass
     * over V.  With k = off + kk (kk >= 1, sz > kk + 1), in place, every
     * right-hand side read before anything is written:
     *     V[:, off:k]  = V[:, off:off+sz] Y    (Y sz x kk, host, ldy >= sz)
     *     V[:, k]      = V[:, off+sz]          (the restart vector)
     *     V[:, k+1]    = V[:, off+sz+1] - V[:, 0:k+1] h_in  (its product,
     *                                           corrected with the new V)
     *     h_out[0:k+1] = V[:, 0:k+1]^T V[:, k+1];  h_out[k+1] = its norm^2
     * (h_in: k + 1 entries on the host, may change once the call returns;
     * h_out: k + 2 local sums on the host); the correction and the sums
     * are those cgs_step(k + 1) would give on the updated columns.  Both
     * backends have it (cpu: the same bits as the composed slots). */
    int (*restart_step)(pl_backend *be, size_t n, int off, int sz, int kk, double *V, size_t ld, const double *h_Y,
                        int ldy, const double *h_in, double *h_out);
    /* mat_create_fill, optional (NULL: op.c fills whole host arrays and
     * calls mat_create): the matrix from a layout (a pjds whose col/val are
     * NULL; everything else set) and a callback that writes the entries of
     * chunks [c0, c1) to col/val (index 0 = entry chunk_start[c0]).  The
     * backend calls it for consecutive chunk ranges that fit its staging
     * buffers, so the host never holds the whole col/val arrays. */
    int (*mat_create_fill)(pl_backend *be, const pjds *layout, pl_pjds_fill_fn fill, void *arg, void **mat);
    /* mat_values (sweeps): the backend pointer to the nent values of a
     * matrix made by mat_create or mat_create_fill, in its pJDS order, and
     * their count.  Every view of the matrix (the CUDA block mode) reads
     * these values, so writing them through the vector ops (set, axpy)
     * changes the matrix in place.  NULL: the backend cannot (pl_op_refill
     * then fails with PL_ERR_NOTSUP). */
    int (*mat_values)(pl_backend *be, void *mat, double **val, size_t *n);
    /* gram, optional (NULL: pl_vec_gram composes k gemv_t): G = V^T V of
     * k <= PL_GRAM_KMAX adjacent columns in one pass (k x k, column-major,
     * host, local partial sums).  Lanczos' local step reads its three
     * columns once with it. */
    int (*gram)(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *h_G);
    /* SpMMV, optional (NULL: pl_op_apply_block fails with
     * PL_ERR_NOTSUP): Y = A X for 1 <= R <= PL_SPMM_RMAX vectors in row-major
     * blocks (the R values of row i contiguous at X + i R; the halo block
     * likewise), each matrix entry loaded once for all R; a remote part
     * (row_map) adds into its rows as spmv does.  gather_block: buf[i R + r]
     * = X[idx[i] R + r].  bdot: h[r] = sum_i X[i R + r] Y[i R + r], r < R
     * (local partial sums, host).  Asynchronous like spmv; bdot returns
     * after the device finished. */
    int (*spmm)(pl_backend *be, const void *mat, int R, const double *X, double *Y);
    int (*gather_block)(pl_backend *be, size_t n, int R, const int32_t *idx, const double *X, double *buf);
    int (*bdot)(pl_backend *be, size_t n, int R, const double *X, const double *Y, double *h);
    /* spmm_aug, optional (the KPM step fused into the SpMMV; NULL: the
     * callers compose spmm, scal, axpy and bdot): for a square matrix
     * without row_map, Y = alpha A X + gamma X + beta Y row by row (Y may
     * not overlap X), and h_dots[c] = sum_i X[i R + c]^2,
     * h_dots[R + c] = sum_i Y_new[i R + c] X[i R + c] (local sums, host);
     * returns after the device finished. */
    int (*spmm_aug)(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta, const double *X,
                    double *Y, double *h_dots);
    /* spmm_cheb, optional (the Chebyshev filter step; NULL or
     * PL_ERR_NOTSUP for an R or layout it does not cover: the caller
     * composes it): as spmm_aug without the dots, Y = alpha A X + gamma X +
     * beta Y, and with Acc != NULL also Acc += c1 X + c2 Y_new, in one
     * pass; asynchronous like spmm. */
    int (*spmm_cheb)(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta, const double *X,
                     double *Y, double c1, double c2, double *Acc);
    /* cmat_create, optional (NULL: the backend has no compressed
     * kernels; [spmv] format = auto then keeps pJDS): a matrix from a host
     * compressed pJDS (square, no row_map), which the host keeps alive as
     * for mat_create.  spmv, spmm and mat_destroy take it like a pJDS
     * matrix; spmm_aug and mat_values return PL_ERR_NOTSUP for it. */
    int (*cmat_create)(pl_backend *be, const pl_cpjds *h_mat, void **mat);
    /* cmat_bytes, optional (NULL: pl_cpjds_bytes of the host form): the bytes
     * a compressed matrix takes in backend memory (the CUDA layout may be
     * narrower than the host's 32-bit words) */
    size_t (*cmat_bytes)(pl_backend *be, const void *mat);
    /* cmat_create_fill, optional (NULL: op_format.c builds the whole host
     * words and calls cmat_create): a compressed matrix from its tables and
     * layout (ent NULL) and a callback that writes the words of chunks
     * [c0, c1) (index 0 = entry chunk_start[c0]); called for consecutive
     * chunk ranges that fit the backend's staging buffers, so that the host
     * never holds the whole word array and its production overlaps the
     * copies. */
    int (*cmat_create_fill)(pl_backend *be, const pl_cpjds *layout, pl_cpjds_fill_fn fill, void *arg, void **mat);
    /* sel_gram and sel_update, optional (NULL: lanczos composes gemv_t,
     * gemv_n and gram): the Lanczos local step with selective
     * orthogonalisation in one reduction.  B is three adjacent columns
     * b0, b1, x (ld); A is ka adjacent columns (ld), 1 <= ka <= PL_SEL_KMAX.
     * sel_gram, one pass over ka + 3 columns: h[0:ka] = A^T x and
     * h[ka:ka+9] = B^T B (3 x 3, column-major), local partial sums, host.
     * sel_update, one pass: x = s (x - A ca - b0 cb[0] - b1 cb[1]) (ca, cb
     * on the host, may change once the call returns; asynchronous like
     * gemv_n). */
    int (*sel_gram)(pl_backend *be, size_t n, int ka, const double *A, const double *B, size_t ld, double *h);
    int (*sel_update)(pl_backend *be, size_t n, int ka, const double *A, const double *ca, const double *B,
                      const double *cb, size_t ld, double s, double *x);
    /* lz_step, optional (NULL: the Lanczos step is composed, lanczos'
     * kr_orthogonalize_local): the rest of a step fused into its product
     * (kron_lz), with no host round trip between them.  From the sums
     * d_dots (backend memory, kron_lz's output for y = A x - beta z)
     * alpha and the new norm b (lz_coef.h pl_lz_coef); unless the step is
     * declined, one pass: y = s (y - alpha x) with s = 1 / b, then
     * h[0:ka] = A^T y of the new y (A: ka adjacent columns, ld;
     * 0 <= ka <= PL_SEL_KMAX); declined, y is not touched and h = 0.
     * out (host, PL_LZ_OUT + ka doubles, lz_coef.h): the five sums, alpha,
     * b, declined (1.0 / 0.0), h (local sums).  Returns after the device
     * finished: the step's one host round trip. */
    int (*lz_step)(pl_backend *be, size_t n, int ka, const double *A, const double *x, size_t ld, double beta,
                   const double *d_dots, double *y, double *out);
    /* kron_create, kron_apply, kron_destroy, optional (NULL: the backend
     * has no matrix-free kernels; pl_op_create_kron fails): a Kronecker-sum
     * operator (pl_kron.h).  kron_create copies the tables (checked by the
     * caller, pl_kron_check) into backend memory; k may be freed afterwards.
     * kron_apply: y = H x for the whole vector of n_left n_right rows
     * (backend memory, x and y not overlapping), each row's terms summed in
     * pl_kron.h's order; asynchronous like spmv.  kron_destroy accepts
     * NULL. */
    int (*kron_create)(pl_backend *be, const pl_kron *k, void **mat);
    int (*kron_apply)(pl_backend *be, const void *mat, const double *x, double *y);
    void (*kron_destroy)(pl_backend *be, void *mat);
    /* kron_spmm, kron_spmm_aug, optional (NULL: pl_op_apply_block and
     * pl_op_apply_block_aug return PL_ERR_NOTSUP for a matrix-free
     * operator): spmm and spmm_aug for an operator of kron_create, with
     * their layout and semantics (1 <= R <= PL_SPMM_RMAX row-major vectors,
     * the R values of row i at X + i R; X and Y not overlapping; h_dots of
     * 2 R local sums as spmm_aug's).  Every table entry is loaded once for
     * all R vectors, and each column of Y = H X equals kron_apply's y bit
     * for bit (pl_kron.h's order); the aug step forms y = ((alpha s) +
     * (gamma x)) + (beta y) of each value.  kron_spmm is asynchronous like
     * spmm; kron_spmm_aug returns after the device finished. */
    int (*kron_spmm)(pl_backend *be, const void *mat, int R, const double *X, double *Y);
    int (*kron_spmm_aug)(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                         const double *X, double *Y, double *h_dots);
    /* kron_block_width: the block width at which the block products of
     * the tables, with the vector work around them, cost least per vector
     * (pl_op_block_width), 0 = the widest.  The CPU: 1 (its one-vector
     * SIMD product with the KPM step fused); CUDA: 0 (dos takes blocks of
     * 2 for its fused step, app/cmd_dos.c; ChebFD's filter ran 3.6x slower
     * in them than in blocks of 32). */
    int kron_block_width;
    /* kron_lz, optional (NULL or PL_ERR_NOTSUP without a message for a
     * kernel it does not cover: pl_op_apply_lz's callers compose the step):
     * the Lanczos step's product for an operator of kron_create,
     * y = (H x) - (beta z) of each value (H x's bits as kron_apply's), and
     * the PL_KRON_LZ_DOTS local sums x.x, y.x, y.y, z.y, z.x, in
     * one pass (z read once more than the product alone), into d_dots
     * (backend memory: lz_step reads them there); x, y, z do not overlap;
     * asynchronous like kron_apply. */
    int (*kron_lz)(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                   double *d_dots);
    /* kron_rem_create, kron_rem_apply, kron_rem_destroy, optional (NULL: a
     * matrix-free operator runs on one rank only): the remote part of a
     * matrix-free operator on several ranks (pl_kron_remote above):
     * kron_rem_apply adds it into y, each row's sum started from y and taken
     * in j order, one rounding per product and per addition (the same bits
     * on every backend); asynchronous like spmv.  kron_rem_create copies r;
     * kron_rem_destroy accepts NULL. */
    int (*kron_rem_create)(pl_backend *be, const pl_kron_remote *r, void **mat);
    int (*kron_rem_apply)(pl_backend *be, const void *mat, const double *x_halo, double *y);
    void (*kron_rem_destroy)(pl_backend *be, void *mat);
    /* kron_rem_spmm, optional (NULL: pl_op_apply_block and
     * pl_op_apply_block_aug return PL_ERR_NOTSUP for a matrix-free operator
     * on several ranks, on every rank): kron_rem_apply for R vectors in
     * spmm's row-major layout (1 <= R <= PL_SPMM_RMAX; the R values of local
     * row i at Y + i R, of halo row h at X_halo + h R, as pl_op_apply_block's
     * exchange delivers them): Y += the remote part of each column, each
     * column's values the bits kron_rem_apply gives for that column alone;
     * asynchronous like spmm. */
    int (*kron_rem_spmm)(pl_backend *be, const void *mat, int R, const double *X_halo, double *Y);
    /* gemm_t, optional (NULL: pl_vec_gemm_t composes m gemv_t): the
     * whole-block inner products C = V[:, 0:k]^T W[:, 0:m] (k x m,
     * column-major, ld k, host; local partial sums), V and W column-major
     * (ld, ldw >= n; they may be the same columns), in one pass over both
     * (CPU: row tiles, V's tile in cache for the m columns of W; CUDA: one
     * cuBLAS dgemm) instead of m passes over V.  Returns once C is on the
     * host.  ChebFD's Gram matrices and Rayleigh-Ritz products use it. */
    int (*gemm_t)(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *W, size_t ldw,
                  double *h_C);
};
#define PL_SEL_KMAX 16
#define PL_GRAM_KMAX 4
#define PL_SPMM_RMAX 64
#define PL_KRON_LZ_DOTS 5 /* kron_lz's sums */

/* Device memory plan: PL_OK if `bytes_needed`
 * fit into the free memory of the backend's device (always PL_OK for host
 * backends), else PL_ERR_INPUT "needs X GiB of device memory, GPU N has Y
 * GiB free".  Call before allocating the matrix and the Krylov basis.
 * Not collective. */
static inline int pl_backend_mem_check(pl_backend *be, double bytes_needed)
{
    int dev = 0;
    size_t fr = 0, tot = 0;
    if (!be || !be->mem_info) return PL_OK;
    int e = be->mem_info(be, &dev, &fr, &tot);
    if (e != PL_OK) return pl_error_trace(e, __FILE__, __LINE__, __func__, "be->mem_info");
    if (bytes_needed <= (double)fr) return PL_OK;
    return pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "needs %.2f GiB of device memory, GPU %d has %.2f GiB free (of %.2f GiB): "
                        "use more GPUs (MPI ranks) or a smaller [solver] ncv",
                        bytes_needed / 1073741824.0, dev, (double)fr / 1073741824.0, (double)tot / 1073741824.0);
}

/* Create the backend of kind (enum pl_backend_kind; auto: cuda when built with CUDA
 * and a device is present, else cpu).  PL_ERR_INPUT if cuda is asked for
 * and not available.  `local_rank` picks the GPU. */
int pl_backend_create(int kind, int local_rank, pl_backend **be);
int pl_backend_cpu_create(pl_backend **be);
/* Returns PL_ERR_NOTSUP when built without CUDA, PL_ERR_INPUT when no GPU. */
int pl_backend_cuda_create(int device, pl_backend **be);
/* Number of CUDA devices (0 without CUDA or without a driver).  Can't fail. */
int pl_cuda_device_count(void);
/* 1 where the matrix-free operator's block products of n_left left rows
 * and nterms coupling terms would stage x's tile in shared memory on the
 * GPU that node-local rank local_rank gets (kernel variant 5's block
 * products, spmv/cuda/kron_hop_block.cu: R = 2..8 vectors at 0.125-0.154
 * ms a vector on HMEp against 0.20 ms without the tile); 0 without CUDA,
 * a device, or room.  Can't fail. */
int pl_cuda_kron_block_fits(int local_rank, int64_t n_left, int nterms);
void pl_backend_destroy(pl_backend **be);

/* ---- operator -------------------------------------------------------- */
typedef struct pl_op pl_op; /* opaque: local pJDS + remote part + halo plan */

typedef struct pl_op_info {
    int64_t n_global;      /* rows of the matrix                        */
    int64_t row0;          /* first global row of this rank's block     */
    int32_t n_local;       /* rows of this rank                         */
    int32_t n_halo;        /* remote x entries this rank receives       */
    int64_t nnz_local;     /* non-zeros of this rank                    */
    int64_t nent_local;    /* stored entries incl. padding              */
    size_t device_bytes;   /* matrix bytes in backend memory            */
    double norm_estimate;  /* global max row sum |a_ij| (>= ||A||_2)    */
    int exchange;          /* exchange mode in use (PL_EXCHANGE_*; task  */
                           /* falls back to overlap without MPI threads) */
    int n_neighbors;       /* ranks this rank receives from or sends to  */
    int64_t n_send;        /* x entries this rank sends per apply        */
    int64_t sort_window;   /* [spmv] sort_window in use: auto resolved   */
                           /* (pl_sort_window_resolve), 0 = all rows     */
    int transport;         /* halo transport in use: PL_TRANSPORT_MPI,   */
                           /* _NCCL or _IPC                              */
    /* the local part's format (op_format.c) */
    int format;            /* PL_FORMAT_PJDS, _COMPRESSED or _MATRIX_FREE */
    int64_t cmp_nval, cmp_noff; /* distinct values / offsets counted (max */
                           /* over ranks; lower bounds where the count   */
                           /* stopped: format_note says why)             */
    int cmp_vbits, cmp_obits;   /* id bits (compressed: in use)           */
    double bytes_per_entry; /* local matrix bytes per stored entry       */
    char format_note[160]; /* why this format ("" when configured)       */
} pl_op_info;

/* [spmv] sort_window = auto (PL_SORT_WINDOW_AUTO, the default): the window
 * of each backend (pl_backend.sort_window_auto; measurements:
 * spmv/sort_window.c).  cuda: 65520 rows = 78 lcm(1..8), the windowed sort
 * the H100 bench measured fastest, and a multiple of every run length b of
 * the CUDA block mode, so its windows never cut a block row apart; cpu:
 * 8192 rows (the best or near it on the 16-core host; on the 2-core
 * development VM no sort was faster: sort_window.c).  */
#define PL_SORT_WINDOW_AUTO_CUDA 65520
#define PL_SORT_WINDOW_AUTO_CPU 8192
/* The window in use for a configured sort_window on backend be:
 * PL_SORT_WINDOW_AUTO gives be->sort_window_auto (be NULL or without one:
 * PL_SORT_WINDOW_AUTO_CPU), any other value (0 = all rows, or sigma >= 1)
 * is returned as given.  A window of at least a rank's row count sorts all
 * its rows.  Pure; can't fail. */
int64_t pl_sort_window_resolve(int64_t sort_window, const pl_backend *be);

/* Build the operator from this rank's CSR row block (global columns):
 * permute once into pJDS (chunk_height, sort_window), split local/remote
 * columns, plan the halo, upload to the backend.  Collective over comm.
 * The CSR block can be freed afterwards.
 * Rows are sorted by the length of their local part (the
 * columns this rank owns); the blocks of the ranks must be contiguous and in
 * rank order.  Failure is collective: if any rank fails, every rank returns
 * an error (PL_ERR_INPUT for a column outside [0, N) or a bad option). */
int pl_op_create(const pl_csr *rows, const pl_op_options *opt, pl_backend *be, MPI_Comm comm, pl_op **op);
/* The operator of a Kronecker sum (pl_kron.h; [spmv] format =
 * matrix_free): no stored matrix, the backend's kron_* kernels apply it
 * from a copy of the tables (k may be freed afterwards).  Collective over
 * comm.  PL_ERR_INPUT when the backend has no matrix-free kernels (or,
 * on several ranks, no kron_rem_* slots) or there are more ranks than left
 * rows, PL_ERR_ARG when pl_kron_check fails.  Several ranks: the split of
 * opt->kron_split below (LEFT: op_kron_dist.c, RIGHT: op_kron_right.c,
 * AUTO: pl_kron_split_choose), every rank given the same whole tables.
 * LEFT: rows in their original order, rank q holds rows [row0, row0 +
 * n_local) = [L_q n_right, L_q+1 n_right), pl_op_global_index is row0 + i; info:
 * format = PL_FORMAT_MATRIX_FREE, nnz_local = the non-zeros of the rows of
 * the matrix it stands for (op_kron.c), n_halo / n_send as pl_kron_halo,
 * device_bytes = the tables (+ remote part and halo buffers),
 * norm_estimate = pl_kron_norm_bound.
 * pl_op_apply and pl_op_apply_queued work as for a stored matrix; the block
 * products and pl_op_refill return PL_ERR_NOTSUP (not yet). */
int pl_op_create_kron(const pl_kron *k, const pl_op_options *opt, pl_backend *be, MPI_Comm comm, pl_op **op);
/* The RIGHT split (opt->kron_split = PL_KRON_SPLIT_RIGHT, op_kron_right.c):
 * rank q holds the rows l n_right + r of every left row l and its right
 * rows r in [R_q, R_q+1), locally ordered i = l (R_q+1 - R_q) + (r - R_q):
 * pl_op_global_index gives l n_right + r, which is not one contiguous
 * block (row0 = R_q); pl_op_to_original below moves vectors into
 * contiguous blocks.  AUTO: the split of pl_kron_split_choose. */
/* How a matrix-free operator is split over ranks (pl_kron_halo):
 * LEFT: rank q owns the left rows (electron configurations) [L_q, L_q+1)
 * with all right rows, i.e. the contiguous global rows [L_q n_right,
 * L_q+1 n_right); the phonon terms are local, the hopping A needs whole
 * phonon rows x[l', :] of the remote left rows l' it references.  RIGHT:
 * rank q owns the right rows [R_q, R_q+1) of every left row; A is local, the
 * right factors' columns outside the range need whole electron columns
 * x[:, r'] (op_kron_right.c; opt->kron_split picks).  Both cut by rows:
 * L_q = floor(n_left q / P), R_q = floor(n_right q / P). */
enum pl_kron_split { PL_KRON_SPLIT_LEFT = 0, PL_KRON_SPLIT_RIGHT = 1, PL_KRON_SPLIT_AUTO = 2 };
typedef struct pl_kron_halo_info {
    int64_t rows;          /* rows of the rank (n_local)                    */
    int64_t halo_lines;    /* remote left rows (LEFT) / right rows (RIGHT)  */
    int64_t halo_values;   /* x entries it receives per product (8 B each)  */
    int64_t send_values;   /* x entries it sends per product                */
    int neighbors;         /* ranks it receives from                        */
} pl_kron_halo_info;
/* The halo of each of nranks ranks (out[nranks]) under split, from the
 * tables alone (no MPI, no operator): what pl_op_create_kron's exchange
 * moves for LEFT (n_halo = halo_values, n_send = send_values of
 * pl_op_get_info).  O(nnz(A) + n_left nranks) for LEFT, O(n_right nterms +
 * n_right nranks) for RIGHT.  PL_ERR_ARG for bad tables or nranks < 1 (a
 * rank without rows is counted with zeros), PL_ERR_MEM. */
int pl_kron_halo(const pl_kron *k, int nranks, int split, pl_kron_halo_info *out);
/* The split with the smaller largest-rank halo (halo_values of
 * pl_kron_halo, max over the ranks) on nranks ranks into *split; LEFT on
 * a tie, on one rank, and where the RIGHT split cannot run (fewer right
 * rows than ranks, a rank's rows beyond int32).  The figures of both into
 * left_max, right_max (values; may be NULL).  The same answer on every
 * rank for the same tables (no MPI).  PL_ERR_ARG, PL_ERR_MEM. */
int pl_kron_split_choose(const pl_kron *k, int nranks, int *split, int64_t *left_max, int64_t *right_max);
/* The split of a matrix-free operator on several ranks (PL_KRON_SPLIT_LEFT
 * or _RIGHT); -1 for any other operator (stored, or one rank). */
int pl_op_kron_split(const pl_op *op);
/* The contiguous block of original rows [*row0, *row0 + *n) that this rank
 * holds after pl_op_to_original: the operator's own block (row0, n_local)
 * where its rows are one contiguous block (every operator but the RIGHT
 * split), else the block of the LEFT split (L_q n_right, (L_q+1 - L_q)
 * n_right).  Can't fail. */
void pl_op_orig_block(const pl_op *op, int64_t *row0, int64_t *n);
/* Host vectors between the operator's local order and the contiguous
 * original blocks of pl_op_orig_block: to: out[v ldo + g - row0] = in[v ldi
 * + p] for g = pl_op_global_index[p] (a local scatter, or for the RIGHT
 * split one all-to-all of the indices and one of the values per vector);
 * from: the inverse.  Collective over the operator's communicator for the
 * RIGHT split (every rank calls, with its own n_local and block).
 * PL_ERR_MEM, PL_ERR_MPI. */
int pl_op_to_original(pl_op *op, int nvec, const double *in, size_t ldi, double *out, size_t ldo);
int pl_op_from_original(pl_op *op, int nvec, const double *in, size_t ldi, double *out, size_t ldo);
/* Replace a matrix-free operator's tables by k's (the same number of rows:
 * a sweep point that changes only values; the basis, the global index and
 * vectors made for the operator stay valid).  PL_ERR_ARG when op is not
 * matrix-free or the sizes differ, or (several ranks) when A references a
 * remote left row outside the operator's halo; on failure the old tables
 * stay.  Collective on several ranks (agrees on failure). */
int pl_op_kron_update(pl_op *op, const pl_kron *k);
/* A shell operator (op_shell.c): y = fn(arg, x) on this rank's rows
 * [row0, row0 + n_local) of the original order (global index row0 + i, no
 * permutation), x and y in be's memory.  fn is called by pl_op_apply and
 * pl_op_apply_queued on every rank (it may communicate; collective); the
 * block products return PL_ERR_NOTSUP.  norm_estimate: the operator's norm
 * where known (Lanczos' tolerance scale), else 0.  The spectral
 * transformations of st/ are such operators. */
typedef int (*pl_op_shell_fn)(void *arg, const double *x, double *y);
int pl_op_create_shell(MPI_Comm comm, pl_backend *be, int64_t n_global, int64_t row0, int64_t n_local,
                       pl_op_shell_fn fn, void *arg, double norm_estimate, pl_op **op);
void pl_op_destroy(pl_op **op);
/* y = A x; x and y are n_local vectors in backend memory, permuted basis.
 * Collective over the operator's communicator (halo exchange).
 * x and y must not overlap.  Returns after the backend is synchronised. */
int pl_op_apply(pl_op *op, const double *x, double *y);
/* As pl_op_apply, but on one rank (no halo) and without detailed timing it
 * only queues the kernels: no synchronisation, no timing sample (the
 * apply counts in n_apply; its seconds are launch time only).  The
 * caller's next reduction or sync waits for it.  With neighbours it is
 * pl_op_apply.  Lanczos' partial-reorthogonalisation steps use it (one
 * synchronisation per step). */
int pl_op_apply_queued(pl_op *op, const double *x, double *y);
/* Y = A X for R vectors (1 <= R <= PL_SPMM_RMAX) in row-major blocks of
 * n_local rows (X + i R holds the R values of permuted row i): one SpMMV of
 * the local part, one halo exchange of R values per halo row for the whole
 * block (every exchange mode; transport mpi and nccl as configured, ipc
 * through host-staged MPI: its mapped buffers hold one vector), one SpMMV of
 * the remote part.  Collective.  X and Y must not overlap.  Returns after
 * the backend is synchronised.  Counts R applies in the counters' n_apply;
 * the time samples are not taken (the median is the single SpMV's).
 * PL_ERR_NOTSUP when the backend has no spmm. */
int pl_op_apply_block(pl_op *op, int R, const double *X, double *Y);
/* The block width (1..want) worth using for this operator's block
 * products: where its backend's block product of the Kronecker tables
 * costs less per vector in narrower blocks (be->kron_block_width), that
 * width, else want.  ChebFD asks it for its blocks. */
int pl_op_block_width(const pl_op *op, int want);
/* The augmented block product of the kernel polynomial method:
 * Y = alpha A X + gamma X + beta Y and, when dots != NULL, the global
 * column sums dots[c] = <X_c, X_c>, dots[R + c] = <Y_c, X_c> (after the
 * update), c < R.  One rank with a backend spmm_aug: one fused pass;
 * otherwise pl_op_apply_block into W (n_local x R scratch, required then),
 * the update and pl_vec_bdot.  Collective. */
int pl_op_apply_block_aug(pl_op *op, int R, double alpha, double gamma, double beta, const double *X, double *Y,
                          double *W, double *dots);
/* The Lanczos local step fused into the product, where the backend fuses
 * it (one rank, a matrix-free operator, be->kron_lz covers its kernel and
 * be->lz_step exists, not reproducible: the fused sums depend on the
 * kernel's blocks): y = A x - beta z with its five sums into d_dots
 * (backend memory, PL_KRON_LZ_DOTS doubles), then be->lz_step from them:
 * unless declined, y = (y - alpha x) / b and out[PL_LZ_OUT:PL_LZ_OUT+ka]
 * = A^T y (A: the ka columns at A, ld), with one host round trip; out as
 * be->lz_step's (lz_coef.h).  Otherwise PL_ERR_NOTSUP without a message
 * and nothing done: compose it (pl_op_apply_queued, pl_vec_gram).  Counts
 * one apply. */
int pl_op_apply_lz(pl_op *op, int ka, const double *A, size_t ld, const double *x, const double *z, double beta,
                   double *y, double *d_dots, double *out);
/* The Chebyshev filter step: Y = alpha A X + gamma X + beta Y and, with
 * Acc != NULL, Acc += c1 X + c2 Y (after the update), in one pass of the
 * backend's spmm_cheb.  Only where that fuses it (one rank, a stored
 * local matrix without row_map, a covered R); otherwise PL_ERR_NOTSUP
 * without a message and nothing done: compose it with
 * pl_op_apply_block_aug and vector updates.  Asynchronous. */
int pl_op_apply_block_cheb(pl_op *op, int R, double alpha, double gamma, double beta, const double *X, double *Y,
                           double c1, double c2, double *Acc);
void pl_op_get_info(const pl_op *op, pl_op_info *info);
/* Value refill for sweeps that change only matrix values (README,
 * "Sweeps").  When the CSR block given to pl_op_create has value terms
 * (rows->nterms = K > 0, pl_csr.h), the operator also keeps each term's
 * values in backend memory in its own layout (K more value arrays of the
 * local and the remote part; counted in device_bytes) and, on the host,
 * each term's absolute row sums.  pl_op_refill sets the matrix to
 * sum_k coef[k] A_k in place, on the backend (vector ops on the stored
 * values: no entries cross the host/device link, the permutation, layout
 * and halo plan stay), and the norm estimate to the max over rows of
 * sum_k |coef[k]| rowsum_i(|A_k|) (max over ranks; it equals the row-sum
 * norm when the terms' entries in a row do not cancel).  Collective.
 * PL_ERR_ARG when the operator keeps no terms or nterms differs;
 * PL_ERR_NOTSUP when the backend has no mat_values. */
int pl_op_refill(pl_op *op, int nterms, const double *coef);
/* Value terms the operator keeps (0: none). */
int pl_op_nterms(const pl_op *op);
MPI_Comm pl_op_comm(const pl_op *op);
pl_backend *pl_op_backend(const pl_op *op);
/* perm[i] = original global row of permuted local row i (host array owned
 * by the operator, n_local entries). */
const int64_t *pl_op_global_index(const pl_op *op);
/* Counters: SpMVs applied, seconds in apply (host wall clock, synchronised). */
void pl_op_counters(const pl_op *op, int64_t *n_apply, double *seconds);
/* Split of the apply time (for `bench`), this rank, summed over applies:
 * t_local/t_remote = local/remote pJDS SpMV, t_comm = exposed communication
 * (gather of the send buffer, host<->device staging, MPI time not hidden
 * behind the local part).  The split is exact only with detailed timing on
 * (pl_op_set_detailed_timing), which synchronises the backend between
 * phases and so removes GPU/host overlap; off (default), t_local and
 * t_remote measure launch time only on asynchronous backends.
 * t_total == the seconds of pl_op_counters.  Can't fail. */
typedef struct pl_op_timings {
    int64_t n_apply;
    double t_total, t_local, t_remote, t_comm;
    double bytes_sent;     /* halo bytes this rank sent (MPI)            */
    double t_first, t_median, t_max; /* seconds of single applies (0 if none;
                                        median/max 0 if out of memory)  */
} pl_op_timings;
void pl_op_timings_get(const pl_op *op, pl_op_timings *t);
void pl_op_set_detailed_timing(pl_op *op, int on);
/* Zero the counters and timings.  Can't fail. */
void pl_op_reset_counters(pl_op *op);

/* ---- global vector operations (backend op + one MPI_Allreduce) -------- */
/* With pl_op_options.reproducible every one below sums its products exactly
 * (op_repro.c) instead: the same bits on any number of ranks and threads. */
int pl_op_reproducible(const pl_op *op);
/* out[q] = the sum over the ranks of comm of acc[q] (exact accumulators,
 * core/pl_exsum.h; acc is normalised in place), rounded once: one
 * MPI_Allreduce of their int64 limbs.  Collective.  PL_ERR_MEM, PL_ERR_MPI. */
int pl_exsum_allreduce(MPI_Comm comm, size_t n, pl_exsum *acc, double *out);
int pl_vec_dot(pl_op *op, const double *x, const double *y, double *r);
int pl_vec_nrm2(pl_op *op, const double *x, double *r);
int pl_vec_gemv_t(pl_op *op, int k, const double *V, size_t ld, const double *w, double *h);
/* C = V[:, 0:k]^T W[:, 0:m] (k x m, column-major, ld k, host), global: the
 * backend's gemm_t (else m gemv_t) and one MPI_Allreduce.  Collective. */
int pl_vec_gemm_t(pl_op *op, int k, int m, const double *V, size_t ld, const double *W, size_t ldw, double *C);
/* G = V^T V (k x k, column-major, host) of k <= PL_GRAM_KMAX columns of V,
 * global: one reduction (be->gram, else k gemv_t calls).  Collective. */
int pl_vec_gram(pl_op *op, int k, const double *V, size_t ld, double *G);
/* r[c] = sum over all rows of X[i R + c] Y[i R + c], c < R (row-major
 * blocks of n_local rows; be->bdot, one MPI_Allreduce).  Collective. */
int pl_vec_bdot(pl_op *op, int R, const double *X, const double *Y, double *r);
/* The backend's fused cgs_step (w -= V h_in; h_out = V^T w, h_out[k] = w.w)
 * with global sums; PL_ERR_NOTSUP when the backend has none. */
int pl_vec_cgs_step(pl_op *op, int k, const double *V, size_t ld, double *w, const double *h_in, double *h_out);
/* The backend's restart_step with global sums (k + 2 values, one
 * reduction), composed from basis_update, copies and pl_vec_cgs_step where
 * the backend has none or the sums must be reproducible.
 * V has off + sz + 2 columns.  Collective. */
int pl_vec_restart_step(pl_op *op, int off, int sz, int kk, double *V, size_t ld, const double *Y, int ldy,
                        const double *h_in, double *h_out);
/* The backend's sel_gram with global sums (ka + 9 values, one reduction);
 * PL_ERR_NOTSUP when the backend has none.  Collective. */
int pl_vec_sel_gram(pl_op *op, int ka, const double *A, const double *B, size_t ld, double *h);

/* ---- row-block partition (collective helpers) -------------------------- */
/* Split rows [0, N) into `size` contiguous blocks with about equal sums of
 * row lengths.  `len_of_block` gives the lengths of a row range (the
 * generator or the file); each rank computes the lengths of an equal share
 * of rows, prefix sums are combined by MPI, so no rank holds N lengths.
 * bounds[size + 1] out (bounds[0] = 0, bounds[size] = N). */
typedef int (*pl_row_lengths_fn)(void *arg, int64_t r0, int64_t r1, int32_t *len);
int pl_partition_by_nnz(int64_t N, pl_row_lengths_fn fn, void *arg, MPI_Comm comm, int64_t *bounds);

#endif
