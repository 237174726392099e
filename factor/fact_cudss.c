/* fact_cudss.c — the cuDSS back-end of fact.h: a sparse LU (or LDL^T for
 * symmetric M) on one GPU through NVIDIA's cuDSS, opened at run time
 * (cudss_load.h).
 *
 * One rank only (comm of size 1).  The matrix goes to the GPU once as CSR
 * with 32-bit indices (cuDSS takes at most 2^31 - 1 rows; a matrix whose
 * entries exceed that too would not factor on one GPU anyway), real values as
 * CUDA_R_64F, complex ones interleaved as CUDA_C_64F.  A symmetric M (M = M^T,
 * complex symmetric too, not Hermitian) is passed as its lower triangle with
 * CUDSS_MTYPE_SYMMETRIC; the map from the caller's entries to the kept ones
 * is kept for the refactorisations.
 *
 * create: upload, analysis (reordering and symbolic factorisation: values are
 * read by the matching), then the memory estimate of the analysis
 * (CUDSS_DATA_MEMORY_ESTIMATES: device peak) and the factor's entries
 * (CUDSS_DATA_LU_NNZ).  With no memory limit given (o->mem_limit = 0) an
 * estimate above the GPU's free memory is refused here, before the numeric
 * work, with PL_ERR_INPUT and the estimate; fact.c checks a given limit.
 * factor: the first call runs CUDSS_PHASE_FACTORIZATION, later calls (new
 * values, e.g. another shift, on the analysed pattern)
 * CUDSS_PHASE_REFACTORIZATION, which reuses the analysis and the first
 * factorisation's internal data (PJDS_CUDSS_REFACTOR=0 makes every call a full
 * FACTORIZATION).  A singular M (cuDSS's info, or a pivot of the factor's
 * diagonal at or below n eps of the largest one) is PL_ERR_INPUT.
 * solve: b is copied to a pinned staging buffer and the device, x back; the
 * device vectors and the cuDSS objects live until destroy. */
#include "fact_impl.h"
#include "pl_error.h"

#if PJDS_HAVE_CUDSS
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudss_load.h"

#define CS_CUDA(e)                                                                                      \
    do {                                                                                                \
        cudaError_t cs_ce_ = (e);                                                                       \
        if (cs_ce_ != cudaSuccess)                                                                      \
            return pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s (%s)", #e,           \
                                cudaGetErrorName(cs_ce_), cudaGetErrorString(cs_ce_));                  \
    } while (0)

/* ALLOC_FAILED is a memory error (PL_ERR_MEM), anything else a CUDA one */
#define CS_DSS(e)                                                                                       \
    do {                                                                                                \
        cudssStatus_t cs_se_ = (e);                                                                     \
        if (cs_se_ != CUDSS_STATUS_SUCCESS)                                                             \
            return pl_error_set(cs_se_ == CUDSS_STATUS_ALLOC_FAILED ? PL_ERR_MEM : PL_ERR_CUDA,         \
                                __FILE__, __LINE__, __func__, "%s: %s", #e,                             \
                                pl_cudss_status_name(cs_se_));                                          \
    } while (0)

typedef struct cs_state {
    int64_t n, nnz_in, nnz;  /* order, the caller's entries, the entries passed to cuDSS */
    int cplx, sym, verbose;
    int nfactor;             /* numeric factorisations done */
    int64_t *src;            /* symmetric: caller's entry index of kept entry k (else NULL) */
    double *h_val;           /* host staging of the values (nnz, x2 complex) */
    double *h_vec;           /* pinned staging of b and x (n, x2 complex) */
    double *h_diag;          /* the factor's diagonal (n, x2 complex), for the singularity check */
    int32_t *d_rowptr, *d_col;
    double *d_val, *d_b, *d_x;
    cudaStream_t stream;
    cudssHandle_t h;
    cudssConfig_t cfg;
    cudssData_t data;
    cudssMatrix_t A, b, x;
} cs_state;

static size_t cs_ncomp(const cs_state *s) { return s->cplx ? 2u : 1u; }

/* Host CSR in 32-bit indices (the lower triangle for symmetric M); device copy. */
static int cs_upload_pattern(cs_state *s, const int64_t *rowptr, const int64_t *col)
{
    const int64_t n = s->n;
    PL_CHECK(n < INT32_MAX && rowptr[n] < INT32_MAX, PL_ERR_OVERFLOW,
             "cuDSS takes 32-bit indices: n = %lld and %lld non-zeros exceed them; use factorization = mumps",
             (long long)n, (long long)rowptr[n]);
    int32_t *rp = NULL, *ci = NULL;
    int r = PL_OK;
    rp = malloc((size_t)(n + 1) * sizeof *rp);
    ci = malloc((size_t)(rowptr[n] ? rowptr[n] : 1) * sizeof *ci);
    if (s->sym) s->src = malloc((size_t)(rowptr[n] ? rowptr[n] : 1) * sizeof *s->src);
    PL_CHECK_GOTO(rp && ci && (!s->sym || s->src), PL_ERR_MEM, done, r,
                  "out of host memory for the cuDSS pattern (%lld entries)", (long long)rowptr[n]);
    int64_t k = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
            PL_CHECK_GOTO(col[p] >= 0 && col[p] < n, PL_ERR_ARG, done, r,
                          "column %lld of row %lld outside [0, %lld)", (long long)col[p], (long long)i,
                          (long long)n);
            if (s->sym && col[p] > i) continue;
            if (s->sym) s->src[k] = p;
            ci[k++] = (int32_t)col[p];
        }
        rp[i + 1] = (int32_t)k;
    }
    s->nnz_in = rowptr[n];
    s->nnz = k;
    PL_CHECK_GOTO(cudaMalloc((void **)&s->d_rowptr, (size_t)(n + 1) * sizeof(int32_t)) == cudaSuccess &&
                      cudaMalloc((void **)&s->d_col, (size_t)(k ? k : 1) * sizeof(int32_t)) == cudaSuccess,
                  PL_ERR_MEM, done, r, "cudaMalloc of the CSR pattern for cuDSS (%lld entries) failed",
                  (long long)k);
    PL_CHECK_GOTO(cudaMemcpy(s->d_rowptr, rp, (size_t)(n + 1) * sizeof(int32_t), cudaMemcpyHostToDevice) ==
                          cudaSuccess &&
                      cudaMemcpy(s->d_col, ci, (size_t)k * sizeof(int32_t), cudaMemcpyHostToDevice) == cudaSuccess,
                  PL_ERR_CUDA, done, r, "cudaMemcpy of the CSR pattern for cuDSS failed: %s",
                  cudaGetErrorString(cudaGetLastError()));
done:
    free(rp);
    free(ci);
    return r;
}

/* Gather (symmetric: the kept entries) and interleave (complex) the values; upload. */
static int cs_upload_values(cs_state *s, const double *re, const double *im)
{
    PL_CHECK(re != NULL, PL_ERR_ARG, "cuDSS back-end: no values");
    PL_CHECK(!s->cplx || im != NULL, PL_ERR_ARG, "cuDSS back-end: a complex matrix without imaginary parts");
    const size_t nc = cs_ncomp(s);
    for (int64_t k = 0; k < s->nnz; k++) {
        const int64_t p = s->src ? s->src[k] : k;
        s->h_val[nc * (size_t)k] = re[p];
        if (s->cplx) s->h_val[nc * (size_t)k + 1] = im[p];
    }
    CS_CUDA(cudaMemcpyAsync(s->d_val, s->h_val, nc * (size_t)s->nnz * sizeof(double), cudaMemcpyHostToDevice,
                            s->stream));
    CS_CUDA(cudaStreamSynchronize(s->stream));
    return PL_OK;
}

static int cs_alloc(cs_state *s)
{
    const size_t nc = cs_ncomp(s), nv = nc * (size_t)s->n;
    s->h_val = malloc(nc * (size_t)(s->nnz ? s->nnz : 1) * sizeof(double));
    s->h_diag = malloc((nv ? nv : 1) * sizeof(double));
    PL_CHECK(s->h_val && s->h_diag, PL_ERR_MEM, "out of host memory for the cuDSS values (%lld entries)",
             (long long)s->nnz);
    CS_CUDA(cudaMallocHost((void **)&s->h_vec, (nv ? nv : 1) * sizeof(double)));
    CS_CUDA(cudaMalloc((void **)&s->d_val, nc * (size_t)(s->nnz ? s->nnz : 1) * sizeof(double)));
    CS_CUDA(cudaMalloc((void **)&s->d_b, (nv ? nv : 1) * sizeof(double)));
    CS_CUDA(cudaMalloc((void **)&s->d_x, (nv ? nv : 1) * sizeof(double)));
    CS_CUDA(cudaMemset(s->d_b, 0, (nv ? nv : 1) * sizeof(double)));
    CS_CUDA(cudaMemset(s->d_x, 0, (nv ? nv : 1) * sizeof(double)));
    return PL_OK;
}

/* The cuDSS handle on its own stream, the default configuration, and the
 * three matrix wrappers (A over the device CSR, b and x dense n x 1). */
static int cs_objects(cs_state *s)
{
    const cudaDataType_t vt = s->cplx ? CUDA_C_64F : CUDA_R_64F;
    CS_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    CS_DSS(pl_cudss.Create(&s->h));
    CS_DSS(pl_cudss.SetStream(s->h, s->stream));
    CS_DSS(pl_cudss.ConfigCreate(&s->cfg));
    CS_DSS(pl_cudss.DataCreate(s->h, &s->data));
    CS_DSS(pl_cudss.MatrixCreateCsr(&s->A, s->n, s->n, s->nnz, s->d_rowptr, NULL, s->d_col, s->d_val, CUDA_R_32I,
                                    CUDA_R_32I, vt, s->sym ? CUDSS_MTYPE_SYMMETRIC : CUDSS_MTYPE_GENERAL,
                                    s->sym ? CUDSS_MVIEW_LOWER : CUDSS_MVIEW_FULL, CUDSS_BASE_ZERO));
    CS_DSS(pl_cudss.MatrixCreateDn(&s->b, s->n, 1, s->n, s->d_b, vt, CUDSS_LAYOUT_COL_MAJOR));
    CS_DSS(pl_cudss.MatrixCreateDn(&s->x, s->n, 1, s->n, s->d_x, vt, CUDSS_LAYOUT_COL_MAJOR));
    return PL_OK;
}

/* cuDSS's error indicator after a phase (0: none).  For a factorisation a
 * positive value is a zero pivot. */
static int cs_info(cs_state *s, int *info)
{
    size_t w = 0;
    *info = 0;
    CS_DSS(pl_cudss.DataGet(s->h, s->data, CUDSS_DATA_INFO, info, sizeof *info, &w));
    return PL_OK;
}

/* Analysis, then the estimate: device peak of the factorisation (cuDSS's) plus
 * the matrix and vectors held here; host peak for the message. */
static int cs_analyse(cs_state *s, const pl_fact_opts *o, pl_fact_info *info)
{
    const double t0 = pl_wtime();
    CS_DSS(pl_cudss.Execute(s->h, CUDSS_PHASE_ANALYSIS, s->cfg, s->data, s->A, s->x, s->b));
    CS_CUDA(cudaStreamSynchronize(s->stream));
    int inf = 0;
    PL_CALL(cs_info(s, &inf));
    PL_CHECK(inf == 0, PL_ERR_CUDA, "cuDSS analysis of the %lld-row matrix reported info = %d", (long long)s->n,
             inf);
    int64_t est[16] = {0}, lu_nnz = 0;
    size_t w = 0;
    CS_DSS(pl_cudss.DataGet(s->h, s->data, CUDSS_DATA_MEMORY_ESTIMATES, est, sizeof est, &w));
    CS_DSS(pl_cudss.DataGet(s->h, s->data, CUDSS_DATA_LU_NNZ, &lu_nnz, sizeof lu_nnz, &w));
    const size_t nc = cs_ncomp(s);
    const double own = (double)(s->n + 1 + s->nnz) * 4.0 + (double)nc * 8.0 * (double)(s->nnz + 2 * s->n);
    info->backend = "cudss";
    info->mem_estimate = (double)est[1] + own;
    info->nnz_factors = lu_nnz;
    info->analyse_s = pl_wtime() - t0;
    size_t fr = 0, tot = 0;
    CS_CUDA(cudaMemGetInfo(&fr, &tot));
    if (o->verbose)
        pl_info("cuDSS analysis: n = %lld, %lld entries, %lld in the factors, GPU peak %.3g GB (%.3g GB free of "
                "%.3g), host peak %.3g GB, %.3f s",
                (long long)s->n, (long long)s->nnz, (long long)lu_nnz, info->mem_estimate / 1e9, (double)fr / 1e9,
                (double)tot / 1e9, (double)est[3] / 1e9, info->analyse_s);
    PL_CHECK(o->mem_limit > 0 || (double)est[1] <= (double)fr, PL_ERR_INPUT,
             "the cuDSS factorisation will not fit: its analysis estimates %.3g GB of GPU memory (%lld entries "
             "in the factors), %.3g GB of the GPU's %.3g GB are free; use factorization = mumps (host memory, "
             "MPI ranks)",
             info->mem_estimate / 1e9, (long long)lu_nnz, (double)fr / 1e9, (double)tot / 1e9);
    return PL_OK;
}

/* Singular to working precision: cuDSS's info is nonzero, or the factor's
 * diagonal has an entry at or below n eps times its largest, or at or below
 * 1e-12 times it where cuDSS replaced pivots (CUDSS_DATA_NPIVOTS > 0: a
 * replaced pivot stands for a zero one, at its pivot epsilon).  Where cuDSS
 * does not give the diagonal (some configurations), only its info is used. */
static int cs_singular(cs_state *s, int *singular, double *ratio, int *npiv)
{
    *singular = 0;
    *ratio = 1.0;
    *npiv = 0;
    size_t w = 0;
    const size_t nc = cs_ncomp(s);
    if (pl_cudss.DataGet(s->h, s->data, CUDSS_DATA_NPIVOTS, npiv, sizeof *npiv, &w) != CUDSS_STATUS_SUCCESS) *npiv = 0;
    cudssStatus_t e = pl_cudss.DataGet(s->h, s->data, CUDSS_DATA_DIAG, s->h_diag, nc * (size_t)s->n * sizeof(double),
                                       &w);
    if (e != CUDSS_STATUS_SUCCESS || w < nc * (size_t)s->n * sizeof(double) || s->n == 0) return PL_OK;
    double dmax = 0.0, dmin = INFINITY;
    for (int64_t i = 0; i < s->n; i++) {
        const double a = s->cplx ? hypot(s->h_diag[2 * i], s->h_diag[2 * i + 1]) : fabs(s->h_diag[i]);
        dmax = fmax(dmax, a);
        dmin = fmin(dmin, a);
    }
    *ratio = dmax > 0.0 ? dmin / dmax : 0.0;
    const double tol = fmax((double)s->n * DBL_EPSILON, *npiv > 0 ? 1e-12 : 0.0);
    *singular = !(*ratio > tol); /* also NaN */
    return PL_OK;
}

static int cs_refactor_wanted(void)
{
    const char *v = getenv("PJDS_CUDSS_REFACTOR");
    return !(v && strcmp(v, "0") == 0);
}

static int cs_factor(void *st, const double *re, const double *im)
{
    cs_state *s = st;
    if (re) PL_CALL(cs_upload_values(s, re, im)); /* NULL: the values on the device (create's) */
    const int phase =
        s->nfactor > 0 && cs_refactor_wanted() ? CUDSS_PHASE_REFACTORIZATION : CUDSS_PHASE_FACTORIZATION;
    const double t0 = pl_wtime();
    CS_DSS(pl_cudss.Execute(s->h, phase, s->cfg, s->data, s->A, s->x, s->b));
    CS_CUDA(cudaStreamSynchronize(s->stream));
    s->nfactor++;
    int inf = 0, sing = 0, npiv = 0;
    double ratio = 1.0;
    const char *what = phase == CUDSS_PHASE_FACTORIZATION ? "factorisation" : "refactorisation";
    PL_CALL(cs_info(s, &inf));
    if (inf == 0) PL_CALL(cs_singular(s, &sing, &ratio, &npiv));
    PL_CHECK(inf == 0 && !sing, PL_ERR_INPUT,
             "the shifted matrix is singular to working precision (cuDSS %s of the %lld-row matrix: info = %d, "
             "smallest/largest pivot = %.3g, %d replaced pivots): the shift is an eigenvalue; choose a target a "
             "little away from it",
             what, (long long)s->n, inf, ratio, npiv);
    if (s->verbose)
        pl_info("cuDSS %s: %.3f s, smallest/largest pivot %.3g, %d replaced pivots", what, pl_wtime() - t0, ratio,
                npiv);
    return PL_OK;
}

static int cs_solve(void *st, const double *b_re, const double *b_im, double *x_re, double *x_im)
{
    cs_state *s = st;
    PL_CHECK(s->nfactor > 0, PL_ERR_ARG, "cuDSS solve before the factorisation");
    PL_CHECK(b_re && x_re && (!s->cplx || (b_im && x_im)), PL_ERR_ARG,
             "cuDSS solve: missing vector parts (complex: re and im of b and x)");
    const size_t nc = cs_ncomp(s), bytes = nc * (size_t)s->n * sizeof(double);
    if (s->cplx) {
        for (int64_t i = 0; i < s->n; i++) {
            s->h_vec[2 * i] = b_re[i];
            s->h_vec[2 * i + 1] = b_im[i];
        }
        CS_CUDA(cudaMemcpyAsync(s->d_b, s->h_vec, bytes, cudaMemcpyHostToDevice, s->stream));
    } else {
        CS_CUDA(cudaMemcpyAsync(s->d_b, b_re, bytes, cudaMemcpyHostToDevice, s->stream));
    }
    CS_DSS(pl_cudss.Execute(s->h, CUDSS_PHASE_SOLVE, s->cfg, s->data, s->A, s->x, s->b));
    CS_CUDA(cudaMemcpyAsync(s->cplx ? s->h_vec : x_re, s->d_x, bytes, cudaMemcpyDeviceToHost, s->stream));
    CS_CUDA(cudaStreamSynchronize(s->stream));
    if (s->cplx)
        for (int64_t i = 0; i < s->n; i++) {
            x_re[i] = s->h_vec[2 * i];
            x_im[i] = s->h_vec[2 * i + 1];
        }
    return PL_OK;
}

/* Every part that exists, in reverse order of creation; errors are ignored. */
static void cs_destroy(void *st)
{
    cs_state *s = st;
    if (!s) return;
    if (s->stream) cudaStreamSynchronize(s->stream);
    if (s->x) pl_cudss.MatrixDestroy(s->x);
    if (s->b) pl_cudss.MatrixDestroy(s->b);
    if (s->A) pl_cudss.MatrixDestroy(s->A);
    if (s->data) pl_cudss.DataDestroy(s->h, s->data);
    if (s->cfg) pl_cudss.ConfigDestroy(s->cfg);
    if (s->h) pl_cudss.Destroy(s->h);
    if (s->stream) cudaStreamDestroy(s->stream);
    cudaFree(s->d_x);
    cudaFree(s->d_b);
    cudaFree(s->d_val);
    cudaFree(s->d_col);
    cudaFree(s->d_rowptr);
    if (s->h_vec) cudaFreeHost(s->h_vec);
    free(s->h_diag);
    free(s->h_val);
    free(s->src);
    free(s);
}

static const pl_fact_ops cs_ops = {cs_factor, cs_solve, cs_destroy};

int pl_fact_cudss_create(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc, const int64_t *rowptr,
                         const int64_t *col, const double *re, const double *im, const pl_fact_opts *o,
                         pl_fact_info *info, const pl_fact_ops **ops, void **st)
{
    int size = 0;
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    PL_CHECK(size == 1, PL_ERR_NOTSUP,
             "factorization = cudss runs on one rank and one GPU (this run has %d ranks); use factorization = "
             "mumps for MPI runs",
             size);
    PL_CHECK(row0 == 0 && nloc == n && n >= 0 && rowptr && col, PL_ERR_ARG,
             "cuDSS back-end: one rank must hold all %lld rows (row0 = %lld, nloc = %lld)", (long long)n,
             (long long)row0, (long long)nloc);
    PL_CALL(pl_cudss_load());
    cs_state *s = calloc(1, sizeof *s);
    PL_CHECK(s != NULL, PL_ERR_MEM, "out of host memory");
    s->n = n;
    s->cplx = o->is_complex != 0;
    s->sym = o->symmetric != 0;
    s->verbose = o->verbose;
    int r = PL_OK;
    PL_CALL_GOTO(cs_upload_pattern(s, rowptr, col), fail, r);
    PL_CALL_GOTO(cs_alloc(s), fail, r);
    PL_CALL_GOTO(cs_objects(s), fail, r);
    PL_CALL_GOTO(cs_upload_values(s, re, im), fail, r);
    PL_CALL_GOTO(cs_analyse(s, o, info), fail, r);
    *ops = &cs_ops;
    *st = s;
    return PL_OK;
fail:
    cs_destroy(s);
    return r;
}
#else
typedef int pl_fact_cudss_unused; /* cuDSS not built in: fact.c reports it */
#endif
