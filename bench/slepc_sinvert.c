/* slepc_sinvert.c -- the SLEPc peer of bench/sinvert_peers.py on the PETSc/SLEPc C API (3.18), for
 * machines without slepc4py: Krylov-Schur with ST sinvert, the nev eigenvalues nearest a target sigma
 * (EPS_TARGET_MAGNITUDE), the shifted matrix factorised by MUMPS (PCLU for a nonsymmetric matrix, problem
 * type NHEP; PCCHOLESKY for a symmetric one, problem type HEP), KSPPREONLY.  The same calls, in the same
 * order, as sinvert_peers.py's slepc4py worker; PETSc/SLEPc command-line options are applied last
 * (EPSSetFromOptions), so a run without options is that worker's run.
 *
 * The matrix: a MatrixMarket file (coordinate; real, integer or pattern; general, symmetric or
 * skew-symmetric; duplicates are summed, as scipy.io.mmread + tocsr does) that every rank reads, keeping
 * its own rows, or lap2d:M, the 2-D Laplacian of an M x M grid as sinvert_peers.py builds it
 * (kron(T, I) + kron(I, T), T = tridiag(-1, 2, -1)).  MATAIJ, rows split over the ranks as PETSc does by
 * default (PetscSplitOwnership).
 *
 * Timing (MPI_Wtime after a barrier): setup = EPSCreate .. EPSSetUp (the factorisation is in the set-up),
 * solve = EPSSolve (to a barrier); seconds = setup + solve, what the slepc4py worker's "seconds" measures.
 * solves = the count of the MatSolve event (PETSc's log) on rank 0, as the worker reads it.
 * Rank 0 prints one JSON line:
 *   {"seconds", "setup", "solve", "restarts", "converged", "solves", "re", "im", "residuals", "n", "nnz",
 *    "ranks", "sym"}
 * residuals: EPSComputeError(EPS_ERROR_RELATIVE) of each reported pair.
 *
 * Usage:
 *   mpiexec -n 4 slepc_sinvert -matrix cryg10000.mtx -sigma 6.8 [-nev 6] [-tol 1e-10] [-sym 0|1]
 *   slepc_sinvert -matrix lap2d:200 -sigma 1
 * -sym (default: MatIsSymmetric with tolerance 0, i.e. exactly symmetric, as sinvert_peers.py decides).
 * Build: bash bench/slepc_build.sh. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slepceps.h>

static const char help[] = "SLEPc sinvert + MUMPS peer of bench/sinvert_peers.py\n";

/* Owned-row entries in coordinate form, grown as needed. */
typedef struct {
    PetscInt *i, *j;
    PetscScalar *v;
    size_t n, cap;
} Coo;

static PetscErrorCode coo_push(Coo *c, PetscInt i, PetscInt j, PetscScalar v)
{
    PetscFunctionBeginUser;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        PetscCall(PetscRealloc(cap * sizeof(PetscInt), &c->i));
        PetscCall(PetscRealloc(cap * sizeof(PetscInt), &c->j));
        PetscCall(PetscRealloc(cap * sizeof(PetscScalar), &c->v));
        c->cap = cap;
    }
    c->i[c->n] = i;
    c->j[c->n] = j;
    c->v[c->n] = v;
    c->n++;
    PetscFunctionReturn(0);
}

static PetscErrorCode coo_free(Coo *c)
{
    PetscFunctionBeginUser;
    PetscCall(PetscFree(c->i));
    PetscCall(PetscFree(c->j));
    PetscCall(PetscFree(c->v));
    c->n = c->cap = 0;
    PetscFunctionReturn(0);
}

/* Rows [r0, r1) of n, PETSc's default split. */
static PetscErrorCode split_rows(MPI_Comm comm, PetscInt n, PetscInt *nloc, PetscInt *r0)
{
    PetscInt end = 0;

    PetscFunctionBeginUser;
    *nloc = PETSC_DECIDE;
    PetscCall(PetscSplitOwnership(comm, nloc, &n));
    PetscCallMPI(MPI_Scan(nloc, &end, 1, MPIU_INT, MPI_SUM, comm));
    *r0 = end - *nloc;
    PetscFunctionReturn(0);
}

static PetscErrorCode create_aij(MPI_Comm comm, PetscInt n, PetscInt nloc, PetscInt r0, const PetscInt *dnz,
                                 const PetscInt *onz, Mat *A)
{
    PetscFunctionBeginUser;
    (void)r0;
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetSizes(*A, nloc, nloc, n, n));
    PetscCall(MatSetType(*A, MATAIJ));
    PetscCall(MatXAIJSetPreallocation(*A, 1, dnz, onz, NULL, NULL));
    PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscFunctionReturn(0);
}

/* lap2d:M -- row r = i*M + j: 4 on the diagonal, -1 at (i +- 1, j) and (i, j +- 1) inside the grid. */
static PetscErrorCode build_lap2d(MPI_Comm comm, PetscInt m, Mat *A)
{
    PetscInt n = m * m, nloc, r0, *dnz, *onz;

    PetscFunctionBeginUser;
    PetscCheck(m > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "lap2d: M = %" PetscInt_FMT " must be positive", m);
    PetscCall(split_rows(comm, n, &nloc, &r0));
    PetscCall(PetscMalloc2(nloc, &dnz, nloc, &onz));
    for (PetscInt r = r0; r < r0 + nloc; r++) {
        PetscInt i = r / m, j = r % m, cols[5] = {r - m, r - 1, r, r + 1, r + m};
        PetscBool in[5] = {i > 0, j > 0, PETSC_TRUE, j < m - 1, i < m - 1};
        dnz[r - r0] = onz[r - r0] = 0;
        for (int k = 0; k < 5; k++)
            if (in[k]) {
                if (cols[k] >= r0 && cols[k] < r0 + nloc) dnz[r - r0]++;
                else onz[r - r0]++;
            }
    }
    PetscCall(create_aij(comm, n, nloc, r0, dnz, onz, A));
    for (PetscInt r = r0; r < r0 + nloc; r++) {
        PetscInt i = r / m, j = r % m, cols[5], nc = 0;
        PetscScalar vals[5];
        if (i > 0) { cols[nc] = r - m; vals[nc++] = -1.0; }
        if (j > 0) { cols[nc] = r - 1; vals[nc++] = -1.0; }
        cols[nc] = r; vals[nc++] = 4.0;
        if (j < m - 1) { cols[nc] = r + 1; vals[nc++] = -1.0; }
        if (i < m - 1) { cols[nc] = r + m; vals[nc++] = -1.0; }
        PetscCall(MatSetValues(*A, 1, &r, nc, cols, vals, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(PetscFree2(dnz, onz));
    PetscFunctionReturn(0);
}

static void lower(char *s)
{
    for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

/* A MatrixMarket coordinate file; every rank reads it and keeps the entries of its own rows. */
static PetscErrorCode build_mtx(MPI_Comm comm, const char *path, Mat *A)
{
    FILE *f;
    char line[4096], obj[64], fmt[64], field[64], symm[64];
    long long M = 0, N = 0, nnz = 0;
    PetscInt n, nloc, r0, *dnz, *onz;
    PetscBool pattern, symmetric, skew;
    Coo c = {0};

    PetscFunctionBeginUser;
    f = fopen(path, "r");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open %s", path);
    PetscCheck(fgets(line, sizeof line, f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: empty", path);
    PetscCheck(sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, symm) == 4, PETSC_COMM_SELF,
               PETSC_ERR_FILE_UNEXPECTED, "%s: no MatrixMarket header", path);
    lower(obj);
    lower(fmt);
    lower(field);
    lower(symm);
    PetscCheck(!strcmp(obj, "matrix") && !strcmp(fmt, "coordinate"), PETSC_COMM_SELF, PETSC_ERR_SUP,
               "%s: only 'matrix coordinate' files are read", path);
    PetscCheck(!strcmp(field, "real") || !strcmp(field, "integer") || !strcmp(field, "pattern"), PETSC_COMM_SELF,
               PETSC_ERR_SUP, "%s: field '%s' (real, integer or pattern only)", path, field);
    PetscCheck(!strcmp(symm, "general") || !strcmp(symm, "symmetric") || !strcmp(symm, "skew-symmetric"),
               PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: symmetry '%s' (general, symmetric or skew-symmetric only)",
               path, symm);
    pattern = !strcmp(field, "pattern") ? PETSC_TRUE : PETSC_FALSE;
    symmetric = !strcmp(symm, "symmetric") ? PETSC_TRUE : PETSC_FALSE;
    skew = !strcmp(symm, "skew-symmetric") ? PETSC_TRUE : PETSC_FALSE;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%') continue;
        if (sscanf(line, "%lld %lld %lld", &M, &N, &nnz) == 3) break;
        PetscCheck(strspn(line, " \t\r\n") == strlen(line), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                   "%s: bad size line", path);
    }
    PetscCheck(M > 0 && M == N && nnz >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: %lld x %lld, %lld entries: a square matrix is needed", path, M, N, nnz);
    n = (PetscInt)M;
    PetscCall(split_rows(comm, n, &nloc, &r0));
    for (long long e = 0; e < nnz; e++) {
        long long i, j;
        double v = 1.0;
        char *p, *q;
        PetscCheck(fgets(line, sizeof line, f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ,
                   "%s: %lld of %lld entries", path, e, nnz);
        p = line;
        i = strtoll(p, &q, 10);
        PetscCheck(q != p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: entry %lld: no row", path, e + 1);
        p = q;
        j = strtoll(p, &q, 10);
        PetscCheck(q != p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: entry %lld: no column", path, e + 1);
        if (!pattern) {
            p = q;
            v = strtod(p, &q);
            PetscCheck(q != p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: entry %lld: no value", path, e + 1);
        }
        PetscCheck(i >= 1 && i <= M && j >= 1 && j <= N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                   "%s: entry %lld: (%lld, %lld) outside the matrix", path, e + 1, i, j);
        i--;
        j--;
        if (i >= r0 && i < r0 + nloc) PetscCall(coo_push(&c, (PetscInt)i, (PetscInt)j, v));
        if ((symmetric || skew) && i != j && j >= r0 && j < r0 + nloc)
            PetscCall(coo_push(&c, (PetscInt)j, (PetscInt)i, skew ? -v : v));
    }
    PetscCheck(!fclose(f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: close failed", path);
    /* an upper bound (duplicates count twice); enough for MAT_NEW_NONZERO_ALLOCATION_ERR */
    PetscCall(PetscCalloc2(nloc, &dnz, nloc, &onz));
    for (size_t k = 0; k < c.n; k++) {
        if (c.j[k] >= r0 && c.j[k] < r0 + nloc) dnz[c.i[k] - r0]++;
        else onz[c.i[k] - r0]++;
    }
    for (PetscInt r = 0; r < nloc; r++) {
        dnz[r] = PetscMin(dnz[r], nloc);
        onz[r] = PetscMin(onz[r], n - nloc);
    }
    PetscCall(create_aij(comm, n, nloc, r0, dnz, onz, A));
    for (size_t k = 0; k < c.n; k++) PetscCall(MatSetValue(*A, c.i[k], c.j[k], c.v[k], ADD_VALUES));
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(PetscFree2(dnz, onz));
    PetscCall(coo_free(&c));
    PetscFunctionReturn(0);
}

static PetscErrorCode print_list(const char *key, const PetscReal *x, PetscInt n, PetscBool last)
{
    PetscFunctionBeginUser;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\"%s\": [", key));
    for (PetscInt k = 0; k < n; k++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s%.17g", k ? ", " : "", (double)x[k]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "]%s", last ? "" : ", "));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    char spec[PETSC_MAX_PATH_LEN] = "";
    PetscBool has_spec = PETSC_FALSE, has_sigma = PETSC_FALSE, has_sym = PETSC_FALSE, symflag = PETSC_FALSE;
    PetscReal sigma = 0, tol = 1e-10, *re, *im, *res;
    PetscInt nev = 6, sym = -1, nconv, nrep, its, nglob;
    PetscMPIInt size;
    PetscLogEvent ev_solve;
    PetscEventPerfInfo info;
    MatInfo minfo;
    double t0, t1, t2;
    Mat A;
    EPS eps;
    ST st;
    KSP ksp;
    PC pc;

    PetscCall(SlepcInitialize(&argc, &argv, NULL, help));
    PetscCall(PetscLogDefaultBegin());
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-matrix", spec, sizeof spec, &has_spec));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-sigma", &sigma, &has_sigma));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-nev", &nev, NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-sym", &sym, &has_sym));
    PetscCheck(has_spec && has_sigma, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
               "usage: slepc_sinvert -matrix FILE.mtx|lap2d:M -sigma S [-nev 6] [-tol 1e-10] [-sym 0|1]");
    PetscCheck(nev > 0 && tol > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-nev and -tol must be positive");

    if (!strncmp(spec, "lap2d:", 6)) {
        char *end;
        long m = strtol(spec + 6, &end, 10);
        PetscCheck(end != spec + 6 && *end == '\0' && m > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
                   "-matrix lap2d:M needs a positive integer M, not '%s'", spec + 6);
        PetscCall(build_lap2d(PETSC_COMM_WORLD, (PetscInt)m, &A));
    } else {
        PetscCall(build_mtx(PETSC_COMM_WORLD, spec, &A));
    }
    if (has_sym && sym >= 0) symflag = sym ? PETSC_TRUE : PETSC_FALSE;
    else PetscCall(MatIsSymmetric(A, 0.0, &symflag));
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &minfo));
    PetscCall(MatGetSize(A, &nglob, NULL));
    for (char *p = spec; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) *p = '?'; /* the JSON string below */

    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    t0 = MPI_Wtime();
    PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCall(EPSSetProblemType(eps, symflag ? EPS_HEP : EPS_NHEP));
    PetscCall(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
    PetscCall(EPSSetTolerances(eps, tol, PETSC_DEFAULT));
    PetscCall(EPSSetTarget(eps, sigma));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_TARGET_MAGNITUDE));
    PetscCall(EPSGetST(eps, &st));
    PetscCall(STSetType(st, STSINVERT));
    PetscCall(STGetKSP(st, &ksp));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, symflag ? PCCHOLESKY : PCLU));
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    PetscCall(EPSSetFromOptions(eps));
    PetscCall(EPSSetUp(eps));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    t1 = MPI_Wtime();
    PetscCall(EPSSolve(eps));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    t2 = MPI_Wtime();

    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(EPSGetIterationNumber(eps, &its));
    nrep = PetscMin(nev, nconv);
    PetscCall(PetscMalloc3(nrep, &re, nrep, &im, nrep, &res));
    for (PetscInt k = 0; k < nrep; k++) {
        PetscScalar kr, ki;
        PetscCall(EPSGetEigenvalue(eps, k, &kr, &ki));
        re[k] = PetscRealPart(kr);
        im[k] = PetscRealPart(ki);
        PetscCall(EPSComputeError(eps, k, EPS_ERROR_RELATIVE, &res[k]));
    }
    PetscCall(PetscLogEventGetId("MatSolve", &ev_solve));
    PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev_solve, &info));

    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "{\"seconds\": %.6f, \"setup\": %.6f, \"solve\": %.6f, \"restarts\": %" PetscInt_FMT
                          ", \"converged\": %" PetscInt_FMT ", \"solves\": %d, ",
                          t2 - t0, t1 - t0, t2 - t1, its, nconv, info.count));
    PetscCall(print_list("re", re, nrep, PETSC_FALSE));
    PetscCall(print_list("im", im, nrep, PETSC_FALSE));
    PetscCall(print_list("residuals", res, nrep, PETSC_FALSE));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "\"n\": %" PetscInt_FMT ", \"nnz\": %.0f, \"ranks\": %d, \"sym\": %d, \"matrix\": \"%s\"}\n",
                          nglob, (double)minfo.nz_used, (int)size, (int)symflag, spec));

    PetscCall(PetscFree3(re, im, res));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
    PetscCall(SlepcFinalize());
    return 0;
}
