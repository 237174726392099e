#!/usr/bin/python3
"""CPU peer comparison for the nonsymmetric solver of `pjds-lanczos solve`
(Krylov-Schur) against SLEPc 3.18's Krylov-Schur (slepc4py) and SciPy's
eigs (ARPACK), all on ONE core (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1 for
every process, ours included), same matrix, nev, which, tolerance and ncv.

usage: /usr/bin/python3 bench/nonsym_peer.py [MATRIX.mtx|MATRIX.h5 ...]
           [--which largest_magnitude,largest_real] [--nev 6] [--tol 1e-8]
           [--ncv 0] [--cap 120] [--bin build/app/pjds-lanczos]
           [--workdir /tmp/nonsym_peer] [--slepc-conv norm|rel] [--json FILE]
           [--no-verify-run] [--no-arpack] [--no-slepc]

Default matrices: the nonsymmetric ones in /work/shared/matrices (see
SOURCES.md there).  .mtx files are converted once with tools/mtx2h5.py into
--workdir; all three solvers read the same HDF5 CSR arrays.

What is measured, per matrix x which:
  ours     `pjds-lanczos solve` ([model] type = hdf5, [spmv] backend = cpu,
           method = auto, which the nonsymmetric matrix sends to Krylov-Schur),
           run twice: verify = false (plain thick restart, like-for-like with
           SLEPc and ARPACK; the ratios use this run) and verify = true (the
           default: an extra search for missed copies of multiple eigenvalues).
           SpMVs = root attribute `iterations`, seconds = `solve_seconds`
           (operator already built).  Wall cap: the process is killed after
           --cap s (max_restarts is set high, so the cap is what stops it).
           Convergence: ||Ax - lx|| <= tol * max(|l|, normest), normest = max
           abs row sum.
  SLEPc    EPS krylovschur, NHEP, same nev/ncv/tol/which, default (random)
           start vector.  Convergence test EPS_CONV_NORM by default
           (||r|| <= tol (||A|| + |l|), ||A|| = MatNorm(NORM_INFINITY), i.e.
           the same normest as ours; at most 2x looser than ours), or
           EPS_CONV_REL (SLEPc's default, ||r|| <= tol |l|) with
           --slepc-conv rel.  SpMVs = PETSc's MatMult event count during
           eps.solve() (PETSc.Log), seconds = eps.solve() wall time (matrix
           assembled before).  Wall cap: a stopping test that ends the solve
           after --cap s (checked once per restart).
  ARPACK   scipy.sparse.linalg.eigs(which LM|LR, k=nev, ncv, tol) on a CSR
           matrix through a counting LinearOperator; ARPACK's criterion is
           ||r|| <= tol |l| (Ritz estimate).  Wall cap: the matvec raises
           after --cap s.
  agreement  our eigenvalues vs SLEPc's, matched as sets (minimum-cost
           assignment on |a - b|), max of |a - b| / max(|b|, 1e-300).

Prints a markdown table (and, with --json, one JSON object per run).
Needs numpy, scipy, h5py and Debian's python3-slepc4py-real
(PJDS_BENCH_DEPS=1 bash tools/setup-deps.sh).
"""
import os

# One core for everything, set before numpy/PETSc load their BLAS.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ.setdefault("PETSC_DIR", "/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real")
os.environ.setdefault("SLEPC_DIR", "/usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real")

import argparse
import datetime
import json
import platform
import shlex
import subprocess
import sys
import time

import h5py
import numpy as np
import scipy
import scipy.linalg
import scipy.optimize
import scipy.sparse as sp
import scipy.sparse.linalg as sla

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MATRICES = ["rdb800l", "olm1000", "cryg2500", "cryg10000", "lns_3937", "memplus",
                    "fidap007", "e05r0000", "e20r0000", "fidapm05"]
MATDIR = "/work/shared/matrices"
WHICH = {  # ours -> (SLEPc attribute, ARPACK which)
    "largest_magnitude": ("LARGEST_MAGNITUDE", "LM"),
    "smallest_magnitude": ("SMALLEST_MAGNITUDE", "SM"),
    "largest_real": ("LARGEST_REAL", "LR"),
    "smallest_real": ("SMALLEST_REAL", "SR"),
    "largest_imaginary": ("LARGEST_IMAGINARY", "LI"),
    "smallest_imaginary": ("SMALLEST_IMAGINARY", "SI"),
}


def load_csr(path, group="/"):
    with h5py.File(path, "r") as f:
        g = f[group]
        n = int(g.attrs["rows"])
        m = int(g.attrs.get("cols", n))
        row_ptr = g["row_ptr"][:].astype(np.int64)
        col = g["col_idx"][:].astype(np.int32)
        val = g["values"][:].astype(np.float64)
        storage = g.attrs.get("storage", "full")
        if isinstance(storage, bytes):
            storage = storage.decode()
    a = sp.csr_matrix((val, col, row_ptr), shape=(n, m))
    if storage == "lower":
        a = (a + sp.tril(a, k=-1).T).tocsr()
    a.sort_indices()
    return a


def to_h5(src, workdir):
    if src.endswith(".h5"):
        return src
    name = os.path.basename(src)
    for ext in (".gz", ".mtx"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    out = os.path.join(workdir, name + ".h5")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "mtx2h5.py"), src, out, "--overwrite"],
                       check=True, stdout=subprocess.DEVNULL)
    return out


# ---------------------------------------------------------------- ours
def run_ours(binary, h5, which, nev, tol, ncv, cap, verify, workdir):
    tag = os.path.splitext(os.path.basename(h5))[0]
    cfg = os.path.join(workdir, f"{tag}_{which}_v{int(verify)}.ini")
    out = os.path.join(workdir, f"{tag}_{which}_v{int(verify)}_out.h5")
    with open(cfg, "w") as f:
        f.write(f"""[model]
type = hdf5
[matrix]
file = {h5}
[solver]
nev = {nev}
which = {which}
tolerance = {tol!r}
ncv = {ncv}
max_restarts = 1000000
method = auto
verify = {'true' if verify else 'false'}
[spmv]
backend = cpu
[output]
file = {out}
""")
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [binary, "solve", cfg, "--overwrite", "--quiet"]
    t0 = time.perf_counter()
    try:
        for attempt in range(5):  # the binary may be relinked under us by a concurrent build
            try:
                p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=cap + 30)
                break
            except (PermissionError, FileNotFoundError):
                if attempt == 4:
                    raise
                time.sleep(10)
    except subprocess.TimeoutExpired:
        return dict(solver="ours", verify=verify, converged=False, spmvs=None,
                    seconds=time.perf_counter() - t0, note=f"killed after {cap + 30} s wall", eig=[])
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return dict(solver="ours", verify=verify, converged=False, spmvs=None, seconds=wall,
                    note=f"exit {p.returncode}: {p.stderr.strip()[-300:]}", eig=[])
    with h5py.File(out, "r") as f:
        a = f.attrs
        ev = np.asarray(f["eigenvalues"][:]).astype(np.complex128)
        res = np.asarray(f["residual_norms"][:], dtype=float)
        reason = a["converged_reason"]
        reason = reason.decode() if isinstance(reason, bytes) else str(reason)
        r = dict(solver="ours", verify=verify, spmvs=int(a["iterations"]), seconds=float(a["solve_seconds"]),
                 spmv_seconds=float(a["spmv_seconds"]), restarts=int(a.get("restarts", -1)),
                 reason=reason, nconv=int(a["nconv"]), ncv=int(a["ncv"]), method=str(a.get("method", "")),
                 normest=float(a.get("norm_estimate", np.nan)), wall=wall,
                 converged=(reason == "converged" and int(a["nconv"]) >= nev),
                 eig=[[z.real, z.imag] for z in ev], residuals=res.tolist())
    return r


# ---------------------------------------------------------------- SLEPc
def slepc_mods():
    from slepc_env import slepc_modules
    return slepc_modules()


def run_slepc(a, which, nev, tol, ncv, cap, conv):
    PETSc, SLEPc = slepc_mods()
    n = a.shape[0]
    A = PETSc.Mat().createAIJ(size=a.shape, csr=(a.indptr.astype(PETSc.IntType),
                                                  a.indices.astype(PETSc.IntType), a.data),
                              comm=PETSc.COMM_SELF)
    A.assemble()
    eps = SLEPc.EPS().create(comm=PETSc.COMM_SELF)
    eps.setOperators(A)
    eps.setProblemType(SLEPc.EPS.ProblemType.NHEP)
    eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
    eps.setWhichEigenpairs(getattr(SLEPc.EPS.Which, WHICH[which][0]))
    eps.setDimensions(nev=nev, ncv=min(ncv, n))
    eps.setTolerances(tol=tol, max_it=10 ** 8)
    eps.setConvergenceTest(SLEPc.EPS.Conv.NORM if conv == "norm" else SLEPc.EPS.Conv.REL)
    state = {"t0": None, "capped": False}

    def stop(eps_, its, max_it, nconv, nev_):
        if nconv >= nev_:
            return SLEPc.EPS.ConvergedReason.CONVERGED_TOL
        if its >= max_it:
            return SLEPc.EPS.ConvergedReason.DIVERGED_ITS
        if time.perf_counter() - state["t0"] > cap:
            state["capped"] = True
            return SLEPc.EPS.ConvergedReason.DIVERGED_ITS
        return SLEPc.EPS.ConvergedReason.ITERATING

    eps.setStoppingTest(stop)
    eps.setUp()  # ST/BV set-up outside the timed region, like ours' operator build
    ev_mult = PETSc.Log.Event("MatMult")
    c0 = ev_mult.getPerfInfo()["count"]
    state["t0"] = time.perf_counter()
    eps.solve()
    secs = time.perf_counter() - state["t0"]
    spmvs = ev_mult.getPerfInfo()["count"] - c0
    nconv = eps.getConverged()
    reason = eps.getConvergedReason()
    vals, errs = [], []
    for i in range(min(nconv, nev)):
        vals.append(complex(eps.getEigenvalue(i)))
        errs.append(eps.computeError(i, SLEPc.EPS.ErrorType.ABSOLUTE))
    r = dict(solver="slepc", spmvs=int(spmvs), seconds=secs, restarts=eps.getIterationNumber(),
             nconv=nconv, reason=int(reason), converged=(nconv >= nev and not state["capped"] and reason > 0),
             note=(f"capped at {cap} s" if state["capped"] else ""), conv=conv,
             eig=[[z.real, z.imag] for z in vals], residuals=errs, ncv=eps.getDimensions()[1])
    eps.destroy()
    A.destroy()
    return r


# ---------------------------------------------------------------- ARPACK
class _Capped(Exception):
    pass


def run_arpack(a, which, nev, tol, ncv, cap):
    n = a.shape[0]
    st = {"n": 0, "t0": 0.0}

    def mv(x):
        if time.perf_counter() - st["t0"] > cap:
            raise _Capped()
        st["n"] += 1
        return a @ x

    op = sla.LinearOperator(a.shape, matvec=mv, dtype=np.float64)
    rng = np.random.default_rng(1)
    v0 = rng.standard_normal(n)
    st["t0"] = time.perf_counter()
    note, vals, conv = "", [], False
    try:
        vals = sla.eigs(op, k=nev, which=WHICH[which][1], tol=tol, ncv=min(ncv, n), v0=v0,
                        maxiter=10 ** 8, return_eigenvectors=False)
        conv = True
    except _Capped:
        note = f"capped at {cap} s"
    except sla.ArpackNoConvergence as e:
        vals = e.eigenvalues
        note = f"ArpackNoConvergence ({len(vals)} converged)"
    except Exception as e:  # e.g. ARPACK error -9999
        note = f"{type(e).__name__}: {e}"
    secs = time.perf_counter() - st["t0"]
    return dict(solver="arpack", spmvs=st["n"], seconds=secs, converged=conv, note=note,
                eig=[[complex(z).real, complex(z).imag] for z in vals])


def best_of(fn, below, runs=3):
    r = fn()
    if r.get("seconds") is None or r["seconds"] >= below:
        return r
    for _ in range(runs - 1):
        r2 = fn()
        if r2.get("seconds") is not None and r2["converged"] == r["converged"] and r2["seconds"] < r["seconds"]:
            r = r2
    r["note"] = (r.get("note") or "")
    r["repeats"] = runs
    return r


def dense_wanted(ev, which, nev):
    key = {"largest_magnitude": -np.abs(ev), "smallest_magnitude": np.abs(ev), "largest_real": -ev.real,
           "smallest_real": ev.real, "largest_imaginary": -ev.imag, "smallest_imaginary": ev.imag}[which]
    return ev[np.argsort(key, kind="stable")]


def ref_diff(e, ref_sorted, nev):
    """max rel diff of a solver's values to the dense reference: each value matched (as a set) within
    the first nev + 2 wanted reference values (a conjugate pair may straddle nev)."""
    if not e:
        return None
    cand = [[z.real, z.imag] for z in ref_sorted[: max(nev, len(e)) + 2]]
    a = np.array([complex(x, y) for x, y in e])
    b = np.array([complex(x, y) for x, y in cand])
    d = np.abs(a[:, None] - b[None, :])
    ri, ci = scipy.optimize.linear_sum_assignment(d)
    return float(np.max(d[ri, ci] / np.maximum(np.abs(b[ci]), 1e-300)))


# ---------------------------------------------------------------- agreement
def max_rel_diff(e1, e2):
    a = np.array([complex(x, y) for x, y in e1])
    b = np.array([complex(x, y) for x, y in e2])
    if len(a) == 0 or len(b) == 0:
        return None
    d = np.abs(a[:, None] - b[None, :])
    ri, ci = scipy.optimize.linear_sum_assignment(d)
    return float(np.max(d[ri, ci] / np.maximum(np.abs(b[ci]), 1e-300)))


def fmt_num(x, f="{:.3g}"):
    return "—" if x is None else f.format(x)


def fmt_spmv(r):
    s = "—" if r.get("spmvs") is None else str(r["spmvs"])
    return s if r["converged"] else s + " (n.c.)"


def fmt_sec(r):
    return fmt_num(r.get("seconds"), "{:.3f}")


def fmt_eigs(e, k=8):
    return ", ".join(f"{x:.10g}{y:+.4g}i" if y else f"{x:.10g}" for x, y in e[:k])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("matrices", nargs="*", help="Matrix Market or HDF5 files (default: the nonsymmetric "
                    "matrices of /work/shared/matrices)")
    ap.add_argument("--which", default="largest_magnitude,largest_real")
    ap.add_argument("--nev", type=int, default=6)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--ncv", type=int, default=0, help="0 = ours' default max(2 nev + 10, 32) (Krylov-Schur), capped at N")
    ap.add_argument("--cap", type=float, default=120.0, help="wall-clock cap per solver run, seconds")
    ap.add_argument("--bin", default=os.environ.get("PJDS_BIN", os.path.join(ROOT, "build/app/pjds-lanczos")))
    ap.add_argument("--workdir", default="/tmp/nonsym_peer")
    ap.add_argument("--slepc-conv", choices=("norm", "rel"), default="norm")
    ap.add_argument("--json", help="append one JSON object per matrix x which to this file")
    ap.add_argument("--no-verify-run", action="store_true", help="skip ours with verify = true")
    ap.add_argument("--no-slepc", action="store_true")
    ap.add_argument("--dense-ref", type=int, default=5000,
                    help="for N <= this, also compute all eigenvalues densely (LAPACK dgeev via scipy.linalg.eigvals) "
                         "and compare every solver with the nev wanted ones (0 = off)")
    ap.add_argument("--repeat-below", type=float, default=1.0,
                    help="runs faster than this many seconds are repeated (3 runs in all), the fastest is reported")
    ap.add_argument("--no-arpack", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    mats = args.matrices or [os.path.join(MATDIR, m + ".mtx") for m in DEFAULT_MATRICES]
    whichs = [w.strip() for w in args.which.split(",") if w.strip()]
    for w in whichs:
        if w not in WHICH:
            sys.exit(f"nonsym_peer: unknown which {w!r} (one of {', '.join(WHICH)})")
    ncv0 = args.ncv or max(2 * args.nev + 10, 32)

    cpu = "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    print(f"# Nonsymmetric eigensolvers on one CPU core: pjds-lanczos vs SLEPc vs ARPACK\n")
    print(f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    print(f"- host: {platform.node()}, CPU: {cpu}, {os.cpu_count()} logical CPUs; every solver on 1 thread "
          "(OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1)")
    print(f"- command: {' '.join(shlex.quote(x) for x in [sys.executable] + sys.argv)}")
    try:
        ver = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        ver = "?"
    try:
        head = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %cI"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        head = "?"
    mtime = (datetime.datetime.fromtimestamp(os.path.getmtime(args.bin)).astimezone().isoformat(timespec="seconds")
             if os.path.exists(args.bin) else "?")
    print(f"- ours: {args.bin} ({ver}; binary built {mtime}; repository HEAD {head}); "
          f"SLEPc/PETSc 3.18 from Debian python3-slepc4py-real")
    print(f"- nev = {args.nev}, tol = {args.tol:g}, ncv = {ncv0} (capped at N) for all three, wall cap "
          f"{args.cap:g} s per run")
    slepc_conv_txt = ("EPS_CONV_NORM: ||r|| <= tol (||A||_inf + |l|)" if args.slepc_conv == "norm"
                      else "EPS_CONV_REL: ||r|| <= tol |l|")
    print(f"- ours: ||r|| <= tol max(|l|, ||A||_inf); SLEPc {os.environ.get('SLEPC_DIR', '')}: {slepc_conv_txt}; "
          f"ARPACK (SciPy {scipy.__version__} eigs): ||r|| <= tol |l| (Ritz estimate)")
    print("- ours SpMVs/s: `verify = false` (plain thick restart, like-for-like); the ratios use it. "
          "'ours+verify' = default `verify = true`. '(n.c.)' = not converged.")
    print("- max rel diff: ours (verify=false) vs SLEPc eigenvalues, matched as sets, max |a-b|/|b|")
    print(f"- vs dense ref: for N <= {args.dense_ref}, each solver's values matched (as a set) with the first "
          "nev+2 wanted eigenvalues of LAPACK dgeev on the dense matrix, max |a-b|/|b|")
    print(f"- runs shorter than {args.repeat_below:g} s are repeated (3 in all) and the fastest is reported\n")
    sys.stdout.flush()

    hdr = ["matrix", "rows", "nnz", "which", "ours SpMVs", "ours s", "SLEPc SpMVs", "SLEPc s",
           "ARPACK SpMVs", "ARPACK s", "SpMV ratio ours/SLEPc", "time ratio ours/SLEPc", "max rel diff",
           "ours+verify SpMVs", "ours+verify s", "ARPACK vs SLEPc rel diff",
           "vs dense ref: ours / ours+verify / SLEPc / ARPACK"]
    rows, notes, records = [], [], []
    dense_cache = {}
    for src in mats:
        h5 = to_h5(src, args.workdir)
        a = load_csr(h5)
        name = os.path.splitext(os.path.basename(h5))[0]
        n, nnz = a.shape[0], a.nnz
        ncv = min(ncv0, n)
        for w in whichs:
            print(f"running {name} {w} ...", file=sys.stderr, flush=True)
            rb = args.repeat_below
            ours = best_of(lambda: run_ours(args.bin, os.path.abspath(h5), w, args.nev, args.tol, ncv, args.cap,
                                            False, args.workdir), rb)
            oursv = (None if args.no_verify_run else
                     best_of(lambda: run_ours(args.bin, os.path.abspath(h5), w, args.nev, args.tol, ncv, args.cap,
                                              True, args.workdir), rb))
            sl = (None if args.no_slepc else
                  best_of(lambda: run_slepc(a, w, args.nev, args.tol, ncv, args.cap, args.slepc_conv), rb))
            ar = None if args.no_arpack else best_of(lambda: run_arpack(a, w, args.nev, args.tol, ncv, args.cap), rb)
            ref = None
            if args.dense_ref and n <= args.dense_ref:
                if name not in dense_cache:
                    dense_cache.clear()
                    print(f"  dense reference eigvals ({n} x {n}) ...", file=sys.stderr, flush=True)
                    dense_cache[name] = scipy.linalg.eigvals(a.toarray(), overwrite_a=True, check_finite=False)
                ref = dense_wanted(dense_cache[name], w, args.nev)
            dref = {k: (ref_diff(r["eig"], ref, args.nev) if (r and ref is not None) else None)
                    for k, r in (("ours", ours), ("ours_verify", oursv), ("slepc", sl), ("arpack", ar))}
            diff = max_rel_diff(ours["eig"], sl["eig"]) if sl else None
            diff_ar = max_rel_diff(ar["eig"], sl["eig"]) if (sl and ar) else None
            sr = tr = None
            if sl and ours.get("spmvs") and sl.get("spmvs"):
                sr = ours["spmvs"] / sl["spmvs"]
                tr = ours["seconds"] / sl["seconds"] if sl["seconds"] > 0 else None
            na = {"solver": "—", "converged": True, "spmvs": None, "seconds": None}
            rows.append([name, str(n), str(nnz), w, fmt_spmv(ours), fmt_sec(ours),
                         fmt_spmv(sl or na), fmt_sec(sl or na), fmt_spmv(ar or na), fmt_sec(ar or na),
                         fmt_num(sr, "{:.2f}"), fmt_num(tr, "{:.2f}"), fmt_num(diff, "{:.1e}"),
                         fmt_spmv(oursv or na), fmt_sec(oursv or na), fmt_num(diff_ar, "{:.1e}"),
                         " / ".join(fmt_num(dref[k], "{:.0e}") for k in ("ours", "ours_verify", "slepc", "arpack"))])
            if ref is not None:
                bad = [k for k, v in dref.items() if v is not None and v > 1e-6]
                if bad:
                    notes.append(f"{name} {w}: dense reference (LAPACK) wanted values [{fmt_eigs([[z.real, z.imag] for z in ref[:args.nev + 1]])}]; "
                                 f"off by > 1e-6 relative: " + ", ".join(f"{k} {dref[k]:.1e}" for k in bad))
            for r in (ours, oursv, sl, ar):
                if r and (not r["converged"] or r.get("note")):
                    notes.append(f"{name} {w} {r['solver']}{'+verify' if r.get('verify') else ''}: "
                                 f"{'converged' if r['converged'] else 'NOT converged'}"
                                 f"{', ' + r['note'] if r.get('note') else ''}"
                                 f"{', reason ' + str(r['reason']) if 'reason' in r else ''}"
                                 f", SpMVs {r.get('spmvs')}, {fmt_sec(r)} s")
            if diff_ar is not None and diff_ar > 1e-6:
                notes.append(f"{name} {w}: ARPACK vs SLEPc max rel diff {diff_ar:.2e}; ARPACK [{fmt_eigs(ar['eig'])}]; "
                             f"SLEPc [{fmt_eigs(sl['eig'])}]")
            if diff is not None and diff > 1e-6:
                notes.append(f"{name} {w}: ours vs SLEPc max rel diff {diff:.2e}; ours [{fmt_eigs(ours['eig'])}]; "
                             f"SLEPc [{fmt_eigs(sl['eig'])}]" + (f"; ARPACK [{fmt_eigs(ar['eig'])}]" if ar else ""))
            rec = dict(matrix=name, rows=n, nnz=nnz, which=w, nev=args.nev, tol=args.tol, ncv=ncv,
                       ours=ours, ours_verify=oursv, slepc=sl, arpack=ar, max_rel_diff=diff,
                       arpack_vs_slepc=diff_ar, dense_ref_diff=dref,
                       dense_ref=(None if ref is None else [[z.real, z.imag] for z in ref[:args.nev + 2]]))
            records.append(rec)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(rec) + "\n")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    # summary: geometric means over rows where both converged
    ok = [rc for rc in records if rc["slepc"] and rc["ours"]["converged"] and rc["slepc"]["converged"]]
    if ok:
        gs = np.exp(np.mean([np.log(rc["ours"]["spmvs"] / rc["slepc"]["spmvs"]) for rc in ok]))
        gt = np.exp(np.mean([np.log(rc["ours"]["seconds"] / rc["slepc"]["seconds"]) for rc in ok]))
        print(f"\nGeometric mean over the {len(ok)} runs where ours (verify=false) and SLEPc both converged: "
              f"SpMV ratio {gs:.2f}, time ratio {gt:.2f}")
    if notes:
        print("\nNotes:")
        for s in notes:
            print("- " + s)


if __name__ == "__main__":
    main()
