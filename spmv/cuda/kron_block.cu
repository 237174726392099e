/* kron_block.cu — block products of the CUDA backend's matrix-free
 * operator (be->kron_spmm, kron_spmm_aug; spmv.h; issue 26): Y = H X and
 * the fused KPM step Y = alpha H X + gamma X + beta Y with the column dots,
 * for R <= PL_SPMM_RMAX vectors in row-major blocks (the R values of row i
 * at X + i R), H a Kronecker sum (pl_kron.h) from kron.cu's device tables.
 *
 * Thread mapping, as the stored SpMMV (spmm_kernels.cu): T = min(32, R
 * rounded up to a power of two) threads share a row (l, r) = l n_right + r;
 * thread t of the row owns the columns t and t + T (NC <= 2 accumulators),
 * so the T threads read R consecutive doubles of each row of X they gather
 * (coalesced) and every table entry of the row (dl[l], dr[r], each active
 * coupling (m, c) of left row l with lo/hi/lo_val/hi_val[r, m], each entry
 * of A's row l) at one address for all R columns (a broadcast).  The 256 /
 * T rows of a block are consecutive r of mostly one l: their couplings and
 * A's row are the same addresses too, and x[l, lo] of neighbouring r are
 * neighbours.  Grid-stride over the rows, the grid capped at KB_BLOCKS_PER_SM
 * blocks per multiprocessor, so the aug step's per-block partial dots stay
 * small (grid x 2 R doubles).
 *
 * Each column is summed in pl_kron.h's order with explicitly rounded
 * products and sums (__dmul_rn, __dadd_rn: no FMA contraction), the
 * couplings from the per-left-row lists of the non-zero c (kron.cu's
 * act_ptr/act_m/act_c, the formula's skip), so each column of Y equals
 * kron_apply's y and the CPU block kernel's (cpu_kron_block.c) bit for bit;
 * the aug step forms ((alpha s) + (gamma x)) + (beta y) the same way, so its
 * Y is the CPU's bit for bit too (its dots are summed in another order).
 * The dots: per thread over its rows, across the rows of a warp by
 * shuffles, over the 8 warps in shared memory, per block into d_aug, then
 * one block per column adds the blocks (kb_sum_cols).  kron_spmm_aug of
 * one vector on an operator whose kernel is variant 5 runs that kernel's
 * aug form instead (kron_hop.cu: the same values, its own dots order), and
 * kron_spmm of one vector its product; an even R up to 8 on variant 5 runs
 * kron_hop_block.cu's kernel (x's tile staged for column groups of 2 or 4:
 * the same values, the dots per tile), these kernels the rest. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "kron_impl.h"

#define KB_THREADS 256
#define KB_WARPS (KB_THREADS / 32)
#define KB_BLOCKS_PER_SM 16

namespace {

struct kb_args {
    int64_t n_right, nrows;
    int nterms, R;
    double shift, alpha, gamma, beta;
    const int64_t *__restrict__ a_ptr;
    const int32_t *__restrict__ a_col;
    const double *__restrict__ a_val, *__restrict__ dl, *__restrict__ dr;
    const int32_t *__restrict__ lo, *__restrict__ hi;
    const double *__restrict__ lo_val, *__restrict__ hi_val;
    const int64_t *__restrict__ act_ptr;
    const int32_t *__restrict__ act_m;
    const double *__restrict__ act_c;
    const double *__restrict__ X;
    double *__restrict__ Y;
};

/* acc[k] += f x[k T + lane] of the R values at xp (columns < R only). */
template <int T, int NC>
__device__ __forceinline__ void kb_axpy(double *acc, double f, const double *__restrict__ xp, int lane, int R)
{
#pragma unroll
    for (int k = 0; k < NC; k++) {
        const int c = lane + k * T;
        if (c < R) acc[k] = __dadd_rn(acc[k], __dmul_rn(f, __ldg(xp + c)));
    }
}

/* The thread's columns of row (l, r) of H X into acc. */
template <int T, int NC>
__device__ __forceinline__ void kb_row(const kb_args &a, int64_t l, int64_t r, int lane, double *acc)
{
    const int64_t nr = a.n_right, nt = a.nterms;
    const int R = a.R;
    const double *xl = a.X + l * nr * R; /* row (l, 0) */
    const double d = __dadd_rn(__dadd_rn(__ldg(a.dl + l), __ldg(a.dr + r)), a.shift);
    const double *xo = xl + r * R;
#pragma unroll
    for (int k = 0; k < NC; k++) {
        const int c = lane + k * T;
        acc[k] = c < R ? __dmul_rn(d, __ldg(xo + c)) : 0.0;
    }
    const int64_t i1 = __ldg(a.act_ptr + l + 1);
    for (int64_t i = __ldg(a.act_ptr + l); i < i1; i++) {
        const int64_t j = r * nt + __ldg(a.act_m + i);
        const double c = __ldg(a.act_c + i);
        const int32_t lo = __ldg(a.lo + j), hi = __ldg(a.hi + j);
        if (lo >= 0) kb_axpy<T, NC>(acc, __dmul_rn(c, __ldg(a.lo_val + j)), xl + (int64_t)lo * R, lane, R);
        if (hi >= 0) kb_axpy<T, NC>(acc, __dmul_rn(c, __ldg(a.hi_val + j)), xl + (int64_t)hi * R, lane, R);
    }
    const int64_t j1 = __ldg(a.a_ptr + l + 1);
    for (int64_t j = __ldg(a.a_ptr + l); j < j1; j++)
        kb_axpy<T, NC>(acc, __ldg(a.a_val + j), a.X + ((int64_t)__ldg(a.a_col + j) * nr + r) * R, lane, R);
}

/* The block's column dots (the thread's sums d1 of x.x, d2 of y.x) into
 * part[blockIdx.x][2 R]: the lanes with the same lane % T hold the same
 * columns; shuffles over the rows of a warp, then the warps in shared
 * memory.  Every thread of the block calls it. */
template <int T, int NC>
__device__ __forceinline__ void kb_dots(double *d1, double *d2, int R, double *__restrict__ part)
{
#pragma unroll
    for (int k = 0; k < NC; k++) {
#pragma unroll
        for (int off = 16; off >= T; off >>= 1) {
            d1[k] += __shfl_xor_sync(0xffffffffu, d1[k], off);
            d2[k] += __shfl_xor_sync(0xffffffffu, d2[k], off);
        }
    }
    __shared__ double sh[KB_WARPS][2 * PL_SPMM_RMAX];
    const int wl = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (wl < T) {
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int c = wl + k * T;
            if (c < R) {
                sh[warp][c] = d1[k];
                sh[warp][R + c] = d2[k];
            }
        }
    }
    __syncthreads();
    if (threadIdx.x < 2 * R) {
        double s = 0.0;
#pragma unroll
        for (int w = 0; w < KB_WARPS; w++) s += sh[w][threadIdx.x];
        part[(int64_t)blockIdx.x * 2 * R + threadIdx.x] = s;
    }
}

/* T threads per row, grid-stride; AUG: the KPM step and the block's column
 * dots into part[blockIdx.x][2 R]. */
template <int T, int NC, bool AUG>
__global__ void __launch_bounds__(KB_THREADS) kb_kernel(const kb_args a, double *__restrict__ part)
{
    const int lane = threadIdx.x % T, R = a.R;
    const int64_t stride = (int64_t)gridDim.x * (KB_THREADS / T);
    double d1[NC], d2[NC];
#pragma unroll
    for (int k = 0; k < NC; k++) d1[k] = d2[k] = 0.0;
    for (int64_t row = (int64_t)blockIdx.x * (KB_THREADS / T) + threadIdx.x / T; row < a.nrows; row += stride) {
        const int64_t l = row / a.n_right, r = row - l * a.n_right;
        double acc[NC];
        kb_row<T, NC>(a, l, r, lane, acc);
        double *yo = a.Y + row * R;
        const double *xo = a.X + row * R;
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int c = lane + k * T;
            if (c >= R) continue;
            if (!AUG) {
                yo[c] = acc[k];
                continue;
            }
            const double x = __ldg(xo + c);
            const double y = __dadd_rn(__dadd_rn(__dmul_rn(a.alpha, acc[k]), __dmul_rn(a.gamma, x)),
                                       __dmul_rn(a.beta, yo[c]));
            yo[c] = y;
            d1[k] = __dadd_rn(d1[k], __dmul_rn(x, x));
            d2[k] = __dadd_rn(d2[k], __dmul_rn(y, x));
        }
    }
    if (AUG) kb_dots<T, NC>(d1, d2, R, part);
}

/* out[c] = sum_b part[b][c], c < m (one block per column) */
__global__ void __launch_bounds__(KB_THREADS) kb_sum_cols(int64_t nb, int m, const double *__restrict__ part,
                                                          double *__restrict__ out)
{
    __shared__ double sh[KB_THREADS];
    const int c = blockIdx.x;
    double s = 0.0;
    for (int64_t b = threadIdx.x; b < nb; b += KB_THREADS) s += part[b * m + c];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int st = KB_THREADS / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) sh[threadIdx.x] += sh[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[c] = sh[0];
}

/* Blocks of the grid for T threads per row. */
static unsigned kb_grid(const pl_cuda_ctx *cx, int64_t nrows, int T)
{
    const int64_t need = (nrows * T + KB_THREADS - 1) / KB_THREADS;
    const int64_t cap = (int64_t)(cx->nsm > 0 ? cx->nsm : 132) * KB_BLOCKS_PER_SM;
    return (unsigned)(need < cap ? need : cap);
}

template <int T, int NC>
static int kb_launch(pl_cuda_ctx *cx, const kb_args &a, bool aug, double *part, unsigned grid)
{
    if (aug) kb_kernel<T, NC, true><<<grid, KB_THREADS, 0, cx->stream>>>(a, part);
    else kb_kernel<T, NC, false><<<grid, KB_THREADS, 0, cx->stream>>>(a, part);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* The kernel for R (T, NC as spmm_kernels.cu's one-column-per-thread kernel). */
static int kb_dispatch(pl_cuda_ctx *cx, const kb_args &a, bool aug, double *part, unsigned grid)
{
    const int R = a.R;
    if (R == 1) return kb_launch<1, 1>(cx, a, aug, part, grid);
    if (R == 2) return kb_launch<2, 1>(cx, a, aug, part, grid);
    if (R <= 4) return kb_launch<4, 1>(cx, a, aug, part, grid);
    if (R <= 8) return kb_launch<8, 1>(cx, a, aug, part, grid);
    if (R <= 16) return kb_launch<16, 1>(cx, a, aug, part, grid);
    if (R <= 32) return kb_launch<32, 1>(cx, a, aug, part, grid);
    return kb_launch<32, 2>(cx, a, aug, part, grid);
}

static int kb_threads(int R) { return R == 1 ? 1 : R == 2 ? 2 : R <= 4 ? 4 : R <= 8 ? 8 : R <= 16 ? 16 : 32; }

/* The arguments of m, X, Y; PL_ERR_ARG for a bad R, NULL or overlap. */
static int kb_setup(const void *mat, int R, const double *X, double *Y, kb_args *a, const char *what)
{
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    PL_CHECK(m && X && Y, PL_ERR_ARG, "%s: NULL argument", what);
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "%s: R = %d outside 1..%d", what, R, PL_SPMM_RMAX);
    const int64_t n = m->n_left * m->n_right;
    const uintptr_t xa = (uintptr_t)X, ya = (uintptr_t)Y, nb = (uintptr_t)(n * R) * sizeof *X;
    PL_CHECK(xa + nb <= ya || ya + nb <= xa, PL_ERR_ARG, "%s: X and Y overlap", what);
    memset(a, 0, sizeof *a);
    a->n_right = m->n_right;
    a->nrows = n;
    a->nterms = m->nterms;
    a->R = R;
    a->shift = m->shift;
    a->a_ptr = m->a_ptr;
    a->a_col = m->a_col;
    a->a_val = m->a_val;
    a->dl = m->dl;
    a->dr = m->dr;
    a->lo = m->lo;
    a->hi = m->hi;
    a->lo_val = m->lo_val;
    a->hi_val = m->hi_val;
    a->act_ptr = m->act_ptr;
    a->act_m = m->act_m;
    a->act_c = m->act_c;
    a->X = X;
    a->Y = Y;
    return PL_OK;
}

} // namespace

extern "C" int pl_cuda_kron_spmm(pl_backend *be, const void *mat, int R, const double *X, double *Y)
{
    PL_CHECK_CUDA_BE(be);
    kb_args a;
    PL_CALL(kb_setup(mat, R, X, Y, &a, "kron_spmm"));
    if (a.nrows == 0) return PL_OK;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    if (R == 1 && m->variant == 5) { /* one vector: the single product's kernel */
        kr_args k;
        pl_kr_args_of(m, X, Y, &k);
        return pl_kr_launch_hop(cx, m, &k);
    }
    const int rb = pl_kr_hb_width(m, R, X, Y);
    if (rb > 0) { /* variant 5's tile for column groups of rb (kron_hop_block.cu) */
        kr_args k;
        pl_kr_args_of(m, X, Y, &k);
        return pl_kr_launch_hb(cx, m, R, rb, &k, 0);
    }
    PL_CALL(kb_dispatch(cx, a, false, NULL, kb_grid(cx, a.nrows, kb_threads(R))));
    return PL_OK;
}

extern "C" int pl_cuda_kron_spmm_aug(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                                     const double *X, double *Y, double *h_dots)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(h_dots, PL_ERR_ARG, "kron_spmm_aug: NULL dots");
    kb_args a;
    PL_CALL(kb_setup(mat, R, X, Y, &a, "kron_spmm_aug"));
    a.alpha = alpha;
    a.gamma = gamma;
    a.beta = beta;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    cudaStream_t s = cx->stream;
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    /* one vector on variant 5 (the single product's kernel, faster than
     * this file's R = 1 mapping): its aug form (kron_hop.cu), one part per tile */
    const bool hop = R == 1 && m->variant == 5 && a.nrows > 0;
    /* even R on variant 5: its tile for column groups of rb (kron_hop_block.cu), one part per tile */
    const int rb = a.nrows > 0 ? pl_kr_hb_width(m, R, X, Y) : 0;
    const unsigned grid = a.nrows > 0 && !hop && rb == 0 ? kb_grid(cx, a.nrows, kb_threads(R)) : 0;
    /* the per-block sums in the context's buffer of spmm_aug (same stream;
     * both return after it finished), grown when needed */
    const size_t nb = hop ? (size_t)pl_kr_hop_tiles(m) : rb > 0 ? (size_t)pl_kr_hb_tiles(m, rb) : grid > 0 ? grid : 1,
                 need = nb * 2 * (size_t)R + 2 * (size_t)R;
    PL_CALL(pl_cuda_aug_buffers(cx, need));
    double *part = cx->d_aug, *d_out = cx->d_aug + nb * 2 * (size_t)R;
    kr_args k; /* variant 5's arguments (hop, rb) */
    pl_kr_args_of(m, X, Y, &k);
    k.alpha = alpha;
    k.gamma = gamma;
    k.beta = beta;
    k.part = part;
    if (hop) {
        PL_CALL(pl_kr_launch_hop_aug(cx, m, &k, d_out));
    } else if (rb > 0) {
        PL_CALL(pl_kr_launch_hb(cx, m, R, rb, &k, 1));
        kb_sum_cols<<<2 * R, KB_THREADS, 0, s>>>((int64_t)nb, 2 * R, part, d_out);
        PL_CUDA_LAUNCH();
    } else if (grid > 0) {
        PL_CALL(kb_dispatch(cx, a, true, part, grid));
        kb_sum_cols<<<2 * R, KB_THREADS, 0, s>>>((int64_t)grid, 2 * R, part, d_out);
        PL_CUDA_LAUNCH();
    } else {
        PL_CUDA(cudaMemsetAsync(d_out, 0, 2 * (size_t)R * sizeof(double), s));
    }
    PL_CUDA(cudaMemcpyAsync(cx->h_aug_pin, d_out, 2 * (size_t)R * sizeof(double), cudaMemcpyDeviceToHost, s));
    PL_CUDA(cudaStreamSynchronize(s));
    memcpy(h_dots, cx->h_aug_pin, 2 * (size_t)R * sizeof(double));
    return PL_OK;
}

/* The common part of kron_lz and kron_lz_in: variant 5's arguments for
 * x (NULL: lzin) and y, z, the tiles' partial sums in the context's buffer
 * (same stream); *cxp the context.  PL_ERR_NOTSUP off variant 5. */
static int kr_lz_args(pl_backend *be, const void *mat, const double *x, const double *z, double *y, kr_args *k,
                      pl_cuda_ctx **cxp)
{
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    if (m->variant != 5 || m->n_left * m->n_right == 0) return PL_ERR_NOTSUP;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CALL(pl_cuda_aug_buffers(cx, (size_t)pl_kr_hop_tiles(m) * PL_KRON_LZ_DOTS));
    pl_kr_args_of(m, x, y, k);
    k->z = z;
    k->part = cx->d_aug;
    *cxp = cx;
    return PL_OK;
}

/* be->kron_lz (spmv.h): variant 5 only, else PL_ERR_NOTSUP without a
 * message (the caller composes the step); the sums into d_dots (device),
 * asynchronous. */
extern "C" int pl_cuda_kron_lz(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                               double *d_dots)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(d_dots && x && z && y, PL_ERR_ARG, "kron_lz: NULL vector or sums");
    kr_args k;
    pl_cuda_ctx *cx = NULL;
    const int e = kr_lz_args(be, mat, x, z, y, &k, &cx);
    if (e != PL_OK) return e;
    k.beta = beta;
    return pl_kr_launch_hop_lz(cx, (const pl_cuda_kron *)mat, &k, d_dots);
}

/* pl_cuda_bench.h: the lzin mode of variant 5 (kron_timing's measurement
 * of the next lever), asynchronous; PL_ERR_NOTSUP off variant 5. */
extern "C" int pl_cuda_kron_lz_in(pl_backend *be, const void *mat, const double *w, const double *z,
                                  const double *dd_in, double beta_in, double *x_out, double *y, double *d_dots)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(w && z && dd_in && x_out && y && d_dots, PL_ERR_ARG, "kron_lz_in: NULL vector or sums");
    kr_args k;
    pl_cuda_ctx *cx = NULL;
    const int e = kr_lz_args(be, mat, NULL, z, y, &k, &cx);
    if (e != PL_OK) return e;
    k.w_in = w;
    k.x_out = x_out;
    k.dd_in = dd_in;
    k.beta_in = beta_in;
    return pl_kr_launch_hop_lzin(cx, (const pl_cuda_kron *)mat, &k, d_dots);
}
