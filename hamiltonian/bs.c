/* bs.c — the block-stencil operator A = M (x) B as a row generator (bs.h).
 *
 * Method: a row r = P b + c belongs to grid point P = (i, j, k) and block
 * component c.  Its entries are M[P][Q] B[c][c'] for the <= 27 neighbours Q
 * (|i'-i|, |j'-j|, |k'-k| <= 1), visited k' major, then j', then i', so
 * that the columns Q b + c' come out ascending.  M[P][Q] is formed from the
 * three tridiagonal 1D factors,
 *   M[P][Q] = shift e_x e_y e_z + t_x e_y e_z + e_x t_y e_z + e_x e_y t_z
 *             [+ corner (e_x + t_x)(e_y + t_y)(e_z + t_z)],
 * with e_d = [p_d == q_d] and t_d = T_d[p_d][q_d]; entries that are exactly
 * 0.0 (a coupling absent from the stencil, a product that underflows, a
 * cancelling diagonal) are not stored.  Rows are independent: both passes
 * (lengths, fill) are plain OpenMP loops over chunks of rows.
 *
 * The 1D factor is the Clement (Sylvester-Kac) matrix made nonsymmetric by a
 * diagonal similarity, so its spectrum stays real and exactly known
 * (Clement, SIAM Rev. 1 (1959) 50; Taussky & Todd, "Another look at a matrix
 * of Mark Kac", Lin. Alg. Appl. 150 (1991) 341).  B = X Lambda X^-1 with a
 * seeded random X: dense, nonsymmetric, complex pairs r_p exp(+-i phi).
 * The spectrum of A is the set of products m delta (docs/models.md "Block-stencil"). */
#define _DEFAULT_SOURCE
#include "bs.h"

#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gen_util.h"
#include "pl_error.h"
#include "pl_random.h"

#define ROW_CHUNK 8192 /* rows per OpenMP work item */
#define BS_MAX_B 64

/* One direction: T[p][p-1] = sub[p] (p >= 1), T[p][p+1] = sup[p] (p <= n-2). */
typedef struct bs_dir {
    int n;
    double h;        /* half-width of the spectrum: mu in [-h, h] */
    double *sub, *sup;
} bs_dir;

struct bs_model {
    int b, stencil;
    double shift, corner, convection, rotation;
    uint64_t seed;
    int64_t N, npoints;
    bs_dir d[3];
    double *blk;      /* B, row-major b x b */
    int nz_blk_row[BS_MAX_B]; /* non-zeros of each row of B */
    double min_abs_blk;       /* smallest |B[c][c']| != 0 */
};

static const double bs_h[3] = {1.0, 0.6180339887498949, 0.41421356237309503}; /* 1, (sqrt5-1)/2, sqrt2-1 */

/* Uniform in (-1, 1), a function of (seed, g) only (core/pl_random.h). */
static double bs_random(uint64_t seed, int64_t g) { return pl_random_from(pl_splitmix64(seed), g); }

static int dir_init(bs_dir *d, int n, double h, double rho)
{
    d->n = n;
    d->h = h;
    PL_MALLOC(d->sub, n);
    PL_MALLOC(d->sup, n);
    const double s = n > 1 ? h / (double)(n - 1) : 0.0;
    for (int p = 0; p < n; p++) {
        d->sub[p] = p >= 1 ? s * sqrt((double)p * (double)(n - p)) * rho : 0.0;
        d->sup[p] = p + 1 < n ? s * sqrt((double)(p + 1) * (double)(n - p - 1)) / rho : 0.0;
    }
    return PL_OK;
}

/* B = X Lambda X^-1 (row-major). */
static int block_init(bs_model *m)
{
    const int b = m->b;
    double *X = NULL, *Xi = NULL, *XL = NULL;
    lapack_int *ipiv = NULL;
    int rc = PL_OK;
    PL_MALLOC(m->blk, (size_t)b * b);
    X = malloc(sizeof *X * (size_t)b * b);
    Xi = malloc(sizeof *Xi * (size_t)b * b);
    XL = malloc(sizeof *XL * (size_t)b * b);
    ipiv = malloc(sizeof *ipiv * (size_t)b);
    PL_CHECK_GOTO(X && Xi && XL && ipiv, PL_ERR_MEM, out, rc, "out of host memory");
    const double amp = 0.5 / sqrt((double)b);
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++)
            X[r * b + c] = (r == c ? 1.0 : 0.0) + amp * bs_random(m->seed, (int64_t)r * b + c);
    memcpy(Xi, X, sizeof *X * (size_t)b * b);
    lapack_int info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, b, b, Xi, b, ipiv);
    PL_CHECK_GOTO(info >= 0, PL_ERR_LAPACK, out, rc, "LAPACKE_dgetrf: info = %d", (int)info);
    PL_CHECK_GOTO(info == 0, PL_ERR_INTERNAL, out, rc,
                  "block-stencil: the block eigenbasis X is singular for seed %llu (b = %d); choose another seed",
                  (unsigned long long)m->seed, b);
    info = LAPACKE_dgetri(LAPACK_ROW_MAJOR, b, Xi, b, ipiv);
    PL_CHECK_GOTO(info == 0, info > 0 ? PL_ERR_INTERNAL : PL_ERR_LAPACK, out, rc,
                  "LAPACKE_dgetri: info = %d (block eigenbasis X, seed %llu)", (int)info, (unsigned long long)m->seed);
    /* XL = X Lambda: Lambda acts on column pairs */
    const double cs = cos(m->rotation), sn = sin(m->rotation);
    for (int r = 0; r < b; r++) {
        for (int p = 0; p < b / 2; p++) {
            const double rp = 1.0 - (double)p / b;
            const double x0 = X[r * b + 2 * p], x1 = X[r * b + 2 * p + 1];
            /* [x0 x1] [[rp cs, rp sn], [-rp sn, rp cs]] */
            XL[r * b + 2 * p] = rp * (x0 * cs - x1 * sn);
            XL[r * b + 2 * p + 1] = rp * (x0 * sn + x1 * cs);
        }
        if (b % 2) XL[r * b + b - 1] = (1.0 - (double)(b / 2) / b) * X[r * b + b - 1];
    }
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) {
            double s = 0;
            for (int q = 0; q < b; q++) s += XL[r * b + q] * Xi[q * b + c];
            m->blk[r * b + c] = s;
        }
    m->min_abs_blk = INFINITY;
    for (int r = 0; r < b; r++) {
        m->nz_blk_row[r] = 0;
        for (int c = 0; c < b; c++) {
            double a = fabs(m->blk[r * b + c]);
            if (a != 0.0) {
                m->nz_blk_row[r]++;
                if (a < m->min_abs_blk) m->min_abs_blk = a;
            }
        }
    }
out:
    free(X);
    free(Xi);
    free(XL);
    free(ipiv);
    return rc;
}

int bs_model_create(const bs_params *par, bs_model **model)
{
    PL_CHECK(par && model, PL_ERR_ARG, "NULL argument");
    *model = NULL;
    PL_CHECK(par->nx >= 1, PL_ERR_INPUT, "nx = %d: must be >= 1", par->nx);
    PL_CHECK(par->ny >= 1, PL_ERR_INPUT, "ny = %d: must be >= 1", par->ny);
    PL_CHECK(par->nz >= 1, PL_ERR_INPUT, "nz = %d: must be >= 1", par->nz);
    PL_CHECK(par->block_size >= 1 && par->block_size <= BS_MAX_B, PL_ERR_INPUT, "block_size = %d: must be in 1..%d",
             par->block_size, BS_MAX_B);
    PL_CHECK(par->stencil == PL_STENCIL_7 || par->stencil == PL_STENCIL_27, PL_ERR_INPUT, "stencil: must be 7 or 27");
    PL_CHECK(par->convection >= 0 && par->convection < 1, PL_ERR_INPUT, "convection = %g: must be in [0, 1)",
             par->convection);
    PL_CHECK(par->rotation > 0 && par->rotation < M_PI, PL_ERR_INPUT, "rotation = %g: must be in (0, pi)", par->rotation);
    PL_CHECK(isfinite(par->shift) && isfinite(par->corner), PL_ERR_INPUT, "shift and corner must be finite");
    int64_t pts = 0, N = 0;
    PL_CHECK(!pl_mul_i64(par->nx, par->ny, &pts) && !pl_mul_i64(pts, par->nz, &pts) &&
                 !pl_mul_i64(pts, par->block_size, &N),
             PL_ERR_OVERFLOW, "block-stencil: N = nx ny nz block_size does not fit 64 bits");
    int64_t nnz = 0;
    PL_CHECK(!pl_mul_i64(N, 27 * (int64_t)par->block_size, &nnz), PL_ERR_OVERFLOW,
             "block-stencil: the number of non-zeros (up to 27 b N) does not fit 64 bits");
    bs_model *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->b = par->block_size;
    m->stencil = par->stencil;
    m->shift = par->shift;
    m->corner = par->stencil == PL_STENCIL_27 ? par->corner : 0.0;
    m->convection = par->convection;
    m->rotation = par->rotation;
    m->seed = par->seed;
    m->npoints = pts;
    m->N = N;
    const double rho = sqrt((1.0 + par->convection) / (1.0 - par->convection));
    const int n[3] = {par->nx, par->ny, par->nz};
    int rc = PL_OK;
    for (int d = 0; d < 3; d++) PL_CALL_GOTO(dir_init(&m->d[d], n[d], bs_h[d], rho), fail, rc);
    PL_CALL_GOTO(block_init(m), fail, rc);
    *model = m;
    return PL_OK;
fail:
    bs_model_destroy(&m);
    return rc;
}

void bs_model_destroy(bs_model **model)
{
    if (!model || !*model) return;
    bs_model *m = *model;
    for (int d = 0; d < 3; d++) {
        free(m->d[d].sub);
        free(m->d[d].sup);
    }
    free(m->blk);
    free(m);
    *model = NULL;
}

int64_t bs_model_rows(const bs_model *model) { return model->N; }

int bs_model_max_row_len(const bs_model *model) { return model->b * (model->stencil == PL_STENCIL_27 ? 27 : 7); }

int64_t bs_model_nnz_formula(const bs_model *m)
{
    const int64_t nx = m->d[0].n, ny = m->d[1].n, nz = m->d[2].n, b2 = (int64_t)m->b * m->b;
    if (m->stencil == PL_STENCIL_27) return b2 * (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
    return b2 * (nx * ny * nz + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1)));
}

void bs_model_factor_eigenvalues(const bs_model *m, double *mu_x, double *mu_y, double *mu_z, double *delta_re,
                                 double *delta_im)
{
    double *mu[3] = {mu_x, mu_y, mu_z};
    for (int d = 0; d < 3; d++) {
        if (!mu[d]) continue;
        const int n = m->d[d].n;
        for (int q = 0; q < n; q++) mu[d][q] = n > 1 ? m->d[d].h * (1.0 - 2.0 * q / (double)(n - 1)) : 0.0;
    }
    const int b = m->b;
    for (int p = 0; p < b / 2; p++) {
        const double rp = 1.0 - (double)p / b;
        if (delta_re) delta_re[2 * p] = delta_re[2 * p + 1] = rp * cos(m->rotation);
        if (delta_im) {
            delta_im[2 * p] = rp * sin(m->rotation);
            delta_im[2 * p + 1] = -rp * sin(m->rotation);
        }
    }
    if (b % 2) {
        if (delta_re) delta_re[b - 1] = 1.0 - (double)(b / 2) / b;
        if (delta_im) delta_im[b - 1] = 0.0;
    }
}

void bs_model_block(const bs_model *model, double *blk)
{
    memcpy(blk, model->blk, sizeof *blk * (size_t)model->b * model->b);
}

/* The couplings of grid point (i, j, k): Q ascending, m = M[P][Q] != 0.
 * Returns their number (<= 27). */
static int grid_row(const bs_model *m, int64_t P, int64_t *Q, double *val)
{
    const int nx = m->d[0].n, ny = m->d[1].n;
    const int p[3] = {(int)(P % nx), (int)((P / nx) % ny), (int)(P / ((int64_t)nx * ny))};
    /* per direction: up to 3 neighbours q with e = [q == p] and t = T[p][q] */
    int nq[3], q[3][3];
    double t[3][3], e[3][3];
    for (int d = 0; d < 3; d++) {
        const bs_dir *D = &m->d[d];
        int c = 0;
        if (p[d] > 0) { q[d][c] = p[d] - 1; t[d][c] = D->sub[p[d]]; e[d][c] = 0; c++; }
        q[d][c] = p[d]; t[d][c] = 0; e[d][c] = 1; c++;
        if (p[d] + 1 < D->n) { q[d][c] = p[d] + 1; t[d][c] = D->sup[p[d]]; e[d][c] = 0; c++; }
        nq[d] = c;
    }
    const int is27 = m->stencil == PL_STENCIL_27;
    int n = 0;
    for (int a = 0; a < nq[2]; a++)
        for (int bb = 0; bb < nq[1]; bb++)
            for (int c = 0; c < nq[0]; c++) {
                const double ex = e[0][c], ey = e[1][bb], ez = e[2][a];
                const double tx = t[0][c], ty = t[1][bb], tz = t[2][a];
                double v = m->shift * ex * ey * ez + tx * ey * ez + ex * ty * ez + ex * ey * tz;
                if (is27) v += m->corner * (ex + tx) * (ey + ty) * (ez + tz);
                if (v != 0.0) {
                    Q[n] = ((int64_t)q[2][a] * ny + q[1][bb]) * nx + q[0][c];
                    val[n++] = v;
                }
            }
    return n;
}

/* Length of row (P, c) given the grid couplings mv[ng]: exact, including
 * products that underflow to 0. */
static int row_count(const bs_model *m, int c, int ng, const double *mv)
{
    const int b = m->b;
    const double *brow = m->blk + (size_t)c * b;
    int len = 0;
    for (int g = 0; g < ng; g++) {
        if (fabs(mv[g]) * m->min_abs_blk >= 0x1.0p-1000) { /* no product can underflow */
            len += m->nz_blk_row[c];
            continue;
        }
        for (int cc = 0; cc < b; cc++) len += mv[g] * brow[cc] != 0.0;
    }
    return len;
}

static int row_fill(const bs_model *m, int c, int ng, const int64_t *Q, const double *mv, int64_t *col, double *val)
{
    const int b = m->b;
    const double *brow = m->blk + (size_t)c * b;
    int len = 0;
    for (int g = 0; g < ng; g++) {
        const int64_t base = Q[g] * b;
        for (int cc = 0; cc < b; cc++) {
            const double v = mv[g] * brow[cc];
            if (v != 0.0) {
                col[len] = base + cc;
                val[len++] = v;
            }
        }
    }
    return len;
}

int64_t bs_model_nnz(const bs_model *m)
{
    int64_t total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (int64_t P = 0; P < m->npoints; P++) {
        int64_t Q[27];
        double mv[27];
        const int ng = grid_row(m, P, Q, mv);
        for (int c = 0; c < m->b; c++) total += row_count(m, c, ng, mv);
    }
    return total;
}

int bs_row(const bs_model *m, int64_t row, int *len, int64_t *col, double *val)
{
    PL_CHECK(m && len && col && val, PL_ERR_ARG, "NULL argument");
    PL_CHECK(row >= 0 && row < m->N, PL_ERR_ARG, "row %lld outside [0, %lld)", (long long)row, (long long)m->N);
    int64_t Q[27];
    double mv[27];
    const int ng = grid_row(m, row / m->b, Q, mv);
    *len = row_fill(m, (int)(row % m->b), ng, Q, mv, col, val);
    return PL_OK;
}

static int check_range(const bs_model *m, int64_t r0, int64_t r1)
{
    PL_CHECK(m, PL_ERR_ARG, "NULL model");
    PL_CHECK(r0 >= 0 && r0 <= r1 && r1 <= m->N, PL_ERR_ARG, "row range [%lld, %lld) outside [0, %lld)", (long long)r0,
             (long long)r1, (long long)m->N);
    return PL_OK;
}

static void lengths_impl(const bs_model *m, int64_t r0, int64_t r1, int32_t *len, gen_progress *pg)
{
    const int64_t nchunks = (r1 - r0 + ROW_CHUNK - 1) / ROW_CHUNK;
    const int b = m->b;
#pragma omp parallel
    {
        int64_t Q[27];
        double mv[27];
#pragma omp for schedule(dynamic, 1)
        for (int64_t ch = 0; ch < nchunks; ch++) {
            const int64_t a = r0 + ch * ROW_CHUNK, e = a + ROW_CHUNK < r1 ? a + ROW_CHUNK : r1;
            int64_t P = -1;
            int ng = 0;
            for (int64_t r = a; r < e; r++) {
                if (r / b != P) {
                    P = r / b;
                    ng = grid_row(m, P, Q, mv);
                }
                len[r - r0] = row_count(m, (int)(r % b), ng, mv);
            }
            gen_progress_tick(pg, e - a);
        }
    }
}

int bs_row_lengths(const bs_model *model, int64_t r0, int64_t r1, int32_t *len)
{
    PL_CALL(check_range(model, r0, r1));
    PL_CHECK(len || r0 == r1, PL_ERR_ARG, "bs_row_lengths: NULL len");
    gen_progress pg = {pl_wtime(), pl_wtime(), 0, r1 - r0, "block-stencil", "row lengths"};
    lengths_impl(model, r0, r1, len, &pg);
    return PL_OK;
}

int bs_rows_csr(const bs_model *m, int64_t r0, int64_t r1, pl_csr *out)
{
    PL_CALL(check_range(m, r0, r1));
    PL_CHECK(out, PL_ERR_ARG, "bs_rows_csr: NULL output");
    memset(out, 0, sizeof *out);
    const int64_t nrows = r1 - r0;
    const int64_t nchunks = (nrows + ROW_CHUNK - 1) / ROW_CHUNK;
    const int b = m->b;
    const double t0 = pl_wtime();
    int32_t *len = NULL;
    PL_MALLOC(len, nrows);
    gen_progress pg = {t0, t0, 0, nrows, "block-stencil", "row lengths"};
    lengths_impl(m, r0, r1, len, &pg);
    pg.done = 0;
    pg.what = "rows";
    PL_CALL(gen_csr_from_lengths(PL_OK, m->N, r0, nrows, len, out));
    int64_t bad_row = -1;
#pragma omp parallel
    {
        int64_t Q[27], bc[27 * BS_MAX_B];
        double mv[27], bv[27 * BS_MAX_B];
#pragma omp for schedule(dynamic, 1)
        for (int64_t ch = 0; ch < nchunks; ch++) {
            const int64_t a = r0 + ch * ROW_CHUNK, e = a + ROW_CHUNK < r1 ? a + ROW_CHUNK : r1;
            int64_t P = -1;
            int ng = 0;
            for (int64_t r = a; r < e; r++) {
                if (r / b != P) {
                    P = r / b;
                    ng = grid_row(m, P, Q, mv);
                }
                const int64_t p0 = out->row_ptr[r - r0], want = out->row_ptr[r - r0 + 1] - p0;
                const int n = row_fill(m, (int)(r % b), ng, Q, mv, bc, bv);
                if (n != want) {
#pragma omp critical(bs_bad_row)
                    bad_row = r;
                    continue;
                }
                memcpy(out->col + p0, bc, (size_t)n * sizeof *bc);
                memcpy(out->val + p0, bv, (size_t)n * sizeof *bv);
            }
            gen_progress_tick(&pg, e - a);
        }
    }
    return gen_csr_finish("block-stencil", bad_row, r0, r1, t0, out);
}
