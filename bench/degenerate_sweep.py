#!/usr/bin/env python3
"""degenerate_sweep.py -- does the default `solve` return every copy of a
degenerate level?  The 3-D Laplacian on a G^3 grid (Dirichlet, 7-point) has
levels lambda = sum over the three axes of 2 - 2 cos(k pi / (G + 1)), with
triple levels ((1,1,2) and its permutations), six-fold ones ((1,2,3)) and
single ones ((2,2,2)).  For nev = 1 .. NEV at both ends, default settings
(Lanczos, verify on, tol 1e-10), the returned values are compared, sorted,
with the nev smallest (largest) of the closed form counted with multiplicity:
a set with a copy missing differs by a level spacing (0.17 at G = 12).

Prints one line per run and a summary: wrong sets and products in all.
The thirteenth look of docs/performance.md quotes it (G = 12, NEV = 24).
`--peer scipy` runs SciPy's eigsh (ARPACK, start vector from the seed) and
`--peer slepc` SLEPc's default Krylov-Schur (Debian's slepc4py, see
slepc_env.py) on the same matrix instead, at the same tolerance.

Usage: /usr/bin/python3 bench/degenerate_sweep.py [--grid 12] [--nev 24]
         [--binary build/app/pjds-lanczos] [--seed 1] [--peer scipy|slepc]
         [--set solver.method=krylov-schur ...]
Needs numpy and scipy (tools/mtx2h5.py writes the matrix file)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))


def laplacian3d(g):
    t = sp.diags([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], [-1, 0, 1])
    i = sp.identity(g)
    a = sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)
    lam = 2 - 2 * np.cos(np.arange(1, g + 1) * np.pi / (g + 1))
    ref = np.sort((lam[:, None, None] + lam[None, :, None] + lam[None, None, :]).ravel())
    return a.tocsr(), ref


def run(binary, ini, nev, which, seed, out, extra=()):
    cmd = [binary, "solve", "--overwrite", "--set", f"solver.nev={nev}", "--set", f"solver.which={which}",
           "--set", f"solver.seed={seed}", "--set", f"output.file={out}", ini]
    for e in extra:
        cmd += ["--set", e]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"degenerate_sweep: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    text = p.stdout + p.stderr
    vals = sorted(float(m.group(1)) for m in re.finditer(r"^eigenvalue\[\d+\]: (\S+)", text, re.M))
    prods = re.search(r"(\d+) SpMVs \(ncv", text)
    return np.array(vals), int(prods.group(1)) if prods else -1


def run_scipy(a, nev, which, seed):
    import scipy.sparse.linalg as sla
    v0 = np.random.default_rng(seed).standard_normal(a.shape[0])
    count = [0]

    def mv(x):
        count[0] += 1
        return a @ x

    op = sla.LinearOperator(a.shape, matvec=mv, dtype=float)
    w = sla.eigsh(op, k=nev, which="SA" if which == "smallest" else "LA", tol=1e-10, v0=v0,
                  return_eigenvectors=False)
    return np.sort(w), count[0]


def run_slepc(a, nev, which):
    sys.path.insert(0, HERE)
    from slepc_env import slepc_modules
    PETSc, SLEPc = slepc_modules()
    m = PETSc.Mat().createAIJ(size=a.shape, csr=(a.indptr, a.indices, a.data), comm=PETSc.COMM_SELF)
    m.assemble()
    e = SLEPc.EPS().create(comm=PETSc.COMM_SELF)
    e.setOperators(m)
    e.setProblemType(SLEPc.EPS.ProblemType.HEP)
    e.setWhichEigenpairs(SLEPc.EPS.Which.SMALLEST_REAL if which == "smallest" else SLEPc.EPS.Which.LARGEST_REAL)
    e.setDimensions(nev)
    e.setTolerances(1e-10, 100000)
    e.solve()
    nc = min(e.getConverged(), nev)
    w = np.sort([e.getEigenvalue(i).real for i in range(nc)])
    its = e.getIterationNumber()
    e.destroy()
    m.destroy()
    return w, its


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=12)
    ap.add_argument("--nev", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "build", "app", "pjds-lanczos"))
    ap.add_argument("--peer", choices=("scipy", "slepc"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to pjds-lanczos, e.g. solver.method=krylov-schur")
    a = ap.parse_args()
    mat, ref = laplacian3d(a.grid)
    with tempfile.TemporaryDirectory() as tmp:
        mtx, h5, ini = (os.path.join(tmp, f) for f in ("lap3d.mtx", "lap3d.h5", "lap3d.ini"))
        scipy.io.mmwrite(mtx, mat, symmetry="symmetric")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "mtx2h5.py"), mtx, h5], check=True,
                       capture_output=True)
        with open(ini, "w") as f:
            f.write(f"[model]\ntype = hdf5\n[matrix]\nfile = {h5}\ngroup = /\n[solver]\ntolerance = 1e-10\n")
        wrong = total = 0
        for which in ("smallest", "largest"):
            want = ref if which == "smallest" else ref[::-1]
            for nev in range(1, a.nev + 1):
                if a.peer == "scipy":
                    got, prods = run_scipy(mat, nev, which, a.seed)
                elif a.peer == "slepc":
                    got, prods = run_slepc(mat, nev, which)  # prods: SLEPc's restarts
                else:
                    got, prods = run(a.binary, ini, nev, which, a.seed, os.path.join(tmp, "out.h5"), a.set)
                exp = np.sort(want[:nev])
                diff = np.max(np.abs(got - exp)) if len(got) == nev else np.inf
                bad = not diff <= 1e-8
                wrong += bad
                total += prods
                print(f"{which:8s} nev {nev:2d}: {prods:5d} {'restarts' if a.peer == 'slepc' else 'products'}, max |diff| {diff:.1e}{'  WRONG' if bad else ''}")
        unit = "SLEPc restarts" if a.peer == "slepc" else "products"
        print(f"summary: {a.peer or 'pjds-lanczos'}, 3-D Laplacian {a.grid}^3, seed {a.seed}: {wrong} of {2 * a.nev} "
              f"sets wrong, {total} {unit} in all")


if __name__ == "__main__":
    main()
