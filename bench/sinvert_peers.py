#!/usr/bin/python3
"""sinvert_peers.py -- shift-and-invert peers on a matrix of ../shared/matrices (one core):
SciPy eigs(sigma=...) (SuperLU) and SLEPc Krylov-Schur with -st_type sinvert on MUMPS
(python3-slepc4py-real; PJDS_BENCH_DEPS=1 bash tools/setup-deps.sh), the nev eigenvalues
nearest sigma, tolerance 1e-10; prints the solve times and the eigenvalues.
Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 bench/sinvert_peers.py MATRIX.mtx SIGMA [NEV]"""
import sys
import time

import numpy as np
import scipy.io
import scipy.sparse.linalg as sla


def main():
    path, sigma = sys.argv[1], float(sys.argv[2])
    nev = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    A = scipy.io.mmread(path).tocsr()
    t = time.perf_counter()
    v = sla.eigs(A.tocsc(), k=nev, sigma=sigma, which="LM", tol=1e-10, return_eigenvectors=False)
    print(f"scipy eigs(sigma={sigma}): {time.perf_counter() - t:.3f} s  {np.sort_complex(v)}")
    try:
        from petsc4py import PETSc
        from slepc4py import SLEPc
    except ImportError:
        print("slepc4py not installed: SLEPc skipped")
        return
    M = PETSc.Mat().createAIJ(size=A.shape, csr=(A.indptr, A.indices, A.data))
    M.assemble()
    t = time.perf_counter()
    E = SLEPc.EPS().create()
    E.setOperators(M)
    E.setProblemType(SLEPc.EPS.ProblemType.NHEP)
    E.setDimensions(nev)
    E.setTolerances(1e-10)
    E.setTarget(sigma)
    E.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    st = E.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    ksp = st.getKSP()
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("lu")
    pc.setFactorSolverType("mumps")
    E.solve()
    dt = time.perf_counter() - t
    its = E.getIterationNumber()
    vals = [E.getEigenvalue(i) for i in range(min(nev, E.getConverged()))]
    print(f"slepc sinvert+mumps: {dt:.3f} s, {its} restarts, {E.getConverged()} converged  {np.sort_complex(vals)}")


if __name__ == "__main__":
    main()
