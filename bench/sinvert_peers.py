#!/usr/bin/python3
"""sinvert_peers.py -- shift-and-invert against its peers on the same matrices, in one run:
`pjds-lanczos solve` with [solver] target (MUMPS), SLEPc Krylov-Schur with -st_type sinvert on
MUMPS (Debian's python3-slepc4py-real, found under PETSC_DIR / SLEPC_DIR as in cpu_peers.py) and
SciPy eigs/eigsh(sigma=...) (SuperLU), the nev eigenvalues nearest sigma, tolerance 1e-10.

Each run is a fresh process pinned with taskset to the first C cores (C = 1: one core, one thread;
C > 1: C MPI ranks of one thread each for ours and SLEPc; SciPy's SuperLU is serial and runs on one
core only).  Each measurement is repeated --repeats times; the table gives medians.
  ours    factorisation and solve: the result's permute_seconds (pl_st_create: pattern, analysis,
          factorisation) + solve_seconds; the factorised solves; the process wall time.
  SLEPc   EPSSetUp + EPSSolve (the factorisation is in the set-up), STApply count; MatAIJ rows
          over the ranks as PETSc splits them.  Problem type HEP for a symmetric matrix, else NHEP.
  SciPy   eigs / eigsh(k=nev, sigma, which='LM', tol) (splu inside).
The eigenvalues are compared: the largest relative difference of ours to each peer (sorted by
distance to sigma).

Matrices: PATH.mtx:SIGMA, or lap2d:M:SIGMA (the 2-D Laplacian of an M x M grid, symmetric, built
here).  Usage (medians of 3, one and two cores):
  /usr/bin/python3 bench/sinvert_peers.py --bin build/app/pjds-lanczos --cores 1,2 \\
      ../shared/matrices/cryg10000.mtx:6.8 lap2d:300:1.0
Needs numpy, scipy, h5py and python3-slepc4py-real (PJDS_BENCH_DEPS=1 bash tools/setup-deps.sh).

SLEPc without slepc4py (a machine without Debian's PETSc/SLEPc, e.g. the GPU host): --slepc-bin PATH runs
bench/slepc_sinvert.c (bench/slepc_build.sh; carried with bench/slepc_bundle.sh) instead, with the same
calls, settings and measurements as the slepc4py worker; it reads the .mtx file or builds lap2d:M itself.
Without --slepc-bin the slepc4py worker is used where it loads; where neither is there, the SLEPc column
says "not available" and the rest still runs.  MPI: --mpiexec and --mpi-flags (default: mpiexec
--allow-run-as-root --oversubscribe), --bind none|core (default none: the ranks share the taskset cores);
--timeout caps each run (seconds), --json writes every run's numbers."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("PETSC_DIR", "/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real")
os.environ.setdefault("SLEPC_DIR", "/usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real")

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n"]
TIMEOUT = 900


def load(spec):
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    if spec.startswith("lap2d:"):
        _, m, sigma = spec.split(":")
        e = np.ones(int(m))
        T = sp.diags([-e[1:], 2 * e, -e[1:]], [-1, 0, 1])
        I = sp.eye(int(m))
        return f"lap2d_{m}", (sp.kron(T, I) + sp.kron(I, T)).tocsr(), float(sigma)
    path, sigma = spec.rsplit(":", 1)
    return os.path.basename(path).rsplit(".", 1)[0], sp.csr_matrix(scipy.io.mmread(path)), float(sigma)


# ---- workers (each a process of its own) ------------------------------------------------------
def slepc_worker(npz, sigma, nev, tol, sym):
    import numpy as np
    import scipy.sparse as sp
    from slepc_env import slepc_modules
    PETSc, SLEPc = slepc_modules()
    A = sp.load_npz(npz).tocsr()
    n = A.shape[0]
    M = PETSc.Mat().create(comm=PETSc.COMM_WORLD)
    M.setSizes([n, n])
    M.setType("aij")
    M.setUp()
    r0, r1 = M.getOwnershipRange()
    loc = A[r0:r1]
    M.setPreallocationCSR((loc.indptr, loc.indices, loc.data))
    M.setValuesCSR(loc.indptr, loc.indices, loc.data)
    M.assemble()
    PETSc.COMM_WORLD.barrier()
    t = time.perf_counter()
    E = SLEPc.EPS().create(comm=PETSc.COMM_WORLD)
    E.setOperators(M)
    E.setProblemType(SLEPc.EPS.ProblemType.HEP if sym else SLEPc.EPS.ProblemType.NHEP)
    E.setDimensions(nev)
    E.setTolerances(tol)
    E.setTarget(sigma)
    E.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
    st = E.getST()
    st.setType(SLEPc.ST.Type.SINVERT)
    ksp = st.getKSP()
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("cholesky" if sym else "lu")
    pc.setFactorSolverType("mumps")
    E.setUp()
    E.solve()
    PETSc.COMM_WORLD.barrier()
    dt = time.perf_counter() - t
    vals = [E.getEigenvalue(i) for i in range(min(nev, E.getConverged()))]
    applies = int(PETSc.Log.Event("MatSolve").getPerfInfo()["count"])
    if PETSc.COMM_WORLD.getRank() == 0:
        print(json.dumps({"seconds": dt, "restarts": E.getIterationNumber(), "converged": E.getConverged(),
                          "solves": applies, "re": [complex(v).real for v in vals],
                          "im": [complex(v).imag for v in vals]}))


def scipy_worker(npz, sigma, nev, tol, sym):
    import scipy.sparse as sp
    import scipy.sparse.linalg as sla
    A = sp.load_npz(npz).tocsc()
    t = time.perf_counter()
    if sym:
        v = sla.eigsh(A, k=nev, sigma=sigma, which="LM", tol=tol, return_eigenvectors=False)
    else:
        v = sla.eigs(A, k=nev, sigma=sigma, which="LM", tol=tol, return_eigenvectors=False)
    dt = time.perf_counter() - t
    print(json.dumps({"seconds": dt, "re": [complex(x).real for x in v], "im": [complex(x).imag for x in v]}))


# ---- the driver --------------------------------------------------------------------------------
def env1():
    e = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        e[k] = "1"
    return e


def pin(cores):
    return ["taskset", "-c", ",".join(str(c) for c in range(cores))]


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env1(), timeout=TIMEOUT)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:8])}...: exit {p.returncode}: {p.stderr.strip()[-600:]}")
    return json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])


def run_ours(binary, cfg, out, cores):
    import h5py
    cmd = pin(cores) + (MPIEXEC + [str(cores)] if cores > 1 else []) + [binary, "solve", "--overwrite", "--quiet",
                                                                          cfg]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env1(), timeout=TIMEOUT)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"ours: exit {p.returncode}: {p.stderr.strip()[-600:]}")
    with h5py.File(out, "r") as h5:
        a = h5.attrs
        ev = h5["eigenvalues"][()]
        if ev.dtype.names:
            ev = ev["r"] + 1j * ev["i"]
        return {"seconds": float(a["permute_seconds"]) + float(a["solve_seconds"]),
                "solves": int(a["factorized_solves"]), "wall": wall, "analyse": float(a["factorization_analyse_seconds"]),
                "factor": float(a["factorization_factor_seconds"]), "solve_s": float(a["factorization_solve_seconds"]),
                "re": list(map(float, ev.real)), "im": list(map(float, ev.imag))}


def slepc_mode(slepc_bin):
    """'bin' (the C driver), 'py' (the slepc4py worker) or None, and a line that says which."""
    if slepc_bin:
        if os.path.isfile(slepc_bin) and os.access(slepc_bin, os.X_OK):
            return "bin", f"SLEPc: {slepc_bin} (bench/slepc_sinvert.c)"
        print(f"sinvert_peers: --slepc-bin {slepc_bin} is not an executable file; trying slepc4py", file=sys.stderr)
    probe = (f"import sys; sys.path.insert(0, {HERE!r}); from slepc_env import slepc_modules; "
             "P, S = slepc_modules(); print(S.Sys.getVersion())")
    try:
        p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env1(), timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"SLEPc: not available ({e})"
    if p.returncode == 0:
        return "py", f"SLEPc: slepc4py {p.stdout.strip()}"
    last = (p.stderr.strip().splitlines() or ["?"])[-1]
    return None, f"SLEPc: not available (slepc4py: {last[-200:]}; no --slepc-bin)"


def run_slepc(mode, slepc_bin, spec, npz, sigma, nev, tol, sym, cores):
    mpi = MPIEXEC + [str(cores)] if cores > 1 else []
    if mode == "bin":
        src = ":".join(spec.split(":")[:2]) if spec.startswith("lap2d:") else spec.rsplit(":", 1)[0]
        return run_json(pin(cores) + mpi + [slepc_bin, "-matrix", src, "-sigma", repr(sigma), "-nev", str(nev),
                                            "-tol", repr(tol), "-sym", str(int(sym))])
    return run_json(pin(cores) + mpi + [sys.executable, os.path.abspath(__file__), "--npz", npz, "--sigma",
                                        repr(sigma), "--nev", str(nev), "--tol", repr(tol), "--sym", str(int(sym)),
                                        "--worker", "slepc"])


def reldiff(a, b, sigma):
    import numpy as np
    x = np.array(a["re"]) + 1j * np.array(a["im"])
    y = np.array(b["re"]) + 1j * np.array(b["im"])
    m = min(len(x), len(y))
    x = x[np.argsort(abs(x - sigma), kind="stable")][:m]
    y = y[np.argsort(abs(y - sigma), kind="stable")][:m]
    # match each of ours to the nearest peer value (conjugates and ties in any order)
    return max(min(abs(z - y)) / max(abs(z), 1) for z in x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("matrices", nargs="*")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "app", "pjds-lanczos"))
    ap.add_argument("--cores", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--nev", type=int, default=6)
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--worker", choices=["slepc", "scipy"])
    ap.add_argument("--npz")
    ap.add_argument("--sigma", type=float)
    ap.add_argument("--sym", type=int, default=0)
    ap.add_argument("--slepc-bin", help="bench/slepc_sinvert.c's binary (or its slepc_bundle.sh wrapper)")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--mpi-flags", default="--allow-run-as-root --oversubscribe")
    ap.add_argument("--bind", choices=["none", "core"], default="none")
    ap.add_argument("--timeout", type=float, default=900, help="seconds, each run")
    ap.add_argument("--json", help="write every run's numbers here")
    a = ap.parse_args()
    if a.worker:
        (slepc_worker if a.worker == "slepc" else scipy_worker)(a.npz, a.sigma, a.nev, a.tol, a.sym)
        return 0
    global MPIEXEC, TIMEOUT
    MPIEXEC = [a.mpiexec] + a.mpi_flags.split() + ["--bind-to", a.bind, "-n"]
    TIMEOUT = a.timeout
    mode, says = slepc_mode(a.slepc_bin)
    print(says, flush=True)
    record = []
    sys.path.insert(0, os.path.join(HERE, "..", "tools"))
    import h5py
    import scipy.sparse as sp
    import mtx2h5
    cores = [int(c) for c in a.cores.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in a.matrices:
            name, A, sigma = load(spec)
            A.sort_indices()
            sym = (abs(A - A.T)).max() == 0
            npz, h5p, cfg, out = (os.path.join(tmp, f"{name}.{e}") for e in ("npz", "h5", "ini", "out.h5"))
            sp.save_npz(npz, A)
            with h5py.File(h5p, "w") as h5:
                mtx2h5.write_matrix(h5, "/", A, sym, False, name, "sinvert_peers.py", True)
            with open(cfg, "w") as f:
                f.write(f"[model]\ntype = hdf5\n[matrix]\nfile = {h5p}\n[spmv]\nbackend = cpu\n[solver]\n"
                        f"nev = {a.nev}\ntolerance = {a.tol!r}\ntarget = {sigma!r}\n[output]\nfile = {out}\n")
            for c in cores:
                runs = {"ours": [], "slepc": [], "scipy": []}
                slepc_err = None if mode else "not available"
                for _ in range(a.repeats):  # interleaved: the peers see the same machine state
                    runs["ours"].append(run_ours(a.bin, cfg, out, c))
                    w = [sys.executable, os.path.abspath(__file__), "--npz", npz, "--sigma", repr(sigma), "--nev",
                         str(a.nev), "--tol", repr(a.tol), "--sym", str(int(sym))]
                    if not slepc_err:
                        try:
                            runs["slepc"].append(run_slepc(mode, a.slepc_bin, spec, npz, sigma, a.nev, a.tol, sym, c))
                        except (RuntimeError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
                            slepc_err = "failed"
                            print(f"sinvert_peers: SLEPc on {name}, {c} cores: {str(e)[-400:]}", file=sys.stderr)
                    if c == 1:
                        runs["scipy"].append(run_json(pin(1) + w + ["--worker", "scipy"]))
                if slepc_err:
                    runs["slepc"] = []
                record.append({"matrix": name, "rows": A.shape[0], "sym": bool(sym), "sigma": sigma, "cores": c,
                               "slepc": mode if not slepc_err else slepc_err, "runs": runs})
                med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items() if v}
                o = runs["ours"][-1]
                line = (f"| {name} ({A.shape[0]} rows, {'symmetric' if sym else 'nonsymmetric'}), sigma {sigma:g} | "
                        f"{c} | {med['ours']:.3f} s ({o['solves']} solves; analysis "
                        f"{statistics.median(r['analyse'] for r in runs['ours']):.3f}, factor "
                        f"{statistics.median(r['factor'] for r in runs['ours']):.3f}, solves "
                        f"{statistics.median(r['solve_s'] for r in runs['ours']):.3f}; wall "
                        f"{statistics.median(r['wall'] for r in runs['ours']):.3f}) | "
                        + (f"{med['slepc']:.3f} s ({runs['slepc'][-1]['solves']} solves)" if "slepc" in med
                           else f"SLEPc: {slepc_err}") + " | "
                        + (f"{med['scipy']:.3f} s" if "scipy" in med else "—") + " | "
                        + (f"{med['ours'] / med['slepc']:.2f}x" if "slepc" in med else "—") + " | "
                        + (f"{med['ours'] / med['scipy']:.2f}x" if "scipy" in med else "—") + " | "
                        + (f"{reldiff(o, runs['slepc'][-1], sigma):.1e}" if "slepc" in med else "—")
                        + (f" / {reldiff(o, runs['scipy'][-1], sigma):.1e}" if runs["scipy"] else "") + " |")
                print(line, flush=True)
                rows.append(line)
    print("\n| matrix | cores | ours: factorisation + solve (median) | SLEPc sinvert + MUMPS | SciPy eigs(sigma) "
          "| ours / SLEPc | ours / SciPy | max rel. diff. to SLEPc / SciPy |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
