/* lanczos.h — thick-restart Lanczos for a few extreme eigenpairs of a
 * symmetric operator, written only against spmv.h (pl_op_apply, the backend
 * vector table, pl_vec_*): no backend, format or MPI details here.
 *
 * Method: Wu & Simon, "Thick-restart Lanczos method for large symmetric
 * eigenvalue problems", SIAM J. Matrix Anal. Appl. 22 (2000) 602-616, with
 * partial reorthogonalisation (Simon's omega recurrence, lz_pro.c: local
 * three-term orthogonalisation, a full two-pass classical Gram-Schmidt only
 * when the estimated loss of orthogonality passes sqrt(eps)) or full
 * reorthogonalisation at every step, and a relative breakdown guard.  See
 * lanczos.c for the algorithm.
 *
 * All vectors live in backend memory in the operator's permuted local basis;
 * the projected eigenproblems are solved on the host with LAPACKE. */
#pragma once /* no conditional compilation anywhere in lanczos/: a test greps for it */

#include <stdint.h>

#include "spmv.h"

/* Which eigenvalues are wanted.  smallest/largest: of the real parts (for a
 * symmetric operator, of the values). */
enum pl_which {
    PL_WHICH_SMALLEST = 0,
    PL_WHICH_LARGEST = 1,
    PL_WHICH_LARGEST_MAGNITUDE = 2,
    PL_WHICH_SMALLEST_REAL = 3,
    PL_WHICH_LARGEST_REAL = 4,
    PL_WHICH_LARGEST_IMAGINARY = 5,
    /* relative to a target sigma, for a spectral transformation (st/, which
     * runs lz_solve / ks_solve with largest_magnitude on its operator; these
     * three are not options of lz_solve / ks_solve): smallest |lambda - sigma|,
     * |Re lambda - Re sigma|, |Im lambda - Im sigma| */
    PL_WHICH_NEAREST = 6,
    PL_WHICH_NEAREST_REAL = 7,
    PL_WHICH_NEAREST_IMAGINARY = 8
};
/* The eigensolver: auto = Lanczos for a symmetric operator, else Krylov-Schur;
 * chebfd: Chebyshev filter diagonalization (cf_* below; symmetric only). */
enum pl_method { PL_METHOD_AUTO = 0, PL_METHOD_LANCZOS = 1, PL_METHOD_KRYLOV_SCHUR = 2, PL_METHOD_CHEBFD = 3 };

/* Why the solver stopped (SLEPc EPSConvergedReason). */
enum lz_reason {
    LZ_ITERATING = 0,    /* internal: still running                              */
    LZ_CONVERGED = 1,    /* nev wanted eigenpairs met the tolerance              */
    LZ_MAX_RESTARTS = 2, /* max_restarts reached first                           */
    LZ_BREAKDOWN = 3,    /* no new direction could be found (should not happen   */
                         /* for nev < N; kept for completeness)                  */
    LZ_CHECKPOINTED = 4, /* the checkpoint callback asked to stop: not finished, */
                         /* no eigenvectors or final residuals (README, exit 3)  */
    LZ_INACCURATE = 5,   /* ks_solve: the estimates met the tolerance, but an    */
                         /* explicit residual still exceeded 10x it after the    */
                         /* fresh restarts of its recheck (result rechecks)      */
    LZ_STAGNATED = 6     /* max_restarts = auto: the residuals stopped falling   */
                         /* (krylov_impl.h, kr_give_up) before the budget ran out */
};
/* "converged", "max_restarts", "breakdown", "checkpointed", "inaccurate", "stagnated" */
const char *lz_reason_name(int reason);

/* lz_options max_restarts = LZ_RESTARTS_AUTO: a budget that scales with the
 * problem, 3 x the products SciPy's ARPACK default allows (10 N implicit
 * restarts of ncv - nev products each) and at least LZ_RESTARTS_FLOOR
 * restarts, and a stop as LZ_STAGNATED when the residuals have stopped
 * falling over about three quarters of the run (never before the floor).
 * See lanczos/krylov_impl.h (kr_progress). */
#define LZ_RESTARTS_AUTO (-1)
#define LZ_RESTARTS_FLOOR 1000

/* The state of a solve at the end of a cycle, after its restart: the point
 * from which it can be continued bit for bit.  A checkpoint stores it
 * (app/, README "Checkpoint and restart"); a resumed solve starts from it
 * (lz_options resume) instead of a start vector.  The layout of ints and
 * dbl is the method's own (lanczos.c, krylov_schur.c): the caller only
 * stores and returns them. */
#define LZ_STATE_INTS 32
typedef struct lz_state {
    int method;             /* 1 = lz_solve, 2 = ks_solve                          */
    int nev, ncv, which;    /* the options it belongs to (checked on resume)       */
    int nvec;               /* basis columns in use: V[:, 0:nvec]                  */
    int nint;               /* entries of ints in use                              */
    int64_t ints[LZ_STATE_INTS]; /* counters, flags, RNG draws (method-defined)    */
    int ndbl;               /* entries of dbl                                      */
    double *dbl;            /* host: projected matrix, locked values ... (method-  */
                            /* defined)                                            */
    int nhist, hist_nev;    /* convergence history so far (as in lz_result)        */
    int64_t *hist_iterations;
    double *hist_ritz, *hist_resid, *hist_ritz_imag; /* ritz_imag NULL for lz_solve */
    const double *V;        /* backend memory, permuted local basis, column j at   */
    size_t ld;              /* V + j * ld (n_local rows)                           */
} lz_state;

/* Called on every rank at the end of each cycle, after the restart; st
 * itself is valid during the call only, the data it points to (dbl, the
 * history, V[:, 0:nvec]) until the next expansion ends (lz_poll_fn).  The
 * callback decides collectively (the same answer on every rank) whether to
 * save st and whether to stop: *stop = 1 ends the solve with reason
 * LZ_CHECKPOINTED.  An error it returns ends the solve with that error. */
typedef int (*lz_checkpoint_fn)(void *arg, const lz_state *st, int *stop);
/* Called on every rank before each expansion step but the first of a
 * cycle, with the steps left in the cycle; so often that it must be cheap
 * (the caller decides, the same way on every rank, at which calls to
 * communicate).  *stop = 1 ends the solve at once with reason
 * LZ_CHECKPOINTED; the state last passed to the checkpoint callback is then
 * still intact, and the caller may save it. */
typedef int (*lz_poll_fn)(void *arg, int steps_left, int *stop);

/* What the monitor sees at the end of each Lanczos cycle (before the restart). */
typedef struct lz_monitor_info {
    int restart;             /* cycles finished - 1 (0 after the first cycle)   */
    int nconv;               /* leading wanted pairs converged                  */
    int nev;
    int64_t iterations;      /* operator applications so far                    */
    const double *ritz;      /* nev current Ritz values, wanted order           */
    const double *resid;     /* nev residual estimates |beta_m y_m,i|           */
    double worst_resid;      /* max relative residual estimate of the nev       */
    double elapsed;          /* seconds since lz_solve started                  */
    int verifying;           /* 1: nev pairs are locked and the complement is   */
                             /* searched for a missed wanted eigenvalue         */
    int64_t full_reorths;    /* expansion steps so far that needed a full       */
                             /* reorthogonalisation (lz_options reorth)         */
    double orth_estimate;    /* largest estimated |v_i^T v_j| (i != j) of the   */
                             /* basis in use so far (partial: <= sqrt(eps))     */
    /* how far the solve is and whether it still progresses (filled by the    */
    /* solvers through kr_progress_info, lanczos/krylov_impl.h)                 */
    int max_restarts;        /* the restart budget in force (auto resolved)    */
    int restarts_auto;       /* 1: the budget came from max_restarts = auto     */
    double decades;          /* sum over the nev wanted values of             */
                             /* log10(residual / (tol scale)) where above 0:   */
                             /* 0 = all converged                              */
    int trend;               /* 1 falling, 0 flat (auto: stagnated once past   */
                             /* the floor), -1 too early to say               */
    double score_recent, score_before; /* the lower quartiles of the progress */
                             /* score over the last half of the run and over  */
                             /* its second eighth (krylov_impl.h kr_progress)  */
} lz_monitor_info;
typedef void (*lz_monitor_fn)(void *arg, const lz_monitor_info *info);

/* How each new Lanczos vector is orthogonalised (lz_solve; ks_solve always
 * orthogonalises fully, a second pass only where needed). */
enum lz_reorth {
    LZ_REORTH_PARTIAL = 0, /* local (against the two previous vectors), plus  */
                           /* a full pass over the basis when Simon's omega   */
                           /* recurrence estimates a loss above               */
                           /* min(sqrt(eps), LZ_PRO_TOL_FACTOR tol), and at    */
                           /* the first step of each cycle (the arrow); a      */
                           /* result that fails its residual check is solved   */
                           /* again with min(sqrt(eps), tol) (lanczos.c)       */
    LZ_REORTH_FULL = 1,    /* two-pass classical Gram-Schmidt against the     */
                           /* whole basis at every step                       */
    LZ_REORTH_LOCAL = 2    /* local only, never a full pass: plain Lanczos,   */
                           /* which loses orthogonality and returns ghost     */
                           /* copies (tests only)                             */
};

/* The omega estimate's threshold: min(sqrt(eps), LZ_PRO_TOL_FACTOR tol);
 * lz_pro.c says why and what was measured. */
#define LZ_PRO_TOL_FACTOR 100.0

/* The auto basis size's floor (lz_options.ncv = 0): max(2 nev + 10, floor).
 * Krylov-Schur's is larger: on the CFD-like operators, whose wanted values
 * cluster, a basis of 32 took uhbr_like's solve from 1,320 products and 2.65 s
 * to 928 and 2.25 s on one H200 (40: 816, 2.25 s), dlr1_like's from 480 to
 * 400 (2026-11-29, docs/performance.md, eleventh look). */
#define LZ_NCV_FLOOR 24
#define KS_NCV_FLOOR 32
/* lz_solve's verify: the search accepts the locked set once its residual
 * interval is clear of them and a wanted eigenvector beyond the edge that it
 * did not show would have needed a random start component of probability
 * at most this (lz_cert.c; lz_options.verify_prob). */
#define LZ_VERIFY_PROB 1e-3
/* The auto basis size for nev and a method's floor (before the cap at N). */
static inline int64_t lz_ncv_auto(int nev, int floor)
{
    const int64_t a = 2 * (int64_t)nev + 10;
    return a > floor ? a : floor;
}

typedef struct lz_options {
    int nev;             /* eigenpairs wanted = 4 (1 <= nev < N)                      */
    int which;           /* enum pl_which = smallest.  lz_solve: smallest(_real),      */
                         /* largest(_real), largest_magnitude; ks_solve: all         */
    double tol;          /* relative residual = 1e-10 (> 0): converged when           */
                         /* |beta_m y_m,i| <= tol * max(|theta_i|, normest)           */
    int ncv;             /* basis size, 0 = auto max(2 nev + 10, LZ_NCV_FLOOR) (lz_solve), */
                         /* max(2 nev + 10, KS_NCV_FLOOR) (ks_solve); capped at N       */
    int max_restarts;    /* = LZ_RESTARTS_AUTO (scales with N, ncv and nev; stagnation */
                         /* stop); >= 0: exactly that budget; 0 = one cycle only       */
    uint64_t seed;       /* start vector seed = 1                                      */
    int want_vectors;    /* return eigenvectors = 0                                    */
    int reorth;          /* enum lz_reorth = partial                                    */
    double verify_tol;   /* lz_solve, ks_solve: the search of verify stops when its     */
                         /* value meets max(tol, verify_tol) clear of the locked set  */
                         /* (Lanczos: its residual interval; Krylov-Schur: its        */
                         /* estimate to spare) = 0 (sqrt(tol))                         */
    double verify_prob;  /* lz_solve: the search of verify accepts once a missed wanted */
                         /* eigenvector would have needed a start component of this    */
                         /* probability or less (lz_cert.c) = 0 (LZ_VERIFY_PROB); < 0: */
                         /* by verify_tol alone (the rule before 2026-11-29)            */
    int verify;          /* = 1: when all nev converge, lock them and solve for the     */
                         /* most wanted eigenvalue of A on their complement from a     */
                         /* fresh random vector; if it beats a locked one (a missed     */
                         /* copy of a degenerate eigenvalue), unlock and iterate on;    */
                         /* stop when it converges (to verify_tol, its residual         */
                         /* interval clear of them) without doing so; 0 = accept the    */
                         /* first set                                                  */
    lz_monitor_fn monitor; /* called on every rank after each cycle; NULL = none      */
    void *monitor_arg;
    lz_checkpoint_fn checkpoint; /* NULL = none (see lz_checkpoint_fn)                */
    void *checkpoint_arg;
    lz_poll_fn poll;         /* NULL = none; called with checkpoint_arg (lz_poll_fn)  */
    const lz_state *resume;  /* NULL = start afresh; else continue from this state   */
                             /* (its V in backend memory, owned by the caller, the    */
                             /* same operator basis); PL_ERR_INPUT when its method,   */
                             /* nev, ncv or which differ from these options           */
    /* warm start (sweeps): the start vector is the sum of the nstart columns of    */
    /* start (backend memory, permuted local basis, column j at start + j *         */
    /* start_ld), normalised, plus start_noise times the random start vector of     */
    /* seed; NULL = the random start vector alone                                   */
    const double *start;
    int nstart;
    size_t start_ld;
    double start_noise;
    /* lz_solve: the inner product <x, y>_B = x^T B y, B this operator (symmetric */
    /* positive definite; the same rows and backend as the solved one), for an    */
    /* operator self-adjoint in it (st/: (A - sigma B)^{-1} B, B^{-1} A of a       */
    /* symmetric-definite pair); NULL = Euclidean.  Every dot, norm and            */
    /* Gram-Schmidt pass of basis vectors is B's (krylov_impl.h, kr_inner.c): one */
    /* B product per new basis vector; the eigenvectors come out B-orthonormal,   */
    /* residuals and estimates are B-norms, orth_loss is max |x_i^T B x_j -       */
    /* delta_ij|.  ks_solve refuses it (PL_ERR_ARG)                               */
    pl_op *inner_b;
    int value_relative;  /* = 0: converged when the estimate <= tol * max(|theta_i|, normest)  */
                         /* (above); 1: <= tol * max(|theta_i|, normest * min(1, 10 eps/tol)) */
                         /* (st/: of a shift-and-invert                                       */
                         /* operator the wanted theta spread over orders of magnitude, and      */
                         /* the residual of the original problem is about |theta_i|^-1 times   */
                         /* the operator's, so a normest-relative test left the values far    */
                         /* from the shift 1e-7 residuals at tol 1e-12, H100 2026-11-26)        */
    int estimate_residuals; /* = 0: the returned residuals are recomputed explicitly, one     */
                         /* operator application per pair; 1 (ks_solve only): the Ritz         */
                         /* estimates |b^T y| instead when converged with the Krylov-Schur     */
                         /* relation exact (no unlock after verify, no recheck): no           */
                         /* applications for them.                                            */
                         /* st/: the caller recomputes every residual on the original problem  */
                         /* (A and B products) and counts convergence from those, so the nev   */
                         /* extra solves bought nothing there (lap2d 200 x 200: 48 -> 42,      */
                         /* SLEPc's sinvert 41; SLEPc does not recompute them either)          */
} lz_options;

/* Defaults as documented above.  Can't fail. */
void lz_options_defaults(lz_options *o);

/* Per-phase wall-clock seconds (rank-local). */
typedef struct lz_timing {
    double total;        /* the whole lz_solve                            */
    double spmv;         /* pl_op_apply                                   */
    double orth;         /* Gram-Schmidt (gemv_t, gemv_n, norms)           */
    double projected;    /* host LAPACKE on the projected matrix           */
    double restart;      /* basis update V Y at restarts and at the end    */
    double residual;     /* explicit final residuals                       */
    double other;        /* start vectors, everything else                 */
    double vec_bytes;    /* minimal bytes of the Gram-Schmidt passes and   */
                         /* normalisations (this rank): the vector floor   */
    int64_t steps;       /* Lanczos expansion steps (one SpMV + one        */
                         /* orthogonalisation each)                        */
    int64_t single_pass; /* orthogonalisations done in one pass (Krylov-   */
                         /* Schur: second pass only if needed)             */
    int64_t reductions;  /* Gram-Schmidt reductions, each one host         */
                         /* synchronisation and one small download         */
    int64_t local_steps; /* steps orthogonalised locally (partial reorth): */
                         /* one reduction each, the SpMV not synchronised  */
    int64_t full_reorths; /* steps with a full reorthogonalisation (the    */
                         /* first of each cycle included)                  */
    int64_t measured_triggers; /* partial: steps whose estimate passed the */
                         /* threshold but whose measured overlaps did not  */
                         /* (no full pass; lanczos.c)                      */
    double steps_time;   /* seconds in the expansion steps (SpMV + orth)   */
    double full_steps_time; /* of it, in the steps counted in full_reorths */
} lz_timing;

typedef struct lz_result {
    int nev;                 /* pairs returned: options nev; ks_solve returns nev + 1  */
                             /* when the nev-th wanted value has its conjugate next    */
    int ncv;                 /* basis size used                                        */
    double *eigenvalues;     /* nev, host, sorted as wanted (ascending for smallest,   */
                             /* descending for largest)                                */
    double *eigenvalues_imag; /* ks_solve: nev imaginary parts (conjugate pairs next   */
                             /* to each other, + first); NULL from lz_solve            */
    double *residuals;       /* nev: ||A x_i - lambda_i x_i||_2 recomputed explicitly  */
                             /* (x_i of unit norm; estimates: lz_options               */
                             /* estimate_residuals)                                    */
    double normest;          /* max(operator norm estimate, max |theta|) used in tests */
    int nconv;               /* leading pairs that met the tolerance                   */
    int restarts;            /* restarts performed                                     */
    int max_restarts;        /* the restart budget in force (max_restarts = auto       */
                             /* resolved, else the option)                             */
    int restarts_auto;       /* 1: it came from max_restarts = auto                    */
    int64_t iterations;      /* operator applications (with the final residuals where  */
                             /* recomputed: estimate_residuals)                        */
    int reason;              /* enum lz_reason                                         */
    int breakdowns;          /* invariant subspaces met (a random vector was injected)  */
    int verifications;       /* verification phases started (options verify)           */
    int missed;              /* ... that found a missed wanted eigenvalue              */
    int verify_inconclusive; /* ks_solve: the last search ended by its budget, not by  */
                             /* convergence (the set is returned as converged)        */
    double verify_bound;     /* lz_solve: the last search's certificate, the start     */
                             /* component probability a missed wanted eigenvector       */
                             /* would have needed (lz_cert.c); 1: none shown; -1: no    */
                             /* search or not tracked                                  */
    int rechecks;            /* final residual checks that failed, each followed by a  */
                             /* fresh start from the returned vectors: ks_solve        */
                             /* (explicit residual > 10 tol max(|lambda|, normest));   */
                             /* lz_solve (> tol max(...) + 1e3 eps normest after a run */
                             /* with the relaxed omega threshold; at most once)        */
    int reorth;              /* enum lz_reorth used (ks_solve: full)                   */
    double orth_estimate;    /* lz_solve partial: the largest estimated loss of        */
                             /* orthogonality |v_i^T v_j| of the basis as it was used  */
                             /* (Simon's omega; <= sqrt(eps) by construction); full:   */
                             /* 0 (not estimated)                                      */
    double orth_loss;        /* measured: max_ij |x_i^T x_j - delta_ij| of the nev     */
                             /* returned vectors (lz_solve); -1 when not measured      */
    int returned_rr;         /* lz_solve: 1 when the returned block had lost          */
                             /* orthogonality past 1e-10 and was orthonormalised with */
                             /* a Rayleigh-Ritz step on its span (lz_return.c)        */
    int64_t b_products;      /* products with the inner product's B (inner_b), else 0 */
    /* history, one row per cycle (restarts + 1 rows, row-major, nev columns) */
    int nhist;
    int64_t *hist_iterations;    /* nhist: operator applications at the end of the cycle */
    double *hist_ritz;           /* nhist x nev Ritz values                               */
    double *hist_resid;          /* nhist x nev residual estimates                        */
    double *hist_ritz_imag;      /* ks_solve: nhist x nev imaginary parts; else NULL      */
    int hist_nev;                /* columns of the history rows (= options nev)          */
    /* eigenvectors (want_vectors): backend memory, column i (i < nev) at
     * vectors + i * ld, permuted local basis, unit global 2-norm.  ks_solve,
     * complex pair (eigenvalues_imag[i] > 0, i + 1 its conjugate): columns i
     * and i + 1 hold Re x and Im x of the eigenvector x of eigenvalue i
     * (||Re x||^2 + ||Im x||^2 = 1); eigenvalue i + 1 has Re x - i Im x. */
    double *vectors;
    size_t ld;               /* = n_local                                            */
    pl_backend *be;          /* backend that owns `vectors` (not owned by the result) */
    lz_timing time;
} lz_result;

/* Solve for the nev wanted eigenpairs of the operator.  Collective over the
 * operator's communicator.  On success *res is filled (free with
 * lz_result_destroy); not converging is not an error (res->reason says why
 * it stopped).  Fails with PL_ERR_INPUT "nev = X must be < N = Y (and >= 1)"
 * (or a bad tolerance, ncv, which or max_restarts: the message starts with
 * the parameter's name), PL_ERR_MEM when the basis (ncv + 1 vectors of
 * n_local doubles, one backend allocation) does not fit, PL_ERR_LAPACK if
 * the projected eigenproblem fails, or any error of the operator/backend. */
int lz_solve(pl_op *op, const lz_options *opt, lz_result *res);
/* Krylov-Schur (krylov_schur.c; Stewart, SIAM J. Matrix Anal. Appl. 23
 * (2002) 601-614) for a general real operator: complex eigenvalues come in
 * conjugate pairs that stay together (real Schur form of the projected
 * matrix).  Same options and result as lz_solve (verify: the complement of
 * the converged Schur vectors is searched for a missed wanted eigenvalue);
 * res->eigenvalues_imag is set.  Collective.  Fails as lz_solve does. */
int ks_solve(pl_op *op, const lz_options *opt, lz_result *res);
/* Free host arrays and the backend vectors; zeroes *res.  Accepts a zeroed
 * result.  Can't fail. */
void lz_result_destroy(lz_result *res);

/* Reproducible start-vector element for global original row g: a
 * splitmix64 hash of (seed, g) mapped to (-1, 1).  Independent of ranks and
 * permutation.  Can't fail. */
double lz_random_element(uint64_t seed, int64_t g);

/* ---- the recursion of a continued fraction (lz_recursion.c) ----
 * Lanczos from phi (backend vector of op's permuted basis, not normalised),
 * without reorthogonalisation: alpha[0..n-1], beta[0] = |phi| (the zeroth
 * moment is beta[0]^2), beta[j] (1 <= j < n) the coupling of v_{j-1} and
 * v_j; *nsteps = n <= steps (fewer when an invariant subspace ends the
 * fraction; 0 when phi = 0).  *step_seconds (may be NULL): the mean wall
 * time of one step.  Collective. */
int lz_recursion(pl_op *op, const double *phi, int steps, double *alpha, double *beta, int *nsteps,
                 double *step_seconds);
/* lz_recursion with the fused step where lz_recursion_fusable (one rank, a
 * matrix-free operator with the backend's kron_spmm_aug, and cgs_step;
 * PJDS_LZ_FUSED=0 refuses, for measurements): per
 * step the SpMV with the update and two dots in one pass
 * (pl_op_apply_block_aug, R = 1), then one cgs_step pass; alpha_j =
 * v_j.(H v_j - beta_j v_{j-1}) (Paige), beta_{j+1} the exact norm.  The
 * coefficients equal lz_recursion's to rounding (not bit for bit).
 * Elsewhere lz_recursion.  Collective. */
int lz_recursion_fast(pl_op *op, const double *phi, int steps, double *alpha, double *beta, int *nsteps,
                      double *step_seconds);
int lz_recursion_fusable(pl_op *op);
/* A(w) = -(1/pi) Im G(w + i eta + e0), G(z) = beta0^2 / (z - alpha0 -
 * beta1^2 / (z - alpha1 - ...)) of n levels, at the points omega[0..points-1]
 * into intensity.  Can't fail. */
void lz_continued_fraction(int n, const double *alpha, const double *beta, double e0, double eta, int points,
                           const double *omega, double *intensity);

/* ---- the kernel polynomial method (kpm.c; README "Density of states") ----
 * H~ = (H - b) / a maps the spectrum into (-1, 1).  kpm_moments: the
 * Chebyshev moments mu_m = (1/R) sum_r <r|T_m(H~)|r> / <r|r>, m < N, of R
 * start vectors that depend on (seed, vector index, global row) only
 * (unit = 1: the N unit vectors e_i, mu_m = Tr T_m(H~) / N exactly), in
 * blocks of `block` vectors through pl_op_apply_block_aug with the doubling
 * mu_2n = 2 <v_n|v_n> - mu_0, mu_2n+1 = 2 <v_n+1|v_n> - mu_1 (N / 2 block
 * products per block).  groups = G > 1 (random vectors, nvec a multiple
 * of G): mu[g N + m] is the mean over the g-th G-th of the vectors alone
 * (so that one block product serves several independent estimates).
 * Collective. */
typedef struct kpm_options {
    int moments;      /* N >= 2                                         */
    int nvec;         /* R >= 1 random vectors (unit: ignored)          */
    int block;        /* 1..PL_SPMM_RMAX vectors per block product      */
    int unit;         /* 1: all unit vectors (small matrices, tests)    */
    uint64_t seed;
    double a, b;      /* H~ = (H - b) / a                               */
    int quiet;        /* no progress lines                              */
    int groups;       /* 0, 1: one mean; G > 1: G means (mu[G N])       */
    uint64_t stride;  /* vector i of group g has seed + g stride + i (0: */
                      /* nvec / G, i.e. vector v has seed + v)           */
} kpm_options;
typedef struct kpm_stats {
    int64_t block_products; /* pl_op_apply_block_aug calls             */
    int64_t vector_products; /* their columns: SpMV equivalents        */
    double seconds;         /* wall time of kpm_moments                */
    double start_seconds;   /* of it: making and uploading start blocks */
    int fused;              /* 1: the backend's fused step ran         */
} kpm_stats;
int kpm_moments(pl_op *op, const kpm_options *o, double *mu, kpm_stats *st);
/* Spectral bounds from `steps` Lanczos steps (lz_recursion from the
 * random vector of seed): the extreme Ritz values widened by their
 * residual bounds |beta_m s_m| and then by 1 % of the width on each side.
 * Collective. */
int kpm_bounds(pl_op *op, uint64_t seed, int steps, double *emin, double *emax);
/* Damping factors g_0..g_{N-1}: kind 0 Jackson, 1 Lorentz(lambda).  Can't fail. */
void kpm_damping(int kind, double lambda, int N, double *g);
/* The density at the P Chebyshev nodes x_k = cos(pi (k + 1/2) / P) mapped
 * to energies E = a x + b, ascending: energy[P], rho[P] (integrates to
 * g_0 mu_0 exactly by Gauss-Chebyshev quadrature, returned in *integral).
 * Can't fail. */
void kpm_density(int N, const double *mu, const double *g, double a, double b, int P, double *energy, double *rho,
                 double *integral);

/* ---- Chebyshev filter diagonalization (chebfd.c, chebfd_filter.c,
 * chebfd_orth.c; docs/config.md "[solver] method = chebfd") ----
 * All eigenpairs of a symmetric operator inside a window [a, b] (or the
 * nev closest to a target, or the nev smallest / largest), using only
 * block products: Pieper, Kreutzer, Alvermann, Galgon, Fehske, Hager,
 * Lang, Wellein, J. Comput. Phys. 325 (2016) 226.  cf_plan: spectral
 * bounds (kpm_bounds), the window, the filter degree, a stochastic KPM
 * estimate of the count in the window and the search block size; then
 * cf_solve: subspace iteration with the Jackson-damped Chebyshev
 * expansion of the window's indicator through pl_op_apply_block_aug
 * (R <= PL_SPMM_RMAX columns at a time), CholQR2 (fallback: SVQB with
 * dropped directions refilled at random), Rayleigh-Ritz and locking. */
enum cf_mode { CF_INTERVAL = 0, CF_TARGET = 1, CF_SMALLEST = 2, CF_LARGEST = 3 };
typedef struct cf_options {
    int mode;            /* enum cf_mode = interval                                 */
    double a, b;         /* interval: the window, a < b                            */
    double target;       /* target: the energy E                                   */
    int nev;             /* target, smallest, largest: pairs wanted = 4            */
    double tol;          /* residual <= tol * ||H|| (chebfd.c: from the bounds) = 1e-10 */
    int degree;          /* filter degree, 0 = auto (chebfd_filter.c)              */
    int search_size;     /* search block columns, 0 = auto                          */
    int max_iter;        /* filter iterations, 0 = auto (CF_ITER_AUTO)              */
    uint64_t seed;       /* start block and KPM vectors = 1                         */
    int want_vectors;    /* keep the eigenvectors in the result = 0                 */
    int quiet;           /* no progress lines = 0                                   */
} cf_options;
#define CF_ITER_AUTO 40
/* Defaults as documented above.  Can't fail. */
void cf_options_defaults(cf_options *o);

/* What cf_plan decided (and cf_solve reports). */
typedef struct cf_plan {
    double emin, emax;      /* spectral bounds (Lanczos, widened)                 */
    double a, b;            /* the window in use (target / smallest / largest:    */
                            /* chosen from the KPM count)                         */
    double est, est_err;    /* KPM estimate of the eigenvalues in [a, b] and its  */
                            /* uncertainty (2 standard errors + the edge smear)   */
    int degree;             /* filter degree in use                               */
    int degree_auto;        /* 1: chosen by the rule                              */
    int kernel;             /* the filter's damping: sigma factors to this power, */
                            /* 0 Jackson (PJDS_CHEBFD_KERNEL, default 3)          */
    int nb;                 /* search block columns                               */
    int R;                  /* columns per block product (<= PL_SPMM_RMAX)        */
    int kpm_moments, kpm_vectors; /* of the estimate (vectors 0: all unit vectors) */
    int64_t kpm_products;   /* SpMV equivalents of the bounds and the estimate    */
} cf_plan;

/* Per-run facts beyond lz_result. */
typedef struct cf_info {
    int iterations;         /* filter iterations done                             */
    int found;              /* converged pairs inside [a, b]                      */
    int64_t spmmv;          /* vectors multiplied (SpMV equivalents): filter, RR, */
                            /* residuals; the plan's KPM products not included    */
    double orth;            /* largest measured max|V^T V - I| after the          */
                            /* orthonormalisation of an iteration                 */
    int svqb;               /* orthonormalisations that needed the SVQB fallback  */
    double device_used;     /* device memory in use with every block allocated    */
                            /* (total - free; 0 for a host backend)               */
    char why[256];          /* "" when converged, else why it stopped             */
} cf_info;

/* Bounds, window, degree, estimate, block size.  PL_ERR_INPUT (message
 * starting with the key: "interval", "target", "filter_degree",
 * "search_size", "nev") for a window outside the bounds, an empty window,
 * too many pairs for the matrix.  Collective. */
int cf_plan_make(pl_op *op, const cf_options *o, cf_plan *p);
/* Bytes of backend memory cf_solve allocates for plan p on this rank. */
double cf_plan_bytes(const pl_op *op, const cf_plan *p);
/* The iteration.  res: eigenvalues (interval: ascending; target: by
 * distance to the target; smallest ascending; largest descending),
 * explicit residuals, vectors (want_vectors), nconv = pairs returned that
 * converged, iterations = SpMV equivalents, reason LZ_CONVERGED or
 * LZ_MAX_RESTARTS (info->why says why).  Collective. */
int cf_solve(pl_op *op, const cf_options *o, const cf_plan *p, lz_result *res, cf_info *info);
