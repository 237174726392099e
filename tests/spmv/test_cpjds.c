/* test_cpjds.c — the compressed pJDS against a plain serial CSR
 * product, through the distributed operator on the CPU backend.
 *
 * Matrices: Holstein-Hubbard models (site and normal phonon basis, periodic
 * and open boundary), random matrices with values from a few repeats and
 * with all values distinct, and the real matrices of ../shared/matrices
 * that are present (PJDS_MATRICES; Matrix Market, read by the test's own
 * reader).  Each rank takes a contiguous row block; format = compressed
 * must give y = A x within 1e-15 of max |A||x| (one rank: bitwise, the
 * entries are summed in the CSR's order), twice in a row, and the SpMMV
 * with R = 3 the same per column; format = auto must choose compressed for
 * the generated models.
 * Fallback: a matrix with too many distinct values and offsets for 32 bits
 * gives pJDS under auto (with the reason in the info) and PL_ERR_INPUT
 * "cannot be compressed" under compressed.  pl_cpjds_create alone: the
 * tables are sorted, padding is the word 0, the reference SpMV matches.
 * Run under mpirun with 1..4 ranks; PJDS_TEST_BACKEND=cuda runs the same
 * checks on the CUDA backend (bitwise is checked on the CPU only: the GPU
 * fuses multiply and add). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "mmref.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

static int rank, size;
static int backend_kind = PL_BACKEND_CPU; /* PJDS_TEST_BACKEND=cuda: the GPU kernels (ctest gpu_cpjds) */

static double xg_of(int64_t g) { return cos(0.37 * (double)g + 0.1) + 0.02 * (double)(g % 7); }

/* global CSR -> this rank's block (equal row split) */
static void block_of(const tm_csr *a, pl_csr *b)
{
    int64_t r0 = a->n * rank / size, r1 = a->n * (rank + 1) / size;
    TU_OK(pl_csr_alloc(b, a->n, r0, r1 - r0, a->ptr[r1] - a->ptr[r0]));
    b->ncols_global = a->n;
    tm_block_copy(a, r0, r1, b->row_ptr, b->col, b->val);
}

/* Operator of format fmt on a's blocks; y = A x and Y = A X (R = 3)
 * against the CSR reference.  Returns the format chosen (-1: creation
 * failed), the info into *info_out. */
/* 0: the tests of the rule of format = auto (compressed_auto = 1 on every
 * backend); 1: the backend's own choice (the CPU backend keeps pJDS) */
static int backend_own_auto = 0;

static int check_op(const tm_csr *a, int fmt, const char *name, pl_op_info *info_out)
{
    pl_csr blk;
    block_of(a, &blk);
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(backend_kind, 0, &be));
    if (!backend_own_auto) be->compressed_auto = 1; /* the rule of format = auto as on the GPU */
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.format = fmt;
    if (backend_kind == PL_BACKEND_CUDA && size > 1) oo.transport = PL_TRANSPORT_MPI; /* ranks may share a GPU */
    pl_op *op = NULL;
    int rc = pl_op_create(&blk, &oo, be, MPI_COMM_WORLD, &op);
    if (rc != PL_OK) {
        pl_csr_destroy(&blk);
        pl_backend_destroy(&be);
        return -1;
    }
    pl_op_info info;
    pl_op_get_info(op, &info);
    if (info_out) *info_out = info;
    const int64_t n = blk.nrows, *g = pl_op_global_index(op);
    double *xg = malloc(sizeof(double) * (size_t)(a->n + 1)), *yg = malloc(sizeof(double) * (size_t)(a->n + 1)),
           *ay = malloc(sizeof(double) * (size_t)(a->n + 1));
    for (int64_t i = 0; i < a->n; i++) xg[i] = xg_of(i);
    tm_spmv(a, xg, yg, ay);
    double aymax = 0.0;
    for (int64_t i = 0; i < a->n; i++) aymax = fmax(aymax, ay[i]);
    const int R = 3;
    const size_t nn = (size_t)(n ? n : 1);
    double *x = NULL, *y = NULL, *X = NULL, *Y = NULL;
    double *hx = malloc(nn * sizeof *hx), *hy = malloc(nn * sizeof *hy), *hX = malloc(nn * R * sizeof *hX),
           *hY = malloc(nn * R * sizeof *hY);
    TU_OK(be->vec_alloc(be, nn, &x));
    TU_OK(be->vec_alloc(be, nn, &y));
    TU_OK(be->vec_alloc(be, nn * R, &X));
    TU_OK(be->vec_alloc(be, nn * R, &Y));
    for (int64_t i = 0; i < n; i++) {
        hx[i] = xg[g[i]];
        for (int r = 0; r < R; r++) hX[i * R + r] = (r + 1.0) * xg[g[i]];
    }
    TU_OK(be->upload(be, x, hx, (size_t)n));
    TU_OK(be->upload(be, X, hX, (size_t)n * R));
    double err = 0.0, errb = 0.0;
    int bitwise = 1;
    for (int rep = 0; rep < 2; rep++) {
        TU_OK(pl_op_apply(op, x, y));
        TU_OK(be->download(be, hy, y, (size_t)n));
        for (int64_t i = 0; i < n; i++) {
            err = fmax(err, fabs(hy[i] - yg[g[i]]));
            if (hy[i] != yg[g[i]]) bitwise = 0;
        }
    }
    TU_OK(pl_op_apply_block(op, R, X, Y));
    TU_OK(be->download(be, hY, Y, (size_t)n * R));
    for (int64_t i = 0; i < n; i++)
        for (int r = 0; r < R; r++) errb = fmax(errb, fabs(hY[i * R + r] - (r + 1.0) * yg[g[i]]) / (r + 1.0));
    free(hx);
    free(hy);
    free(hX);
    free(hY);
    double e[2] = {err, errb}, ge[2];
    MPI_Allreduce(e, ge, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int gbit = 0;
    MPI_Allreduce(&bitwise, &gbit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const double tol = 1e-15 * fmax(aymax, 1e-300);
    TU_CHECK_MSG(ge[0] <= tol, "%s: SpMV error %.3g > %.3g", name, ge[0], tol);
    TU_CHECK_MSG(ge[1] <= tol, "%s: SpMMV error %.3g > %.3g", name, ge[1], tol);
    if (size == 1 && info.format == PL_FORMAT_COMPRESSED && backend_kind == PL_BACKEND_CPU)
        TU_CHECK_MSG(gbit, "%s: one rank, compressed: not bitwise equal to the CSR product", name);
    if (rank == 0)
        printf("%-28s %-10s n %7lld nnz %8lld  values %6lld offsets %6lld  bytes/entry %.2f  err %.2g / %.2g%s%s\n",
               name, info.format == PL_FORMAT_COMPRESSED ? "compressed" : "pjds", (long long)a->n, (long long)a->nnz,
               (long long)info.cmp_nval, (long long)info.cmp_noff, info.bytes_per_entry, ge[0], ge[1],
               info.format_note[0] ? "  note: " : "", info.format_note);
    be->vec_free(be, x);
    be->vec_free(be, y);
    be->vec_free(be, X);
    be->vec_free(be, Y);
    free(xg);
    free(yg);
    free(ay);
    pl_op_destroy(&op);
    pl_csr_destroy(&blk);
    pl_backend_destroy(&be);
    return info.format;
}

static void hh_matrix(int basis, int boundary, tm_csr *a)
{
    hh_params hp = {0}, *m = &hp;
    m->sites = 4;
    m->n_up = 2;
    m->n_down = 1;
    m->hopping = 1.0;
    m->hubbard_u = 4.0;
    m->phonon_frequency = 1.0;
    m->coupling = 0.7;
    m->max_phonons = 3;
    m->phonon_basis = basis;
    m->boundary = boundary;
    hh_model *h = NULL;
    TU_OK(hh_model_create(m, &h));
    pl_csr c;
    TU_OK(hh_rows_csr(h, 0, hh_model_rows(h), &c));
    a->n = c.nrows;
    a->nnz = c.row_ptr[c.nrows];
    a->ptr = malloc(sizeof(int64_t) * (size_t)(a->n + 1));
    a->col = malloc(sizeof(int64_t) * (size_t)(a->nnz ? a->nnz : 1));
    a->val = malloc(sizeof(double) * (size_t)(a->nnz ? a->nnz : 1));
    memcpy(a->ptr, c.row_ptr, sizeof(int64_t) * (size_t)(a->n + 1));
    memcpy(a->col, c.col, sizeof(int64_t) * (size_t)a->nnz);
    memcpy(a->val, c.val, sizeof(double) * (size_t)a->nnz);
    pl_csr_destroy(&c);
    hh_model_destroy(&h);
}

/* random pattern: the diagonal and `k` entries per row at random columns
 * (local != 0: inside the row's block of the equal row split, so that they
 * stay in the local part); values from `nrep` repeats (0: all distinct) */
static void random_matrix(int64_t n, int k, int nrep, int local, uint64_t seed, tm_csr *a)
{
    int64_t m = n * (k + 1);
    int64_t *I = malloc(sizeof(int64_t) * (size_t)m), *J = malloc(sizeof(int64_t) * (size_t)m);
    double *V = malloc(sizeof(double) * (size_t)m);
    uint64_t s = seed;
    int64_t q = 0;
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j <= k; j++) {
            I[q] = i;
            int64_t p = i * size / n, b0 = n * p / size, b1 = n * (p + 1) / size;
            while (b0 > i || i >= b1) { /* integer rounding of p */
                p += b0 > i ? -1 : 1;
                b0 = n * p / size;
                b1 = n * (p + 1) / size;
            }
            if (!local) b0 = 0, b1 = n;
            J[q] = j == 0 ? i : b0 + (int64_t)(tm_next(&s) % (uint64_t)(b1 - b0));
            V[q] = nrep ? (double)(1 + (int64_t)(tm_next(&s) % (uint64_t)nrep)) * 0.25 : tm_unif(&s) - 0.5;
            q++;
        }
    tm_from_coo(n, m, I, J, V, a);
    free(I);
    free(J);
    free(V);
}

static void check_create(const tm_csr *a)
{
    /* one block = the whole matrix, no MPI: tables sorted, padding 0 */
    if (rank) return;
    pl_csr c;
    TU_OK(pl_csr_alloc(&c, a->n, 0, a->n, a->nnz));
    c.ncols_global = a->n;
    tm_block_copy(a, 0, a->n, c.row_ptr, c.col, c.val);
    pl_cpjds p;
    TU_OK(pl_cpjds_create(&c, 32, &p));
    TU_CHECK(p.nval >= 1 && p.noff >= 1);
    uint64_t b0;
    memcpy(&b0, &p.vtab[0], sizeof b0);
    TU_CHECK(b0 == 0 && p.otab[0] == 0);
    for (int32_t k = 2; k < p.nval; k++) {
        uint64_t u, v;
        memcpy(&u, &p.vtab[k - 1], sizeof u);
        memcpy(&v, &p.vtab[k], sizeof v);
        TU_CHECK(u < v);
    }
    for (int32_t k = 2; k < p.noff; k++) TU_CHECK(p.otab[k - 1] < p.otab[k] && p.otab[k] != 0);
    TU_CHECK(pl_cpjds_bits(p.nval) + p.obits <= 32);
    for (int32_t c0 = 0; c0 < p.nchunks; c0++)
        for (int r = 0; r < p.C; r++)
            for (int32_t j = p.row_len[c0 * p.C + r]; j < p.chunk_width[c0]; j++)
                TU_CHECK(p.ent[p.chunk_start[c0] + (int64_t)j * p.C + r] == 0);
    double *x = malloc(sizeof(double) * (size_t)(a->n + 1)), *y = malloc(sizeof(double) * (size_t)(a->n + 1)),
           *yr = malloc(sizeof(double) * (size_t)(a->n + 1));
    for (int64_t i = 0; i < a->n; i++) x[i] = xg_of(i);
    pl_cpjds_spmv_ref(&p, x, y);
    tm_spmv(a, x, yr, NULL);
    for (int64_t i = 0; i < a->n; i++) TU_CHECK(y[i] == yr[i]);
    free(x);
    free(y);
    free(yr);
    pl_cpjds_destroy(&p);
    pl_csr_destroy(&c);
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

    /* generated models: compressed forced and auto */
    const char *bn[2] = {"site", "normal"}, *cn[2] = {"periodic", "open"};
    for (int basis = 0; basis < 2; basis++)
        for (int bc = 0; bc < 2; bc++) {
            tm_csr a;
            hh_matrix(basis, bc, &a);
            char name[64];
            snprintf(name, sizeof name, "hh %s %s", bn[basis], cn[bc]);
            check_create(&a);
            TU_CHECK_MSG(check_op(&a, PL_FORMAT_COMPRESSED, name, NULL) == PL_FORMAT_COMPRESSED, "%s", name);
            TU_CHECK_MSG(check_op(&a, PL_FORMAT_AUTO, name, NULL) == PL_FORMAT_COMPRESSED, "%s: auto", name);
            if (backend_kind == PL_BACKEND_CPU) { /* the CPU backend's own auto: pJDS, and the note says why */
                pl_op_info in;
                backend_own_auto = 1;
                TU_CHECK_MSG(check_op(&a, PL_FORMAT_AUTO, name, &in) == PL_FORMAT_PJDS, "%s: cpu auto", name);
                TU_CHECK_MSG(strstr(in.format_note, "pJDS kernels are faster") != NULL, "%s: cpu note '%s'", name,
                             in.format_note);
                backend_own_auto = 0;
            }
            TU_CHECK(check_op(&a, PL_FORMAT_PJDS, name, NULL) == PL_FORMAT_PJDS);
            tm_free(&a);
        }
    /* imported-like matrices with and without repeated values */
    {
        tm_csr a;
        random_matrix(3000, 5, 7, 0, 11, &a);
        check_create(&a);
        TU_CHECK(check_op(&a, PL_FORMAT_COMPRESSED, "random, 7 values", NULL) == PL_FORMAT_COMPRESSED);
        tm_free(&a);
        random_matrix(3000, 5, 0, 0, 12, &a);
        check_create(&a);
        TU_CHECK(check_op(&a, PL_FORMAT_COMPRESSED, "random, distinct values", NULL) == PL_FORMAT_COMPRESSED);
        pl_op_info in;
        TU_CHECK(check_op(&a, PL_FORMAT_AUTO, "random, distinct (auto)", &in) >= 0);
        tm_free(&a);
    }
    /* real matrices, where present */
    const char *dir = getenv("PJDS_MATRICES");
    const char *names[] = {"lund_a", "fidapm05", "rdb800l", "memplus", "mhd4800b"};
    int found = 0;
    for (size_t k = 0; dir && k < sizeof names / sizeof *names; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.mtx", dir, names[k]);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        fclose(f);
        mm_csr m;
        if (mm_read(path, &m) != 0) {
            TU_CHECK_MSG(0, "cannot read %s", path);
            continue;
        }
        tm_csr a = {m.n, m.nnz, m.rp, m.col, m.val};
        TU_CHECK(check_op(&a, PL_FORMAT_COMPRESSED, names[k], NULL) == PL_FORMAT_COMPRESSED);
        pl_op_info in;
        char nm[64];
        snprintf(nm, sizeof nm, "%s (auto)", names[k]);
        TU_CHECK(check_op(&a, PL_FORMAT_AUTO, nm, &in) >= 0);
        mm_free(&m);
        found++;
    }
    if (!found && rank == 0) printf("real matrices: none found (PJDS_MATRICES), part skipped\n");

    /* fallback: the local parts hold ~400000 / ranks distinct values and
     * ~2 x 100000 / ranks offsets: 19 + 18 bits on one rank, 17 + 16 on four */
    {
        tm_csr a;
        random_matrix(100000, 3, 0, 1, 13, &a);
        pl_op_info in;
        TU_CHECK(check_op(&a, PL_FORMAT_AUTO, "too many distinct (auto)", &in) == PL_FORMAT_PJDS);
        TU_CHECK_MSG(strstr(in.format_note, "exceed 32 bits") != NULL, "note: '%s'", in.format_note);
        pl_error_clear();
        TU_CHECK(check_op(&a, PL_FORMAT_COMPRESSED, "too many distinct (forced)", NULL) == -1);
        const char *msg = pl_error_message();
        TU_CHECK_MSG(strstr(msg, "cannot be compressed") != NULL, "message: '%s'", msg);
        if (rank == 0) printf("forced compressed on the incompressible matrix: %s\n", msg);
        pl_error_clear();
        tm_free(&a);
    }
    int fails = tu_failures, gf = 0;
    MPI_Allreduce(&fails, &gf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = gf;
    int r = tu_result("test_cpjds");
    MPI_Finalize();
    return r;
}
