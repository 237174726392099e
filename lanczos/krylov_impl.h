/* krylov_impl.h — what the Krylov methods of lanczos/ share (SLEPc keeps
 * this in src/eps/impls/krylov/krylov.c): the basis workspace V of ncv + 1
 * backend columns, the operator application with its counters, two-pass
 * classical Gram-Schmidt (the backend's fused cgs_step where it has one)
 * with a relative breakdown guard, reproducible random directions and the
 * in-place basis update V[:, 0:kk] = V[:, 0:s] Y.  Private to lanczos/.
 * Written against spmv.h only. */
#pragma once /* no conditional compilation anywhere in lanczos/: a test greps for it */

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "lanczos.h"
#include "spmv.h"

#define KR_MPI(call)                                                                                     \
    do {                                                                                                 \
        int kr_m_ = (call);                                                                              \
        if (kr_m_ != MPI_SUCCESS) return pl_error_set(PL_ERR_MPI, __FILE__, __LINE__, __func__, "%s failed (%d)", #call, kr_m_); \
    } while (0)

/* ---- restart budget and progress (kr_restart_budget, kr_give_up) -------
 * The budget: max_restarts >= 0 as given; LZ_RESTARTS_AUTO resolves to
 *   max(LZ_RESTARTS_FLOOR, ceil(3 x 10 N (ncv - nev) / p)) restarts, p =
 *   ncv - kk = ceil((ncv - nev) / 2) the products of one restart (both
 *   methods keep kk = nev + (ncv - nev) / 2 vectors): 3 x the products that
 *   SciPy's ARPACK default allows (maxiter = 10 N implicit restarts of
 *   ncv - nev products each; maxiter counts restarts, not products), about
 *   60 N of our restarts.  The factor 3: where ARPACK's default converged
 *   in the survey below, we needed 0.2 to 2.4 x its products (median 0.8;
 *   lund_a smallest_real at nev 4, ncv 12: 2.4 x, 24,172 products against
 *   10,105 of a budget of 11,760), so 1 x would give up where ARPACK
 *   converges.  Hopeless solves are ended by the trend below, not by this.
 * The progress score of a history row (one per cycle): over the nev wanted
 *   values, 0 for a converged one (estimate <= tol max(|theta|, normest0)),
 *   else c + min(c, log10(estimate / (tol max(|theta|, normest0)))), c =
 *   log10(1 / tol): a value that converges gains at least c decades, one
 *   that approaches the tolerance gains its decades.  normest0 is the
 *   operator's norm estimate (fixed, so that the score is a function of the
 *   history alone: a resumed solve recomputes it from the checkpoint's
 *   history and decides alike).
 * The trend, checked at history rows t = 8, 9, ... (stride max(1, t / 64)):
 *   falling when a row of (t/2, t] has score 0 (everything converged
 *   lately: verify, recheck) or when the lower quartile of the scores over
 *   the last half of the run, (t/2, t], lies more than KR_FLAT_DECADES
 *   below the lower quartile over the second eighth, (t/8, t/4]; else
 *   flat: no progress over about three quarters of the run.
 *   Quartiles, not minima: a non-normal matrix's Ritz values wander, and a
 *   few rows of a passing (wrong) set with small residuals must not make
 *   the rest of the run look flat.  The weight c of a converged value:
 *   values converge one by one while the others' residuals stay put for
 *   thousands of restarts (olm1000 largest_imaginary).  The far window:
 *   Krylov convergence comes in stairs, plateaus as long as the run so far
 *   before a new value is found or a cluster resolves (e20r0000, lund_a,
 *   olm1000, cryg2500 at small ncv).  In a survey of 164 solves of the
 *   shared matrices (README), 132 converge, 23 of them after restart 1000:
 *   against the quarter before, (t/4, t/2], 10 of those were stopped before
 *   they converged (ARPACK's default converges on several), against
 *   (t/8, t/4] none; 25 of the 32 that had not converged after 20000
 *   restarts stop, most at about 1000.
 * Auto only: a main-phase restart at restarts >= LZ_RESTARTS_FLOOR with the
 *   trend flat stops the solve as LZ_STAGNATED.  A solve that stopped
 *   improving at restart r0 so ends by about 8 r0, never before
 *   LZ_RESTARTS_FLOOR (1000) restarts. */
#define KR_PEER_MAXITER_PER_ROW 10 /* ARPACK's default maxiter = 10 N (per row) */
#define KR_PEER_FACTOR 3            /* x ARPACK's default products (see above)   */
#define KR_FLAT_DECADES 0.5
typedef struct kr_progress {
    int budget, is_auto; /* the resolved max_restarts; 1: from auto                */
    int nev;             /* columns of the history rows scored                     */
    double tol, scale;   /* the test's tol; normest0 (the operator's estimate)     */
    int nrow, cap;       /* rows scored so far (= res->nhist after a sync), room   */
    double *score;       /* per history row                                        */
    double *decades;     /* per history row: the residuals' decades above tol      */
    double *scr;         /* scratch for the quartiles                              */
    int next;            /* the next row to check the trend at                     */
    int trend;           /* 1 falling, 0 flat, -1 not checked yet                  */
    double recent, before; /* lower quartiles of the last check                    */
} kr_progress;

/* ---- workspace -------------------------------------------------------- */
typedef struct kr_ws {
    pl_op *op;
    pl_backend *be;
    MPI_Comm comm;
    int rank, size;     /* in comm */
    int64_t N;
    size_t n;          /* n_local */
    size_t ld;         /* column stride of V (= n_local, at least 1) */
    int m;             /* ncv */
    const int64_t *gidx;
    double *V;         /* backend, (m + 1 + xcol) * ld */
    int napply_ahead;  /* products done ahead of the cycle that a checkpoint leaves out (lz_first_product) */
    int xcol;          /* 1: column m + 1 exists (lanczos' fused restart: A v_m) */
    pl_op *bop;        /* the inner product's B (kr_ws_set_inner), NULL: */
                       /* Euclidean; then BV holds B V column by column */
    double *BV;        /* backend, (m + 1) * ld (bop only)              */
    double *W;         /* backend, blk * m: workspace of the in-place update */
    size_t blk;
    double *h_vec;     /* host n_local: random vectors (page-locked via   */
                       /* be->host_alloc where the backend offers it),    */
                       /* allocated at the first host-made one            */
    int h_vec_pinned;  /* h_vec came from be->host_alloc                  */
    int64_t g0;        /* gidx[i] = g0 + i for every local row (g_consec) */
    int g_consec;      /* and be->rand_fill makes the random vectors      */
    int lz_fuse;       /* kr_local_fused may try pl_op_apply_lz           */
    double *d_lz;      /* backend, PL_KRON_LZ_DOTS: the fused step's sums */
    int refine_if_needed; /* kr_orthogonalize: second Gram-Schmidt pass   */
                          /* only when the first one cancelled more than  */
                          /* half of ||x||^2 (DGKS); 0 = always two       */
    double keep2;      /* kr_orthogonalize: the second pass leaves its    */
                       /* coefficients of at most keep2 ||x|| in x      */
                       /* (they stay out of T as well; 0: corrects all) */
    double *T;         /* host m x m, column-major, ld m */
    double *Y;         /* host m x m eigenvectors of T */
    double *theta;     /* host m */
    double *bcast;     /* host m * m + m (rank 0 -> all) */
    double *c1, *c2;   /* host m + 1 Gram-Schmidt coefficients of each pass */
    double *cf;        /* host m + 1 their sum */
    double *c3;        /* host m + 1 the expected first-pass coefficients */
    double *Ysel;      /* host m x m: wanted columns of Y */
    int *ord;          /* host m: wanted order into theta */
    uint64_t seed;
    uint64_t n_random; /* random vectors drawn so far */
    int blas_threads;  /* the BLAS thread count to restore (pl_lapack_threads) */
    double t_books;    /* seconds in the cycle's bookkeeping: polls, checkpoint  */
                       /* hook, history and monitor, the give-up test (debug) */
    int64_t napply;
    int64_t nbapply;   /* products with bop */
    lz_timing t;
    kr_progress pg;    /* restart budget and progress (kr_restart_budget) */
} kr_ws;

/* Set up the workspace for a basis of m + 1 columns (m = ncv) on the
 * operator's backend, host arrays for m x m projected problems.  On failure
 * everything allocated is freed (kr_ws_free).  PL_ERR_MEM, PL_ERR_OVERFLOW,
 * or a backend error. */
int kr_ws_init(kr_ws *w, pl_op *op, int m, int xcol, uint64_t seed);
/* Free everything; leaves *w zeroed.  Can't fail. */
void kr_ws_free(kr_ws *w);
/* Column j of V (backend memory). */
double *kr_col(kr_ws *w, int j);

/* ---- the B-inner product (kr_inner.c) ----------------------------------
 * With kr_ws_set_inner(w, B) every inner product of basis vectors is
 * <x, y>_B = x^T B y (B symmetric positive definite, an operator on the
 * same rows and backend), and the workspace keeps BV = B V, one column per
 * basis column.  A Gram-Schmidt pass measures its coefficients against BV
 * (BV^T x: no B product) and subtracts them from x; once x is final, one
 * B product gives its column of BV and its norm sqrt(x^T B x) (kr_b_orthogonalize,
 * kr_b_local): one B product per new basis vector.  B x is not carried
 * through the passes (updating it with the coefficients of V loses
 * eps x the cancellation of each pass, which compounds over restarts: on
 * a 2-D FEM pair by 10-30x per restart, 5e-1 after ten).  Restarts update
 * BV with V (B V Y = (B V) Y, Y orthogonal); a resumed basis gets its BV by
 * products.  The fused backend kernels (cgs_step, sel_gram, sel_update)
 * are not used then.  Without it (bop NULL) none of this runs: the
 * Euclidean path is the code as before, bit for bit. */
/* Allocate BV for the operator bop (PL_ERR_ARG when its rows differ from
 * the workspace's; PL_ERR_MEM).  Call before the start vector. */
int kr_ws_set_inner(kr_ws *w, pl_op *bop);
/* Column j of BV (backend memory; NULL without the B-inner product). */
double *kr_bcol(kr_ws *w, int j);
/* BV[:, j] = B V[:, j] (one B product; nothing without bop).  Collective. */
int kr_b_image(kr_ws *w, int j);
/* Column dst = column src, of V and of BV. */
int kr_copy_col(kr_ws *w, int src, int dst);
/* The matrix whose transpose measures the coefficients against V: BV with
 * the B-inner product, else V. */
const double *kr_measure(const kr_ws *w);
/* kr_orthogonalize in the B-inner product (column k against 0..k-1): two
 * classical passes, then BV[:, k] = B x and the norm; *in_span as there
 * (the norms before the passes by Pythagoras).  Collective. */
int kr_b_orthogonalize(kr_ws *w, int k, double *coef, double *nrm, int *in_span);
/* kr_orthogonalize_local in the B-inner product (same contract; the
 * overlaps ovl measured after the B product).  Collective. */
int kr_b_local(kr_ws *w, int j, int nsel, double beta_prev, double *alpha, double *nrm, double *growth, double *ovl,
               int *done);
/* Column jout = A column jin (counted in w->napply and w->t.spmv). */
int kr_apply(kr_ws *w, int jin, int jout);
/* Column j -= V[:, 0:nsel] (V[:, 0:nsel]^T column j): one gemv_t (one
 * reduction) and one gemv_n, no second pass (selective orthogonalisation:
 * the coefficients are tiny).  Collective. */
int kr_project_out(kr_ws *w, int nsel, int j);
/* As kr_apply, through pl_op_apply_queued (no synchronisation on one rank). */
int kr_apply_queued(kr_ws *w, int jin, int jout);
/* *loss = max_il |v_i^T v_l - delta_il| over columns 0..nev-1 (nev
 * reductions).  Collective. */
int kr_orth_loss(kr_ws *w, int nev, double *loss);
/* A fresh start from the returned vectors: column 0 = the normalised sum of
 * columns 0..nret-1 (a random direction where it vanishes; *exhausted as
 * kr_random_direction).  Collective. */
int kr_reseed(kr_ws *w, int nret, int *exhausted);
/* Orthonormalise column j (= k) against columns 0..k-1: two classical
 * Gram-Schmidt passes; coef[0:k] the summed coefficients, *nrm the norm
 * before normalisation, *in_span: the vector vanished numerically (then it
 * is left unnormalised for the caller to replace).  Collective. */
int kr_orthogonalize(kr_ws *w, int k, int j, double *coef, double *nrm, int *in_span);
/* As kr_orthogonalize (j = k), for a column x whose coefficients against
 * columns 0..k-2 are known in exact arithmetic (known[0:k-1]: the first step
 * of a thick-restart cycle, x = A v_{k-1}, expects beta_m y_{m,i} from the
 * kept Ritz vectors): alpha against column k-1 is measured, the known
 * first pass and the measuring second pass share one sweep over V (the
 * backend's cgs_step), one more applies the correction and normalises.
 * coef[0:k] the total coefficients.  Measured overlaps below keep ||x||
 * stay in x, row[0:k] = their size relative to the new norm (0 for the
 * corrected columns; see krylov.c).  Collective. */
int kr_orthogonalize_known(kr_ws *w, int k, const double *known, double keep, double *row, double *coef,
                           double *nrm, int *in_span);
/* c3[0:k] = the coefficients kr_orthogonalize_known subtracts: known[0:k-1]
 * and alpha = G[2] / G[0] from the Gram matrix G of columns k - 1 and k. */
void kr_known_coefficients(int k, const double *known, const double *G, double *c3);
/* kr_orthogonalize_known after its measuring pass was done elsewhere (the
 * fused restart, pl_vec_restart_step): c3[0:k] subtracted, h[0:k+1] the
 * measured overlaps and squared norm, G the Gram matrix of columns k - 1
 * and k before the pass.  Collective. */
int kr_orthogonalize_measured(kr_ws *w, int k, const double *c3, const double *h, const double *G, double keep,
                              double *row, double *coef, double *nrm, int *in_span);
/* The overlaps of the last two columns with the basis, measured in one
 * pass (pl_vec_gemm_t): C[0:j+2] = V[:, 0:j+2]^T v_j, C[j+2:2j+4] =
 * V[:, 0:j+2]^T v_{j+1} (their squared norms at C[j] and C[2j+3]).  A
 * trigger of Simon's recurrence checks with it whether orthogonality was
 * really lost before it pays for two full passes (lanczos.c).
 * Collective. */
int kr_overlaps_last2(kr_ws *w, int j, double *C);
/* Local step of the Lanczos recurrence on column j + 1 (= A v_j, j >= 1):
 * x' = x - beta_prev v_{j-1} - alpha v_j, normalised, with beta_prev =
 * T[j-1][j] (so the Lanczos relation of column j holds exactly as T
 * records it) and alpha making x' orthogonal to v_j.  One reduction: the
 * Gram matrix of the adjacent columns v_{j-1}, v_j, x (pl_vec_gram, one
 * pass), from which alpha, the new norm and the overlaps ovl[0] =
 * v_{j-1}^T v_{j+1}, ovl[1] = v_j^T v_{j+1} follow exactly (no assumption
 * that v_{j-1}, v_j have unit norm); then one gemv_n.  *growth = ||x|| /
 * *nrm.  When the new norm is below 1e-2 ||x|| the column is left
 * untouched (but for the selective projection when the backend has no
 * fused sel_gram/sel_update) and *done = 0: the caller orthogonalises in full
 * (kr_orthogonalize, with its breakdown guard).  No synchronisation after
 * the update (the next SpMV is queued behind it).  sel (NULL: none): the
 * selected columns (selective orthogonalisation).  Where the backend fuses
 * them (sel_gram, sel_update) their overlaps with v_{j+1} are measured in
 * the same reduction and projected out in the same update only when one
 * passes sel->keep; the B-inner product and the unfused path project them
 * out before the step, every time.  Collective. */
typedef struct kr_sel {
    int n;                    /* the leading n columns are selected            */
    double keep;              /* fused: their overlaps up to keep times the    */
                              /* new norm stay in the vector (0: never)        */
    const double *prev, *cur; /* n signed overlaps of v_{j-1}, v_j with them  */
                              /* (NULL: 0)                                     */
    double *next;             /* out, n: those of v_{j+1} (0 where projected)  */
    int measured;             /* out: next was measured (the fused path)       */
    int exact;                /* out: on v_{j+1} itself (kr_local_fused), not  */
                              /* from the records prev, cur                    */
} kr_sel;
int kr_orthogonalize_local(kr_ws *w, int j, kr_sel *sel, double beta_prev, double *alpha, double *nrm,
                           double *growth, double *ovl, int *done);
/* The local step with the product fused (pl_op_apply_lz): column j + 1 =
 * A v_j - beta_prev v_{j-1} and its sums in one pass, then, from those sums
 * on the device, v_{j+1} = (column - alpha v_j) / nrm in one more (3
 * columns; with selected columns (sel, NULL: none) the same pass measures
 * their overlaps with v_{j+1}), one host round trip in all; one more pass
 * projects the selected columns out where one passes sel->keep (sel->next
 * then holds them, exact); the outputs as kr_orthogonalize_local's.
 * *fused = 0: the operator does not fuse it (nothing done; w->lz_fuse = 0
 * when it never will: the caller composes the step); *fused = 1, *done =
 * 0: declined as kr_orthogonalize_local declines, the column holds A v_j -
 * beta_prev v_{j-1}, which the caller orthogonalises in full.  Collective. */
int kr_local_fused(kr_ws *w, int j, kr_sel *sel, double beta_prev, double *alpha, double *nrm, double *growth,
                   double *ovl, int *done, int *fused);
/* Column j = a reproducible random vector (hash of seed and original global
 * row) orthonormal to columns 0..j-1; *exhausted: it vanished.  first = 1:
 * the start vector of seed; else the next one of the sequence.  Collective. */
int kr_random_direction(kr_ws *w, int j, int first, int *exhausted);
/* V[:, off:off+kk] = V[:, off:off+s] Ysel (s x kk, ld s, w->Ysel), in place. */
int kr_update_basis(kr_ws *w, int off, int s, int kk);
/* *r = ||A x - lambda x|| for x = column i, through work column jw
 * (overwritten).  Collective. */
int kr_residual_real(kr_ws *w, int i, double lambda, int jw, double *r);
/* Append one row (nev values; ritz_imag may be NULL) to the history of res;
 * *cap is the rows allocated.  PL_ERR_MEM. */
int kr_push_history(lz_result *res, int *cap, int nev, int64_t it, const double *ritz, const double *ritz_imag,
                    const double *resid);
size_t kr_atleast1(size_t n);

/* ---- partial reorthogonalisation: Simon's omega recurrence (lz_pro.c) --- */
typedef struct kr_pro {
    int m;                /* basis size (columns 0..m)                        */
    double eps1;          /* rounding of one step: eps sqrt(N) / 2            */
    double thresh;        /* a full pass when an estimate passes it: first    */
                          /* min(sqrt(eps), LZ_PRO_TOL_FACTOR tol), after a   */
                          /* failed residual check strict (lz_pro.c)          */
    double strict;        /* min(sqrt(eps), tol)                              */
    double *prev, *cur, *next; /* rows j - 1, j, j + 1 of the estimate        */
                          /* |v_row^T v_i| (m + 2 entries each)               */
    double *seed;         /* per column: the measured error of its Lanczos    */
                          /* relation, projected (kr_pro_seed)                */
    double *expect;       /* per kept column: the arrow coupling expected at  */
                          /* the next cycle's first step (0: none)            */
} kr_pro;
#define PL_PRO_SEED_FACTOR 10.0
/* At a cycle's first (full) step j = k: coef[0:k] are the measured
 * couplings v_i^T A v_k; their differences from p->expect are the errors of
 * the kept columns' Lanczos relations (dropped reorthogonalisation
 * coefficients, locked residuals) seen through v_k: the noise of their
 * omega rows for the cycle. */
void kr_pro_seed(kr_pro *p, int k, const double *coef);
int kr_pro_init(kr_pro *p, int m, int64_t N, double tol); /* PL_ERR_MEM */
void kr_pro_free(kr_pro *p);
/* Column j was orthogonalised against all of 0..j-1: row j = eps1, the old
 * row j becomes row j - 1. */
void kr_pro_full(kr_pro *p, int j);
/* As kr_pro_full, after a pass that left the measured overlaps row[0:j]
 * (relative; 0 where corrected) in v_j. */
void kr_pro_measured(kr_pro *p, int j, const double *row);
/* After a local step at j (> the cycle's first step): row j + 1 into
 * p->next from T (m x m, column-major, the current projected matrix with
 * T[j][j] = alpha not needed), alpha_j, beta_{j-1}, beta_j, the measured
 * overlaps with v_{j-1}, v_j (kr_orthogonalize_local) and normest.  Returns its largest entry; kr_pro_accept makes it row j + 1,
 * kr_pro_full(p, j + 1) replaces it after a full pass instead. */
double kr_pro_estimate(kr_pro *p, const double *T, int j, double alpha, double beta_prev, double beta,
                       const double *ovl, double normest);
void kr_pro_accept(kr_pro *p, int j);
/* Instead of kr_pro_accept after a local step at j whose overlaps of v_j
 * and v_{j+1} with the basis were measured (kr_overlaps_last2's C): where
 * every one is at most keep times its column's norm, they are left in,
 * rows j and j + 1 become their sizes relative to that norm (at least
 * eps1), *worst = the largest, and it returns 1; else it changes nothing
 * and returns 0 (the caller reorthogonalises). */
int kr_pro_accept_measured(kr_pro *p, int j, const double *C, double keep, double *worst);
/* Thick restart: the kept columns are nlock locked ones and kk Ritz vectors
 * V[:, nlock:nlock+s] Ysel (s x kk, ld s); the restart vector (the old v_m,
 * whose row is p->cur) becomes column k_new = nlock + kk. */
void kr_pro_restart(kr_pro *p, int nlock, int s, int kk, const double *Ysel, int k_new);
/* Selective orthogonalisation (lz_pro.c): the number of leading kept
 * columns (locked ones included) to project out of every new vector in the
 * cycle that starts at k; and the estimate row after such a projection. */
int kr_pro_nselected(const kr_pro *p, int k, int nlock, double normest);
double kr_pro_selected(kr_pro *p, int nsel, int j, double alpha, double beta_prev, double beta, const double *meas,
                       int exact);
/* Row j = row[0:j] (a resumed state). */
void kr_pro_set_row(kr_pro *p, int j, const double *row);

/* ---- start vector and checkpoint state (lz_options start, checkpoint,
 * resume; saved and restored by kr_run, kr_cycle.c) ------------------- */
/* Column 0 = the start vector: opt->start's columns summed, normalised,
 * plus opt->start_noise times the seed's random start vector (unit), then
 * normalised; the random vector alone without opt->start or when the sum
 * vanishes.  Uses column 1 as scratch.  Collective. */
int kr_start_vector(kr_ws *w, const lz_options *opt, int *exhausted);
/* lz_state ints shared by both methods; a method's own follow from
 * KR_ST_COMMON.  dbl[0] is normest, the rest the method's (lanczos.c,
 * krylov_schur.c). */
enum {
    KR_ST_NAPPLY = 0,    /* operator applications so far                  */
    KR_ST_NRANDOM,       /* random vectors drawn (the RNG state)          */
    KR_ST_BREAKDOWNS,
    KR_ST_VERIFICATIONS,
    KR_ST_MISSED,
    KR_ST_INCONCLUSIVE,
    KR_ST_RESTARTS,
    KR_ST_K,             /* columns kept; column K is the next to expand  */
    KR_ST_NLOCK,         /* locked columns (verification phase)           */
    KR_ST_NCONV,
    KR_ST_COMMON
};

/* ---- the thick-restart cycle (kr_cycle.c) -----------------------------
 * Both methods run one driver, kr_run, in named phases:
 *   checkpoint  at the end of a cycle, after its restart (opt->checkpoint)
 *   expand      columns k .. m - 1: the method's step, the shared breakdown
 *               handling (a random direction) and the method's coupling
 *   verify      nlock > 0: the complement of the locked set (method)
 *   extract     the wanted values and residual estimates of the projected
 *               problem (method)
 *   converged   kr_converged_relative on each: the converged prefix
 *   report      a history row and the monitor (kr_report)
 *   lock        all wanted values converged, verify on: lock them (method)
 *   restart     the thick restart of the main phase (method)
 *   finish      Ritz vectors and explicit residuals (method; Krylov-Schur
 *               may ask for another round)
 * A method is a table of hooks on the shared state kr_solver; its own state
 * is s->ctx. */
typedef struct kr_solver kr_solver;

/* What the verification phase decided (kr_method verify). */
enum kr_verdict {
    KR_UNLOCKED,  /* a missed value: nlock = 0, the main phase goes on this cycle */
    KR_RESTARTED, /* restarted inside the complement: the next cycle              */
    KR_ACCEPTED   /* the locked set is the answer                                 */
};

typedef struct kr_method {
    int id;              /* lz_state method: 1 Lanczos, 2 Krylov-Schur              */
    int complex_values;  /* values have imaginary parts (s->ritz_im)                */
    int every_step_full; /* the monitor's full_reorths counts every step            */
    int lock_room;       /* lock only while ncv - wanted >= lock_room               */
    /* expand: column j + 1 = A v_j orthogonalised, its coefficients recorded;      */
    /* *nrm its norm before normalisation, *in_span: it vanished                    */
    int (*step)(kr_solver *s, int j, double *nrm, int *in_span);
    void (*injected)(kr_solver *s, int j); /* column j became a random vector (NULL) */
    void (*couple)(kr_solver *s, int j, double beta); /* coupling of v_j to v_j+1    */
    void (*expanded)(kr_solver *s);        /* after the expansion (NULL)              */
    int (*verify)(kr_solver *s, int *verdict); /* enum kr_verdict                    */
    int (*extract)(kr_solver *s);  /* s->nwant, ritz, ritz_im, est; s->normest       */
    int (*lock)(kr_solver *s);     /* lock the nwant values; column nwant random      */
    int (*restart)(kr_solver *s, int *ok); /* main phase: s->k; *ok = 0: no vector  */
    void (*pack)(kr_solver *s);    /* the method's ints and dbl of a checkpoint      */
    int (*unpack)(kr_solver *s);   /* ... of a resumed state                         */
    int (*finish)(kr_solver *s, int *again); /* eigenpairs into s->res; *again: go on */
} kr_method;

struct kr_solver {
    kr_ws *w;
    const lz_options *opt;
    lz_result *res;
    const kr_method *mt;
    void *ctx;            /* the method's state                                    */
    double t_begin;       /* the monitor's elapsed time counts from here           */
    int hcap;             /* history rows allocated in res                         */
    int restarts, k, nlock, nconv, reason; /* k: columns kept at the cycle's start  */
    int mm;               /* columns of this cycle's projected problem (m, or fewer */
                          /* when span(V) is the whole space)                      */
    int vm_valid;         /* v_mm exists: the restart vector                       */
    int whole_space, final_locked, cycled;
    double normest;       /* max(operator norm estimate, |values| seen)           */
    int nwant;            /* wanted values: nev (Krylov-Schur: + 1 for a pair)     */
    double *ritz, *ritz_im, *est; /* nev + 1 each: the values of extract          */
    int64_t ints[LZ_STATE_INTS];  /* checkpoint state: KR_ST_* then the method's    */
    int nint, ndbl;
    double *dbl;          /* ndbl: normest, then the method's                      */
    int ndbl_old;         /* > 0: a shorter state that resume still accepts (a     */
                          /* checkpoint of an earlier version: its leading part)   */
    int ndbl_in;          /* the resumed state's ndbl (the method's unpack)       */
};

/* Run the solve of a method from opt->resume or a start vector to its end
 * (or a checkpoint stop); the result's scalars into s->res.  s->w, opt, res,
 * mt, ctx, nint and ndbl set by the caller.  Collective. */
int kr_run(kr_solver *s);
/* The relative convergence test (SLEPc's EPSConvergedRelative): the residual
 * estimate est of a value of modulus mag meets tol relative to
 * kr_scale(mag, normest); *rel (may be NULL) = est / that scale. */
int kr_converged_relative(double est, double mag, double normest, double tol, double *rel);
/* The scale of the test: max(mag, normest) (a NaN mag gives normest). */
double kr_scale(double mag, double normest);
/* The norm of the convergence tests of s: s->normest, or under
 * opt->value_relative normest * min(1, 10 eps / tol) (each value against
 * its own magnitude, down to the products' rounding floor). */
double kr_conv_norm(const kr_solver *s);
/* A history row (nev values; ritz_im may be NULL) and the monitor record of a
 * finished cycle with nconv converged, worst relative estimate worst. */
int kr_report(kr_solver *s, const double *ritz, const double *ritz_im, const double *est, int nconv, double worst,
              int verifying);
/* After a successful solve: the basis to res (want_vectors), the timings. */
void kr_hand_over(kr_ws *w, const lz_options *opt, lz_result *res, double t_start);
/* Resolve opt->max_restarts (see kr_progress above) into w->pg.budget,
 * res->max_restarts and res->restarts_auto; set up the progress score.
 * Call after kr_check_options.  Not collective; can't fail. */
void kr_restart_budget(kr_ws *w, const lz_options *opt, lz_result *res);
/* The main phase's decision after a cycle that did not converge: *reason =
 * LZ_MAX_RESTARTS when restarts >= the budget, LZ_STAGNATED when the budget
 * is auto, restarts >= LZ_RESTARTS_FLOOR and the trend of res's history is
 * flat, else LZ_ITERATING.  Every rank decides alike (the history is the
 * same on every rank).  PL_ERR_MEM. */
int kr_give_up(kr_ws *w, const lz_result *res, int restarts, int *reason);
/* The progress fields of *mi (budget, decades, trend, quartiles) from res's
 * history so far.  PL_ERR_MEM. */
int kr_progress_info(kr_ws *w, const lz_result *res, lz_monitor_info *mi);
/* The monitor record *mi of a finished cycle (its first fields set by the
 * caller), completed by kr_progress_info, to opt->monitor (if any).
 * PL_ERR_MEM. */
int kr_monitor(kr_ws *w, const lz_options *opt, const lz_result *res, lz_monitor_info *mi);
/* A look inside a cycle, before the step with steps_left steps to go
 * (opt->poll, lz_poll_fn); *stop = 0 without a poll function.  Its error. */
int kr_poll(const lz_options *opt, int steps_left, int *stop);

/* The checks both methods share: nev, tol, which (up to last_which),
 * max_restarts, ncv >= nev + min_extra; *ncv = the basis size (ncv, or
 * auto: max(2 nev + 10, ncv_floor); capped at N).  PL_ERR_INPUT with a
 * message that starts with the parameter's name (nev, tolerance, which,
 * max_restarts, ncv), PL_ERR_ARG for NULL.  Not collective. */
int kr_check_options(pl_op *op, const lz_options *opt, int last_which, int min_extra, int ncv_floor, int64_t *ncv);

#define KR_HOST_ALLOC(p, cnt, label)                                                                     \
    do {                                                                                                 \
        (p) = calloc(kr_atleast1((size_t)(cnt)), sizeof *(p));                                            \
        PL_CHECK_GOTO((p), PL_ERR_MEM, label, err, "out of host memory (%s)", #p);                       \
    } while (0)
