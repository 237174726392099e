/* lanczos.c — thick-restart Lanczos (TRLan) with full reorthogonalisation.
 *
 * Method: Wu & Simon, "Thick-restart Lanczos method for large symmetric
 * eigenvalue problems", SIAM J. Matrix Anal. Appl. 22 (2000) 602-616.
 *
 * Algorithm (one cycle; basis V = [v_0 .. v_m], one backend allocation of
 * ncv + 1 columns of n_local doubles, column j at V + j * ld):
 *   for j = k .. m-1:
 *       w = A v_j                                   (into column j+1)
 *       h = V_{0:j}^T w, w -= V h, twice            (classical Gram-Schmidt,
 *                                                    always two passes)
 *       T[j][j] = h_j; at j = k also T[i][k] = h_i for i < k (the arrow of
 *       the thick restart: h_i = s_i = beta_m y_{m,i} in exact arithmetic)
 *       beta_j = ||w||; v_{j+1} = w / beta_j, T[j][j+1] = beta_j
 *   The projected matrix T (arrow-head + tridiagonal) is solved densely on
 *   the host (LAPACKE_dsyev, rank 0, broadcast so that every rank takes the
 *   same decisions).  Residual estimate of Ritz pair i: |beta_m Y[m-1][i]|;
 *   converged when <= tol * max(|theta_i|, normest), normest = max(operator
 *   norm estimate, max |theta|).  nconv = the converged prefix of the nev
 *   wanted pairs.  Restart: keep k Ritz vectors V Y[:, 0:k] (updated in
 *   place, row block by row block through a small workspace), T = diag(theta),
 *   v_k = v_m.
 * Breakdown guard (relative): after the second Gram-Schmidt pass, w is
 *   numerically in span(V) when ||w|| <= ||w_after_pass_1|| / sqrt(2) (the
 *   second pass still cancelled: Kahan/Parlett "twice is enough") or
 *   ||w|| <= 64 eps ||A v_j||.  Then beta_j = 0 (an invariant subspace) and
 *   the expansion continues with a fresh random vector orthogonalised against
 *   the basis; if even that vector vanishes the basis spans the whole space.
 * Degenerate eigenvalues: a Krylov space of one start vector holds one
 *   vector per distinct eigenvalue, so copies of a multiple eigenvalue only
 *   grow from random injections and rounding, and a converged set can miss
 *   one (SciPy's eigsh does on HMEp).  With `verify`, when all nev converge
 *   the nev Ritz vectors are locked (their residuals, below the tolerance,
 *   are dropped) and thick-restart Lanczos runs on their complement from a
 *   fresh random vector, for the most wanted eigenvalue there.  If its Ritz
 *   value passes the least wanted locked one (by more than tol * scale), a
 *   wanted eigenvalue was missed: unlock and iterate on with everything.  If
 *   it converges (to tol) first, the locked set is accepted.  This costs
 *   about one more solve for a single eigenvalue.  (Tried and rejected:
 *   stopping at sqrt(tol), or starting from the next Ritz vector plus noise:
 *   both accept HMEp's set with one copy of the doubly degenerate third
 *   level missing.)
 * Final residuals ||A x_i - theta_i x_i|| are recomputed explicitly (one
 *   operator application each).
 *
 * Start vector: element of original global row g = hash(seed, g) in (-1, 1)
 * (splitmix64), generated on the host and uploaded, so the run does not
 * depend on the number of ranks or the permutation.
 *
 * Written against spmv.h only: no backend headers, no conditional code. */
#include "lanczos.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"

#define LZ_SQRT1_2 0.70710678118654752440

#define LZ_MPI(call)                                                                                     \
    do {                                                                                                 \
        int lz_m_ = (call);                                                                              \
        if (lz_m_ != MPI_SUCCESS) return pl_error_set(PL_ERR_MPI, __FILE__, __LINE__, __func__, "%s failed (%d)", #call, lz_m_); \
    } while (0)

const char *lz_reason_name(int reason)
{
    switch (reason) {
    case LZ_ITERATING: return "iterating";
    case LZ_CONVERGED: return "converged";
    case LZ_MAX_RESTARTS: return "max_restarts";
    case LZ_BREAKDOWN: return "breakdown";
    default: return "unknown";
    }
}

void lz_options_defaults(lz_options *o)
{
    memset(o, 0, sizeof *o);
    o->nev = 4;
    o->which = PL_WHICH_SMALLEST;
    o->tol = 1e-10;
    o->ncv = 0;
    o->max_restarts = 1000;
    o->seed = 1;
    o->want_vectors = 0;
    o->verify = 1;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

double lz_random_element(uint64_t seed, int64_t g)
{
    uint64_t x = splitmix64(splitmix64(seed) ^ (uint64_t)g);
    /* 53 random bits, centred in their cell: never exactly -1 or 1 */
    double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
    return 2.0 * u - 1.0;
}

/* ---- workspace -------------------------------------------------------- */
typedef struct lz_ws {
    pl_op *op;
    pl_backend *be;
    MPI_Comm comm;
    int rank;
    int64_t N;
    size_t n;          /* n_local */
    size_t ld;         /* column stride of V (= n_local, at least 1) */
    int m;             /* ncv */
    const int64_t *gidx;
    double *V;         /* backend, (m + 1) * ld */
    double *W;         /* backend, blk * m: workspace of the in-place update */
    size_t blk;
    double *h_vec;     /* host n_local: random vectors (page-locked via   */
                       /* be->host_alloc where the backend offers it)     */
    int h_vec_pinned;  /* h_vec came from be->host_alloc                  */
    double *T;         /* host m x m, column-major, ld m */
    double *Y;         /* host m x m eigenvectors of T */
    double *theta;     /* host m */
    double *bcast;     /* host m * m + m (rank 0 -> all) */
    double *c1, *c2;   /* host m + 1 Gram-Schmidt coefficients of each pass */
    double *cf;        /* host m + 1 their sum */
    double *Ysel;      /* host m x m: wanted columns of Y */
    int *ord;          /* host m: wanted order into theta */
    uint64_t seed;
    uint64_t n_random; /* random vectors drawn so far */
    int64_t napply;
    lz_timing t;
} lz_ws;

static double *col(lz_ws *w, int j) { return w->V + (size_t)j * w->ld; }

static int apply(lz_ws *w, int jin, int jout)
{
    double t0 = pl_wtime();
    PL_CALL(pl_op_apply(w->op, col(w, jin), col(w, jout)));
    w->t.spmv += pl_wtime() - t0;
    w->napply++;
    return PL_OK;
}

/* Orthogonalise column j against columns 0..k-1 with two classical
 * Gram-Schmidt passes and normalise it; coef[0:k] = the summed
 * coefficients, *nrm = the norm before the normalisation, *in_span = the
 * vector vanished numerically (see the file header; then column j is left
 * unnormalised, without the second correction, for the caller to replace).
 * Column j is column k of V (the callers orthogonalise the next column), so
 * the first pass's gemv_t over columns 0..k returns the coefficients and,
 * as its last entry, the squared norm of x.  The second pass's projection
 * and norm come from the backend's fused cgs_step (x -= V c1, c2 = V^T x,
 * ||x||^2: one pass over V) when it has one, else from gemv_n + gemv_t over
 * columns 0..k.  The norm after the second pass follows by Pythagoras,
 * ||x2||^2 = ||x1||^2 - ||c2||^2 (V has orthonormal columns and c2 is the
 * tiny correction of the second pass; a cancellation means x lies in
 * span(V), which in_span reports), so the last correction and the
 * normalisation are one gemv_n: x = (x - V c2) / ||x2||.
 * Per call: two reductions (two host synchronisations), 3k + 5 column
 * passes with cgs_step, 4k + 6 without (it was 4k + 8 with a separate
 * scal).  The backend is synchronised at the end so that the time of the
 * last, asynchronous correction is counted here, not in the next SpMV. */
static int orthogonalize(lz_ws *w, int k, int j, double *coef, double *nrm, int *in_span)
{
    double t0 = pl_wtime();
    double *x = col(w, j);
    const double col_bytes = 8.0 * (double)w->n;
    double n0, n1, n2;
    PL_CHECK(j == k, PL_ERR_INTERNAL, "orthogonalize: column %d is not column k = %d", j, k);
    if (k == 0) {
        PL_CALL(pl_vec_nrm2(w->op, x, &n0));
        n1 = n2 = n0;
        w->t.vec_bytes += col_bytes;
        w->t.reductions++;
    } else {
        PL_CALL(pl_vec_gemv_t(w->op, k + 1, w->V, w->ld, x, w->c1));
        n0 = sqrt(fmax(w->c1[k], 0.0));
        if (w->be->cgs_step) {
            PL_CALL(pl_vec_cgs_step(w->op, k, w->V, w->ld, x, w->c1, w->c2));
            /* gemv_t: k + 1 columns read; cgs_step: k columns and x read, x written */
            w->t.vec_bytes += col_bytes * (double)((k + 1) + (k + 2));
        } else {
            PL_CALL(w->be->gemv_n(w->be, w->n, k, -1.0, w->V, w->ld, w->c1, 1.0, x));
            PL_CALL(pl_vec_gemv_t(w->op, k + 1, w->V, w->ld, x, w->c2));
            w->t.vec_bytes += col_bytes * (double)((k + 1) + (k + 2) + (k + 1));
        }
        w->t.reductions += 2;
        n1 = sqrt(fmax(w->c2[k], 0.0));
        double s2 = 0.0;
        for (int i = 0; i < k; i++) {
            coef[i] = w->c1[i] + w->c2[i];
            s2 += w->c2[i] * w->c2[i];
        }
        n2 = sqrt(fmax(n1 * n1 - s2, 0.0));
    }
    *nrm = n2;
    *in_span = !(n2 > 0.0) || (k > 0 && n2 <= LZ_SQRT1_2 * n1) || n2 <= 64.0 * DBL_EPSILON * n0;
    if (!*in_span) {
        if (k == 0) {
            PL_CALL(w->be->scal(w->be, w->n, 1.0 / n2, x));
            w->t.vec_bytes += 2.0 * col_bytes;
        } else { /* x = (x - V c2) / n2 */
            PL_CALL(w->be->gemv_n(w->be, w->n, k, -1.0 / n2, w->V, w->ld, w->c2, 1.0 / n2, x));
            w->t.vec_bytes += col_bytes * (double)(k + 2);
        }
    }
    PL_CALL(w->be->sync(w->be));
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* Column j = a reproducible random vector (original-basis hash), made
 * orthonormal to columns 0..j-1.  *exhausted = it vanished (span(V) is the
 * whole space). */
static int random_direction(lz_ws *w, int j, int first, int *exhausted)
{
    double t0 = pl_wtime();
    uint64_t s = first ? w->seed : splitmix64(w->seed + 0xD1B54A32D192ED03ull * ++w->n_random);
    double *hv = w->h_vec;
    const int64_t *gi = w->gidx;
    const size_t n = w->n;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) hv[i] = lz_random_element(s, gi[i]);
    PL_CALL(w->be->upload(w->be, col(w, j), w->h_vec, w->n));
    w->t.other += pl_wtime() - t0;
    double nrm;
    int in_span;
    PL_CALL(orthogonalize(w, j, j, w->cf, &nrm, &in_span)); /* normalises column j */
    /* a random vector that keeps < 64 eps of its norm is in span(V) */
    *exhausted = in_span;
    return PL_OK;
}

/* V[:, off:off+kk] = V[:, off:off+s] Ysel (s x kk, ld s), in place: the
 * backend's basis_update when it has one (one pass, no workspace), else by
 * row blocks through the workspace W (gemm, then kk copies back). */
static int update_basis(lz_ws *w, int off, int s, int kk)
{
    double t0 = pl_wtime();
    if (w->be->basis_update) {
        PL_CALL(w->be->basis_update(w->be, w->n, s, kk, col(w, off), w->ld, w->Ysel, s));
        PL_CALL(w->be->sync(w->be));
        w->t.restart += pl_wtime() - t0;
        return PL_OK;
    }
    const double *Vo = col(w, off);
    for (size_t r0 = 0; r0 < w->n; r0 += w->blk) {
        size_t b = w->n - r0 < w->blk ? w->n - r0 : w->blk;
        PL_CALL(w->be->gemm(w->be, b, s, kk, Vo + r0, w->ld, w->Ysel, s, w->W, b));
        for (int c = 0; c < kk; c++) PL_CALL(w->be->copy(w->be, b, w->W + (size_t)c * b, col(w, off + c) + r0));
    }
    PL_CALL(w->be->sync(w->be));
    w->t.restart += pl_wtime() - t0;
    return PL_OK;
}

/* Eigen-decomposition of the block T[off:mm, off:mm] (size s = mm - off) on
 * rank 0, broadcast so that every rank decides alike; fills theta (s), Y
 * (s x s, ld s) and ord (wanted order into theta). */
static int projected(lz_ws *w, int off, int mm, int which)
{
    double t0 = pl_wtime();
    int s = mm - off;
    size_t s2 = (size_t)s * (size_t)s;
    if (w->rank == 0) {
        for (int c = 0; c < s; c++)
            for (int r = 0; r < s; r++) w->Y[(size_t)c * s + r] = w->T[(size_t)(off + c) * w->m + off + r];
        lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', s, w->Y, s, w->theta);
        w->bcast[s2 + s] = (double)info;
        memcpy(w->bcast, w->Y, s2 * sizeof(double));
        memcpy(w->bcast + s2, w->theta, (size_t)s * sizeof(double));
    }
    LZ_MPI(MPI_Bcast(w->bcast, (int)(s2 + s + 1), MPI_DOUBLE, 0, w->comm));
    int info = (int)w->bcast[s2 + s];
    PL_CHECK(info == 0, PL_ERR_LAPACK, "LAPACKE_dsyev on the %d x %d projected matrix failed (info %d)", s, s, info);
    if (w->rank != 0) {
        memcpy(w->Y, w->bcast, s2 * sizeof(double));
        memcpy(w->theta, w->bcast + s2, (size_t)s * sizeof(double));
    }
    /* dsyev returns ascending eigenvalues */
    for (int i = 0; i < s; i++) w->ord[i] = which == PL_WHICH_LARGEST ? s - 1 - i : i;
    w->t.projected += pl_wtime() - t0;
    return PL_OK;
}

/* Ysel = the first kk wanted columns of Y (s x s). */
static void select_columns(lz_ws *w, int s, int kk)
{
    for (int c = 0; c < kk; c++)
        memcpy(w->Ysel + (size_t)c * s, w->Y + (size_t)w->ord[c] * s, (size_t)s * sizeof(double));
}

/* Reset T after a restart: locked (nlock) and kept Ritz values on the
 * diagonal, nothing else. */
static void reset_T(lz_ws *w, int nlock, const double *lock_theta, int kk)
{
    memset(w->T, 0, (size_t)w->m * w->m * sizeof(double));
    for (int i = 0; i < nlock; i++) w->T[(size_t)i * w->m + i] = lock_theta[i];
    for (int i = 0; i < kk; i++) w->T[(size_t)(nlock + i) * w->m + nlock + i] = w->theta[w->ord[i]];
}

/* The vector to expand from after a restart into column j: the residual
 * direction v_mm if it exists, else a fresh random one. */
static int restart_vector(lz_ws *w, int mm, int j, int vm_valid, int *ok)
{
    *ok = 1;
    if (vm_valid) {
        double t0 = pl_wtime();
        PL_CALL(w->be->copy(w->be, w->n, col(w, mm), col(w, j)));
        w->t.restart += pl_wtime() - t0;
        return PL_OK;
    }
    int ex;
    PL_CALL(random_direction(w, j, 0, &ex));
    *ok = !ex;
    return PL_OK;
}

static int push_history(lz_result *res, int *cap, int nev, int64_t it, const double *ritz, const double *resid)
{
    if (res->nhist == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        int64_t *hi = realloc(res->hist_iterations, (size_t)nc * sizeof *hi);
        PL_CHECK(hi, PL_ERR_MEM, "out of host memory (history)");
        res->hist_iterations = hi;
        double *hr = realloc(res->hist_ritz, (size_t)nc * nev * sizeof *hr);
        PL_CHECK(hr, PL_ERR_MEM, "out of host memory (history)");
        res->hist_ritz = hr;
        double *he = realloc(res->hist_resid, (size_t)nc * nev * sizeof *he);
        PL_CHECK(he, PL_ERR_MEM, "out of host memory (history)");
        res->hist_resid = he;
        *cap = nc;
    }
    res->hist_iterations[res->nhist] = it;
    memcpy(res->hist_ritz + (size_t)res->nhist * nev, ritz, (size_t)nev * sizeof(double));
    memcpy(res->hist_resid + (size_t)res->nhist * nev, resid, (size_t)nev * sizeof(double));
    res->nhist++;
    return PL_OK;
}

static void ws_free(lz_ws *w)
{
    if (w->be) {
        if (w->V) w->be->vec_free(w->be, w->V);
        if (w->W) w->be->vec_free(w->be, w->W);
    }
    if (w->h_vec_pinned && w->be && w->be->host_free) w->be->host_free(w->be, w->h_vec);
    else free(w->h_vec);
    free(w->T);
    free(w->Y);
    free(w->theta);
    free(w->bcast);
    free(w->c1);
    free(w->c2);
    free(w->cf);
    free(w->Ysel);
    free(w->ord);
    memset(w, 0, sizeof *w);
}

void lz_result_destroy(lz_result *res)
{
    if (!res) return;
    if (res->vectors && res->be) res->be->vec_free(res->be, res->vectors);
    free(res->eigenvalues);
    free(res->residuals);
    free(res->hist_iterations);
    free(res->hist_ritz);
    free(res->hist_resid);
    memset(res, 0, sizeof *res);
}

static size_t lz_atleast1(size_t n) { return n ? n : 1; }

#define LZ_HOST_ALLOC(p, cnt, label)                                                                     \
    do {                                                                                                 \
        (p) = calloc(lz_atleast1((size_t)(cnt)), sizeof *(p));                                            \
        PL_CHECK_GOTO((p), PL_ERR_MEM, label, err, "out of host memory (%s)", #p);                       \
    } while (0)

static int solve(lz_ws *w, const lz_options *opt, lz_result *res);

int lz_solve(pl_op *op, const lz_options *opt, lz_result *res)
{
    double t_start = pl_wtime();
    int err = PL_OK;
    memset(res, 0, sizeof *res);
    PL_CHECK(op && opt, PL_ERR_ARG, "lz_solve: NULL operator or options");
    pl_op_info info;
    pl_op_get_info(op, &info);
    PL_CHECK(opt->nev >= 1 && opt->nev < info.n_global, PL_ERR_INPUT, "[solver] nev = %d must be < N = %lld (and >= 1)",
             opt->nev, (long long)info.n_global);
    PL_CHECK(opt->tol > 0 && opt->tol < 1, PL_ERR_INPUT, "[solver] tolerance = %g must be in (0, 1)", opt->tol);
    PL_CHECK(opt->which == PL_WHICH_SMALLEST || opt->which == PL_WHICH_LARGEST, PL_ERR_INPUT,
             "[solver] which = %d: must be smallest or largest", opt->which);
    PL_CHECK(opt->max_restarts >= 0, PL_ERR_INPUT, "[solver] max_restarts = %d must be >= 0", opt->max_restarts);
    int64_t m = opt->ncv > 0 ? opt->ncv : (2 * opt->nev + 10 > 24 ? 2 * opt->nev + 10 : 24);
    PL_CHECK(m >= opt->nev + 1, PL_ERR_INPUT, "[solver] ncv = %lld must be >= nev + 1 = %d", (long long)m, opt->nev + 1);
    if (m > info.n_global) m = info.n_global;

    lz_ws w;
    memset(&w, 0, sizeof w);
    w.op = op;
    w.be = pl_op_backend(op);
    w.comm = pl_op_comm(op);
    if (MPI_Comm_rank(w.comm, &w.rank) != MPI_SUCCESS) return PL_ERROR(PL_ERR_MPI, "MPI_Comm_rank failed");
    w.N = info.n_global;
    w.n = (size_t)info.n_local;
    w.ld = w.n ? w.n : 1;
    w.m = (int)m;
    w.gidx = pl_op_global_index(op);
    w.seed = opt->seed;

    size_t vlen;
    PL_CHECK(!pl_mul_size((size_t)m + 1, w.ld, &vlen), PL_ERR_OVERFLOW, "basis size (ncv + 1) x n_local overflows");
    PL_CALL_GOTO(w.be->vec_alloc(w.be, vlen, &w.V), fail, err);
    w.blk = w.n / 16;
    if (w.blk < 8192) w.blk = 8192;
    if (w.blk > w.n) w.blk = w.n ? w.n : 1;
    if (!w.be->basis_update) PL_CALL_GOTO(w.be->vec_alloc(w.be, w.blk * (size_t)m, &w.W), fail, err);
    if (w.be->host_alloc && w.be->host_free) { /* page-locked: the start-vector upload at full speed */
        PL_CALL_GOTO(w.be->host_alloc(w.be, lz_atleast1(w.n), &w.h_vec), fail, err);
        w.h_vec_pinned = 1;
    } else {
        LZ_HOST_ALLOC(w.h_vec, w.n, fail);
    }
    LZ_HOST_ALLOC(w.T, m * m, fail);
    LZ_HOST_ALLOC(w.Y, m * m, fail);
    LZ_HOST_ALLOC(w.theta, m, fail);
    LZ_HOST_ALLOC(w.bcast, m * m + m + 1, fail);
    LZ_HOST_ALLOC(w.c1, m + 1, fail);
    LZ_HOST_ALLOC(w.c2, m + 1, fail);
    LZ_HOST_ALLOC(w.cf, m + 1, fail);
    LZ_HOST_ALLOC(w.Ysel, m * m + m + 1, fail);
    LZ_HOST_ALLOC(w.ord, m, fail);
    LZ_HOST_ALLOC(res->eigenvalues, opt->nev, fail);
    LZ_HOST_ALLOC(res->residuals, opt->nev, fail);

    PL_CALL_GOTO(solve(&w, opt, res), fail, err);
    if (opt->want_vectors) {
        res->vectors = w.V; /* the first nev columns hold the eigenvectors */
        res->ld = w.ld;
        res->be = w.be;
        w.V = NULL;
    }
    w.t.total = pl_wtime() - t_start;
    res->time = w.t;
    ws_free(&w);
    return PL_OK;
fail:
    ws_free(&w);
    lz_result_destroy(res);
    return err;
}

static int solve(lz_ws *w, const lz_options *opt, lz_result *res)
{
    const int nev = opt->nev, m = w->m;
    const double tol = opt->tol;
    const int smallest = opt->which != PL_WHICH_LARGEST;
    double t_begin = pl_wtime();
    pl_op_info info;
    pl_op_get_info(w->op, &info);
    res->nev = nev;
    res->ncv = m;

    double *ritz = NULL, *est = NULL, *lock_theta = NULL, *lock_est = NULL;
    int err = PL_OK, hcap = 0;
    ritz = malloc((size_t)nev * sizeof *ritz);
    est = malloc((size_t)nev * sizeof *est);
    lock_theta = malloc((size_t)nev * sizeof *lock_theta);
    lock_est = malloc((size_t)nev * sizeof *lock_est);
    PL_CHECK_GOTO(ritz && est && lock_theta && lock_est, PL_ERR_MEM, out, err, "out of host memory");

    int exhausted = 0;
    PL_CALL_GOTO(random_direction(w, 0, 1, &exhausted), out, err);
    PL_CHECK_GOTO(!exhausted, PL_ERR_INTERNAL, out, err, "the start vector is zero");

    int k = 0;         /* columns kept (locked + Ritz) at the start of the cycle */
    int nlock = 0;     /* verification phase: nev locked pairs in columns 0..nev-1 */
    int restarts = 0, reason = LZ_ITERATING, nconv = 0, mm = m, final_locked = 0;
    double beta_m = 0.0, normest = info.norm_estimate;
    reset_T(w, 0, NULL, 0);

    while (reason == LZ_ITERATING) {
        /* ---- expansion: columns k .. m ---- */
        mm = m;
        int vm_valid = 1;
        for (int j = k; j < m; j++) {
            double nrm;
            int in_span;
            double ts = pl_wtime();
            PL_CALL_GOTO(apply(w, j, j + 1), out, err);
            PL_CALL_GOTO(orthogonalize(w, j + 1, j + 1, w->cf, &nrm, &in_span), out, err); /* normalises */
            w->t.steps++;
            w->t.steps_time += pl_wtime() - ts;
            const double *coef = w->cf;
            w->T[(size_t)j * m + j] = coef[j];
            if (j == k) /* arrow of the thick restart; locked columns stay decoupled */
                for (int i = nlock; i < k; i++) w->T[(size_t)k * m + i] = w->T[(size_t)i * m + k] = coef[i];
            double beta = nrm;
            if (in_span) {
                res->breakdowns++;
                beta = 0.0;
                if (j + 1 < m) {
                    int ex;
                    PL_CALL_GOTO(random_direction(w, j + 1, 0, &ex), out, err);
                    if (ex) { /* span(V) is the whole space: T is exact */
                        mm = j + 1;
                        vm_valid = 0;
                        beta_m = 0.0;
                        break;
                    }
                } else {
                    /* no v_m to restart from; the dropped coupling nrm (tiny,
                     * not 0) still bounds the residuals: a tolerance below
                     * rounding must not count as met */
                    vm_valid = 0;
                    beta = nrm;
                }
            }
            if (j + 1 < m) w->T[(size_t)(j + 1) * m + j] = w->T[(size_t)j * m + (j + 1)] = beta;
            beta_m = beta;
        }
        int whole_space = (int64_t)mm >= w->N;

        /* ---- verification phase: is a wanted eigenvalue outside the locked set? ---- */
        if (nlock > 0) {
            int s = mm - nlock;
            PL_CALL_GOTO(projected(w, nlock, mm, opt->which), out, err);
            int c = w->ord[0];
            double thc = w->theta[c], estc = fabs(beta_m * w->Y[(size_t)c * s + (s - 1)]);
            for (int i = 0; i < s; i++) normest = fmax(normest, fabs(w->theta[i]));
            double scale = fmax(fabs(thc), normest), edge = lock_theta[nev - 1];
            int missed = smallest ? thc < edge - tol * scale : thc > edge + tol * scale;
            double worst = 0.0;
            for (int i = 0; i < nev; i++) worst = fmax(worst, lock_est[i] / fmax(fabs(lock_theta[i]), normest));
            if (!missed) { /* (a missed one: the history row comes from the full problem below) */
                PL_CALL_GOTO(push_history(res, &hcap, nev, w->napply, lock_theta, lock_est), out, err);
                if (opt->monitor) {
                    lz_monitor_info mi = {restarts, nev, nev, w->napply, lock_theta, lock_est, worst,
                                          pl_wtime() - t_begin, 1};
                    opt->monitor(opt->monitor_arg, &mi);
                }
            }
            if (missed) {
                /* a wanted eigenvalue (e.g. another copy of a degenerate one) was
                 * missed: unlock, continue the normal iteration on the whole basis */
                nlock = 0;
                res->missed++;
            } else if (estc <= tol * scale || whole_space || restarts >= opt->max_restarts) {
                reason = LZ_CONVERGED;
                final_locked = 1;
                nconv = nev;
                break;
            } else {
                /* thick restart inside the complement of the locked vectors */
                int kk = 1 + (s - 1) / 2;
                if (kk > s - 1) kk = s - 1;
                select_columns(w, s, kk);
                PL_CALL_GOTO(update_basis(w, nlock, s, kk), out, err);
                reset_T(w, nlock, lock_theta, kk);
                int ok;
                PL_CALL_GOTO(restart_vector(w, mm, nlock + kk, vm_valid, &ok), out, err);
                PL_CHECK_GOTO(ok, PL_ERR_INTERNAL, out, err, "no restart vector in the verification phase");
                k = nlock + kk;
                restarts++;
                continue;
            }
        }

        /* ---- projected problem, convergence ---- */
        PL_CALL_GOTO(projected(w, 0, mm, opt->which), out, err);
        for (int i = 0; i < mm; i++) normest = fmax(normest, fabs(w->theta[i]));
        double worst = 0.0;
        int nc = 0, prefix = 1;
        for (int i = 0; i < nev; i++) {
            if (i >= mm) { /* cannot happen: mm > nev */
                ritz[i] = NAN;
                est[i] = INFINITY;
                prefix = 0;
                continue;
            }
            int c = w->ord[i];
            ritz[i] = w->theta[c];
            est[i] = fabs(beta_m * w->Y[(size_t)c * mm + (mm - 1)]);
            double scale = fmax(fabs(ritz[i]), normest);
            worst = fmax(worst, est[i] / scale);
            if (prefix && est[i] <= tol * scale) nc++;
            else prefix = 0;
        }
        nconv = nc;
        PL_CALL_GOTO(push_history(res, &hcap, nev, w->napply, ritz, est), out, err);
        if (opt->monitor) {
            lz_monitor_info mi = {restarts, nconv, nev, w->napply, ritz, est, worst, pl_wtime() - t_begin, 0};
            opt->monitor(opt->monitor_arg, &mi);
        }

        if (nconv >= nev) {
            if (!opt->verify || whole_space || restarts >= opt->max_restarts || m - nev < 2) {
                reason = LZ_CONVERGED;
                break;
            }
            /* verification phase: lock the nev pairs (their residuals are below
             * the tolerance and dropped), and look for the most wanted
             * eigenvalue of A restricted to their complement, from a fresh
             * random vector (not from the next Ritz vector: its Ritz value
             * would converge first and hide a missed copy beyond it) */
            select_columns(w, mm, nev);
            PL_CALL_GOTO(update_basis(w, 0, mm, nev), out, err);
            memcpy(lock_theta, ritz, (size_t)nev * sizeof(double));
            memcpy(lock_est, est, (size_t)nev * sizeof(double));
            reset_T(w, nev, lock_theta, 0);
            int ex;
            PL_CALL_GOTO(random_direction(w, nev, 0, &ex), out, err);
            PL_CHECK_GOTO(!ex, PL_ERR_INTERNAL, out, err, "verification vector vanished (nev = %d, N = %lld)", nev,
                          (long long)w->N);
            nlock = nev;
            k = nev;
            restarts++;
            res->verifications++;
            continue;
        }
        if (whole_space) { /* every Ritz value is exact; cannot happen with nconv < nev */
            reason = LZ_BREAKDOWN;
            break;
        }
        if (restarts >= opt->max_restarts) {
            reason = LZ_MAX_RESTARTS;
            break;
        }

        /* ---- thick restart ---- */
        int kk = nev + (mm - nev) / 2;
        if (kk < nev + 1) kk = nev + 1;
        if (kk > mm - 1) kk = mm - 1;
        select_columns(w, mm, kk);
        PL_CALL_GOTO(update_basis(w, 0, mm, kk), out, err);
        reset_T(w, 0, NULL, kk);
        int ok;
        PL_CALL_GOTO(restart_vector(w, mm, kk, vm_valid, &ok), out, err);
        if (!ok) {
            reason = LZ_BREAKDOWN;
            break;
        }
        k = kk;
        restarts++;
    }

    /* ---- Ritz vectors and explicit residuals ---- */
    if (final_locked) {
        memcpy(res->eigenvalues, lock_theta, (size_t)nev * sizeof(double)); /* V[:, 0:nev] holds the vectors */
    } else {
        select_columns(w, mm, nev);
        PL_CALL_GOTO(update_basis(w, 0, mm, nev), out, err);
        for (int i = 0; i < nev; i++) res->eigenvalues[i] = w->theta[w->ord[i]];
    }
    {
        double t0 = pl_wtime(), tsp = w->t.spmv;
        for (int i = 0; i < nev; i++) {
            double r;
            PL_CALL_GOTO(apply(w, i, m), out, err);
            PL_CALL_GOTO(w->be->axpy(w->be, w->n, -res->eigenvalues[i], col(w, i), col(w, m)), out, err);
            PL_CALL_GOTO(pl_vec_nrm2(w->op, col(w, m), &r), out, err);
            res->residuals[i] = r;
        }
        w->t.residual += pl_wtime() - t0 - (w->t.spmv - tsp);
    }
    res->normest = normest;
    res->nconv = nconv;
    res->restarts = restarts;
    res->iterations = w->napply;
    res->reason = reason;
out:
    free(ritz);
    free(est);
    free(lock_theta);
    free(lock_est);
    return err;
}
