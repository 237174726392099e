/* ts_restart.cu — the thick restart's basis update and the next cycle's
 * first Gram-Schmidt pass in one pass over the basis (spmv.h restart_step):
 *     V[:, off:k]  = V[:, off:off+sz] Y          (k = off + kk)
 *     V[:, k]      = V[:, off+sz]                (the restart vector v)
 *     V[:, k+1]    = x - V[:, 0:k+1] h           (x = V[:, off+sz+1] = A v)
 *     d_ts_h[0:k+1] = V[:, 0:k+1]^T V[:, k+1],  d_ts_h[k+1] = its norm^2.
 *
 * Method: one thread owns one row.  It reads the row's sz old columns in
 * batches of RS_JB loads and forms the kk kept values in registers exactly
 * as k_basis_update does (same fma order: the same bits), then loads the
 * off locked values, v and x, forms the correction t = sum_j V_ij h_j in
 * ascending j with fma as k_cgs_step does, stores the kk kept values, v
 * and x - t, and accumulates the k + 2 sums from the registers.  Every
 * load of a row precedes its stores and rows are private to a thread, so
 * the update is safe in place.  The sums are reduced as gemv_t's (block,
 * then the last block in block order): deterministic for a given grid,
 * which is the resident blocks of the device.  DRAM traffic 8 n (sz + off
 * + 2 read, kk + 2 written) against 8 n (sz + kk) for the update alone and
 * 8 n (off + kk + 3 + 2) more for the copy and cgs_step that it replaces. */
#include "ts_common.cuh"

#define RS_SZMAX 48 /* old columns: Y in shared memory, RS_SZMAX x MT */

/* the k + 2 running sums of a thread: in registers (SH = 0) or in its slots
 * of shared memory (SH = 1: fewer registers, more resident warps) */
template <int SH>
struct rs_acc {
    double *a;
    __device__ __forceinline__ double &operator[](int q) const { return SH ? a[q * TS_BS + threadIdx.x] : a[q]; }
};

template <int MT, int KL, int JB, int SH, int R>
static __device__ __forceinline__ void rs_row(double *V, int64_t ld, const double *ys, const double *hs, int off,
                                              int sz, int kk, int64_t i, rs_acc<SH> acc)
{
    double s[MT][R]; /* the kept values, as k_basis_update forms them */
    ts_combine<MT, JB, R>(V + (int64_t)off * ld + i, ld, ys, sz, s);
    double lk[KL > 0 ? KL : 1][R];
#pragma unroll
    for (int j = 0; j < KL; j++) {
        if (j < off) ld_cs<R>(V + (int64_t)j * ld + i, lk[j]);
        else
#pragma unroll
            for (int u = 0; u < R; u++) lk[j][u] = 0.0;
    }
    double vr[R], x[R];
    ld_cs<R>(V + (int64_t)(off + sz) * ld + i, vr);
    ld_cs<R>(V + (int64_t)(off + sz + 1) * ld + i, x);
    const int k = off + kk;
#pragma unroll
    for (int u = 0; u < R; u++) {
        double t = 0.0;
#pragma unroll
        for (int j = 0; j < KL; j++)
            if (j < off) t = fma(lk[j][u], hs[j], t);
#pragma unroll
        for (int c = 0; c < MT; c++)
            if (c < kk) t = fma(s[c][u], hs[off + c], t);
        t = fma(vr[u], hs[k], t);
        x[u] = x[u] - t; /* = cgs_step's w - t, rounded once */
    }
#pragma unroll
    for (int c = 0; c < MT; c++)
        if (c < kk) st_plain<R>(V + (int64_t)(off + c) * ld + i, s[c]);
    st_plain<R>(V + (int64_t)k * ld + i, vr);
    st_plain<R>(V + (int64_t)(k + 1) * ld + i, x);
#pragma unroll
    for (int u = 0; u < R; u++) {
#pragma unroll
        for (int j = 0; j < KL; j++)
            if (j < off) acc[j] = fma(lk[j][u], x[u], acc[j]);
#pragma unroll
        for (int c = 0; c < MT; c++)
            if (c < kk) acc[KL + c] = fma(s[c][u], x[u], acc[KL + c]);
        acc[KL + MT] = fma(vr[u], x[u], acc[KL + MT]);
        acc[KL + MT + 1] = fma(x[u], x[u], acc[KL + MT + 1]);
    }
}

template <int MT, int KL, int JB, int SH, int Y2>
__global__ void __launch_bounds__(TS_BS) k_restart_step(int64_t n, int off, int sz, int kk, double *V, int64_t ld,
                                                        const double *__restrict__ Y, int ldy, const ts_hvec hp,
                                                        double *__restrict__ part, unsigned int *__restrict__ ticket,
                                                        double *__restrict__ h)
{
    constexpr int NA = KL + MT + 2;
    __shared__ double ys[RS_SZMAX * MT];
    __shared__ double hs[PL_TS_KMAX];
    __shared__ double red[TS_WARPS][NA];
    extern __shared__ double accs[]; /* SH: NA x TS_BS */
    const int kr = (sz + JB - 1) / JB * JB; /* rows of ys read by the batches */
    for (int e = threadIdx.x; e < kr * MT; e += TS_BS) {
        const int j = e / MT, c = e - j * MT;
        ys[e] = (j < sz && c < kk) ? Y[j + (int64_t)c * ldy] : 0.0;
    }
    for (int e = threadIdx.x; e < PL_TS_KMAX; e += TS_BS) hs[e] = hp.h[e];
    const int64_t tid = (int64_t)blockIdx.x * TS_BS + threadIdx.x;
    const int64_t nth = (int64_t)gridDim.x * TS_BS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double areg[SH ? 1 : NA];
    rs_acc<SH> acc{SH ? accs : areg};
#pragma unroll
    for (int q = 0; q < NA; q++) acc[q] = 0.0;
    __syncthreads();
    const int64_t G = n / Y2; /* Y2: rows a thread takes at once (16-byte loads for 2) */
    for (int64_t g = tid; g < G; g += nth) rs_row<MT, KL, JB, SH, Y2>(V, ld, ys, hs, off, sz, kk, g * Y2, acc);
    if (Y2 == 2 && (n & 1) && tid == 0) rs_row<MT, KL, JB, SH, 1>(V, ld, ys, hs, off, sz, kk, n - 1, acc);
#pragma unroll
    for (int q = 0; q < NA; q++) {
        const double s = warp_sum(acc[q]);
        if (lane == 0) red[warp][q] = s;
    }
    __syncthreads();
    const int k = off + kk, nc = k + 2; /* partials per block: columns 0..k, then the norm */
    for (int c = threadIdx.x; c < nc; c += TS_BS) {
        const int q = c < off ? c : c < k ? KL + (c - off) : c == k ? KL + MT : KL + MT + 1;
        double s = 0.0;
#pragma unroll
        for (int w = 0; w < TS_WARPS; w++) s += red[w][q];
        part[(int64_t)blockIdx.x * nc + c] = s;
    }
    last_block_sum(part, nc, ticket, h);
}

/* The launch: one thread takes two rows with 16-byte loads where V allows
 * (Y2 = 2), else one; 24 loads of the old columns in flight; the sums in
 * the thread's slots of shared memory (SH = 1), which leaves registers for
 * the loads.  The variants measured (one H200, HMEp, docs/performance.md):
 * one row with the sums in registers 1,240 us a restart, one row with 24
 * loads and the sums in shared memory 591-726 us, two rows with 12 loads
 * 775 us, this one 658-698 us, against 795 us for k_basis_update and
 * k_cgs_step. */
template <int MT, int KL, int Y2>
static int launch_rs(pl_cuda_ctx *cx, int slot, int64_t n, int off, int sz, int kk, double *V, int64_t ld,
                     const double *d_Y, int ldy, const ts_hvec &hp)
{
    constexpr int NA = KL + MT + 2;
    const size_t smem = (size_t)NA * TS_BS * sizeof(double);
    const void *fn = (const void *)k_restart_step<MT, KL, 24, 1, Y2>;
    PL_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const int occ = occupancy(cx, slot, fn, smem);
    const unsigned nb = grid_rows(cx, n / Y2, (int64_t)cx->nsm * occ);
    k_restart_step<MT, KL, 24, 1, Y2><<<nb, TS_BS, smem, cx->stream>>>(n, off, sz, kk, V, ld, d_Y, ldy, hp,
                                                                     cx->d_ts_part, cx->d_ts_ticket, cx->d_ts_h);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

template <int MT, int KL>
static int launch_rs2(pl_cuda_ctx *cx, int slot, int64_t n, int off, int sz, int kk, double *V, int64_t ld,
                      const double *d_Y, int ldy, const ts_hvec &hp)
{
    if (aligned16(V) && ld % 2 == 0) /* 16-byte loads of two rows */
        return launch_rs<MT, KL, 2>(cx, slot + 1, n, off, sz, kk, V, ld, d_Y, ldy, hp);
    return launch_rs<MT, KL, 1>(cx, slot, n, off, sz, kk, V, ld, d_Y, ldy, hp);
}

/* (cuda_impl.h) every instantiation loaded before its first launch */
#define RS_BOTH(MT, KL) k_restart_step<MT, KL, 24, 1, 1>, k_restart_step<MT, KL, 24, 1, 2>
extern "C" int pl_cuda_ts_restart_preload(void)
{
    return pl_cuda_load(RS_BOTH(8, 0), RS_BOTH(8, 4), RS_BOTH(8, 8), RS_BOTH(8, 16), RS_BOTH(16, 0), RS_BOTH(16, 4),
                        RS_BOTH(16, 8), RS_BOTH(16, 16));
}
#undef RS_BOTH

extern "C" int pl_cuda_ts_restart_fits(int off, int sz, int kk)
{
    return off >= 0 && off <= 16 && kk >= 1 && kk <= 16 && sz > kk + 1 && sz <= RS_SZMAX && off + kk + 2 <= PL_TS_KMAX;
}

extern "C" int pl_cuda_ts_restart_step(pl_cuda_ctx *cx, size_t n, int off, int sz, int kk, double *V, size_t ld,
                                       const double *d_Y, int ldy, const double *h_in)
{
    PL_CHECK(pl_cuda_ts_restart_fits(off, sz, kk) && n >= 1 && ld >= n && ldy >= sz, PL_ERR_ARG,
             "ts_restart_step: n = %zu, off = %d, sz = %d, kk = %d, ld = %zu, ldy = %d", n, off, sz, kk, ld, ldy);
    ts_hvec hp;
    const int k = off + kk;
    for (int j = 0; j < PL_TS_KMAX; j++) hp.h[j] = j <= k ? h_in[j] : 0.0;
    const int64_t nn = (int64_t)n, l = (int64_t)ld;
    /* slots of ts_occ: 34 + 2 (4 (MT = 16) + KL index (0, 4, 8, 16)) + (Y2 = 2) */
    const int kl = off == 0 ? 0 : off <= 4 ? 1 : off <= 8 ? 2 : 3;
    if (kk <= 8) {
        switch (kl) {
        case 0: return launch_rs2<8, 0>(cx, 34, nn, off, sz, kk, V, l, d_Y, ldy, hp);
        case 1: return launch_rs2<8, 4>(cx, 36, nn, off, sz, kk, V, l, d_Y, ldy, hp);
        case 2: return launch_rs2<8, 8>(cx, 38, nn, off, sz, kk, V, l, d_Y, ldy, hp);
        default: return launch_rs2<8, 16>(cx, 40, nn, off, sz, kk, V, l, d_Y, ldy, hp);
        }
    }
    switch (kl) {
    case 0: return launch_rs2<16, 0>(cx, 42, nn, off, sz, kk, V, l, d_Y, ldy, hp);
    case 1: return launch_rs2<16, 4>(cx, 44, nn, off, sz, kk, V, l, d_Y, ldy, hp);
    case 2: return launch_rs2<16, 8>(cx, 46, nn, off, sz, kk, V, l, d_Y, ldy, hp);
    default: return launch_rs2<16, 16>(cx, 48, nn, off, sz, kk, V, l, d_Y, ldy, hp);
    }
}
