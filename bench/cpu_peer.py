#!/usr/bin/env python3
"""CPU peer for `pjds-lanczos solve`: SciPy's ARPACK (eigsh) on the same matrix.

The matrix is exported by the application itself (`pjds-lanczos export CONFIG
FILE.h5`, HDF5 matrix schema 1: row_ptr, col_idx, values; storage full or
lower) and loaded into a scipy.sparse CSR matrix, so both solvers see exactly
the same entries.  Prints the export/load times, eigsh's time and SpMV rate,
the eigenvalues, and -- given a result file of `solve` -- the differences to
its /eigenvalues and its own timings.

usage: /usr/bin/python3 bench/cpu_peer.py CONFIG [--bin build/app/pjds-lanczos]
           [--matrix FILE.h5] [--result spectrum.h5] [--k K] [--tol TOL] [--ncv M]
Needs numpy, scipy, h5py (Debian's /usr/bin/python3 has them).
"""
import argparse
import configparser
import os
import subprocess
import sys
import time

import h5py
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def solver_settings(cfg_path):
    cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
    cp.read(cfg_path)
    s = cp["solver"] if cp.has_section("solver") else {}
    nev = int(s.get("nev", 4))
    which = s.get("which", "smallest").strip()
    tol = float(s.get("tolerance", 1e-10))
    return nev, which, tol


def load_csr(path, group="/"):
    with h5py.File(path, "r") as f:
        g = f[group]
        n = int(g.attrs["rows"])
        row_ptr = g["row_ptr"][:].astype(np.int64)
        col = g["col_idx"][:]
        val = g["values"][:].astype(np.float64)
        storage = g.attrs.get("storage", "full")
        if isinstance(storage, bytes):
            storage = storage.decode()
    a = sp.csr_matrix((val, col, row_ptr), shape=(n, n))
    if storage == "lower":
        a = a + sp.tril(a, k=-1).T.tocsr()
    return a.tocsr()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--bin", default=os.environ.get("PJDS_BIN", "build/app/pjds-lanczos"))
    ap.add_argument("--matrix", help="exported matrix file (created with `pjds-lanczos export` if missing)")
    ap.add_argument("--result", help="result file of `pjds-lanczos solve` to compare with")
    ap.add_argument("--k", type=int, help="eigenvalues (default: [solver] nev)")
    ap.add_argument("--tol", type=float, help="eigsh tol (default: [solver] tolerance)")
    ap.add_argument("--ncv", type=int, default=None, help="eigsh ncv (default: SciPy's)")
    ap.add_argument("--spmv-repeats", type=int, default=10)
    args = ap.parse_args()

    nev, which, tol = solver_settings(args.config)
    k = args.k or nev
    tol = args.tol if args.tol is not None else tol
    mfile = args.matrix or os.path.splitext(os.path.basename(args.config))[0] + "_matrix.h5"

    if not os.path.exists(mfile):
        t0 = time.perf_counter()
        r = subprocess.run([args.bin, "export", args.config, mfile, "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"export failed ({r.returncode}): {r.stderr.strip()}")
        print(f"export_seconds: {time.perf_counter() - t0:.2f}")
    t0 = time.perf_counter()
    a = load_csr(mfile)
    print(f"load_seconds: {time.perf_counter() - t0:.2f}")
    n, nnz = a.shape[0], a.nnz
    print(f"rows: {n}\nnnz: {nnz}")

    x = np.random.default_rng(1).uniform(-1, 1, n)
    y = a @ x
    t0 = time.perf_counter()
    for _ in range(args.spmv_repeats):
        y = a @ x
    ts = (time.perf_counter() - t0) / args.spmv_repeats
    print(f"scipy_spmv_seconds: {ts:.4f}\nscipy_spmv_gflops: {2 * nnz / ts * 1e-9:.3f}")

    w = "SA" if which == "smallest" else "LA"
    nmv = [0]

    def mv(v):
        nmv[0] += 1
        return a @ v

    op = sla.LinearOperator(a.shape, matvec=mv, dtype=np.float64)
    t0 = time.perf_counter()
    vals, vecs = sla.eigsh(op, k=k, which=w, tol=tol, ncv=args.ncv, v0=np.random.default_rng(7).uniform(-1, 1, n))
    te = time.perf_counter() - t0
    order = np.argsort(vals) if which == "smallest" else np.argsort(-vals)
    vals, vecs = vals[order], vecs[:, order]
    res = [np.linalg.norm(a @ vecs[:, i] - vals[i] * vecs[:, i]) for i in range(k)]
    print(f"eigsh_which: {w}\neigsh_tol: {tol:g}\neigsh_seconds: {te:.2f}\neigsh_matvecs: {nmv[0]}")
    for i in range(k):
        print(f"eigsh_eigenvalue[{i}]: {vals[i]:.15f}  residual: {res[i]:.3e}")

    if args.result:
        with h5py.File(args.result, "r") as f:
            ours = f["eigenvalues"][:]
            at = dict(f.attrs)
        m = min(len(ours), k)
        d = np.abs(ours[:m] - vals[:m])
        for i in range(m):
            print(f"pjds_eigenvalue[{i}]: {ours[i]:.15f}  diff: {d[i]:.3e}  rel: {d[i] / max(1.0, abs(vals[i])):.3e}")
        print(f"max_rel_diff: {np.max(d / np.maximum(1.0, np.abs(vals[:m]))):.3e}")
        for key in ("iterations", "restarts", "solve_seconds", "spmv_seconds", "spmv_gflops", "total_seconds",
                    "converged_reason", "ranks", "threads_per_rank", "backend"):
            if key in at:
                v = at[key]
                print(f"pjds_{key}: {v.decode() if isinstance(v, bytes) else v}")
        if "solve_seconds" in at:
            print(f"speedup_solve_vs_eigsh: {te / float(at['solve_seconds']):.2f}")


if __name__ == "__main__":
    main()
