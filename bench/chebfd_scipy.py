#!/usr/bin/env python3
"""chebfd_scipy.py -- the peer of bench/chebfd_bench.sh: SciPy's eigsh in
shift-and-invert mode (sigma = E, k nearest eigenvalues; SuperLU
factorisation of A - sigma I, ARPACK with the host's BLAS threads) on a
matrix exported by `pjds-lanczos export`, timed; optionally compared with the
eigenvalues of a chebfd result file (the same pairs: sorted, max |difference|).

usage: chebfd_scipy.py MATRIX.h5 --sigma E --k 100 [--compare RESULT.h5]
prints one line: scipy_seconds=... k=... max_diff=... (the time includes the factorisation)"""
import argparse
import time

import h5py
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def load(path):
    with h5py.File(path) as f:
        g = f["/"]
        n = int(g.attrs["rows"])
        rp, ci, v = g["row_ptr"][:], g["col_idx"][:], g["values"][:]
        st = g.attrs.get("storage", b"")
        st = st.decode() if isinstance(st, bytes) else str(st)
    A = sp.csr_matrix((v, ci, rp), shape=(n, n))
    if st == "lower":
        A = (A + A.T - sp.diags(A.diagonal())).tocsr()
    return A


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("matrix")
    ap.add_argument("--sigma", type=float, required=True)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--tol", type=float, default=0.0)
    ap.add_argument("--compare")
    a = ap.parse_args()
    A = load(a.matrix)
    t0 = time.perf_counter()
    w = sla.eigsh(A, k=a.k, sigma=a.sigma, which="LM", tol=a.tol, return_eigenvectors=False)
    t = time.perf_counter() - t0
    w = np.sort(w)
    diff = float("nan")
    if a.compare:
        with h5py.File(a.compare) as f:
            c = np.sort(f["eigenvalues"][:])
        diff = float(np.max(np.abs(c - w))) if len(c) == len(w) else float("inf")
    print("scipy_seconds=%.3f k=%d lowest=%.12g highest=%.12g max_diff=%.3e n=%d" %
          (t, len(w), w[0], w[-1], diff, A.shape[0]))


if __name__ == "__main__":
    main()
