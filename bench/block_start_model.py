#!/usr/bin/env python3
"""block_start_model.py -- how many operator applications a start block of p
vectors needs to converge the nev smallest eigenpairs, against one start vector
(issue 25, Deliver 2: "a small block start ... sees a degenerate copy from the
start").

A model, not a solver: thick-restart Rayleigh-Ritz on a block Krylov space,
with the products A V kept beside the basis V, every new block orthogonalised
twice against the whole basis (classical Gram-Schmidt) and the residuals
||A x - theta x|| computed exactly.  In exact arithmetic a block Lanczos method
spans the same spaces, so the counts are what such a method would need with
full reorthogonalisation.  Restart: keep nev + (ncv - nev) / 2 Ritz vectors
(rounded so that whole blocks fit), then expand from the Krylov continuation of
the last block.  Converged: every wanted residual <= tol * max |theta| seen.
With p = 1 it reproduces the application's product count with verify = false
(HMEp: 184 against 188; hh_184800: 224 against 218).

The matrix comes from `pjds-lanczos export CONFIG FILE.h5` (HDF5 matrix schema
1).  Memory: 2 ncv columns of N doubles (HMEp at ncv 48: 4.8 GB).

usage: /usr/bin/python3 bench/block_start_model.py FILE.h5 [--nev 4]
           [--ncv 24] [--block 1,2] [--tol 1e-10] [--seed 1]
  --ncv is the basis size for p = 1; a block of p runs with p * ncv columns
  unless --fixed-ncv is given.
Needs numpy, scipy and h5py (Debian's python3-* packages).
"""
import argparse
import time

import h5py
import numpy as np
import scipy.sparse as sp


def load(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["rows"])
        return sp.csr_matrix((f["values"][...], f["col_idx"][...], f["row_ptr"][...]), shape=(n, n))


def orthonormal_against(V, W):
    """W made orthogonal to V's columns (twice) and orthonormalised."""
    for _ in range(2):
        W -= V @ (V.T @ W)
    q, _ = np.linalg.qr(W)
    return q


def solve(A, nev, p, m, tol, seed):
    n = A.shape[0]
    rng = np.random.default_rng(seed)
    V = np.empty((n, m))
    AV = np.empty((n, m))
    q, _ = np.linalg.qr(rng.uniform(-1.0, 1.0, (n, p)))
    V[:, :p], AV[:, :p] = q, A @ q
    products, c, restarts, normest = p, p, 0, 0.0
    while True:
        while c + p <= m:  # expand by whole blocks
            q = orthonormal_against(V[:, :c], AV[:, c - p:c].copy())
            V[:, c:c + p], AV[:, c:c + p] = q, A @ q
            products += p
            c += p
        H = V[:, :c].T @ AV[:, :c]
        theta, Y = np.linalg.eigh((H + H.T) / 2)
        normest = max(normest, float(np.abs(theta).max()))
        R = AV[:, :c] @ Y[:, :nev] - (V[:, :c] @ Y[:, :nev]) * theta[:nev]
        res = np.linalg.norm(R, axis=0) / normest
        if np.all(res <= tol):
            return theta[:nev], res, products, restarts
        k = max(nev + 1, min(nev + (m - nev) // 2, m - p))
        k -= (m - k) % p
        nxt = orthonormal_against(V[:, :c], AV[:, c - p:c].copy())
        V[:, :k] = V[:, :c] @ Y[:, :k]
        AV[:, :k] = AV[:, :c] @ Y[:, :k]
        q = orthonormal_against(V[:, :k], nxt)
        V[:, k:k + p], AV[:, k:k + p] = q, A @ q
        products += p
        c = k + p
        restarts += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("matrix")
    ap.add_argument("--nev", type=int, default=4)
    ap.add_argument("--ncv", type=int, default=24)
    ap.add_argument("--block", default="1,2")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fixed-ncv", action="store_true", help="the same basis size for every block size")
    a = ap.parse_args()
    A = load(a.matrix)
    print("| block p | basis | products | restarts | seconds | values | max relative residual |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for p in [int(x) for x in a.block.split(",")]:
        m = a.ncv if a.fixed_ncv else p * a.ncv
        t = time.time()
        theta, res, products, restarts = solve(A, a.nev, p, m, a.tol, a.seed)
        print("| %d | %d | %d | %d | %.1f | %s | %.1e |" % (p, m, products, restarts, time.time() - t,
                                                          " ".join("%.13f" % x for x in theta), res.max()),
              flush=True)


if __name__ == "__main__":
    main()
