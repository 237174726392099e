/* pjds.h — the public C interface of libpjds: a few extreme eigenpairs of a
 * large sparse real matrix, distributed over MPI ranks in blocks of rows,
 * with the pJDS sparse matrix-vector product on the CPU (OpenMP) or on a
 * GPU (CUDA), thick-restart Lanczos for symmetric matrices and Krylov-Schur
 * for nonsymmetric ones.
 *
 * Everything public starts with pjds_ / PJDS_.  Usage (docs/api.md):
 *
 *     pjds_matrix *A;  pjds_result *r;  pjds_solve_options o;
 *     pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, n, row_ptr, col, val, NULL, &A);
 *     pjds_solve_options_init(&o);  o.nev = 4;
 *     pjds_solve(A, &o, &r);
 *     pjds_result_eigenvalues(r, re, im);
 *     pjds_result_free(&r);  pjds_matrix_free(&A);
 *
 * Conventions that hold for every function:
 * - Errors come back as a pjds_status (PJDS_OK = 0); the library never
 *   exits or aborts.  On an error pjds_last_error() says what went wrong;
 *   output arguments are left NULL / untouched.
 * - MPI: the caller initialises MPI (MPI_Init or MPI_Init_thread) before
 *   the first call and finalises it after the last pjds_matrix_free; the
 *   library never calls MPI_Init or MPI_Finalize.  A function marked
 *   "collective" must be called by every rank of the matrix's communicator,
 *   in the same order; its status is then the same on every rank (an error
 *   found on one rank is reported by all, with that rank's message).
 *   Functions not marked collective are local.
 * - Threads: the calls are not thread-safe against each other on the same
 *   handle; pjds_last_error is per thread.  OpenMP threads of the CPU
 *   kernels follow OMP_NUM_THREADS.
 * - Indices are 0-based; global sizes and indices are int64_t.
 * - Option structs are filled by their _init function first.  Fields are
 *   added only at the end of a struct, and only with a new soname
 *   (libpjds.so.MAJOR.MINOR: 0.2 since 0.2.0 added verify_probability and
 *   the verify_* result fields), so a program built against an older
 *   header keeps loading the library it was built for. */
#ifndef PJDS_H
#define PJDS_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The symbols of the shared library: only the functions below are exported. */
#if defined(__GNUC__)
#define PJDS_API __attribute__((visibility("default")))
#else
#define PJDS_API
#endif

/* ---- status and errors ------------------------------------------------- */
typedef enum pjds_status {
    PJDS_OK = 0,
    PJDS_ERR_INPUT = 1,    /* bad input data or options: a matrix that is not square, a column index */
                           /* outside [0, N), row blocks that do not tile [0, N), nev >= N, a bad     */
                           /* tolerance, an invalid model, cuda asked for without a GPU              */
    PJDS_ERR_ARG = 2,      /* bad call: a NULL pointer, an index out of range, eigenvectors asked    */
                           /* for from a result made without them                                    */
    PJDS_ERR_MPI = 3,      /* an MPI call failed                                                     */
    PJDS_ERR_CUDA = 4,     /* a CUDA call failed                                                     */
    PJDS_ERR_MEM = 5,      /* out of host or device memory                                           */
    PJDS_ERR_OVERFLOW = 6, /* a size does not fit its integer type                                   */
    PJDS_ERR_LAPACK = 7,   /* a dense LAPACK routine failed                                          */
    PJDS_ERR_NOTSUP = 8,   /* not built in (e.g. the CUDA backend in a CPU-only build)              */
    PJDS_ERR_INTERNAL = 9  /* a bug: please report it with the message                              */
} pjds_status;

/* The message of the last failed call of this thread ("" when none failed
 * yet).  Valid until the next failing call of this thread; owned by the
 * library.  Can't fail.  Not collective. */
PJDS_API const char *pjds_last_error(void);
/* "ok", "input", "argument", "mpi", "cuda", "memory", "overflow", "lapack",
 * "not supported", "internal" ("unknown" for other values).  Can't fail. */
PJDS_API const char *pjds_status_name(pjds_status s);
/* The library's version, "MAJOR.MINOR.PATCH".  Can't fail. */
PJDS_API const char *pjds_version(void);
/* Progress lines of the library on stderr (rank 0 of the matrix's
 * communicator): 0 = none (the default), 1 = info, 2 = debug.  Warnings
 * (a solve that did not converge, ...) print at every level.  Process-wide;
 * takes effect at the next pjds_matrix_create_*.  Can't fail. */
PJDS_API void pjds_set_verbosity(int level);

/* ---- matrices ------------------------------------------------------------ */
typedef struct pjds_matrix pjds_matrix; /* opaque: the distributed operator */

typedef enum pjds_backend {
    PJDS_BACKEND_AUTO = 0, /* cuda when built with CUDA and a GPU is present, else cpu */
    PJDS_BACKEND_CPU = 1,  /* OpenMP kernels on the host                               */
    PJDS_BACKEND_CUDA = 2  /* one GPU per rank (PJDS_ERR_INPUT without one,           */
                           /* PJDS_ERR_NOTSUP in a build without CUDA)                 */
} pjds_backend;

typedef enum pjds_symmetry {
    PJDS_SYMMETRY_CHECK = 0, /* find out: the generated models are known; a CSR matrix */
                             /* is tested with two products: y^T A x = x^T A y for     */
                             /* fixed random x, y to 1e-10 of ||A||_inf |x| |y|        */
    PJDS_SYMMETRIC = 1,      /* the caller says A = A^T (not checked)                 */
    PJDS_NONSYMMETRIC = 2    /* the caller says A may be nonsymmetric (not checked)   */
} pjds_symmetry;

typedef struct pjds_matrix_options {
    pjds_backend backend;   /* = PJDS_BACKEND_AUTO                                          */
    pjds_symmetry symmetry; /* = PJDS_SYMMETRY_CHECK                                        */
    int device;             /* GPU of this rank, -1 = the rank's index on its node modulo   */
                            /* the node's GPUs (more ranks than GPUs share them) = -1      */
} pjds_matrix_options;

/* Defaults as documented above.  Can't fail. */
PJDS_API void pjds_matrix_options_init(pjds_matrix_options *opt);

/* A matrix from this rank's block of CSR rows: global rows
 * [row0, row0 + n_local) of an n_rows x n_cols matrix, row i of the block
 * holding the entries row_ptr[i] .. row_ptr[i + 1] - 1 of col (global
 * column indices, 0-based) and val.  The blocks of the ranks must be
 * contiguous, in rank order and cover [0, n_rows) (one rank: row0 = 0,
 * n_local = n_rows); a rank may hold no rows (n_local = 0; row_ptr then
 * needs one entry).  Columns may come in any order within a row; repeated
 * columns are summed.  The matrix must be square (n_cols = n_rows).
 * The arrays are copied: the caller keeps ownership and may free them after
 * the call.  opt: NULL = defaults (pjds_matrix_options_init).
 * Collective over comm (the matrix keeps a duplicate of comm).
 * Errors: PJDS_ERR_INPUT for a matrix that is not square, a bad row block,
 * a column index outside [0, n_cols), row_ptr not ascending, a non-finite
 * value or a backend that is not there; PJDS_ERR_ARG for NULL arrays (with
 * entries) or A = NULL; PJDS_ERR_MEM, PJDS_ERR_MPI, PJDS_ERR_CUDA.
 * On success *A is a new matrix (free with pjds_matrix_free). */
PJDS_API pjds_status pjds_matrix_create_csr(MPI_Comm comm, int64_t n_rows, int64_t n_cols, int64_t row0,
                                            int64_t n_local, const int64_t *row_ptr, const int64_t *col,
                                            const double *val, const pjds_matrix_options *opt, pjds_matrix **A);

/* The 1-D Holstein-Hubbard chain (docs/api.md, "Models"):
 * H = -t sum_{i,s} (c+_{i s} c_{i+1 s} + h.c.) + U sum_i n_iup n_idn
 *     + w0 sum_i b+_i b_i - g sum_i n_i (b+_i + b_i),
 * phonons truncated by their total number <= max_phonons. */
typedef enum pjds_phonon_basis {
    PJDS_PHONON_SITE = 0,  /* one Einstein mode per site                                */
    PJDS_PHONON_NORMAL = 1 /* the L - 1 non-uniform normal modes; the uniform mode is     */
                           /* removed exactly (constant -g^2 N_e^2 / (L w0))             */
} pjds_phonon_basis;
typedef enum pjds_boundary { PJDS_BOUNDARY_PERIODIC = 0, PJDS_BOUNDARY_OPEN = 1 } pjds_boundary;
typedef struct pjds_hh_params {
    int sites;                      /* L >= 2 (no default: 0)                       */
    int n_up, n_down;               /* electrons per spin, 0..L (no default: 0)     */
    double hopping;                 /* t = 1                                         */
    double hubbard_u;               /* U = 0                                         */
    double phonon_frequency;        /* w0 > 0 = 1                                    */
    double coupling;                /* g = 0                                         */
    int max_phonons;                /* M >= 0 (no default: 0)                        */
    pjds_phonon_basis phonon_basis; /* = PJDS_PHONON_SITE                            */
    pjds_boundary boundary;         /* = PJDS_BOUNDARY_PERIODIC                      */
} pjds_hh_params;

/* Defaults as documented above.  Can't fail. */
PJDS_API void pjds_hh_params_init(pjds_hh_params *p);
/* The Holstein-Hubbard Hamiltonian of p, its rows generated on the ranks
 * that hold them (contiguous blocks balanced by non-zeros; which rows this
 * rank holds: pjds_matrix_get_info).  Symmetric (known, never checked).
 * opt: NULL = defaults; its symmetry is ignored.  Collective over comm.
 * Errors: PJDS_ERR_INPUT for invalid parameters (the message names the
 * parameter) or a basis too large to index; PJDS_ERR_MEM, PJDS_ERR_MPI,
 * PJDS_ERR_CUDA, PJDS_ERR_ARG for NULL pointers. */
PJDS_API pjds_status pjds_matrix_create_hh(MPI_Comm comm, const pjds_hh_params *p, const pjds_matrix_options *opt,
                                           pjds_matrix **A);

typedef struct pjds_matrix_info {
    int64_t n_rows;         /* N                                                 */
    int64_t row0, n_local;  /* this rank's rows [row0, row0 + n_local)           */
    int64_t nnz;            /* non-zeros of the whole matrix                     */
    int symmetric;          /* 1 symmetric, 0 not (as checked or as declared)    */
    pjds_backend backend;   /* the backend in use: PJDS_BACKEND_CPU or _CUDA     */
} pjds_matrix_info;
/* Sizes and facts of A into *info.  Not collective.  PJDS_ERR_ARG for NULL. */
PJDS_API pjds_status pjds_matrix_get_info(const pjds_matrix *A, pjds_matrix_info *info);
/* Free the matrix and set *A = NULL; accepts NULL and *A == NULL.
 * Collective over the matrix's communicator (it frees a communicator).
 * Results stay valid.  Can't fail. */
PJDS_API void pjds_matrix_free(pjds_matrix **A);

/* ---- solving ------------------------------------------------------------- */
typedef enum pjds_method {
    PJDS_METHOD_AUTO = 0,        /* Lanczos for a symmetric matrix, else Krylov-Schur */
    PJDS_METHOD_LANCZOS = 1,     /* thick-restart Lanczos (symmetric matrices only)   */
    PJDS_METHOD_KRYLOV_SCHUR = 2 /* Krylov-Schur (any real matrix)                    */
} pjds_method;
typedef enum pjds_which {
    PJDS_WHICH_SMALLEST = 0,          /* smallest (real part)                          */
    PJDS_WHICH_LARGEST = 1,           /* largest (real part)                           */
    PJDS_WHICH_LARGEST_MAGNITUDE = 2, /* largest |lambda|                              */
    PJDS_WHICH_SMALLEST_REAL = 3,     /* smallest real part                            */
    PJDS_WHICH_LARGEST_REAL = 4,      /* largest real part                             */
    PJDS_WHICH_LARGEST_IMAGINARY = 5  /* largest imaginary part (nonsymmetric only)    */
} pjds_which;
typedef enum pjds_reorth {
    PJDS_REORTH_PARTIAL = 0, /* Lanczos: full passes only where the loss of orthogonality  */
                             /* estimate passes sqrt(eps)                                 */
    PJDS_REORTH_FULL = 1     /* a full two-pass Gram-Schmidt at every step                 */
} pjds_reorth;
#define PJDS_RESTARTS_AUTO (-1) /* max_restarts: a budget that scales with the problem */

typedef struct pjds_solve_options {
    pjds_method method;  /* = PJDS_METHOD_AUTO                                          */
    pjds_which which;    /* = PJDS_WHICH_SMALLEST                                       */
    int nev;             /* eigenpairs wanted, 1 <= nev < N = 4                          */
    double tol;          /* relative residual tolerance (> 0) = 1e-10                    */
    int ncv;             /* basis size, 0 = auto max(2 nev + 10, 24) (Lanczos) or       */
                         /* max(2 nev + 10, 32) (Krylov-Schur), capped at N = 0          */
    int max_restarts;    /* PJDS_RESTARTS_AUTO (a stop as stagnated when the residuals   */
                         /* stop falling) or a fixed budget >= 0 = PJDS_RESTARTS_AUTO    */
    uint64_t seed;       /* of the random start vector (the same for any number of ranks) = 1 */
    int want_vectors;    /* 1: keep the eigenvectors (pjds_result_eigenvector) = 0       */
    int verify;          /* 1: after convergence, search for a missed copy of a wanted    */
                         /* degenerate eigenvalue = 1                                    */
    pjds_reorth reorth;  /* Lanczos' reorthogonalisation = PJDS_REORTH_PARTIAL          */
    /* since 0.2.0: */
    double verify_probability; /* Lanczos' verify: the search accepts the set once a   */
                               /* wanted eigenvector it did not show would have needed */
                               /* a random start component this improbable, in (0, 1)  */
                               /* (the app's [solver] verify_probability) = 1e-3       */
} pjds_solve_options;

/* Defaults as documented above (those of the pjds-lanczos [solver] section).
 * Can't fail. */
PJDS_API void pjds_solve_options_init(pjds_solve_options *opt);

typedef struct pjds_result pjds_result; /* opaque: eigenvalues, residuals, vectors */

/* Solve for opt->nev wanted eigenpairs of A (opt NULL = defaults).  Not
 * converging is not an error: the result's stop reason says why it stopped
 * (pjds_result_get_info).  The result is independent of A afterwards (its
 * eigenvectors are copied to host memory in the original row order).
 * Collective over A's communicator.  Errors: PJDS_ERR_INPUT for nev < 1 or
 * nev >= N, tol <= 0, verify_probability outside (0, 1), a bad ncv or which, method Lanczos on a matrix known
 * to be nonsymmetric, largest_imaginary on a symmetric one; PJDS_ERR_MEM
 * when the basis does not fit; PJDS_ERR_LAPACK; PJDS_ERR_MPI;
 * PJDS_ERR_CUDA; PJDS_ERR_ARG for NULL A or res.  On success *res is a new
 * result (free with pjds_result_free). */
PJDS_API pjds_status pjds_solve(pjds_matrix *A, const pjds_solve_options *opt, pjds_result **res);

typedef enum pjds_stop_reason {
    PJDS_STOP_CONVERGED = 1,    /* all nev wanted eigenpairs met the tolerance                 */
    PJDS_STOP_MAX_RESTARTS = 2, /* the restart budget ran out first                            */
    PJDS_STOP_BREAKDOWN = 3,    /* no new direction could be found                             */
    PJDS_STOP_INACCURATE = 5,   /* Krylov-Schur: estimates converged, an explicit residual      */
                                /* stayed above 10 tol after rechecks                          */
    PJDS_STOP_STAGNATED = 6     /* max_restarts = auto: the residuals stopped falling           */
} pjds_stop_reason;
/* "converged", "max_restarts", "breakdown", "inaccurate", "stagnated"
 * ("unknown" for other values).  Can't fail. */
PJDS_API const char *pjds_stop_reason_name(pjds_stop_reason r);

typedef struct pjds_result_info {
    int nev;                 /* eigenpairs returned: opt nev, or nev + 1 from Krylov-Schur */
                             /* when the nev-th value's complex conjugate comes next      */
    int nconv;               /* leading pairs that met the tolerance                      */
    pjds_stop_reason reason; /* why the solver stopped                                    */
    pjds_method method;      /* the method that ran (auto resolved)                        */
    int is_complex;          /* 1: Krylov-Schur (imaginary parts and complex vectors)     */
    int ncv;                 /* basis size used                                           */
    int restarts;            /* restarts performed                                        */
    int64_t iterations;      /* matrix-vector products                                    */
    int has_vectors;         /* 1: eigenvectors were kept (want_vectors)                  */
    int64_t row0, n_local;   /* this rank's rows of the eigenvectors                      */
    /* since 0.2.0 (the HDF5 attributes verifications, verify_missed, verify_bound): */
    int verify_searches;     /* verify's searches of the complement started (0: none)     */
    int verify_missed;       /* missed wanted eigenvalues those searches found (returned)  */
    double verify_bound;     /* Lanczos: the start-component probability that a wanted      */
                             /* eigenvector beyond the returned ones would have needed to  */
                             /* stay hidden from the last search (<= verify_probability    */
                             /* where it accepted by its certificate); -1: not tracked     */
} pjds_result_info;
/* Facts of the solve into *info.  Not collective.  PJDS_ERR_ARG for NULL. */
PJDS_API pjds_status pjds_result_get_info(const pjds_result *res, pjds_result_info *info);
/* The info.nev eigenvalues, in the order wanted (ascending for smallest,
 * descending for largest, ...): real parts into re[info.nev], imaginary
 * parts into im[info.nev] (im may be NULL; zeros for Lanczos; conjugate
 * pairs next to each other, the positive part first).  The same on every
 * rank.  Not collective.  PJDS_ERR_ARG for NULL res or re. */
PJDS_API pjds_status pjds_result_eigenvalues(const pjds_result *res, double *re, double *im);
/* ||A x_i - lambda_i x_i||_2 of each returned pair (x_i of unit norm),
 * recomputed explicitly, into r[info.nev].  Not collective.  PJDS_ERR_ARG
 * for NULL. */
PJDS_API pjds_status pjds_result_residuals(const pjds_result *res, double *r);
/* Eigenvector i (0 <= i < info.nev), this rank's rows [row0, row0 +
 * n_local) in the caller's original row order: real part into
 * re[n_local], imaginary part into im[n_local] (im may be NULL; zeros for a
 * real eigenvalue).  Unit 2-norm over all ranks (for a complex vector:
 * ||Re x||^2 + ||Im x||^2 = 1).  Not collective.  PJDS_ERR_ARG for NULL,
 * i out of range, or a result solved without want_vectors. */
PJDS_API pjds_status pjds_result_eigenvector(const pjds_result *res, int i, double *re, double *im);
/* Free the result and set *res = NULL; accepts NULL and *res == NULL.
 * Not collective.  Can't fail. */
PJDS_API void pjds_result_free(pjds_result **res);

/* ---- MPI for bindings (Python's ctypes, other FFIs) ----------------------
 * A caller that cannot reach MPI itself lets the library start it and hand
 * out the communicators.  C programs keep calling MPI directly. */
typedef enum pjds_comm_kind { PJDS_COMM_WORLD = 0, PJDS_COMM_SELF = 1 } pjds_comm_kind;
/* Initialise MPI with MPI_Init_thread (MPI_THREAD_MULTIPLE requested, as
 * the app) unless it is initialised already (by the caller, mpi4py, ...).
 * *initialized_here (may be NULL) = 1 when this call initialised it.
 * Without a launcher (mpirun, srun) MPI starts as a singleton: one rank.
 * Not collective (MPI_Init_thread itself is, under a launcher).  Errors:
 * PJDS_ERR_MPI when MPI was finalized already or MPI_Init_thread failed. */
PJDS_API pjds_status pjds_mpi_init(int *initialized_here);
/* MPI_Finalize, only when pjds_mpi_init initialised MPI and it is not
 * finalized yet (else nothing).  Free every matrix first.  Collective over
 * MPI_COMM_WORLD.  Errors: PJDS_ERR_MPI. */
PJDS_API pjds_status pjds_mpi_finalize(void);
/* sizeof(MPI_Comm) of the MPI the library was built with (8 for Open MPI's
 * pointer handles, 4 for MPICH's int handles), so a binding passes the
 * handle as the right type.  Can't fail. */
PJDS_API int pjds_mpi_comm_bytes(void);
/* MPI_COMM_WORLD or MPI_COMM_SELF into *comm.  Not collective.
 * PJDS_ERR_ARG for NULL comm or another kind. */
PJDS_API pjds_status pjds_mpi_comm(pjds_comm_kind kind, MPI_Comm *comm);
/* This process's rank in comm and comm's size.  Not collective.
 * PJDS_ERR_ARG for NULL; PJDS_ERR_MPI before MPI is initialised. */
PJDS_API pjds_status pjds_mpi_comm_rank_size(MPI_Comm comm, int *rank, int *size);
/* Eigenvector i whole (all N rows, original order) on every rank of comm,
 * which must be the communicator of the matrix solved (each rank passes
 * its own res): real part into re[N], imaginary part into im[N] (im may
 * be NULL), as pjds_result_eigenvector gives each rank's block.
 * Collective over comm.  Errors: PJDS_ERR_ARG as pjds_result_eigenvector,
 * on every rank; PJDS_ERR_OVERFLOW for N > INT_MAX; PJDS_ERR_MEM;
 * PJDS_ERR_MPI. */
PJDS_API pjds_status pjds_result_eigenvector_all(const pjds_result *res, MPI_Comm comm, int i, double *re,
                                                 double *im);

#ifdef __cplusplus
}
#endif

#endif
