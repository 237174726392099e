/* test_kron_op.c — the matrix-free operator (pl_op_create_kron, spmv.h;
 * [spmv] format = matrix_free) against the pJDS operator of the same
 * Holstein-Hubbard matrix and against the CSR product in long double.
 *
 *  1. models: site and normal phonon bases x periodic and open boundaries,
 *     n_up != n_down, n_down = 0, M = 1, t = 0, g = 0, L = 2 periodic; each
 *     through hh_model_create + hh_mf_create + hh_mf_kron (the hh_mf tables
 *     freed before the products: the backend keeps a copy).  y = H x of
 *     pl_op_apply equals the pJDS operator's (compared through
 *     pl_op_global_index) and the long-double CSR product to 1e-15 of
 *     max |y|; pl_op_apply_queued gives the same bits; pl_op_get_info:
 *     format, sizes, no halo, nnz_local = the CSR's non-zeros, device_bytes
 *     = pl_kron_bytes, norm_estimate >= the pJDS operator's row-sum norm,
 *     the note; the counters count the applies; the global index is the
 *     identity.
 *     On P = 2, 3, 4 ranks (ctest spmv_kron_op_np2, _np3, _np4) the same
 *     models split by electron configurations (spmv.h PL_KRON_SPLIT_LEFT):
 *     against the pJDS operator of the same row blocks (y to 1e-15; its halo
 *     from the CSR's columns gives n_halo, n_send and the neighbours the
 *     matrix-free operator must have), against the long-double CSR product,
 *     pl_kron_halo's figures, the rows and row0 of the split, the non-zeros
 *     summed over the ranks, the global index row0 + i.
 *  2. pl_op_refill returns PL_ERR_NOTSUP (the block products:
 *     test_kron_block.c); pl_op_create with format = matrix_free and a
 *     backend without kron slots PL_ERR_INPUT.
 *  3. bad tables: pl_kron_check and pl_op_create_kron give PL_ERR_ARG for a
 *     column of A or of a right factor out of range.
 *  4. several ranks: more ranks than electron configurations gives
 *     PL_ERR_INPUT on every rank, no operator; the random tables of 5
 *     (rows of A referencing any left row: many neighbours) against the
 *     reference loop to 1e-15 of the largest absolute row sum, before and
 *     after a value update (pl_op_kron_update), or PL_ERR_INPUT where they
 *     have fewer left rows than ranks.
 *  5. bitwise: y of every model of 1 equals ref_kron (below: the CPU loop
 *     as it was before the tiled kernel of 2026-11-25, every row summed in
 *     pl_kron.h's order) by memcmp, and so do random tables on the CPU
 *     backend (cpu_random: n_left not a multiple of the kernel's 8-row
 *     chunks and below 8, nterms 0 and 11, rows of A longer than 64
 *     entries, c = +-0.0, x with +-0.0 entries, n_right not a multiple of
 *     the block; nterms 1 to 8 with n_right not a multiple of 4, 8, 16 or
 *     32, every c non-zero, every c zero, n_right above the wide kernels'
 *     transposed chunk), for the default kernels and every SIMD level of
 *     this CPU forced by PJDS_CPU_SIMD (sse2, avx2, avx512; a level the CPU
 *     lacks must be refused with PL_ERR_INPUT).
 * PJDS_TEST_BACKEND=cuda runs the same on the CUDA backend (ctest
 * gpu_kron_op; exit 77 without a device), and there also checks that the
 * GPU's y is the CPU backend's bit for bit (both round every product and
 * sum in pl_kron.h's order), for every kernel variant (PJDS_KRON_KERNEL,
 * spmv/cuda/kron_variant.h; variant 2 also with PJDS_KRON_CHUNK = 7 and both
 * block orders (PJDS_KRON_ORDER 1, 2),
 * variants 3 and 4 with PJDS_KRON_SPLIT = 3, variant 5, variant 6 with
 * PJDS_KRON_SPLIT unset and 2) on every model of 1, and on random tables
 * (check_random): a right row too long for shared memory (variants 3, 4
 * fall back to 1, 6 to 5), nterms = 0, 7 and 8 (the most tables variant 5
 * holds per thread), n_left = 1, nterms = 11 with rows
 * of A longer than the kernels stage, values too many to pack (variant 4
 * falls back to 3, 6 to 5), and an odd n_right (left rows not 16-byte
 * aligned) with 20 entries per row of A (variant 6's hopping in batches). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "pl_build.h"
#include "pl_error.h"
#include "pl_kron.h"
#include "spmv.h"
#include "testutil.h"
#if PJDS_HAVE_CUDA
#include "cuda/kron_variant.h"
#endif

#define TOL 1e-15

static int rank, size;
static int backend_kind = PL_BACKEND_CPU;
static pl_backend *dist_be; /* several ranks: the backend of check_dist */
static double worst_pjds = 0.0, worst_ref = 0.0;
static int n_models = 0;

static double xg_of(int64_t g) { return cos(0.37 * (double)g + 0.1) + 0.02 * (double)(g % 7); }

/* y = A x of op in the original basis: x, y global host vectors of N rows
 * (several ranks: each rank's rows, summed over the ranks into every
 * rank's y; a row has one owner, so the sum is the value). */
static int apply_global(pl_op *op, int queued, const double *xg, double *yg, int64_t N)
{
    pl_backend *be = pl_op_backend(op);
    const int64_t *gi = pl_op_global_index(op);
    pl_op_info in;
    pl_op_get_info(op, &in);
    const int64_t n = in.n_local;
    double *hx = malloc((size_t)(n ? n : 1) * sizeof *hx), *hy = malloc((size_t)(n ? n : 1) * sizeof *hy);
    double *dx = NULL, *dy = NULL;
    int rc = PL_OK;
    PL_CHECK_GOTO(hx && hy, PL_ERR_MEM, done, rc, "out of memory");
    for (int64_t i = 0; i < n; i++) hx[i] = xg[gi[i]];
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)n, &dx), done, rc);
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)n, &dy), done, rc);
    PL_CALL_GOTO(be->upload(be, dx, hx, (size_t)n), done, rc);
    PL_CALL_GOTO(be->set(be, (size_t)n, NAN, dy), done, rc); /* every entry must be written */
    PL_CALL_GOTO(queued ? pl_op_apply_queued(op, dx, dy) : pl_op_apply(op, dx, dy), done, rc);
    PL_CALL_GOTO(be->download(be, hy, dy, (size_t)n), done, rc); /* synchronises */
    if (size > 1)
        for (int64_t i = 0; i < N; i++) yg[i] = 0.0;
    for (int64_t i = 0; i < n; i++) yg[gi[i]] = hy[i];
    if (size > 1 && MPI_Allreduce(MPI_IN_PLACE, yg, (int)N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = PL_ERROR(PL_ERR_MPI, "MPI_Allreduce of y failed");
done:
    if (dx) be->vec_free(be, dx);
    if (dy) be->vec_free(be, dy);
    free(hx);
    free(hy);
    return rc;
}

/* max_i |y_i - (A x)_i| / max_i |(A x)_i|, A x in long double. */
static double ref_error(const pl_csr *a, const double *x, const double *y)
{
    long double emax = 0.0L, ymax = 0.0L;
    for (int64_t i = 0; i < a->nrows; i++) {
        long double r = 0.0L;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) r += (long double)a->val[k] * x[a->col[k]];
        if (!isfinite(y[i])) return INFINITY;
        emax = fmaxl(emax, fabsl((long double)y[i] - r));
        ymax = fmaxl(ymax, fabsl(r));
    }
    return ymax > 0.0L ? (double)(emax / ymax) : (emax == 0.0L ? 0.0 : INFINITY);
}

static uint64_t lcg_state = 12345;
static double rnd01(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) * 0x1.0p-53;
}

/* y = the operator k applied to x, row by row in pl_kron.h's order (the
 * CPU backend's loop before 2026-11-25): the bitwise reference. */
static void ref_kron(const pl_kron *k, const double *x, double *y)
{
    const int64_t nr = k->n_right, nt = k->nterms;
    for (int64_t l = 0; l < k->n_left; l++) {
        const double *xl = x + l * nr;
        for (int64_t r = 0; r < nr; r++) {
            double s = ((k->dl[l] + k->dr[r]) + k->shift) * xl[r];
            for (int64_t m = 0; m < nt; m++) {
                const double c = k->c[l * nt + m];
                const int64_t j = r * nt + m;
                if (c == 0.0) continue;
                if (k->lo[j] >= 0) s += (c * k->lo_val[j]) * xl[k->lo[j]];
                if (k->hi[j] >= 0) s += (c * k->hi_val[j]) * xl[k->hi[j]];
            }
            for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) s += k->a_val[j] * x[(int64_t)k->a_col[j] * nr + r];
            y[l * nr + r] = s;
        }
    }
}

/* The CPU kernels' SIMD levels (PJDS_CPU_SIMD, spmv/cpu/cpu_kron.c) and
 * whether this CPU has them: a forced level must build where it has it,
 * and give PL_ERR_INPUT where not. */
static const char *const simd_names[] = {"sse2", "avx2", "avx512"};
#define N_SIMD 3
static int simd_have(int i)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return i == 0 || (i == 1 && __builtin_cpu_supports("avx2")) || (i == 2 && __builtin_cpu_supports("avx512f"));
#else
    return i == 0;
#endif
}
static int simd_checked[N_SIMD];

/* y of kron_apply on the CPU backend equals ref_kron's, bit for bit, for
 * the default kernels and each SIMD level forced by PJDS_CPU_SIMD. */
static void check_bitwise(const pl_kron *k, const double *x, const char *d)
{
    const int64_t N = k->n_left * k->n_right;
    double *yr = malloc((size_t)N * sizeof *yr), *y = malloc((size_t)N * sizeof *y);
    pl_backend *cb = NULL;
    TU_CHECK(yr && y);
    TU_OK(pl_backend_cpu_create(&cb));
    if (yr && y) ref_kron(k, x, yr);
    for (int lv = -1; cb && yr && y && lv < N_SIMD; lv++) {
        void *op = NULL;
        if (lv >= 0) setenv("PJDS_CPU_SIMD", simd_names[lv], 1);
        const int rc = cb->kron_create(cb, k, &op);
        unsetenv("PJDS_CPU_SIMD");
        if (lv >= 0 && !simd_have(lv)) {
            TU_CHECK_MSG(rc == PL_ERR_INPUT && !op, "%s: PJDS_CPU_SIMD=%s on a CPU without it: %d", d,
                         simd_names[lv], rc);
            pl_error_clear();
            continue;
        }
        TU_OK(rc);
        if (!op) continue;
        for (int64_t i = 0; i < N; i++) y[i] = NAN;
        TU_OK(cb->kron_apply(cb, op, x, y));
        int64_t bad = 0;
        for (int64_t i = 0; i < N; i++) bad += memcmp(y + i, yr + i, sizeof *y) != 0;
        TU_CHECK_MSG(bad == 0, "%s (%s): %lld rows differ from the reference loop bitwise", d,
                     lv >= 0 ? simd_names[lv] : "default", (long long)bad);
        if (lv >= 0) simd_checked[lv]++;
        cb->kron_destroy(cb, op);
    }
    pl_backend_destroy(&cb);
    free(yr);
    free(y);
}

/* The kernel runs of the cuda backend: variant, PJDS_KRON_CHUNK, PJDS_KRON_SPLIT, PJDS_KRON_ORDER. */
static const int kernel_runs[][4] = {{1, 0, 0, 0}, {2, 0, 0, 0}, {2, 7, 0, 0}, {2, 0, 0, 1}, {2, 0, 0, 2},
                                     {2, 7, 0, 2}, {3, 0, 0, 0}, {3, 0, 3, 0}, {4, 0, 0, 0}, {4, 0, 3, 0},
                                     {5, 0, 0, 0}, {6, 0, 0, 0}, {6, 0, 2, 0}};
#define N_KERNEL_RUNS ((int)(sizeof kernel_runs / sizeof kernel_runs[0]))

/* Set the environment of kernel run i (i < 0: unset it all). */
static void kernel_env(int i)
{
    const char *names[4] = {"PJDS_KRON_KERNEL", "PJDS_KRON_CHUNK", "PJDS_KRON_SPLIT", "PJDS_KRON_ORDER"};
    for (int j = 0; j < 4; j++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i >= 0 ? kernel_runs[i][j] : 0);
        if (i >= 0 && kernel_runs[i][j] > 0) setenv(names[j], v, 1);
        else unsetenv(names[j]);
    }
}

/* The cuda run: every kernel run's y = H x equals the CPU backend's (cop) bit for bit. */
static void check_variants(pl_backend *be, pl_op *cop, const pl_kron *k, const double *x, const char *d)
{
    const int64_t N = k->n_left * k->n_right;
    double *yc = malloc((size_t)N * sizeof *yc), *y = malloc((size_t)N * sizeof *y);
    TU_CHECK(yc && y);
    if (yc && y) TU_OK(apply_global(cop, 0, x, yc, N));
    for (int i = 0; yc && y && i < N_KERNEL_RUNS; i++) {
        kernel_env(i);
        pl_op_options oo;
        pl_op_options_defaults(&oo);
        oo.format = PL_FORMAT_MATRIX_FREE;
        pl_op *op = NULL;
        TU_OK(pl_op_create_kron(k, &oo, be, MPI_COMM_WORLD, &op));
        if (!op) continue;
        TU_OK(apply_global(op, 0, x, y, N));
        TU_CHECK_MSG(memcmp(y, yc, (size_t)N * sizeof *y) == 0,
                     "%s: kernel %d (chunk %d, split %d) differs from the cpu",
                     d, kernel_runs[i][0], kernel_runs[i][1], kernel_runs[i][2]);
        pl_op_destroy(&op);
    }
    kernel_env(-1);
    free(yc);
    free(y);
}

/* Rows [L_q n_right, L_q+1 n_right) of rank q: the split of
 * pl_op_create_kron (spmv.h, PL_KRON_SPLIT_LEFT), computed here from its
 * definition. */
static int64_t left_bound(const pl_kron *k, int q) { return k->n_left * q / size; }

/* info of the matrix-free operator op against the tables, the CSR a (all
 * rows) and the pJDS operator of the same rows (info pj): on several ranks
 * the pJDS operator's halo, from the CSR's columns, is the independent
 * reference of the matrix-free one's (n_halo, n_send, neighbours). */
static void check_info(const pl_op *op, const pl_kron *k, const pl_csr *a, const pl_op_info *pj, const char *d)
{
    pl_op_info in;
    pl_op_get_info(op, &in);
    const int64_t N = a->nrows, nr = k->n_right, l0 = left_bound(k, rank), l1 = left_bound(k, rank + 1);
    TU_CHECK_MSG(in.format == PL_FORMAT_MATRIX_FREE, "%s: format %d", d, in.format);
    TU_CHECK_MSG(in.n_global == N && in.n_local == (l1 - l0) * nr && in.row0 == l0 * nr, "%s: sizes", d);
    TU_CHECK_MSG(in.n_halo == pj->n_halo && in.n_send == pj->n_send && in.n_neighbors == pj->n_neighbors,
                 "%s: rank %d halo %d, sends %lld to %d ranks; the pJDS operator %d, %lld, %d", d, rank, in.n_halo,
                 (long long)in.n_send, in.n_neighbors, pj->n_halo, (long long)pj->n_send, pj->n_neighbors);
    if (size == 1) TU_CHECK_MSG(in.n_halo == 0 && in.n_neighbors == 0 && in.n_send == 0, "%s: neighbours", d);
    pl_kron_halo_info *hi = calloc((size_t)size, sizeof *hi);
    TU_CHECK(hi != NULL);
    if (hi) {
        TU_OK(pl_kron_halo(k, size, PL_KRON_SPLIT_LEFT, hi));
        TU_CHECK_MSG(hi[rank].halo_values == in.n_halo && hi[rank].send_values == in.n_send &&
                         hi[rank].rows == in.n_local && hi[rank].halo_lines * nr == in.n_halo,
                     "%s: pl_kron_halo: rank %d halo %lld, sends %lld", d, rank, (long long)hi[rank].halo_values,
                     (long long)hi[rank].send_values);
    }
    free(hi);
    int64_t nnz = in.nnz_local, gnnz = 0;
    MPI_Allreduce(&nnz, &gnnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    TU_CHECK_MSG(gnnz == pl_csr_nnz(a), "%s: nnz %lld over the ranks, the CSR has %lld", d, (long long)gnnz,
                 (long long)pl_csr_nnz(a));
    if (size == 1)
        TU_CHECK_MSG(in.device_bytes == pl_kron_bytes(k) && in.device_bytes > 0, "%s: device bytes %zu", d,
                     in.device_bytes);
    else
        TU_CHECK_MSG(in.device_bytes >= 8 * (size_t)in.n_halo + 12 * (size_t)in.n_send && in.device_bytes > 0,
                     "%s: device bytes %zu", d, in.device_bytes);
    TU_CHECK_MSG(in.norm_estimate >= pj->norm_estimate * (1.0 - 1e-15) && isfinite(in.norm_estimate),
                 "%s: norm bound %.17g below the row-sum norm %.17g", d, in.norm_estimate, pj->norm_estimate);
    TU_CHECK_MSG(strstr(in.format_note, "matrix-free Kronecker sum: ") == in.format_note, "%s: note '%s'", d,
                 in.format_note);
    TU_CHECK_MSG(in.bytes_per_entry > 0.0 || in.nnz_local == 0, "%s: %g bytes per entry", d, in.bytes_per_entry);
    TU_CHECK_MSG(in.nent_local == in.nnz_local, "%s: entries", d);
    const int64_t *g = pl_op_global_index(op);
    int64_t bad = 0;
    for (int64_t i = 0; i < in.n_local; i++) bad += g[i] != in.row0 + i;
    TU_CHECK_MSG(bad == 0, "%s: global index not row0 + i (%lld rows)", d, (long long)bad);
}

/* 1 (and 2 on the first model) */
static void check_model(pl_backend *be, const hh_params *p, int extras)
{
    const char *d = hh_args_describe(p);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_csr a = {0};
    pl_op *kop = NULL, *pop = NULL;
    TU_OK(hh_model_create(p, &m));
    if (!m) return;
    const int64_t N = hh_model_rows(m);
    TU_OK(hh_rows_csr(m, 0, N, &a));
    TU_OK(hh_mf_create(m, &mf));
    if (!mf) {
        pl_csr_destroy(&a);
        hh_model_destroy(&m);
        return;
    }
    pl_kron k;
    hh_mf_kron(mf, &k);
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.format = PL_FORMAT_PJDS;
    { /* the pJDS operator of the same rows per rank as the matrix-free one */
        pl_csr blk = {0};
        TU_OK(hh_rows_csr(m, left_bound(&k, rank) * k.n_right, left_bound(&k, rank + 1) * k.n_right, &blk));
        TU_OK(pl_op_create(&blk, &oo, be, MPI_COMM_WORLD, &pop));
        pl_csr_destroy(&blk);
    }
    oo.format = PL_FORMAT_MATRIX_FREE;
    TU_OK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &kop));
    pl_backend *cb = NULL;
    pl_op *cop = NULL; /* the cuda run: the CPU backend's operator */
    if (backend_kind == PL_BACKEND_CUDA) {
        TU_OK(pl_backend_cpu_create(&cb));
        if (cb) TU_OK(pl_op_create_kron(&k, &oo, cb, MPI_COMM_WORLD, &cop));
    }
    double *x = malloc((size_t)N * sizeof *x), *yk = malloc((size_t)N * sizeof *yk);
    double *yp = malloc((size_t)N * sizeof *yp), *yq = malloc((size_t)N * sizeof *yq);
    if (!kop || !pop || !a.row_ptr || !x || !yk || !yp || !yq) {
        TU_CHECK_MSG(0, "%s: set-up failed", d);
        goto done;
    }
    pl_op_info pj;
    pl_op_get_info(pop, &pj);
    check_info(kop, &k, &a, &pj, d);
    for (int64_t i = 0; i < N; i++) x[i] = xg_of(i);
    if (cop && size == 1) check_variants(be, cop, &k, x, d);
    if (size == 1) check_bitwise(&k, x, d);
    hh_mf_destroy(&mf); /* the backend holds its own copy of the tables */
    TU_OK(apply_global(kop, 0, x, yk, N));
    TU_OK(apply_global(pop, 0, x, yp, N));
    TU_OK(apply_global(kop, 1, x, yq, N));
    double dmax = 0.0, ymax = 0.0;
    for (int64_t i = 0; i < N; i++) {
        dmax = fmax(dmax, fabs(yk[i] - yp[i]));
        ymax = fmax(ymax, fabs(yp[i]));
        if (!isfinite(yk[i])) dmax = INFINITY;
    }
    const double ep = ymax > 0.0 ? dmax / ymax : dmax, er = ref_error(&a, x, yk);
    TU_CHECK_MSG(ep <= TOL, "%s: matrix-free vs pJDS %.3g of max|y|", d, ep);
    TU_CHECK_MSG(er <= TOL, "%s: matrix-free vs long-double CSR %.3g of max|y|", d, er);
    TU_CHECK_MSG(memcmp(yk, yq, (size_t)N * sizeof *yk) == 0, "%s: queued apply differs", d);
    if (cop) {
        TU_OK(apply_global(cop, 0, x, yq, N));
        TU_CHECK_MSG(memcmp(yk, yq, (size_t)N * sizeof *yk) == 0, "%s: %s and cpu backends differ", d, be->name);
    }
    worst_pjds = fmax(worst_pjds, ep);
    worst_ref = fmax(worst_ref, er);
    int64_t na = 0;
    double secs = 0.0;
    pl_op_counters(kop, &na, &secs);
    pl_op_timings t;
    pl_op_timings_get(kop, &t);
    TU_CHECK_MSG(na == 2 && secs > 0.0 && t.t_median > 0.0, "%s: counters %lld applies, %g s, median %g", d,
                 (long long)na, secs, t.t_median);
    if (extras) { /* (the block products: test_kron_block.c) */
        double c1 = 1.0;
        TU_CHECK(pl_op_refill(kop, 1, &c1) == PL_ERR_NOTSUP);
        pl_error_clear();
    }
    n_models++;
done:
    free(x);
    free(yk);
    free(yp);
    free(yq);
    pl_op_destroy(&kop);
    pl_op_destroy(&pop);
    pl_op_destroy(&cop);
    pl_backend_destroy(&cb);
    TU_CHECK(kop == NULL);
    hh_mf_destroy(&mf);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
}

#if PJDS_HAVE_CUDA
/* Random tables: nl x nr, nt terms, na entries per row of A; few = values
 * from 10 (packable), else random.  want[v - 1]: the kernel each variant
 * must end on (fall-backs).  Every kernel run's y equals the CPU's bitwise. */
static void check_random(pl_backend *be, int64_t nl, int64_t nr, int nt, int na, int few, const int want[6],
                         const char *d)
{
    const int64_t N = nl * nr, nrt = nr * nt, nnz = nl * na;
    int64_t *ap = malloc((size_t)(nl + 1) * sizeof *ap);
    int32_t *ac = malloc((size_t)(nnz + 1) * sizeof *ac), *lo = malloc((size_t)(nrt + 1) * sizeof *lo);
    int32_t *hi = malloc((size_t)(nrt + 1) * sizeof *hi);
    double *av = malloc((size_t)(nnz + 1) * sizeof *av), *dl = malloc((size_t)nl * sizeof *dl);
    double *dr = malloc((size_t)nr * sizeof *dr), *c = malloc((size_t)(nl * nt + 1) * sizeof *c);
    double *lv = malloc((size_t)(nrt + 1) * sizeof *lv), *hv = malloc((size_t)(nrt + 1) * sizeof *hv);
    double *x = malloc((size_t)N * sizeof *x), *yc = malloc((size_t)N * sizeof *yc), *y = malloc((size_t)N * sizeof *y);
    double *dx = NULL, *dy = NULL;
    pl_backend *cb = NULL;
    void *cop = NULL;
    if (!ap || !ac || !lo || !hi || !av || !dl || !dr || !c || !lv || !hv || !x || !yc || !y) {
        TU_CHECK_MSG(0, "%s: out of memory", d);
        goto done;
    }
    for (int64_t l = 0; l <= nl; l++) ap[l] = l * na;
    for (int64_t j = 0; j < nnz; j++) {
        ac[j] = (int32_t)(rnd01() * (double)nl);
        av[j] = rnd01() - 0.5;
    }
    for (int64_t l = 0; l < nl; l++) dl[l] = 3.0 * rnd01();
    for (int64_t r = 0; r < nr; r++) dr[r] = rnd01() / 3.0;
    for (int64_t i = 0; i < nl * nt; i++) c[i] = rnd01() < 0.3 ? 0.0 : rnd01() - 0.4;
    for (int64_t j = 0; j < nrt; j++) {
        lo[j] = rnd01() < 0.2 ? -1 : (int32_t)(rnd01() * (double)nr);
        hi[j] = rnd01() < 0.2 ? -1 : (int32_t)(rnd01() * (double)nr);
        lv[j] = few ? sqrt((double)(int)(10.0 * rnd01())) : rnd01() + 0.1;
        hv[j] = few ? sqrt((double)(int)(10.0 * rnd01())) : rnd01() + 0.1;
    }
    for (int64_t i = 0; i < N; i++) x[i] = xg_of(i);
    const pl_kron k = {.n_left = nl, .n_right = nr, .nterms = nt, .a_ptr = ap, .a_col = ac, .a_val = av, .dl = dl,
                       .dr = dr, .shift = 0.3, .c = c, .lo = lo, .hi = hi, .lo_val = lv, .hi_val = hv};
    TU_OK(pl_kron_check(&k));
    TU_OK(pl_backend_cpu_create(&cb));
    if (cb) TU_OK(cb->kron_create(cb, &k, &cop));
    if (cop) TU_OK(cb->kron_apply(cb, cop, x, yc));
    TU_OK(be->vec_alloc(be, (size_t)N, &dx));
    TU_OK(be->vec_alloc(be, (size_t)N, &dy));
    if (!cop || !dx || !dy) goto done;
    TU_OK(be->upload(be, dx, x, (size_t)N));
    for (int i = 0; i < N_KERNEL_RUNS; i++) {
        kernel_env(i);
        void *op = NULL;
        TU_OK(be->kron_create(be, &k, &op));
        if (!op) continue;
        const int v = kernel_runs[i][0], got = pl_cuda_kron_variant_of(op, NULL);
        TU_CHECK_MSG(got == want[v - 1], "%s: kernel %d ran as %d, want %d", d, v, got, want[v - 1]);
        TU_OK(be->set(be, (size_t)N, NAN, dy));
        TU_OK(be->kron_apply(be, op, dx, dy));
        TU_OK(be->download(be, y, dy, (size_t)N));
        TU_CHECK_MSG(memcmp(y, yc, (size_t)N * sizeof *y) == 0,
                     "%s: kernel %d (chunk %d, split %d) differs from the cpu",
                     d, v, kernel_runs[i][1], kernel_runs[i][2]);
        be->kron_destroy(be, op);
    }
    kernel_env(-1);
done:
    if (dx) be->vec_free(be, dx);
    if (dy) be->vec_free(be, dy);
    if (cop) cb->kron_destroy(cb, cop);
    pl_backend_destroy(&cb);
    void *p[] = {ap, ac, lo, hi, av, dl, dr, c, lv, hv, x, yc, y};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

static void random_cases(pl_backend *be)
{
    const int all[6] = {1, 2, 3, 4, 5, 6}, nosmem[6] = {1, 2, 1, 1, 5, 5}, nopack[6] = {1, 2, 3, 3, 5, 5};
    check_random(be, 3, 40000, 3, 2, 1, nosmem, "random: n_right 40000 (no room in shared memory)");
    check_random(be, 7, 1000, 0, 3, 1, all, "random: nterms 0");
    check_random(be, 1, 5000, 4, 1, 1, all, "random: n_left 1");
    check_random(be, 20, 300, 11, 600, 1, all, "random: nterms 11, 600 entries per row of A");
    check_random(be, 50, 2000, 11, 5, 0, nopack, "random: nterms 11, values too many to pack");
    check_random(be, 130, 700, 5, 4, 0, nopack, "random: nterms 5, 130 left rows");
    check_random(be, 130, 701, 5, 20, 1, all, "random: nterms 5, n_right 701, 20 entries per row of A");
    check_random(be, 9, 777, 7, 3, 1, all, "random: nterms 7");
    check_random(be, 5, 1031, 8, 2, 1, all, "random: nterms 8");
}
#endif

/* |v| of n values into a new array (NULL when out of memory). */
static double *abs_copy(const double *v, int64_t n)
{
    double *a = malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    for (int64_t i = 0; a && i < n; i++) a[i] = fabs(v[i]);
    return a;
}

/* max_i |y_i - yr_i| / max_i s_i, s = the rows' absolute sums (ref_kron of
 * the tables' and x's absolute values: dl, dr, shift taken apart, an upper
 * bound): the error of a different summation order is a few ulps of s. */
static double dist_error(const pl_kron *k, const double *x, const double *y, const double *yr)
{
    const int64_t N = k->n_left * k->n_right, nrt = k->n_right * k->nterms, nnz = k->a_ptr[k->n_left];
    pl_kron ka = *k;
    double *av = abs_copy(k->a_val, nnz), *dl = abs_copy(k->dl, k->n_left), *dr = abs_copy(k->dr, k->n_right);
    double *c = abs_copy(k->c, k->n_left * k->nterms), *lv = abs_copy(k->lo_val, nrt), *hv = abs_copy(k->hi_val, nrt);
    double *xa = abs_copy(x, N), *s = malloc((size_t)N * sizeof *s);
    double e = INFINITY;
    if (av && dl && dr && c && lv && hv && xa && s) {
        ka.a_val = av, ka.dl = dl, ka.dr = dr, ka.c = c, ka.lo_val = lv, ka.hi_val = hv, ka.shift = fabs(k->shift);
        ref_kron(&ka, xa, s);
        double emax = 0.0, smax = 0.0;
        for (int64_t i = 0; i < N; i++) {
            emax = isfinite(y[i]) ? fmax(emax, fabs(y[i] - yr[i])) : INFINITY;
            smax = fmax(smax, s[i]);
        }
        e = smax > 0.0 ? emax / smax : emax;
    }
    void *p[] = {av, dl, dr, c, lv, hv, xa, s};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    return e;
}

/* Several ranks: the operator of k on backend be against ref_kron (to
 * TOL of the largest absolute row sum), the queued apply the same bits; a
 * value update (A halved, pl_op_kron_update) against ref_kron of the new
 * tables.  Fewer left rows than ranks: PL_ERR_INPUT on every rank. */
static void check_dist(pl_backend *be, const pl_kron *k, const double *x, const char *d)
{
    const int64_t N = k->n_left * k->n_right, nnz = k->a_ptr[k->n_left];
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.format = PL_FORMAT_MATRIX_FREE;
    pl_op *op = (pl_op *)&oo;
    const int rc = pl_op_create_kron(k, &oo, be, MPI_COMM_WORLD, &op);
    if (k->n_left < size) {
        TU_CHECK_MSG(rc == PL_ERR_INPUT && op == NULL, "%s: %lld left rows on %d ranks: %d", d, (long long)k->n_left,
                     size, rc);
        TU_CHECK_MSG(strstr(pl_error_message(), "at least one per rank") != NULL, "%s: '%s'", d, pl_error_message());
        pl_error_clear();
        return;
    }
    TU_OK(rc);
    double *yr = malloc((size_t)N * sizeof *yr), *y = malloc((size_t)N * sizeof *y);
    double *yq = malloc((size_t)N * sizeof *yq), *av = malloc((size_t)(nnz + 1) * sizeof *av);
    if (op && yr && y && yq && av) {
        ref_kron(k, x, yr);
        TU_OK(apply_global(op, 0, x, y, N));
        TU_OK(apply_global(op, 1, x, yq, N));
        const double e = dist_error(k, x, y, yr);
        TU_CHECK_MSG(e <= TOL, "%s: %d ranks vs the reference loop %.3g", d, size, e);
        TU_CHECK_MSG(memcmp(y, yq, (size_t)N * sizeof *y) == 0, "%s: queued apply differs", d);
        worst_ref = fmax(worst_ref, e);
        pl_kron k2 = *k;
        for (int64_t j = 0; j < nnz; j++) av[j] = 0.5 * k->a_val[j];
        k2.a_val = av;
        TU_OK(pl_op_kron_update(op, &k2));
        ref_kron(&k2, x, yr);
        TU_OK(apply_global(op, 0, x, y, N));
        const double e2 = dist_error(&k2, x, y, yr);
        TU_CHECK_MSG(e2 <= TOL, "%s: after the update %.3g", d, e2);
        n_models++;
    } else {
        TU_CHECK_MSG(0, "%s: set-up failed", d);
    }
    pl_op_destroy(&op);
    free(yr);
    free(y);
    free(yq);
    free(av);
}

/* 5: random tables nl x nr, nt terms, na entries per row of A, on the CPU
 * backend against ref_kron; x with +-0.0 entries, c with +-0.0
 * (cpu_random_c 1: every c non-zero, 2: every c +-0.0). */
static int cpu_random_c = 0;
static void cpu_random(int64_t nl, int64_t nr, int nt, int na, const char *d)
{
    const int64_t N = nl * nr, nrt = nr * nt, nnz = nl * na;
    int64_t *ap = malloc((size_t)(nl + 1) * sizeof *ap);
    int32_t *ac = malloc((size_t)(nnz + 1) * sizeof *ac), *lo = malloc((size_t)(nrt + 1) * sizeof *lo);
    int32_t *hi = malloc((size_t)(nrt + 1) * sizeof *hi);
    double *av = malloc((size_t)(nnz + 1) * sizeof *av), *dl = malloc((size_t)nl * sizeof *dl);
    double *dr = malloc((size_t)nr * sizeof *dr), *c = malloc((size_t)(nl * nt + 1) * sizeof *c);
    double *lv = malloc((size_t)(nrt + 1) * sizeof *lv), *hv = malloc((size_t)(nrt + 1) * sizeof *hv);
    double *x = malloc((size_t)N * sizeof *x);
    if (ap && ac && lo && hi && av && dl && dr && c && lv && hv && x) {
        for (int64_t l = 0; l <= nl; l++) ap[l] = l * na;
        for (int64_t j = 0; j < nnz; j++) {
            ac[j] = (int32_t)(rnd01() * (double)nl);
            av[j] = rnd01() - 0.5;
        }
        for (int64_t l = 0; l < nl; l++) dl[l] = 3.0 * rnd01() - 1.0;
        for (int64_t r = 0; r < nr; r++) dr[r] = rnd01() / 3.0 - 0.2;
        for (int64_t i = 0; i < nl * nt; i++) {
            const double u = cpu_random_c == 1 ? 1.0 : cpu_random_c == 2 ? (i % 2 ? 0.0 : 0.25) : rnd01();
            c[i] = u < 0.2 ? 0.0 : u < 0.3 ? -0.0 : rnd01() - 0.4 + (cpu_random_c == 1 ? 2.0 : 0.0);
        }
        for (int64_t j = 0; j < nrt; j++) {
            lo[j] = rnd01() < 0.25 ? -1 : (int32_t)(rnd01() * (double)nr);
            hi[j] = rnd01() < 0.25 ? -1 : (int32_t)(rnd01() * (double)nr);
            lv[j] = rnd01() + 0.1;
            hv[j] = rnd01() + 0.1;
        }
        for (int64_t i = 0; i < N; i++) {
            const double u = rnd01();
            x[i] = u < 0.1 ? 0.0 : u < 0.2 ? -0.0 : xg_of(i);
        }
        const pl_kron k = {.n_left = nl, .n_right = nr, .nterms = nt, .a_ptr = ap, .a_col = ac, .a_val = av,
                           .dl = dl, .dr = dr, .shift = -0.3, .c = c, .lo = lo, .hi = hi, .lo_val = lv,
                           .hi_val = hv};
        TU_OK(pl_kron_check(&k));
        if (size == 1) check_bitwise(&k, x, d);
        else check_dist(dist_be, &k, x, d);
    } else {
        TU_CHECK_MSG(0, "%s: out of memory", d);
    }
    void *p[] = {ap, ac, lo, hi, av, dl, dr, c, lv, hv, x};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

static void cpu_random_cases(void)
{
    cpu_random(3, 40000, 3, 2, "cpu random: n_left 3, n_right 40000");
    cpu_random(7, 1000, 0, 3, "cpu random: nterms 0");
    cpu_random(1, 5003, 4, 1, "cpu random: n_left 1");
    cpu_random(20, 300, 11, 600, "cpu random: nterms 11, 600 entries per row of A");
    cpu_random(13, 2100, 5, 4, "cpu random: n_left 13, n_right 2100");
    cpu_random(130, 701, 5, 7, "cpu random: 130 left rows");
    cpu_random(9, 4099, 2, 0, "cpu random: no A");
    /* the SIMD kernels' edges: n_right not a multiple of 4, 8, 16 or 32 (right rows in 8 x 8 and 4 x 4
     * transposes, hopping tails), nterms up to 8, partial last chunks, c all zero / all non-zero */
    for (int nt = 1; nt <= 8; nt++) {
        char d[96];
        snprintf(d, sizeof d, "cpu random: nterms %d, n_left %d, n_right %d", nt, 3 + 5 * nt, 2048 + 8 * nt + nt % 3);
        cpu_random(3 + 5 * nt, 2048 + 8 * nt + nt % 3, nt, 1 + nt % 3, d);
    }
    cpu_random(17, 37, 3, 3, "cpu random: n_right 37");
    cpu_random(2, 1100003, 2, 1, "cpu random: n_right 1100003 (no transposed chunk: the SSE2 step 1)");
    cpu_random(16, 4103, 4, 2, "cpu random: 16 left rows, n_right 4103");
    cpu_random_c = 1;
    cpu_random(24, 531, 5, 3, "cpu random: every c non-zero");
    cpu_random_c = 2;
    cpu_random(11, 299, 5, 3, "cpu random: every c zero");
    cpu_random_c = 0;
}

/* 2 and 3: refusals */
static void refusals(pl_backend *be)
{
    hh_params p = hh_args_model(3, 2, 1, 1.0, 2.0, 0.5, 0.8, 2, PL_PHONON_SITE, PL_BOUNDARY_OPEN);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    TU_OK(hh_model_create(&p, &m));
    TU_OK(hh_mf_create(m, &mf));
    if (!mf) goto done;
    pl_kron k;
    hh_mf_kron(mf, &k);
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    pl_op *op = (pl_op *)&oo; /* must be reset to NULL */
    /* a column of A out of range */
    const int64_t nnz = k.a_ptr[k.n_left];
    int32_t *col = malloc((size_t)nnz * sizeof *col);
    int32_t *lo = malloc((size_t)(k.n_right * k.nterms) * sizeof *lo);
    TU_CHECK(col && lo && nnz > 0);
    if (col && lo && nnz > 0) {
        pl_kron b = k;
        memcpy(col, k.a_col, (size_t)nnz * sizeof *col);
        col[nnz / 2] = (int32_t)k.n_left;
        b.a_col = col;
        TU_CHECK(pl_kron_check(&b) == PL_ERR_ARG);
        TU_CHECK_MSG(strstr(pl_error_message(), "outside") != NULL, "message '%s'", pl_error_message());
        TU_CHECK(pl_op_create_kron(&b, &oo, be, MPI_COMM_WORLD, &op) == PL_ERR_ARG && op == NULL);
        pl_error_clear();
        /* a column of a right factor out of range: lo = n_right, then lo = -2 */
        b = k;
        memcpy(lo, k.lo, (size_t)(k.n_right * k.nterms) * sizeof *lo);
        b.lo = lo;
        lo[k.n_right * k.nterms - 1] = (int32_t)k.n_right;
        TU_CHECK(pl_kron_check(&b) == PL_ERR_ARG);
        lo[k.n_right * k.nterms - 1] = -2;
        TU_CHECK(pl_kron_check(&b) == PL_ERR_ARG);
        b.n_right = 0;
        TU_CHECK(pl_kron_check(&b) == PL_ERR_ARG);
        TU_CHECK(pl_kron_check(NULL) == PL_ERR_ARG);
        pl_error_clear();
        TU_OK(pl_kron_check(&k));
    }
    free(col);
    free(lo);
    TU_CHECK(pl_kron_norm_bound(NULL) == 0.0 && pl_kron_bytes(NULL) == 0);
    /* a backend without matrix-free kernels */
    {
        pl_backend *cb = NULL;
        TU_OK(pl_backend_cpu_create(&cb));
        if (cb) {
            cb->kron_create = NULL;
            op = (pl_op *)&oo;
            TU_CHECK(pl_op_create_kron(&k, &oo, cb, MPI_COMM_WORLD, &op) == PL_ERR_INPUT && op == NULL);
            TU_CHECK_MSG(strstr(pl_error_message(), "has no matrix-free kernels") != NULL, "message '%s'",
                         pl_error_message());
            pl_error_clear();
            pl_backend_destroy(&cb);
        }
    }
    /* format = matrix_free on a stored matrix */
    {
        pl_csr a = {0};
        TU_OK(hh_rows_csr(m, 0, hh_model_rows(m), &a));
        oo.format = PL_FORMAT_MATRIX_FREE;
        op = (pl_op *)&oo;
        TU_CHECK(pl_op_create(&a, &oo, be, MPI_COMM_WORLD, &op) == PL_ERR_INPUT && op == NULL);
        pl_error_clear();
        pl_csr_destroy(&a);
    }
done:
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
}

/* 4: more ranks than electron configurations: PL_ERR_INPUT on every rank,
 * no operator. */
static void ranks(pl_backend *be)
{
    int64_t ap[8] = {0};
    int32_t ac[1] = {0};
    double av[1] = {0.0}, dl[8] = {0.0}, dr[3] = {1.0, 2.0, 3.0};
    const pl_kron k = {.n_left = size - 1, .n_right = 3, .nterms = 0, .a_ptr = ap, .a_col = ac, .a_val = av,
                       .dl = dl, .dr = dr};
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    pl_op *op = (pl_op *)&oo;
    TU_OK(pl_kron_check(&k));
    TU_CHECK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &op) == PL_ERR_INPUT && op == NULL);
    TU_CHECK_MSG(strstr(pl_error_message(), "at least one per rank") != NULL, "message '%s'", pl_error_message());
    if (rank == 0) printf("%d ranks, %d electron configurations: %s\n", size, size - 1, pl_error_message());
    pl_error_clear();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, 0);
    const char *tb = getenv("PJDS_TEST_BACKEND");
    if (tb && !strcmp(tb, "cuda")) {
        if (pl_cuda_device_count() < 1) {
            if (rank == 0) fprintf(stderr, "skipped: no CUDA device\n");
            MPI_Finalize();
            return 77;
        }
        backend_kind = PL_BACKEND_CUDA;
    }
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(backend_kind, rank, &be));
    dist_be = be;
    if (be && size > 1) ranks(be);
    if (be) {
        const int S = PL_PHONON_SITE, Nm = PL_PHONON_NORMAL, P = PL_BOUNDARY_PERIODIC, O = PL_BOUNDARY_OPEN;
        const hh_params ms[] = {
            hh_args_model(4, 2, 2, 1.0, 3.0, 0.7, 0.9, 3, S, P),    /* site, periodic */
            hh_args_model(4, 2, 1, 1.0, 2.0, 0.5, 0.8, 3, Nm, O),   /* normal, open, n_up != n_down */
            hh_args_model(5, 3, 1, -0.8, 4.0, 1.3, 1.6, 2, S, O),   /* site, open */
            hh_args_model(5, 2, 2, 1.1, -2.0, 0.45, 0.6, 2, Nm, P), /* normal, periodic, U < 0 */
            hh_args_model(4, 3, 0, 1.0, 2.0, 0.5, 0.8, 3, S, P),    /* n_down = 0 */
            hh_args_model(4, 2, 0, 0.37, 5.0, 2.5, 0.31, 3, Nm, O), /* n_down = 0, normal */
            hh_args_model(5, 2, 3, 1.0, 2.0, 0.5, 0.8, 1, Nm, P),   /* M = 1 */
            hh_args_model(6, 3, 2, 1.0, 2.0, 0.5, 0.8, 1, S, O),    /* M = 1 */
            hh_args_model(2, 1, 1, 1.0, 2.0, 0.5, 0.8, 4, S, P),    /* L = 2 periodic: summed hops */
            hh_args_model(4, 2, 2, 0.0, 2.0, 0.8, 0.6, 3, S, O),    /* t = 0: no A */
            hh_args_model(4, 2, 1, 1.0, 2.0, 0.8, 0.0, 3, Nm, P),   /* g = 0: no couplings */
            hh_args_model(4, 2, 2, 1.0, 2.0, 0.5, 0.8, 0, S, P),    /* M = 0: one phonon state */
            hh_args_model(6, 3, 3, 1.0, 2.0, 0.5, 0.8, 6, Nm, O),   /* configs/hh_184800.ini */
        };
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) check_model(be, &ms[i], i == 0);
        if (size == 1) refusals(be);
        cpu_random_cases();
#if PJDS_HAVE_CUDA
        if (backend_kind == PL_BACKEND_CUDA) random_cases(be);
#endif
        if (rank == 0 && size == 1)
            for (int i = 0; i < N_SIMD; i++)
                printf("kron_op: CPU kernels %s checked bit for bit on %d tables\n", simd_names[i], simd_checked[i]);
        for (int i = 0; size == 1 && i < N_SIMD; i++)
            TU_CHECK_MSG(simd_checked[i] > 0 || !simd_have(i), "PJDS_CPU_SIMD=%s never checked", simd_names[i]);
        if (rank == 0)
            printf("kron_op (%s, %d ranks): %d models, worst vs pJDS %.3g, vs long-double CSR / reference loop %.3g\n",
                   be->name, size, n_models, worst_pjds, worst_ref);
    }
    pl_backend_destroy(&be);
    int fails = tu_failures, gf = 0;
    MPI_Allreduce(&fails, &gf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = gf;
    const int r = tu_result("test_kron_op");
    MPI_Finalize();
    return r;
}
