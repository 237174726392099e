/* test_cuda_refill.c — value refill (pl_op_refill) on the cuda backend.
 *
 * - Backend: a matrix whose rows are runs of b = 4 columns gets the
 *   block-mode view (more device bytes than with block mode off); values
 *   written through be->mat_values with the vector ops (copy, axpy) change
 *   the products of both the block-mode and the plain pJDS matrix, which
 *   equal the serial CSR product of the new values to 1e-14.
 * - Operator: for a random matrix and a block matrix (b = 4, rank blocks cut
 *   at multiples of 4, so the local part keeps its runs), K = 3
 *   non-negative value terms with exact zeros: the cuda operator created at
 *   coef0 and refilled to coef1 equals the CPU operator built from the
 *   combined values (same permutation) to 1e-14 relative to |A||x|, for
 *   exchange modes vector/overlap/task, sort windows all and 64, streamed
 *   fill (small staging: many chunk ranges, also for the terms) and host
 *   fill (PJDS_FILL_HOST=1); norm estimates equal, device_bytes grow by
 *   8 K (stored entries); a second refill overwrites; wrong K and an
 *   operator without terms give PL_ERR_ARG.
 * Run with 1 and 2 ranks (two ranks share the device, transport mpi).  Exit
 * 77 (skipped) without a CUDA device or in a build without CUDA.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"
#if PJDS_HAVE_CUDA
#include "cuda/pl_cuda_bench.h"
#endif

#define K 3
#define B 4

/* Rows are runs of B columns: block row I (rows B I .. B I + B - 1) holds
 * its diagonal block and up to maxblk random block columns; n = B nb. */
static void block_matrix(int64_t nb, int maxblk, uint64_t seed, tm_csr *a)
{
    uint64_t s = seed;
    int64_t *bc = malloc((size_t)(maxblk + 1) * sizeof *bc);
    int64_t cap = nb * B * B * (maxblk + 1) + 1, m = 0;
    int64_t *I = malloc((size_t)cap * sizeof *I), *J = malloc((size_t)cap * sizeof *J);
    double *V = malloc((size_t)cap * sizeof *V);
    for (int64_t ib = 0; ib < nb; ib++) {
        int nbc = 0;
        bc[nbc++] = ib;
        int want = (int)(tm_next(&s) % (uint64_t)(maxblk + 1));
        for (int q = 0; q < want; q++) {
            int64_t j = (int64_t)(tm_next(&s) % (uint64_t)nb), dup = 0;
            for (int u = 0; u < nbc; u++) dup |= bc[u] == j;
            if (!dup) bc[nbc++] = j;
        }
        for (int64_t r = 0; r < B; r++)
            for (int u = 0; u < nbc; u++)
                for (int64_t c = 0; c < B; c++) I[m] = ib * B + r, J[m] = bc[u] * B + c, V[m++] = 1.0;
    }
    tm_from_coo(nb * B, m, I, J, V, a);
    free(bc);
    free(I);
    free(J);
    free(V);
}

/* K non-negative terms on the pattern of a, about 30 % exact zeros. */
static double *make_terms(const tm_csr *a, uint64_t seed)
{
    uint64_t s = seed;
    double *t = malloc((size_t)K * (size_t)(a->nnz ? a->nnz : 1) * sizeof *t);
    for (int64_t e = 0; e < (int64_t)K * a->nnz; e++) {
        double u = tm_unif(&s), v = tm_unif(&s);
        t[e] = u < 0.3 ? 0.0 : v;
    }
    return t;
}

static void combine(const double *T, int64_t nnz, const double *coef, int64_t e0, int64_t m, double *val)
{
    for (int64_t e = 0; e < m; e++) {
        double v = coef[0] * T[e0 + e];
        for (int k = 1; k < K; k++) v += coef[k] * T[(size_t)k * (size_t)nnz + e0 + e];
        val[e] = v;
    }
}

static void block_of(const tm_csr *a, const double *T, const double *coef, int with_terms, int64_t r0, int64_t r1,
                     pl_csr *b)
{
    int64_t nnz = a->ptr[r1] - a->ptr[r0], e0 = a->ptr[r0];
    TU_OK(pl_csr_alloc(b, a->n, r0, r1 - r0, nnz));
    b->ncols_global = a->n;
    for (int64_t r = r0; r <= r1; r++) b->row_ptr[r - r0] = a->ptr[r] - e0;
    memcpy(b->col, a->col + e0, (size_t)nnz * sizeof *b->col);
    combine(T, a->nnz, coef, e0, nnz, b->val);
    if (!with_terms) return;
    b->nterms = K;
    b->terms = malloc((size_t)K * (size_t)(nnz ? nnz : 1) * sizeof *b->terms);
    for (int k = 0; k < K; k++)
        memcpy(b->terms + (size_t)k * (size_t)nnz, T + (size_t)k * (size_t)a->nnz + e0, (size_t)nnz * sizeof *T);
}

#if PJDS_HAVE_CUDA
/* Backend level: block view and plain pJDS see values written through
 * mat_values. */
static void test_block_values(pl_backend *be)
{
    tm_csr a;
    block_matrix(300, 5, 11, &a);
    double *T = make_terms(&a, 99);
    const int32_t n = (int32_t)a.n;
    int32_t *lcol = malloc((size_t)(a.nnz ? a.nnz : 1) * sizeof *lcol), *perm = malloc((size_t)n * sizeof *perm);
    for (int64_t e = 0; e < a.nnz; e++) lcol[e] = (int32_t)a.col[e];
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    pjds p0, p1;
    TU_OK(pjds_create(n, n, a.ptr, lcol, T, perm, 32, 1, &p0));                           /* term 0 */
    TU_OK(pjds_create(n, n, a.ptr, lcol, T + (size_t)a.nnz, perm, 32, 1, &p1));           /* term 1 */
    double *d_t1 = NULL, *d_x = NULL, *d_y = NULL, *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y),
           *yr = malloc((size_t)n * sizeof *yr), *sr = malloc((size_t)n * sizeof *sr);
    TU_OK(be->vec_alloc(be, (size_t)p1.nent, &d_t1));
    TU_OK(be->upload(be, d_t1, p1.val, (size_t)p1.nent));
    for (int32_t i = 0; i < n; i++) x[i] = cos(0.3 * i) + 0.1;
    TU_OK(be->vec_alloc(be, (size_t)n, &d_x));
    TU_OK(be->vec_alloc(be, (size_t)n, &d_y));
    TU_OK(be->upload(be, d_x, x, (size_t)n));
    /* reference: values term1 + 1.5 term0 */
    const double c[K] = {1.5, 1.0, 0.0};
    tm_csr a1 = a;
    a1.val = malloc((size_t)a.nnz * sizeof *a1.val);
    combine(T, a.nnz, c, 0, a.nnz, a1.val);
    tm_spmv(&a1, x, yr, sr);
    void *mat[2] = {NULL, NULL};
    for (int blocked = 1; blocked >= 0; blocked--) {
        TU_OK(pl_cuda_set_block_mode(be, blocked));
        TU_OK(be->mat_create(be, &p0, &mat[blocked]));
    }
    TU_OK(pl_cuda_set_block_mode(be, 1));
    TU_CHECK_MSG(mat[0] && mat[1] && pl_cuda_mat_bytes(mat[1]) > pl_cuda_mat_bytes(mat[0]),
                 "the runs of %d columns did not get the block-mode view (%zu vs %zu bytes)", B,
                 mat[1] ? pl_cuda_mat_bytes(mat[1]) : 0, mat[0] ? pl_cuda_mat_bytes(mat[0]) : 0);
    for (int blocked = 0; blocked < 2 && mat[0] && mat[1]; blocked++) {
        double *d_val = NULL;
        size_t nv = 0;
        TU_OK(be->mat_values(be, mat[blocked], &d_val, &nv));
        TU_CHECK(nv == (size_t)p0.nent && d_val);
        TU_OK(be->scal(be, nv, 1.5, d_val));
        TU_OK(be->axpy(be, nv, 1.0, d_t1, d_val));
        TU_OK(be->spmv(be, mat[blocked], d_x, d_y));
        TU_OK(be->sync(be));
        TU_OK(be->download(be, y, d_y, (size_t)n));
        double err = 0.0;
        for (int32_t i = 0; i < n; i++) err = fmax(err, fabs(y[i] - yr[i]) / fmax(sr[i], 1e-300));
        TU_CHECK_MSG(err <= 1e-14, "block mode %d: product after writing the values, rel err %g", blocked, err);
    }
    for (int u = 0; u < 2; u++)
        if (mat[u]) be->mat_destroy(be, mat[u]);
    be->vec_free(be, d_t1);
    be->vec_free(be, d_x);
    be->vec_free(be, d_y);
    pjds_destroy(&p0);
    pjds_destroy(&p1);
    free(lcol);
    free(perm);
    free(x);
    free(y);
    free(yr);
    free(sr);
    free(a1.val);
    free(T);
    tm_free(&a);
}
#endif

/* Operator level: cuda refilled vs cpu fresh. */
static void test_op(pl_backend *be, pl_backend *cpu, tm_csr *a, const char *name)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const double coef0[K] = {1.0, 0.5, 2.0}, coef1[K] = {0.3, 2.5, 0.75};
    double *T = make_terms(a, 77 + (uint64_t)a->n);
    /* rank blocks at multiples of B (block matrices keep their runs) */
    int64_t nb = a->n / B, r0 = B * (nb * rank / size), r1 = rank == size - 1 ? a->n : B * (nb * (rank + 1) / size);
    pl_csr bt, bf;
    block_of(a, T, coef0, 1, r0, r1, &bt);
    block_of(a, T, coef1, 0, r0, r1, &bf);
    const int64_t n = r1 - r0;
    tm_csr a1 = *a;
    a1.val = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *a1.val);
    combine(T, a->nnz, coef1, 0, a->nnz, a1.val);
    double *xg = malloc((size_t)(a->n + 1) * sizeof *xg), *yg = malloc((size_t)(a->n + 1) * sizeof *yg),
           *sg = malloc((size_t)(a->n + 1) * sizeof *sg);
    for (int64_t g = 0; g < a->n; g++) xg[g] = sin(0.7 * (double)g + 0.3) + 0.01 * (double)(g % 5);
    tm_spmv(&a1, xg, yg, sg);
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y), *d_x = NULL,
           *d_y = NULL, *c_y = NULL;
    TU_OK(be->vec_alloc(be, (size_t)n, &d_x));
    TU_OK(be->vec_alloc(be, (size_t)n, &d_y));
    TU_OK(cpu->vec_alloc(cpu, (size_t)n, &c_y));
    const int modes[] = {PL_EXCHANGE_VECTOR, PL_EXCHANGE_OVERLAP, PL_EXCHANGE_TASK};
    const int64_t sigmas[] = {0, 64};
    for (int fh = 0; fh < 2; fh++) {
        be->tune.fill_host = fh; /* PJDS_FILL_HOST=1: whole host arrays, then copy */
        for (int mi = 0; mi < 3; mi++)
            for (int si = 0; si < 2; si++) {
                pl_op_options cfg = {0};
                cfg.chunk_height = 32;
                cfg.sort_window = sigmas[si];
                cfg.exchange = modes[mi];
                cfg.transport = PL_TRANSPORT_MPI;
                pl_op *op = NULL, *fr = NULL;
                TU_OK(pl_op_create(&bt, &cfg, be, MPI_COMM_WORLD, &op));
                TU_OK(pl_op_create(&bf, &cfg, cpu, MPI_COMM_WORLD, &fr));
                if (!op || !fr) {
                    pl_op_destroy(&op);
                    pl_op_destroy(&fr);
                    continue;
                }
                const int64_t *gi = pl_op_global_index(op), *gf = pl_op_global_index(fr);
                int same = 1;
                for (int64_t i = 0; i < n; i++) same &= gi[i] == gf[i];
                TU_CHECK_MSG(same, "%s: cuda and cpu operators permute differently", name);
                pl_op_info io, ifr;
                pl_op_get_info(op, &io);
                pl_op_get_info(fr, &ifr);
                TU_CHECK(pl_op_nterms(op) == K);
                TU_CHECK_MSG(io.device_bytes == ifr.device_bytes + (size_t)(8 * K * io.nent_local),
                             "%s: device_bytes %zu, cpu fresh %zu, nent %lld", name, io.device_bytes, ifr.device_bytes,
                             (long long)io.nent_local);
                for (int64_t i = 0; i < n; i++) x[i] = xg[gi[i]];
                TU_OK(be->upload(be, d_x, x, (size_t)n));
                for (int rep = 0; rep < 2; rep++) {
                    TU_OK(pl_op_refill(op, K, rep ? coef0 : coef1));
                    if (rep) TU_OK(pl_op_refill(op, K, coef1)); /* overwrites */
                    TU_OK(pl_op_apply(op, d_x, d_y));
                    TU_OK(be->download(be, y, d_y, (size_t)n));
                    TU_OK(pl_op_apply(fr, x, c_y));
                    double err = 0.0, errs = 0.0;
                    for (int64_t i = 0; i < n; i++) {
                        double s = fmax(sg[gi[i]], 1e-300);
                        err = fmax(err, fabs(y[i] - c_y[i]) / s);
                        errs = fmax(errs, fabs(y[i] - yg[gi[i]]) / s);
                    }
                    TU_CHECK_MSG(err <= 1e-14 && errs <= 1e-14,
                                 "%s np=%d fill_host=%d mode=%d sigma=%lld rep %d: rel err %g vs cpu, %g vs serial",
                                 name, size, fh, modes[mi], (long long)sigmas[si], rep, err, errs);
                }
                pl_op_get_info(op, &io);
                TU_CLOSE(io.norm_estimate, ifr.norm_estimate, 1e-14);
                int rc = pl_op_refill(op, K - 1, coef1);
                TU_CHECK_MSG(rc == PL_ERR_ARG, "wrong K: rc %d", rc);
                pl_error_clear();
                pl_op_destroy(&op);
                pl_op_destroy(&fr);
            }
    }
    be->tune.fill_host = 0;
    /* an operator without terms */
    {
        pl_op_options cfg = {0};
        cfg.chunk_height = 32;
        cfg.transport = PL_TRANSPORT_MPI;
        pl_op *op = NULL;
        TU_OK(pl_op_create(&bf, &cfg, be, MPI_COMM_WORLD, &op));
        if (op) {
            TU_CHECK(pl_op_nterms(op) == 0);
            int rc = pl_op_refill(op, K, coef1);
            TU_CHECK_MSG(rc == PL_ERR_ARG, "refill without terms: rc %d", rc);
            pl_error_clear();
            pl_op_destroy(&op);
        }
    }
    be->vec_free(be, d_x);
    be->vec_free(be, d_y);
    cpu->vec_free(cpu, c_y);
    pl_csr_destroy(&bt);
    pl_csr_destroy(&bf);
    free(a1.val);
    free(T);
    free(xg);
    free(yg);
    free(sg);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
#if !PJDS_HAVE_CUDA
    (void)argc;
    (void)argv;
    TU_SKIP("built without CUDA");
#else
    /* before MPI_Init: a skip must not leave MPI half initialised */
    int ndev = pl_cuda_device_count();
    if (ndev == 0) TU_SKIP("no CUDA device");
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pl_log_init(rank, PL_LOG_INFO);
    setenv("PJDS_FILL_STAGE_ENTRIES", "1000", 1); /* streamed fill and terms in many chunk ranges */
    pl_backend *be = NULL, *cpu = NULL;
    TU_OK(pl_backend_cuda_create(rank % ndev, &be));
    TU_OK(pl_backend_cpu_create(&cpu));
    if (be && cpu) {
        if (rank == 0) test_block_values(be);
        tm_csr a;
        tm_random(2000, 14, 2, 0, 42, &a); /* random + band */
        test_op(be, cpu, &a, "random n=2000");
        tm_free(&a);
        block_matrix(600, 4, 5, &a); /* runs of 4 columns: block-mode view of the local part */
        test_op(be, cpu, &a, "blocks b=4 n=2400");
        tm_free(&a);
    }
    pl_backend_destroy(&be);
    pl_backend_destroy(&cpu);
    int f = tu_failures, g = 0;
    MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = g;
    MPI_Finalize();
    return rank == 0 ? tu_result("test_cuda_refill") : (g ? 1 : 0);
#endif
}
