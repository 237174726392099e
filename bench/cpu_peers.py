#!/usr/bin/env python3
"""cpu_peers.py -- `pjds-lanczos solve` against SLEPc's Krylov-Schur and SciPy's
eigsh (ARPACK) on the same symmetric matrix, one after the other in one run.

The matrix is exported by the application (`pjds-lanczos export CONFIG FILE.h5`,
HDF5 matrix schema 1) and loaded as a scipy CSR matrix and a PETSc AIJ matrix,
so all three solvers see the same entries.  Each solver runs --repeats times;
the table reports medians (seconds of the solve phase: ours from the
`solve_seconds` attribute of its result file, SLEPc from EPSSolve after
EPSSetUp, SciPy around eigsh) and the operator applications.

  SLEPc   EPS krylovschur, HEP, smallest real, nev, tol (EPS_CONV_REL, its
          default: ||r|| <= tol |lambda|), ncv default, start vector default.
  SciPy   eigsh(k=nev, which='SA', tol=tol).
  ours    the config's settings (defaults: partial reorthogonalisation,
          verify = true), and with --set solver.verify=false as a second row.

usage: OMP_NUM_THREADS=1 taskset -c 0 /usr/bin/python3 bench/cpu_peers.py CONFIG
           [--bin build/app/pjds-lanczos] [--threads 1] [--repeats 3]
Needs numpy, scipy, h5py and Debian's python3-slepc4py-real
(PJDS_BENCH_DEPS=1 bash tools/setup-deps.sh).
"""
import argparse
import configparser
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("PETSC_DIR", "/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real")
os.environ.setdefault("SLEPC_DIR", "/usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as sla  # noqa: E402


def load_csr(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["rows"])
        a = sp.csr_matrix((f["values"][:].astype(np.float64), f["col_idx"][:], f["row_ptr"][:].astype(np.int64)),
                          shape=(n, n))
        storage = f.attrs.get("storage", "full")
        storage = storage.decode() if isinstance(storage, bytes) else storage
    if storage == "lower":
        a = a + sp.tril(a, k=-1).T.tocsr()
    return a.tocsr()


def slepc_mods():
    from slepc_env import slepc_modules
    return slepc_modules()


def run_slepc(a, nev, tol):
    PETSc, SLEPc = slepc_mods()
    A = PETSc.Mat().createAIJ(size=a.shape, csr=(a.indptr.astype(PETSc.IntType), a.indices.astype(PETSc.IntType),
                                                 a.data), comm=PETSc.COMM_SELF)
    A.assemble()
    eps = SLEPc.EPS().create(comm=PETSc.COMM_SELF)
    eps.setOperators(A)
    eps.setProblemType(SLEPc.EPS.ProblemType.HEP)
    eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.SMALLEST_REAL)
    eps.setDimensions(nev=nev)
    eps.setTolerances(tol=tol, max_it=10 ** 6)
    eps.setUp()
    ev = PETSc.Log.Event("MatMult")
    c0 = ev.getPerfInfo()["count"]
    t0 = time.perf_counter()
    eps.solve()
    secs = time.perf_counter() - t0
    spmvs = ev.getPerfInfo()["count"] - c0
    vals = sorted(eps.getEigenvalue(i).real for i in range(min(eps.getConverged(), nev)))
    eps.destroy()
    A.destroy()
    return secs, spmvs, vals


def run_scipy(a, nev, tol):
    count = [0]

    def mv(x):
        count[0] += 1
        return a @ x

    op = sla.LinearOperator(a.shape, matvec=mv, dtype=np.float64)
    t0 = time.perf_counter()
    vals = sla.eigsh(op, k=nev, which="SA", tol=tol, return_eigenvectors=False)
    return time.perf_counter() - t0, count[0], sorted(vals)


def run_ours(binary, config, extra, env):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.h5")
        cmd = [binary, "solve", config, "--overwrite", "--quiet", "--set", f"output.file={out}"]
        for s in extra:
            cmd += ["--set", s]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit(f"ours failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
        with h5py.File(out, "r") as f:
            a = f.attrs
            return (float(a["solve_seconds"]), int(a["iterations"]), sorted(f["eigenvalues"][:].tolist()), wall,
                    {k: a[k] for k in ("full_reorthogonalizations", "steps", "orth_seconds", "spmv_median_seconds")
                     if k in a})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("--bin", default="build/app/pjds-lanczos")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
    cp.read(args.config)
    nev = int(cp.get("solver", "nev", fallback="4"))
    tol = float(cp.get("solver", "tolerance", fallback="1e-10"))
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as d:
        mfile = os.path.join(d, "m.h5")
        r = subprocess.run([args.bin, "export", args.config, mfile, "--quiet"], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"export failed: {r.stderr.strip()}")
        a = load_csr(mfile)
    print(f"matrix: {args.config}: n = {a.shape[0]}, nnz = {a.nnz}; nev {nev}, tol {tol:g}, {args.threads} thread(s), "
          f"{args.repeats} repeats (medians)")
    rows = []
    for tag, extra in (("pjds-lanczos (defaults)", ()), ("pjds-lanczos verify=false", ("solver.verify=false",)),
                       ("pjds-lanczos reorth=full", ("solver.reorthogonalization=full",))):
        runs = [run_ours(args.bin, args.config, extra, env) for _ in range(args.repeats)]
        t = statistics.median(x[0] for x in runs)
        print(f"{tag}: solve {[round(x[0], 3) for x in runs]} s, wall {[round(x[3], 2) for x in runs]} s, "
              f"{runs[0][1]} SpMVs, {runs[0][4]}; eigenvalues {runs[0][2]}")
        rows.append((tag, runs[0][1], t, runs[0][2]))
    runs = [run_slepc(a, nev, tol) for _ in range(args.repeats)]
    print(f"SLEPc Krylov-Schur: {[round(x[0], 3) for x in runs]} s, {runs[0][1]} SpMVs; eigenvalues {runs[0][2]}")
    rows.append(("SLEPc 3.18 Krylov-Schur", runs[0][1], statistics.median(x[0] for x in runs), runs[0][2]))
    runs = [run_scipy(a, nev, tol) for _ in range(args.repeats)]
    print(f"SciPy eigsh: {[round(x[0], 3) for x in runs]} s, {runs[0][1]} SpMVs; eigenvalues {runs[0][2]}")
    rows.append(("SciPy eigsh (ARPACK)", runs[0][1], statistics.median(x[0] for x in runs), runs[0][2]))
    ts = rows[3][2]
    print("\n| solver | SpMVs | median s | ratio to SLEPc | lowest eigenvalues |")
    print("| --- | --- | --- | --- | --- |")
    for tag, n, t, v in rows:
        print(f"| {tag} | {n} | {t:.3f} | {t / ts:.2f} | {', '.join('%.10f' % x for x in v)} |")


if __name__ == "__main__":
    main()
